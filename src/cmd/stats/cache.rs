//! `familiar stats`'s cache of what reading each transcript gave: its summary (as JSON), its
//! skipped-line warnings and its usage ledger ([`Ledger::encode`]), with the file's identity
//! when it was read (device, inode, size, modification and change times in nanoseconds). The
//! next `stats` reads only the files written since: a year of transcripts that no longer change
//! is answered from a few kilobytes each.
//!
//! It lives in `stats.sqlite3` of the user's cache folder (`~/.cache/familiar`), readable by its
//! user alone: it holds the secret key the ledgers' message hashes are taken under (keys from
//! another run only match under the same key), and what the summaries say (files edited, tool
//! names). Every row goes when the executable, its version or the reading settings change
//! ([`fingerprint`]), and a row whose file is gone goes at the next run that stores one. The
//! cache is only ever a shortcut: any error with it is one line on stderr, and `stats` reads
//! the files instead.

use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use familiar_model::text::printable_line;
use familiar_transcript::{NormalizerConfig, usage};
use rusqlite::{Connection, OptionalExtension as _, TransactionBehavior, params};

/// The layout of the tables below; a cache of another layout is emptied.
const SCHEMA: i64 = 1;

/// Where the cache is: `$XDG_CACHE_HOME/familiar/stats.sqlite3`, or `~/.cache/familiar/...`.
pub fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "familiar")
        .map(|dirs| dirs.cache_dir().join("stats.sqlite3"))
}

/// What a row was made by: this executable (its size and modification time: a new build or
/// install reads everything again), its version, and the settings lines are read with (the
/// context window, the longest line, the configured model). Prices are not in it: they are
/// applied to the ledger on every run.
pub fn fingerprint(config: &NormalizerConfig) -> String {
    let exe = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|meta| format!("{}:{}.{}", meta.len(), meta.mtime(), meta.mtime_nsec()))
        .unwrap_or_default();
    format!("{} {exe} {config:?}", env!("CARGO_PKG_VERSION"))
}

/// A file as it stood: a row is used only while every field is still the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
}

impl Stamp {
    /// The stamp of a regular file (through symlinks); `None` for anything else.
    pub fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok().filter(|meta| meta.is_file())?;
        let nanos = |secs: i64, nsec: i64| secs.saturating_mul(1_000_000_000).saturating_add(nsec);
        Some(Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: nanos(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: nanos(meta.ctime(), meta.ctime_nsec()),
        })
    }

    pub fn size(&self) -> u64 {
        self.size
    }
}

/// What reading a file gave, as kept.
pub struct Kept {
    pub summary: Box<str>,
    pub warnings: Vec<String>,
    pub ledger: Vec<u8>,
}

/// A file read whole, to keep: its absolute path (the row's key), its name as given (which
/// the summary and warnings say), its stamp from before it was read, and what reading gave.
pub struct Row {
    pub path: PathBuf,
    pub name: String,
    pub stamp: Stamp,
    pub kept: Kept,
}

pub struct Cache {
    path: PathBuf,
    conn: Connection,
}

impl Cache {
    /// Open (or make) the cache at `path` for rows of `fingerprint`, emptying it of rows of
    /// any other, and hash message ids under its key from now on ([`usage::use_hash_key`]).
    pub fn open(path: &Path, fingerprint: &str) -> anyhow::Result<Cache> {
        match Cache::open_once(path, fingerprint) {
            Err(err) if is_damaged(&err) => {
                // Only ever a copy of what the transcripts say: made anew.
                remove(path);
                // `err` names the file.
                crate::cmd::style::warning(format_args!("{err:#}: made anew"));
                Cache::open_once(path, fingerprint)
            }
            opened => opened,
        }
    }

