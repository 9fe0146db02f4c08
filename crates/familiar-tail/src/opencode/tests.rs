//! The opencode source on databases made here with opencode 1.18.33's tables (the columns
//! Familiar reads): a tool part written again is sent again, whole, under the session's
//! address; a session's subagent under its root; a database with a schema Familiar does not
//! know, or locked, is one problem line, said once.

use std::path::Path;

use rusqlite::Connection;

use super::*;
use crate::message::TailMessage;

const SCHEMA: &str = "
CREATE TABLE session (id text PRIMARY KEY, project_id text, parent_id text, directory text NOT NULL,
  title text NOT NULL, version text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
";

fn make(dir: &Path) -> (std::path::PathBuf, Connection) {
    let db = dir.join("opencode.db");
    let conn = Connection::open(&db).expect("create db");
    conn.execute_batch(SCHEMA).expect("schema");
    conn.execute_batch(
        "INSERT INTO session VALUES ('ses_a', 'p', NULL, '/work/p', 't', '1.18.33', 1000, 1000);
         INSERT INTO session VALUES ('ses_b', 'p', 'ses_a', '/work/p', 'sub', '1.18.33', 1500, 1500);
         INSERT INTO message VALUES ('msg_1', 'ses_a', 1001, 1001, '{\"role\":\"assistant\"}');
         INSERT INTO part VALUES ('prt_1', 'msg_1', 'ses_a', 1002, 1002,
           '{\"type\":\"tool\",\"state\":{\"status\":\"running\"}}');",
    )
    .expect("rows");
    (db, conn)
}

fn poll(follower: &mut Follower) -> Vec<TailMessage> {
    let mut out = Vec::new();
    follower.poll(&|_| true, true, &mut out);
    out
}

fn lines(messages: &[TailMessage]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|message| match message {
            TailMessage::Lines { lines, .. } => Some(lines),
            _ => None,
        })
        .flatten()
        .map(|line| String::from_utf8_lossy(&line.bytes).into_owned())
        .collect()
}

#[test]
fn a_part_written_again_is_sent_again_under_its_session() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (db, conn) = make(dir.path());
    let mut follower = Follower::new(db.clone());
    let first = poll(&mut follower);
    let TailMessage::Opened { path, info, .. } = &first[0] else {
        panic!("{first:?}");
    };
    assert_eq!(path.as_ref(), address(&db, "ses_a").as_path());
    assert_eq!(info.cwd.as_deref(), Some("/work/p"));
    let sent = lines(&first);
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert!(sent[0].contains("\"opencode.session\""));
    assert!(sent[2].contains("running"));
    // Nothing changed: nothing read.
    assert!(poll(&mut follower).is_empty());
    conn.execute_batch(
        "UPDATE part SET time_updated = 1003, data = '{\"type\":\"tool\",\"state\":{\"status\":\"completed\"}}' WHERE id = 'prt_1';
         INSERT INTO message VALUES ('msg_2', 'ses_b', 1600, 1600, '{\"role\":\"user\"}');",
    )
    .expect("update");
    let again = lines(&poll(&mut follower));
    assert_eq!(again.len(), 3, "{again:?}");
    assert!(again[0].contains("completed"), "{again:?}");
    // The subagent's session row, then its message, under the root's address.
    assert!(again[1].contains("\"agentId\":\"ses_b\""), "{again:?}");
    assert!(again[2].contains("msg_2") && again[2].contains("\"agentId\":\"ses_b\""));
    // Read whole afterwards, the same rows in the order they were created.
    let whole = String::from_utf8(read_session(&db, "ses_a").expect("read")).expect("UTF-8");
    assert_eq!(whole.lines().count(), 5, "{whole}");
}

#[test]
fn a_schema_familiar_does_not_know_is_one_problem_said_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("opencode.db");
    let conn = Connection::open(&db).expect("create db");
    conn.execute_batch("CREATE TABLE session (id text); CREATE TABLE message (id text);")
        .expect("schema");
    let mut follower = Follower::new(db.clone());
    let first = poll(&mut follower);
    assert_eq!(first.len(), 1, "{first:?}");
    let TailMessage::Problem { error, .. } = &first[0] else {
        panic!("{first:?}");
    };
    assert!(error.contains("schema Familiar does not know"), "{error}");
    conn.execute_batch("CREATE TABLE other (id text);")
        .expect("change");
    assert!(poll(&mut follower).is_empty(), "said once");
    assert!(read_session(&db, "ses_a").is_err());
}

