//! opencode's sessions, which are rows of a SQLite database and not lines of a file: the one
//! source of Familiar that is not JSONL. The seam is small: each row read becomes one line
//! of Familiar's own shape (the row's ids, its time, its `data` as stored: [`row_line`]), and
//! every session is addressed as a path, `<database>#<session id>`, so the session model, the
//! reader (`familiar_transcript::opencode`), the scripts and the sinks see it as they see a
//! transcript file.
//!
//! - this file: where the database is ([`db_path`]), session addresses ([`address`],
//!   [`parse_address`]), the lines ([`session_line`], [`row_line`]), a saved session read
//!   whole ([`read_session`], for `events`, `replay`, `stats`) and the sessions listed
//!   ([`list_sessions`]);
//! - `db`: the read-only connection, the schema check and the queries;
//! - `follow`: the live follower the tailer polls ([`Follower`]).
//!
//! A subagent's session (a row whose `parent_id` names its caller's) is read as part of its
//! root session: its rows are lines of the root's address, with its own id as `agentId`.

mod db;
mod follow;

use std::path::{Path, PathBuf};

use serde_json::json;

pub use db::{Db, DbError, Row, SessionRow};
pub use follow::Follower;

/// opencode's data dir: `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`.
pub fn data_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir).join("opencode"));
    }
    let home = directories::BaseDirs::new()
        .map(|base| base.home_dir().to_path_buf())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
        })?;
    Some(home.join(".local/share/opencode"))
}

/// opencode's database, as 1.18.33 finds it: `$OPENCODE_DB` (absolute, or in the data dir),
/// else `opencode.db` in the data dir (the release channel's; a build of another channel
/// writes `opencode-<channel>.db`, not followed).
pub fn db_path() -> Option<PathBuf> {
    let data = data_dir();
    if let Some(db) =
        std::env::var_os("OPENCODE_DB").filter(|db| !db.is_empty() && db != ":memory:")
    {
        let db = PathBuf::from(db);
        if db.is_absolute() {
            return Some(db);
        }
        return data.map(|data| data.join(db));
    }
    data.map(|data| data.join("opencode.db"))
}

/// A session's address: `<database>#<session id>`.
pub fn address(db: &Path, session: &str) -> PathBuf {
    let mut text = db.as_os_str().to_owned();
    text.push("#");
    text.push(session);
    PathBuf::from(text)
}

/// The database and session id of an address ([`address`]), if `path` is one: a `#` whose
/// left side is an existing file and whose right side is an opencode session id (`ses_…`).
pub fn parse_address(path: &Path) -> Option<(PathBuf, String)> {
    let text = path.to_str()?;
    let (db, session) = text.rsplit_once('#')?;
    if !session.starts_with("ses_") || session.contains('/') {
        return None;
    }
    Some((PathBuf::from(db), session.to_owned()))
}

/// The line of a session row: the first of its address (or, for a subagent's session, the
/// first of its rows within its root's).
pub fn session_line(row: &SessionRow, root: &str) -> Vec<u8> {
    let mut line = json!({
        "type": "opencode.session",
        "sessionId": root,
        "id": row.id,
        "cwd": row.directory,
        "version": row.version,
        "title": row.title,
        "timestamp": iso(row.created),
    });
    if row.id != root {
        line["agentId"] = json!(row.id);
    }
    if let Some(parent) = &row.parent {
        line["parentId"] = json!(parent);
    }
    line.to_string().into_bytes()
}

/// The line of a message or part row, read under the root session `root`. Its `data` is the
/// row's JSON itself when that is one object on one line (as opencode writes it), else a
/// string of it: a prompt's text is then encoded once in the line, and read once (a 50 MB
/// prompt peaked at three times itself as a string of a string).
pub fn row_line(row: &Row, root: &str) -> Vec<u8> {
    let mut line = json!({
        "type": if row.part { "opencode.part" } else { "opencode.message" },
        "sessionId": root,
        "id": row.id,
        "timestamp": iso(row.updated),
    });
    if row.session != root {
        line["agentId"] = json!(row.session);
    }
    if let Some(message) = &row.message {
        line["messageId"] = json!(message);
    }
    if !is_one_line_object(&row.data) {
        line["data"] = json!(row.data);
        return line.to_string().into_bytes();
    }
    let head = line.to_string();
    let head = head.strip_suffix('}').unwrap_or(&head);
    let mut bytes = Vec::with_capacity(head.len() + row.data.len() + 9);
    bytes.extend_from_slice(head.as_bytes());
    bytes.extend_from_slice(b",\"data\":");
    bytes.extend_from_slice(row.data.as_bytes());
    bytes.push(b'}');
    bytes
}

/// Can this text go into a line as it is: one JSON object, with no line break in it (one
/// outside its strings would end the line; one inside a string is an escape, not a break)?
fn is_one_line_object(text: &str) -> bool {
    text.trim_start().starts_with('{')
        && memchr::memchr2(b'\n', b'\r', text.as_bytes()).is_none()
        && serde_json::from_str::<&serde_json::value::RawValue>(text).is_ok()
}

fn iso(unix_ms: i64) -> String {
    let time =
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(unix_ms.max(0).unsigned_abs());
    familiar_model::time::format_timestamp(time)
}

/// The root of a session: follow `parent_id` up (at most 64 steps; a loop stops there).
fn root_of<'a>(sessions: &'a Sessions, id: &'a str) -> &'a str {
    let mut id = id;
    for _ in 0..64 {
        match sessions.get(id).and_then(|s| s.parent.as_deref()) {
            Some(parent) => id = parent,
            None => break,
        }
    }
    id
}

/// Sessions by id (a database may hold thousands; each row asks for its own and its root).
type Sessions = std::collections::HashMap<String, SessionRow>;

fn by_id(rows: Vec<SessionRow>) -> Sessions {
    rows.into_iter().map(|row| (row.id.clone(), row)).collect()
}

/// Every root session of the database (not a subagent's), oldest first.
pub fn list_sessions(db: &Path) -> Result<Vec<SessionRow>, DbError> {
    let db = Db::open(db)?;
    let sessions = db.sessions(i64::MIN)?;
    Ok(sessions
        .into_iter()
        .filter(|s| s.parent.is_none())
        .collect())
}

/// A saved session read whole, as the live source would have sent it once opencode was done:
/// its session line, then its rows and its subagents' in the order they were created, one
/// line each (newline-terminated).
pub fn read_session(db: &Path, session: &str) -> Result<Vec<u8>, DbError> {
    let conn = Db::open(db)?;
    let sessions = by_id(conn.sessions(i64::MIN)?);
    let Some(main) = sessions.get(session) else {
        return Err(DbError::Schema(format!(
            "no session {session} in {}",
            db.display()
        )));
    };
    let root = root_of(&sessions, &main.id).to_owned();
    let mut out = Vec::new();
    let mut push = |line: Vec<u8>| {
        out.extend_from_slice(&line);
        out.push(b'\n');
    };
    let mut opened: Vec<&str> = Vec::new();
    if let Some(row) = sessions.get(&root) {
        push(session_line(row, &root));
        opened.push(&row.id);
    }
    for row in conn.rows(i64::MIN, None)? {
        if root_of(&sessions, &row.session) != root {
            continue;
        }
        if !opened.contains(&row.session.as_str())
            && let Some(session) = sessions.get(&row.session)
        {
            push(session_line(session, &root));
            opened.push(&session.id);
        }
        push(row_line(&row, &root));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