    fn open_once(path: &Path, fingerprint: &str) -> anyhow::Result<Cache> {
        let shown_path = || shown(path);
        if let Some(folder) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(folder)
                .with_context(|| format!("cannot make {}", self::shown(folder)))?;
        }
        cache_file(path)?;
        // Made readable by its user alone before SQLite writes a byte to it (its journal
        // files take the database's permissions).
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .with_context(shown_path)?;
        let conn = Connection::open(path)
            .map_err(Sqlite)
            .with_context(shown_path)?;
        // Another `stats` writing: wait a little, then do without.
        conn.busy_timeout(Duration::from_millis(500))
            .map_err(Sqlite)
            .with_context(shown_path)?;
        // Readers never wait for the writer; a commit is not synced to the disk (a cache row
        // lost to a power cut is a file read again).
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(Sqlite)
            .with_context(shown_path)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(Sqlite)
            .with_context(shown_path)?;
        // Its rows are read and written once each: a small page cache is enough (SQLite's
        // default of 2 MB was a tenth of `stats`'s peak RSS).
        conn.pragma_update(None, "cache_size", -256)
            .map_err(Sqlite)
            .with_context(shown_path)?;
        let mut cache = Cache {
            path: path.to_owned(),
            conn,
        };
        let key = cache
            .prepare(fingerprint)
            .map_err(Sqlite)
            .with_context(shown_path)?;
        anyhow::ensure!(
            usage::use_hash_key(key),
            "{}: messages were hashed under another key before it was opened",
            shown_path()
        );
        Ok(cache)
    }

    /// Make the tables, empty them if they were made for another fingerprint or layout, and
    /// return the hash key (made now if there is none).
    fn prepare(&mut self, fingerprint: &str) -> rusqlite::Result<[u64; 2]> {
        // The write lock at once: a transaction that reads, then writes, fails at once
        // (without waiting) when another `stats` wrote in between, as two first runs do.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute_batch(
            "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value BLOB NOT NULL);
             CREATE TABLE IF NOT EXISTS files (
                 path BLOB PRIMARY KEY, name TEXT NOT NULL,
                 dev INTEGER NOT NULL, ino INTEGER NOT NULL, size INTEGER NOT NULL,
                 mtime INTEGER NOT NULL, ctime INTEGER NOT NULL,
                 summary TEXT NOT NULL, warnings TEXT NOT NULL, ledger BLOB NOT NULL);",
        )?;
        let meta = |name: &str| -> rusqlite::Result<Option<Vec<u8>>> {
            tx.query_row("SELECT value FROM meta WHERE name = ?1", [name], |row| {
                row.get(0)
            })
            .optional()
        };
        let made_for = format!("{SCHEMA} {fingerprint}");
        if meta("made_for")?.as_deref() != Some(made_for.as_bytes()) {
            tx.execute("DELETE FROM files", [])?;
            tx.execute(
                "INSERT OR REPLACE INTO meta (name, value) VALUES ('made_for', ?1)",
                [made_for.as_bytes()],
            )?;
        }
        let key = match meta("key")? {
            Some(bytes) if bytes.len() == 16 => {
                let word = |at: usize| {
                    let mut word = [0u8; 8];
                    word.copy_from_slice(&bytes[at..at + 8]);
                    u64::from_le_bytes(word)
                };
                [word(0), word(8)]
            }
            _ => {
                let key = usage::random_hash_key();
                let mut bytes = key[0].to_le_bytes().to_vec();
                bytes.extend_from_slice(&key[1].to_le_bytes());
                // Rows hashed under an old key would match nothing: they go with it.
                tx.execute("DELETE FROM files", [])?;
                tx.execute(
                    "INSERT OR REPLACE INTO meta (name, value) VALUES ('key', ?1)",
                    [bytes],
                )?;
                key
            }
        };
        tx.commit()?;
        Ok(key)
    }

    /// Remove a cache found damaged after it was opened: the next run makes it anew.
    pub fn discard(self) {
        let Cache { path, conn } = self;
        drop(conn);
        remove(&path);
    }

    /// Look up each of `files` (an input's number, absolute path, name as given, and stamp):
    /// the ones read as that name and unchanged since are handed to `found`. All in one read
    /// of the database.
    pub fn lookup(
        &self,
        files: impl Iterator<Item = (usize, PathBuf, String, Stamp)>,
        mut found: impl FnMut(usize, Kept),
    ) -> anyhow::Result<()> {
        let shown_path = shown(&self.path);
        let shown = || shown_path.clone();
        // One snapshot for every lookup: one lock taken, not one per file.
        let snapshot = self
            .conn
            .unchecked_transaction()
            .map_err(Sqlite)
            .with_context(shown)?;
        let mut statement = snapshot
            .prepare(
                "SELECT name, dev, ino, size, mtime, ctime, summary, warnings, ledger
                 FROM files WHERE path = ?1",
            )
            .map_err(Sqlite)
            .with_context(shown)?;
        for (index, path, name, stamp) in files {
            let row = statement
                .query_row([path.as_os_str().as_bytes()], |row| {
                    let kept_name: String = row.get(0)?;
                    let kept_stamp = Stamp {
                        dev: row.get::<_, i64>(1)? as u64,
                        ino: row.get::<_, i64>(2)? as u64,
                        size: row.get::<_, i64>(3)? as u64,
                        mtime_ns: row.get(4)?,
                        ctime_ns: row.get(5)?,
                    };
                    if kept_name != name || kept_stamp != stamp {
                        return Ok(None);
                    }
                    let summary: String = row.get(6)?;
                    let warnings: String = row.get(7)?;
                    Ok(Some((summary, warnings, row.get::<_, Vec<u8>>(8)?)))
                })
                .optional()
                .map_err(Sqlite)
                .with_context(shown)?
                .flatten();
            // A row whose warnings do not read back is a file to read again.
            let kept = row.and_then(|(summary, warnings, ledger)| {
                Some(Kept {
                    summary: summary.into_boxed_str(),
                    warnings: serde_json::from_str(&warnings).ok()?,
                    ledger,
                })
            });
            if let Some(kept) = kept {
                found(index, kept);
            }
        }
        Ok(())
    }

    /// Keep every row `rows` brings until every sender is gone, a few at a time: a
    /// transaction holds the database's one write lock (another `stats` waits for it), so
    /// none is open while the files are read. Then forget the files that are gone. Returns
    /// how many rows were kept.
    pub fn store(&mut self, rows: &crossbeam_channel::Receiver<Row>) -> anyhow::Result<usize> {
        let shown_path = shown(&self.path);
        let shown = || shown_path.clone();
        let mut stored = 0;
        let mut batch = Vec::with_capacity(STORE_BATCH);
        while let Ok(first) = rows.recv() {
            // What the workers have ready, up to a batch: a commit costs no sync
            // (`synchronous = NORMAL`), so small batches cost little.
            batch.push(first);
            batch.extend(rows.try_iter().take(STORE_BATCH - 1));
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(Sqlite)
                .with_context(shown)?;
            {
                let mut insert = tx
                    .prepare_cached(
                        "INSERT OR REPLACE INTO files
                         (path, name, dev, ino, size, mtime, ctime, summary, warnings, ledger)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                    )
                    .map_err(Sqlite)
                    .with_context(shown)?;
                for row in batch.drain(..) {
                    let warnings = serde_json::to_string(&row.kept.warnings).unwrap_or_default();
                    let s = row.stamp;
                    insert
                        .execute(params![
                            row.path.as_os_str().as_bytes(),
                            row.name,
                            s.dev as i64,
                            s.ino as i64,
                            s.size as i64,
                            s.mtime_ns,
                            s.ctime_ns,
                            &*row.kept.summary,
                            warnings,
                            row.kept.ledger,
                        ])
                        .map_err(Sqlite)
                        .with_context(shown)?;
                    stored += 1;
                }
            }
            tx.commit().map_err(Sqlite).with_context(shown)?;
        }
        if stored > 0 {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(Sqlite)
                .with_context(shown)?;
            forget_gone(&tx).map_err(Sqlite).with_context(shown)?;
            tx.commit().map_err(Sqlite).with_context(shown)?;
        }
        Ok(stored)
    }
}

