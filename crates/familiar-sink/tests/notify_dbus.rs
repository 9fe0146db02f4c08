//! Desktop notifications against a real `dbus-daemon --session` with a notification server on
//! it: summary, body, app name, urgency hint and the per-session replace id are checked on the
//! server side. One test per file: it sets `DBUS_SESSION_BUS_ADDRESS` for the whole process.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use familiar_model::{ActionKind, EventKind, Urgency};
use familiar_sink::{NotifyOptions, NotifySink, Sink, probe_notification_server};
use familiar_testkit::dbus::{DbusDaemon, NotifyCall, start_notification_server};
use support::{action, notify};

#[test]
fn notifications_reach_a_real_notification_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let daemon = DbusDaemon::start(dir.path());
    // SAFETY: the only test in this process, and no other thread exists yet.
    unsafe { std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &daemon.address) };
    let calls = start_notification_server(&daemon.address);

    let info = probe_notification_server().expect("probe finds the server");
    assert_eq!(info.name, "familiar-test-server");

    let mut options = NotifyOptions::default();
    options.muted_events.insert(EventKind::Success);
    let mut sink = NotifySink::new(options);
    sink.handle(&notify(
        "Tool error",
        "Bash: exit 1",
        Urgency::Critical,
        "s1",
    ));
    sink.handle(&notify(
        "Tool error",
        "Bash: exit 2",
        Urgency::Critical,
        "s1",
    ));
    sink.handle(&notify("API error", "rate_limit", Urgency::Low, "s2"));
    // Not for this sink, and a muted kind: neither reaches the server.
    sink.handle(&action(ActionKind::Say { text: "hi".into() }, "s1"));
    let mut muted = notify("Done", "turn finished", Urgency::Normal, "s1");
    muted.event = EventKind::Success;
    sink.handle(&muted);
    sink.handle(&notify("Tool error", "Bash: exit 3", Urgency::Normal, "s1"));
    // This server renders no markup: text goes as it is (escaping would show `&lt;`).
    sink.handle(&notify("Tool error", "a <b> & c", Urgency::Normal, "s1"));
    sink.flush();

    let received: Vec<NotifyCall> = calls.try_iter().collect();
    let expected = [
        ("Tool error", "Bash: exit 1", 2, 0),
        // The same session replaces its notification: the id the server gave the first one.
        ("Tool error", "Bash: exit 2", 2, 41),
        // Another session gets its own notification.
        ("API error", "rate_limit", 0, 0),
        ("Tool error", "Bash: exit 3", 1, 41),
        ("Tool error", "a <b> & c", 1, 41),
    ];
    assert_eq!(received.len(), expected.len(), "calls: {received:#?}");
    for (call, (summary, body, urgency, replaces)) in received.iter().zip(expected) {
        assert_eq!(call.app_name, "Familiar");
        assert_eq!(call.summary, summary);
        assert_eq!(call.body, body);
        assert_eq!(call.urgency, Some(urgency));
        assert_eq!(call.replaces_id, replaces, "call: {call:?}");
    }
    assert_eq!(sink.sent(), 5);
    assert_eq!(sink.failures(), 0);

    // The server goes away: the sink warns, rings the fallback bell, and carries on.
    drop(daemon);
    let bell = Arc::new(Mutex::new(Vec::new()));
    let options = NotifyOptions {
        fallback_bell: Some(Box::new(SharedBuf(Arc::clone(&bell)))),
        ..NotifyOptions::default()
    };
    let mut sink = NotifySink::new(options);
    sink.handle(&notify("Tool error", "gone", Urgency::Normal, "s1"));
    sink.handle(&notify("Tool error", "still gone", Urgency::Normal, "s1"));
    sink.flush();
    assert_eq!(sink.failures(), 2);
    assert_eq!(sink.sent(), 0);
    assert_eq!(bell.lock().expect("bell").as_slice(), b"\x07\x07");
    assert!(calls.recv_timeout(Duration::from_millis(10)).is_err());
}

struct SharedBuf(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("buf").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
