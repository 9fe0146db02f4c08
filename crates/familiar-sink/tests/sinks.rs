//! The plain sinks and the fan-out: NDJSON lines flushed per action, the bell, a failing or
//! panicking sink that does not stop the others.

mod support;

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use familiar_model::{Action, ActionKind, Urgency};
use familiar_sink::{BellSink, Fanout, NdjsonSink, Sink};
use support::{action, notify};

/// A writer that records how many bytes were flushed, to check flushing per action.
#[derive(Clone, Default)]
struct Recorder {
    written: Arc<Mutex<Vec<u8>>>,
    flushed_at: Arc<Mutex<Vec<usize>>>,
}

impl Write for Recorder {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.written.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        let len = self.written.lock().expect("lock").len();
        self.flushed_at.lock().expect("lock").push(len);
        Ok(())
    }
}

struct Failing(io::ErrorKind);

impl Write for Failing {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::from(self.0))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn ndjson_writes_one_flushed_line_per_action_in_the_run_format() {
    let recorder = Recorder::default();
    let mut sink = NdjsonSink::new(recorder.clone());
    sink.handle(&action(
        ActionKind::Animate {
            name: "attack".into(),
        },
        "s1",
    ));
    sink.handle(&notify("Tool error", "exit 1", Urgency::Critical, "s1"));
    let text = String::from_utf8(recorder.written.lock().expect("lock").clone()).expect("utf-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        r#"{"action":"animate","name":"attack","script":"notify-errors.rhai","session":"s1","agent":null,"line":7,"event":"error"}"#
    );
    let back: Action = serde_json::from_str(lines[1]).expect("line parses back");
    assert_eq!(
        back,
        notify("Tool error", "exit 1", Urgency::Critical, "s1")
    );
    // Flushed after each whole line, not at the end.
    let flushed = recorder.flushed_at.lock().expect("lock").clone();
    assert_eq!(flushed, vec![lines[0].len() + 1, text.len()]);
    assert_eq!(sink.failures(), 0);
}

#[test]
fn ndjson_stops_quietly_on_a_closed_pipe_and_counts_other_errors() {
    let mut closed = NdjsonSink::new(Failing(io::ErrorKind::BrokenPipe));
    closed.handle(&action(ActionKind::Rest, "s1"));
    closed.handle(&action(ActionKind::Rest, "s1"));
    assert!(closed.is_closed());
    assert_eq!(closed.failures(), 0);

    let mut full = NdjsonSink::new(Failing(io::ErrorKind::StorageFull));
    full.handle(&action(ActionKind::Rest, "s1"));
    full.handle(&action(ActionKind::Rest, "s1"));
    assert!(!full.is_closed());
    assert_eq!(full.failures(), 2);
}

#[test]
fn bell_rings_only_for_the_chosen_actions() {
    let mut bell = BellSink::new(Vec::new());
    bell.handle(&notify("t", "b", Urgency::Normal, "s1"));
    bell.handle(&action(
        ActionKind::Sound {
            name: "ding".into(),
        },
        "s1",
    ));
    bell.handle(&notify("t", "b", Urgency::Normal, "s1"));
    assert_eq!(bell.into_inner(), b"\x07\x07");

    let mut bell = BellSink::new(Vec::new()).ringing_on(&["sound"]);
    bell.handle(&notify("t", "b", Urgency::Normal, "s1"));
    bell.handle(&action(
        ActionKind::Sound {
            name: "ding".into(),
        },
        "s1",
    ));
    assert_eq!(bell.into_inner(), b"\x07");
}

struct Panicky;

impl Sink for Panicky {
    fn name(&self) -> &str {
        "panicky"
    }
    fn handle(&mut self, _: &Action) {
        panic!("a bug in a sink");
    }
}

#[test]
fn fanout_keeps_feeding_the_others_when_one_fails_or_panics() {
    let out = Recorder::default();
    let mut fanout = Fanout::new()
        .with(NdjsonSink::new(Failing(io::ErrorKind::StorageFull)))
        .with(Panicky)
        .with(NdjsonSink::new(out.clone()));
    for _ in 0..3 {
        fanout.handle(&action(ActionKind::Xp { amount: 5 }, "s1"));
    }
    fanout.flush();
    let text = String::from_utf8(out.written.lock().expect("lock").clone()).expect("utf-8");
    assert_eq!(text.lines().count(), 3);
    let report = fanout.report();
    let summary: Vec<(&str, u64, bool)> = report
        .iter()
        .map(|r| (r.name.as_str(), r.failures, r.broken))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("ndjson", 3, false),
            ("panicky", 1, true),
            ("ndjson", 0, false)
        ]
    );
    assert_eq!(fanout.failures(), 4);
}