/// Rows written in one transaction.
const STORE_BATCH: usize = 64;

/// What the cache at a path holds, as `familiar doctor` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contents {
    /// Files whose reading is kept.
    pub files: u64,
    /// The database and its log on disk.
    pub bytes: u64,
}

/// What the cache at `path` holds, read without writing (`None` when there is none yet).
pub fn contents(path: &Path) -> anyhow::Result<Option<Contents>> {
    let Some(meta) = cache_file(path)? else {
        return Ok(None);
    };
    let log = std::fs::metadata(sidecar(path, "-wal")).ok();
    let bytes = meta.len() + log.as_ref().map_or(0, |log| log.len());
    if meta.len() == 0 {
        // Made, but no run has written a row yet.
        return Ok(Some(Contents { files: 0, bytes }));
    }
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    // A run with the cache open keeps its log beside it, and SQLite's shared memory with it.
    // Without one, the file is the whole cache: opened as immutable, reading it leaves no
    // `-shm` or `-wal` file behind (a read-only connection would make both).
    let conn = if log.is_some() {
        Connection::open_with_flags(path, flags)
    } else {
        Connection::open_with_flags(
            immutable_uri(path),
            flags | rusqlite::OpenFlags::SQLITE_OPEN_URI,
        )
    }
    .map_err(Sqlite)
    .with_context(|| shown(path))?;
    conn.busy_timeout(Duration::from_millis(500))
        .map_err(Sqlite)
        .with_context(|| shown(path))?;
    let files: i64 = conn
        .query_row("SELECT count(*) FROM files", [], |row| row.get(0))
        .map_err(Sqlite)
        .with_context(|| shown(path))?;
    Ok(Some(Contents {
        files: files.max(0) as u64,
        bytes,
    }))
}

