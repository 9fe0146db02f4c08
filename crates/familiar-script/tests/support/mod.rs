//! Helpers shared by the integration tests of familiar-script.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use familiar_model::{Action, ActionKind, Event, EventKind};
use familiar_script::{HostConfig, Limits, ManualClock, ScriptDiagnostic, ScriptHost};

/// A host with a hand-driven clock and `run` not allowed.
pub fn host() -> (ScriptHost, ManualClock) {
    host_with(false)
}

/// The default limits but a wall-clock budget of 10 s per call instead of 0.5 s: a debug build
/// on a busy machine can take a good part of 0.5 s to reach the operation limit, and these
/// tests are about the other limits. The time limit has its own tests with the default.
pub fn test_limits() -> Limits {
    Limits {
        max_call_time: Duration::from_secs(10),
        ..Limits::default()
    }
}

pub fn host_with(allow_run: bool) -> (ScriptHost, ManualClock) {
    let clock = ManualClock::new();
    let host = ScriptHost::new(HostConfig {
        allow_run,
        clock: Arc::new(clock.clone()),
        limits: test_limits(),
        store_dir: None,
        latest_time: None,
    });
    (host, clock)
}

/// A host with one script loaded from text; panics with the rendered error if it fails.
pub fn loaded(source: &str) -> (ScriptHost, ManualClock) {
    let (mut host, clock) = host();
    if let Err(err) = host.load_source("test.rhai", source, None) {
        panic!("script failed to load:\n{err}");
    }
    (host, clock)
}

pub fn ev(kind: EventKind, line: u64) -> Event {
    let mut event = Event::new(kind, line);
    event.session = Some("s1".into());
    event
}

/// Actions of one event, with diagnostics rendered.
pub fn run(host: &mut ScriptHost, event: &Event) -> (Vec<ActionKind>, Vec<String>) {
    let (actions, diagnostics) = host.handle_event(event);
    (
        actions.into_iter().map(|a: Action| a.kind).collect(),
        diagnostics
            .iter()
            .map(ScriptDiagnostic::to_string)
            .collect(),
    )
}

/// Texts of `log` actions (the tests' way of looking inside a script).
pub fn logs(actions: &[ActionKind]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| match a {
            ActionKind::Log { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}