#[test]
fn a_locked_database_is_one_problem_and_read_once_free() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (db, conn) = make(dir.path());
    conn.execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;")
        .expect("lock");
    let mut follower = Follower::new(db.clone());
    let first = poll(&mut follower);
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(
        matches!(&first[0], TailMessage::Problem { error, .. } if error.contains("busy or locked")),
        "{first:?}"
    );
    conn.execute_batch("COMMIT; PRAGMA locking_mode = NORMAL;")
        .expect("unlock");
    // A read is what releases an exclusive lock once the mode is normal again.
    conn.query_row("SELECT count(*) FROM session", [], |_| Ok(()))
        .expect("release");
    conn.execute_batch("UPDATE session SET title = 'u' WHERE id = 'ses_a'")
        .expect("touch");
    assert_eq!(lines(&poll(&mut follower)).len(), 3);
}

/// `familiar` in one project reads that project's sessions from a database holding every
/// project's: the first read takes only theirs, and later rows of the others are not sent.
#[test]
fn only_the_selected_sessions_rows_are_read_and_sent() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (db, conn) = make(dir.path());
    conn.execute_batch(
        "INSERT INTO session VALUES ('ses_o', 'q', NULL, '/work/other', 't', '1.18.33', 900, 900);
         INSERT INTO message VALUES ('msg_o', 'ses_o', 901, 901, '{\"role\":\"user\"}');",
    )
    .expect("another project");
    let mut follower = Follower::new(db.clone());
    let here = |session: &SessionRow| session.directory == "/work/p";
    let mut first = Vec::new();
    follower.poll(&here, true, &mut first);
    let sent = lines(&first);
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert!(sent.iter().all(|line| !line.contains("ses_o")), "{sent:?}");
    // Not even read: the other project's rows never came out of the database.
    assert!(
        !follower.was_read("msg_o"),
        "the other project's rows were read"
    );
    conn.execute_batch(
        "INSERT INTO message VALUES ('msg_o2', 'ses_o', 2000, 2000, '{\"role\":\"user\"}');
         INSERT INTO message VALUES ('msg_3', 'ses_a', 2001, 2001, '{\"role\":\"user\"}');",
    )
    .expect("both write");
    let mut later = Vec::new();
    follower.poll(&here, true, &mut later);
    let sent = lines(&later);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].contains("msg_3"), "{sent:?}");
}

#[test]
fn a_rows_json_goes_into_its_line_as_it_is_when_it_is_one_line_of_an_object() {
    let row = |data: &str| Row {
        part: true,
        id: "prt_1".into(),
        session: "ses_b".into(),
        message: Some("msg_1".into()),
        created: 1000,
        updated: 1001,
        data: data.into(),
    };
    let parsed = |data: &str| -> serde_json::Value {
        serde_json::from_slice(&row_line(&row(data), "ses_a")).expect("a JSON line")
    };
    // As opencode writes it: the object itself, its text encoded once.
    let object = r#"{"type":"text","text":"a \"quoted\"\nline"}"#;
    let line = String::from_utf8(row_line(&row(object), "ses_a")).expect("UTF-8");
    assert!(line.ends_with(&format!(r#","data":{object}}}"#)), "{line}");
    assert!(!line.contains('\n'));
    let line = parsed(object);
    assert_eq!(line["data"]["text"], "a \"quoted\"\nline");
    assert_eq!(line["agentId"], "ses_b");
    assert_eq!(line["messageId"], "msg_1");
    assert_eq!(line["type"], "opencode.part");
    // Anything else is a string of it, as before: a line break between its tokens would end
    // the line, and text that is not JSON (or not an object) is the reader's to refuse.
    for data in [
        "{\"type\":\n\"text\"}",
        "{\"type\":\"text\"}\r",
        "{\"type\": \"text\"",
        "[1, 2]",
        "not JSON",
    ] {
        let line = String::from_utf8(row_line(&row(data), "ses_a")).expect("UTF-8");
        assert!(!line.contains('\n') && !line.contains('\r'), "{line}");
        assert_eq!(parsed(data)["data"], data, "{data:?}");
    }
}
