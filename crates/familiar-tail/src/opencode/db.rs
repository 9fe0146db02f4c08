//! Reading opencode's database: opened read-only (`SQLITE_OPEN_READ_ONLY`, never written,
//! no transaction held between reads, a short busy timeout), its schema checked, and the
//! rows of `session`, `message` and `part` read as they are stored.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

/// How long a read waits for a lock opencode holds before giving up until the next look.
const BUSY_TIMEOUT: Duration = Duration::from_millis(250);

/// Why the database could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("cannot open the opencode database: {0}")]
    Open(#[source] rusqlite::Error),
    #[error("the opencode database is busy or locked (tried again at its next change): {0}")]
    Busy(#[source] rusqlite::Error),
    #[error("the opencode database has a schema Familiar does not know: {0}")]
    Schema(String),
    #[error("cannot read the opencode database: {0}")]
    Read(#[source] rusqlite::Error),
}

fn read_error(err: rusqlite::Error) -> DbError {
    match err.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
            DbError::Busy(err)
        }
        _ => DbError::Read(err),
    }
}

/// The columns Familiar reads, per table (1.18.33's schema has more).
const COLUMNS: &[(&str, &[&str])] = &[
    (
        "session",
        &[
            "id",
            "parent_id",
            "directory",
            "title",
            "version",
            "time_created",
            "time_updated",
        ],
    ),
    (
        "message",
        &["id", "session_id", "time_created", "time_updated", "data"],
    ),
    (
        "part",
        &[
            "id",
            "message_id",
            "session_id",
            "time_created",
            "time_updated",
            "data",
        ],
    ),
];

/// One `session` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub id: String,
    pub parent: Option<String>,
    pub directory: String,
    pub title: String,
    pub version: String,
    pub created: i64,
    pub updated: i64,
}

/// One `message` or `part` row: its ids, times and `data` as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub part: bool,
    pub id: String,
    pub session: String,
    /// The message a part belongs to (`None` for a message).
    pub message: Option<String>,
    pub created: i64,
    pub updated: i64,
    pub data: String,
}

/// An open, read-only connection.
pub struct Db {
    conn: Connection,
}

impl Db {
    /// Open `path` read-only and check that it has the tables and columns Familiar reads.
    pub fn open(path: &Path) -> Result<Db, DbError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(path, flags).map_err(DbError::Open)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(DbError::Open)?;
        let db = Db { conn };
        db.check_schema()?;
        Ok(db)
    }

    fn check_schema(&self) -> Result<(), DbError> {
        for (table, columns) in COLUMNS {
            let mut statement = self
                .conn
                .prepare("SELECT name FROM pragma_table_info(?1)")
                .map_err(read_error)?;
            let present: Vec<String> = statement
                .query_map([table], |row| row.get(0))
                .map_err(read_error)?
                .collect::<Result<_, _>>()
                .map_err(read_error)?;
            if present.is_empty() {
                return Err(DbError::Schema(format!("no table `{table}`")));
            }
            let missing: Vec<&str> = columns
                .iter()
                .copied()
                .filter(|column| !present.iter().any(|p| p == column))
                .collect();
            if !missing.is_empty() {
                return Err(DbError::Schema(format!(
                    "table `{table}` lacks {}",
                    missing.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// Sessions written at or after `since` (unix ms).
    pub fn sessions(&self, since: i64) -> Result<Vec<SessionRow>, DbError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT id, parent_id, directory, title, version, time_created, time_updated \
                 FROM session WHERE time_updated >= ?1 ORDER BY time_created, id",
            )
            .map_err(read_error)?;
        statement
            .query_map([since], |row| {
                Ok(SessionRow {
                    id: row.get(0)?,
                    parent: row.get(1)?,
                    directory: row.get(2)?,
                    title: row.get(3)?,
                    version: row.get(4)?,
                    created: row.get(5)?,
                    updated: row.get(6)?,
                })
            })
            .map_err(read_error)?
            .collect::<Result<_, _>>()
            .map_err(read_error)
    }

    /// Messages and parts written at or after `since` (unix ms), of `session` alone when
    /// given, in the order they were created (a message before its parts).
    /// The latest `time_updated` of any message or part (unix ms), if there is one.
    pub fn latest(&self) -> Result<Option<i64>, DbError> {
        self.conn
            .query_row(
                "SELECT max(latest) FROM (SELECT max(time_updated) AS latest FROM message \
                 UNION ALL SELECT max(time_updated) FROM part)",
                [],
                |row| row.get(0),
            )
            .map_err(read_error)
    }

    pub fn rows(&self, since: i64, session: Option<&str>) -> Result<Vec<Row>, DbError> {
        let filter = if session.is_some() {
            "AND session_id = ?2"
        } else {
            "AND ?2 IS NULL"
        };
        let mut rows = Vec::new();
        for part in [false, true] {
            let sql = if part {
                format!(
                    "SELECT id, session_id, message_id, time_created, time_updated, data \
                     FROM part WHERE time_updated >= ?1 {filter}"
                )
            } else {
                format!(
                    "SELECT id, session_id, NULL, time_created, time_updated, data \
                     FROM message WHERE time_updated >= ?1 {filter}"
                )
            };
            let mut statement = self.conn.prepare(&sql).map_err(read_error)?;
            let read = statement
                .query_map(rusqlite::params![since, session], |row| {
                    Ok(Row {
                        part,
                        id: row.get(0)?,
                        session: row.get(1)?,
                        message: row.get(2)?,
                        created: row.get(3)?,
                        updated: row.get(4)?,
                        // A `data` that is not text (a blob) is read as its bytes, lossily.
                        data: match row.get_ref(5)? {
                            rusqlite::types::ValueRef::Text(text)
                            | rusqlite::types::ValueRef::Blob(text) => {
                                String::from_utf8_lossy(text).into_owned()
                            }
                            _ => String::new(),
                        },
                    })
                })
                .map_err(read_error)?;
            for row in read {
                rows.push(row.map_err(read_error)?);
            }
        }
        rows.sort_by(|a, b| (a.created, a.part, &a.id).cmp(&(b.created, b.part, &b.id)));
        Ok(rows)
    }
}
