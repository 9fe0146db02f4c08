//! The live follower of opencode's database, polled by the tailer thread: when the database
//! or its `-wal` file changed (size or modification time), it reads the rows written since
//! the last read (by `time_updated`, with a lookback of [`LOOKBACK`] for rows committed a
//! little out of order, each row's state told once) and turns them into [`TailMessage`]s:
//! `Opened` for a session first seen, then `Lines` of its address, in the order the rows
//! were created. A row written again (a tool part going from `running` to `completed`, a
//! message given its tokens) is sent again, whole; the reader tells only what is new.
//!
//! A database that cannot be read (busy past the timeout, locked, a schema Familiar does not
//! know) is one [`TailMessage::Problem`], said once while it lasts, and tried again at its
//! next change; the files the tailer follows go on.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Db, Row, SessionRow, address, root_of, row_line, session_line};
use crate::discovery::{TranscriptInfo, TranscriptKind};
use crate::message::{Line, OpenReason, TailMessage};

/// How far before the latest `time_updated` read the next read looks again (ms): a row
/// committed up to this much later than its time says is still read.
pub const LOOKBACK: i64 = 2_000;

/// What a change of the database looks like from outside: the database's and its `-wal`
/// file's sizes and modification times.
type Stamp = [(u64, i64, i64); 2];

struct Followed {
    path: Arc<Path>,
    lines: u64,
    /// Sessions whose session line was sent (the root's and its subagents').
    opened: HashSet<String>,
}

/// Follows one opencode database.
pub struct Follower {
    db: PathBuf,
    identity: (u64, u64),
    stamp: Option<Stamp>,
    /// The latest `time_updated` read.
    since: i64,
    /// Rows read within [`LOOKBACK`] of `since`: their state (a hash of time and data).
    seen: HashMap<(bool, String), u64>,
    sessions: super::Sessions,
    /// Every row sent so far: one written again goes where it was written again (its
    /// `time_updated`), not where it was created.
    sent: HashSet<(bool, String)>,
    followed: HashMap<String, Followed>,
    /// Sessions not selected (their rows are skipped).
    skipped: HashSet<String>,
    /// The problem said last (said again only once it changed).
    problem: Option<String>,
    /// Nothing read yet: what is read first is backlog.
    first: bool,
}

fn stamp_of(path: &Path) -> Option<(u64, i64, i64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.mtime(), meta.mtime_nsec()))
}

fn hash_of(row: &Row) -> u64 {
    let mut hasher = DefaultHasher::new();
    row.updated.hash(&mut hasher);
    row.data.hash(&mut hasher);
    hasher.finish()
}

impl Follower {
    pub fn new(db: PathBuf) -> Follower {
        Follower {
            db,
            identity: (0, 0),
            stamp: None,
            since: i64::MIN,
            seen: HashMap::new(),
            sessions: super::Sessions::new(),
            sent: HashSet::new(),
            followed: HashMap::new(),
            skipped: HashSet::new(),
            problem: None,
            first: true,
        }
    }

    pub fn db(&self) -> &Path {
        &self.db
    }

    /// Was the row `id` read and sent (tests: what the database was asked for)?
    #[cfg(test)]
    pub(super) fn was_read(&self, id: &str) -> bool {
        self.sent.iter().any(|(_, sent)| sent == id)
    }

    /// Read what changed since the last look, if anything did. `select` says whether a root
    /// session (its row) is followed; `backlog` marks what the first read finds.
    pub fn poll(
        &mut self,
        select: &dyn Fn(&SessionRow) -> bool,
        backlog: bool,
        out: &mut Vec<TailMessage>,
    ) {
        let mut wal = self.db.as_os_str().to_owned();
        wal.push("-wal");
        let Some(main) = stamp_of(&self.db) else {
            return; // no database (yet): opencode never ran here
        };
        let stamp = [main, stamp_of(Path::new(&wal)).unwrap_or_default()];
        if self.stamp == Some(stamp) {
            return;
        }
        match self.read(select, backlog && self.first, out) {
            Ok(()) => {
                self.stamp = Some(stamp);
                self.first = false;
                self.problem = None;
            }
            Err(err) => {
                let text = err.to_string();
                if self.problem.as_deref() != Some(text.as_str()) {
                    tracing::warn!("{}: {text}", self.db.display());
                    out.push(TailMessage::Problem {
                        path: self.db.clone(),
                        error: text.clone(),
                    });
                    self.problem = Some(text);
                }
            }
        }
    }

