//! With `DBUS_SESSION_BUS_ADDRESS` pointing at nothing: one clear warning, every failure
//! counted, and the other sinks of the fan-out still get every action. One test per file: it
//! sets the variable for the whole process.

mod support;

use familiar_model::{ActionKind, Urgency};
use familiar_sink::{
    Fanout, NdjsonSink, NotifyOptions, NotifySink, ProbeError, Sink, probe_notification_server,
    probe_session_bus,
};
use support::{LogCapture, action, notify};

#[test]
fn no_session_bus_warns_once_and_the_pipeline_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nothing = dir.path().join("no-bus-here");
    // SAFETY: the only test in this process, and no other thread exists yet.
    unsafe {
        std::env::set_var(
            "DBUS_SESSION_BUS_ADDRESS",
            format!("unix:path={}", nothing.display()),
        )
    };
    let logs = LogCapture::install();

    assert!(matches!(probe_session_bus(), Err(ProbeError::NoBus(_))));
    assert!(matches!(
        probe_notification_server(),
        Err(ProbeError::NoBus(_))
    ));

    let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut fanout = Fanout::new()
        .with(NotifySink::new(NotifyOptions::default()))
        .with(NdjsonSink::new(Shared(std::sync::Arc::clone(&out))));
    for n in 0..3 {
        fanout.handle(&notify(
            "Tool error",
            &format!("exit {n}"),
            Urgency::Critical,
            "s1",
        ));
    }
    fanout.handle(&action(
        ActionKind::Animate {
            name: "hurt".into(),
        },
        "s1",
    ));
    fanout.flush();

    let lines = String::from_utf8(out.lock().expect("out").clone()).expect("utf-8");
    assert_eq!(lines.lines().count(), 4, "{lines}");
    assert!(
        lines
            .lines()
            .last()
            .is_some_and(|l| l.contains(r#""action":"animate""#))
    );

    let report = fanout.report();
    assert_eq!(report[0].name, "notify");
    assert_eq!(report[0].failures, 3);
    assert_eq!(report[1].failures, 0);

    let text = logs.text();
    let warnings: Vec<&str> = text.lines().filter(|l| l.contains(" WARN ")).collect();
    assert_eq!(warnings.len(), 1, "{text}");
    assert!(
        warnings[0].contains("desktop notifications unavailable")
            && warnings[0].contains("carrying on without them")
            && warnings[0].contains("DBUS_SESSION_BUS_ADDRESS"),
        "{}",
        warnings[0]
    );
}

struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("out").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