/// The cache file at `path`, `None` when there is none yet. Anything but a regular file (a
/// FIFO would block an open for ever, a device would be written to) is not a cache.
fn cache_file(path: &Path) -> anyhow::Result<Option<std::fs::Metadata>> {
    match std::fs::metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err).with_context(|| shown(path)),
        Ok(meta) => {
            anyhow::ensure!(meta.is_file(), "{} is not a regular file", shown(path));
            Ok(Some(meta))
        }
    }
}

/// Remove the cache at `path`, and SQLite's files beside it.
fn remove(path: &Path) {
    for file in [
        path.to_owned(),
        sidecar(path, "-wal"),
        sidecar(path, "-shm"),
    ] {
        let _ = std::fs::remove_file(file);
    }
}

/// Is `err` SQLite's saying that another connection holds the database (another `stats`
/// writing it) for longer than this one waits?
pub fn is_busy(err: &anyhow::Error) -> bool {
    sqlite_says(
        err,
        &[
            rusqlite::ErrorCode::DatabaseBusy,
            rusqlite::ErrorCode::DatabaseLocked,
        ],
    )
}

/// Is `err` SQLite's saying that the file is not a database, or a damaged one?
pub fn is_damaged(err: &anyhow::Error) -> bool {
    sqlite_says(
        err,
        &[
            rusqlite::ErrorCode::NotADatabase,
            rusqlite::ErrorCode::DatabaseCorrupt,
        ],
    )
}

/// Is one of `err`'s causes a SQLite error with one of these codes?
fn sqlite_says(err: &anyhow::Error, codes: &[rusqlite::ErrorCode]) -> bool {
    err.chain()
        .filter_map(|cause| cause.downcast_ref::<Sqlite>())
        .filter_map(|Sqlite(err)| err.sqlite_error_code())
        .any(|code| codes.contains(&code))
}

/// A SQLite error as one cause: its message and its extended code (`rusqlite::Error` says the
/// message, then again through its source: "disk I/O error: Error code 778: disk I/O error").
#[derive(Debug)]
struct Sqlite(rusqlite::Error);

impl std::fmt::Display for Sqlite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            rusqlite::Error::SqliteFailure(code, message) => {
                let text = rusqlite::ffi::code_to_str(code.extended_code);
                let message = message.as_deref().unwrap_or(text);
                write!(f, "{message} (SQLite error {})", code.extended_code)
            }
            other => other.fmt(f),
        }
    }
}

impl std::error::Error for Sqlite {}

/// SQLite's file beside the database (`-wal`, `-shm`).
fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// SQLite's URI of the file at `path`, opened as immutable: the path's bytes percent-encoded
/// but for those a URI's path may hold as they are.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for &byte in path.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// A path as messages show it.
fn shown(path: &Path) -> String {
    printable_line(&path.display().to_string()).into_owned()
}

/// Delete the rows of files that no longer exist (Claude Code deletes old transcripts).
fn forget_gone(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    let gone: Vec<Vec<u8>> = {
        let mut paths = tx.prepare("SELECT path FROM files")?;
        let rows = paths.query_map([], |row| row.get::<_, Vec<u8>>(0))?;
        rows.filter_map(Result::ok)
            .filter(|path| {
                let path = Path::new(std::ffi::OsStr::from_bytes(path));
                matches!(std::fs::metadata(path), Err(err) if err.kind() == std::io::ErrorKind::NotFound)
            })
            .collect()
    };
    let mut delete = tx.prepare("DELETE FROM files WHERE path = ?1")?;
    for path in gone {
        delete.execute([path])?;
    }
    Ok(())
}
