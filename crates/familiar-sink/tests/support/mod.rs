//! Test support shared by the sink tests: a capture of `tracing` output and an action
//! builder. (The real session bus and notification server are `familiar_testkit::dbus`.)

#![allow(dead_code)]

use std::io::Write;
use std::sync::{Arc, Mutex};

use familiar_model::{Action, ActionKind, EventKind};

/// Everything `tracing` logs in this process, as text.
#[derive(Clone, Default)]
pub struct LogCapture(Arc<Mutex<Vec<u8>>>);

impl LogCapture {
    /// Install a global subscriber writing into the capture (one per test process).
    pub fn install() -> LogCapture {
        let capture = LogCapture::default();
        let writer = capture.clone();
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .init();
        capture
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("log lock")).into_owned()
    }
}

impl Write for LogCapture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("log lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An action as a script would emit it, caused by an `error` event of `session`.
pub fn action(kind: ActionKind, session: &str) -> Action {
    Action {
        kind,
        script: "notify-errors.rhai".to_owned(),
        session: Some(session.to_owned()),
        agent: None,
        line: 7,
        event: EventKind::Error,
    }
}

pub fn notify(title: &str, body: &str, urgency: familiar_model::Urgency, session: &str) -> Action {
    action(
        ActionKind::Notify {
            title: title.to_owned(),
            body: body.to_owned(),
            urgency,
        },
        session,
    )
}