    fn read(
        &mut self,
        select: &dyn Fn(&SessionRow) -> bool,
        backlog: bool,
        out: &mut Vec<TailMessage>,
    ) -> Result<(), super::DbError> {
        let conn = Db::open(&self.db)?;
        if let Ok(meta) = std::fs::metadata(&self.db) {
            self.identity = (meta.dev(), meta.ino());
        }
        let from = self.since.saturating_sub(LOOKBACK);
        for session in conn.sessions(from)? {
            self.sessions.insert(session.id.clone(), session);
        }
        // Where the next read starts (less the lookback): the database's latest row, read
        // before the rows, which may be only the selected sessions'.
        let latest_before = conn.latest()?.unwrap_or(i64::MIN);
        let mut rows = if self.since == i64::MIN {
            // The first read takes every row so far: only the selected sessions' (a project's
            // among every project's the database holds), by the index on their session.
            let wanted: Vec<&str> = self
                .sessions
                .values()
                .filter(|session| {
                    let root = root_of(&self.sessions, &session.id);
                    self.sessions.get(root).is_some_and(select)
                })
                .map(|session| session.id.as_str())
                .collect();
            if wanted.len() == self.sessions.len() {
                conn.rows(from, None)?
            } else {
                let mut rows = Vec::new();
                for id in wanted {
                    rows.extend(conn.rows(from, Some(id))?);
                }
                rows
            }
        } else {
            conn.rows(from, None)?
        };
        rows.sort_by_key(|row| {
            let again = self.sent.contains(&(row.part, row.id.clone()));
            (
                if again { row.updated } else { row.created },
                row.part,
                row.id.clone(),
            )
        });
        drop(conn);
        let latest = rows
            .iter()
            .map(|row| row.updated)
            .max()
            .unwrap_or(self.since);
        let latest = latest.max(self.since).max(latest_before);
        let mut seen = HashMap::new();
        let mut batches: Vec<(String, Vec<Vec<u8>>)> = Vec::new();
        for row in &rows {
            let key = (row.part, row.id.clone());
            let hash = hash_of(row);
            let told = self.seen.get(&key) == Some(&hash);
            if row.updated >= latest.saturating_sub(LOOKBACK) {
                seen.insert(key, hash);
            }
            if told {
                continue;
            }
            self.sent.insert((row.part, row.id.clone()));
            self.send(row, select, &mut batches, out);
        }
        self.seen = seen;
        self.since = latest;
        for (root, lines) in batches {
            let Some(followed) = self.followed.get_mut(&root) else {
                continue;
            };
            let lines: Vec<Line> = lines
                .into_iter()
                .map(|bytes| {
                    followed.lines += 1;
                    Line {
                        number: followed.lines,
                        bytes,
                    }
                })
                .collect();
            out.push(TailMessage::Lines {
                path: Arc::clone(&followed.path),
                generation: 1,
                lines,
                backlog,
                resume: None,
            });
        }
        Ok(())
    }

    /// One row, into its root session's batch (opening the session first if new).
    fn send(
        &mut self,
        row: &Row,
        select: &dyn Fn(&SessionRow) -> bool,
        batches: &mut Vec<(String, Vec<Vec<u8>>)>,
        out: &mut Vec<TailMessage>,
    ) {
        let root = root_of(&self.sessions, &row.session).to_owned();
        if self.skipped.contains(&root) {
            return;
        }
        let Some(root_row) = self.sessions.get(&root) else {
            tracing::debug!("opencode row {} of an unknown session {root}", row.id);
            return;
        };
        if !self.followed.contains_key(&root) {
            if !select(root_row) {
                self.skipped.insert(root);
                return;
            }
            let path: Arc<Path> = Arc::from(address(&self.db, &root));
            out.push(TailMessage::Opened {
                path: Arc::clone(&path),
                info: TranscriptInfo {
                    path: path.to_path_buf(),
                    kind: TranscriptKind::Session,
                    session_id: Some(root.clone()),
                    agent_id: None,
                    agent_type: None,
                    cwd: Some(root_row.directory.clone()),
                },
                generation: 1,
                reason: if self.first {
                    OpenReason::Existing
                } else {
                    OpenReason::Appeared
                },
                identity: self.identity,
            });
            self.followed.insert(
                root.clone(),
                Followed {
                    path,
                    lines: 0,
                    opened: HashSet::new(),
                },
            );
        }
        let mut lines = Vec::new();
        if let Some(followed) = self.followed.get_mut(&root) {
            for id in [root.as_str(), row.session.as_str()] {
                if !followed.opened.contains(id)
                    && let Some(session) = self.sessions.get(id)
                {
                    followed.opened.insert(id.to_owned());
                    lines.push(session_line(session, &root));
                }
            }
        }
        lines.push(row_line(row, &root));
        match batches.iter_mut().find(|(id, _)| *id == root) {
            Some((_, batch)) => batch.extend(lines),
            None => batches.push((root, lines)),
        }
    }
}
