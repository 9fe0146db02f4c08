//! Fuzz target: arbitrary event streams through the shipped scripts.
//!
//! Events are built field by field from the fuzz input (any kind, any optional string or
//! number, clock steps between them) and handed to a `ScriptHost` running `default.rhai` and
//! `notify-errors.rhai`, as `Stage` does in the binary. Besides "never panics", the oracle is
//! that the shipped scripts never report a runtime error: whatever a transcript holds, the
//! scripts users start from must not break on it.
//!
//! The same events also go through a hostile script (the cases of the "scripts must not be
//! able to kill the process" issue: data nested thousands deep, `split("")`, `to_chars`,
//! thousands of searches, `parse_json`, deep `emit`, timers) under small limits, so fuzz
//! inputs reach them: the process must survive, every error must be located, and the script
//! must keep running (its `on_event` logs once per event).
#![no_main]

use std::sync::Arc;

use arbitrary::Arbitrary;
use familiar_model::{ErrorKind, Event, EventKind, Status};
use familiar_script::{HostConfig, Limits, ManualClock, SHIPPED, ScriptHost, Severity};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct FuzzEvent {
    kind: u8,
    session: Option<String>,
    agent: Option<String>,
    sidechain: bool,
    ts: Option<String>,
    line: u64,
    context_used: Option<u64>,
    context_limit: u64,
    status: u8,
    tool: Option<String>,
    target: Option<String>,
    tool_use_id: Option<String>,
    agent_type: Option<String>,
    description: Option<String>,
    error: Option<u8>,
    error_code: Option<String>,
    text: Option<String>,
    cause: Option<String>,
    retry_in_ms: Option<f64>,
    retry_attempt: Option<u64>,
    max_retries: Option<u64>,
    trigger: Option<String>,
    pre_tokens: Option<u64>,
    post_tokens: Option<u64>,
    command: Option<String>,
    think: Option<u8>,
    model: Option<String>,
    duration_ms: Option<u64>,
    raw: Option<String>,
    /// Clock step before this event, in milliseconds (debouncing depends on it).
    advance_ms: u32,
}

impl FuzzEvent {
    fn to_event(&self) -> Event {
        let kinds = EventKind::ALL;
        let statuses = [
            Status::Unknown,
            Status::Working,
            Status::WaitingForApproval,
            Status::WaitingForInput,
            Status::Idle,
        ];
        let mut ev = Event::new(kinds[usize::from(self.kind) % kinds.len()], self.line);
        ev.session = self.session.clone();
        ev.agent = self.agent.clone();
        ev.sidechain = self.sidechain;
        ev.ts = self.ts.clone();
        ev.context_used = self.context_used;
        ev.context_limit = self.context_limit;
        ev.status = statuses[usize::from(self.status) % statuses.len()];
        ev.tool = self.tool.clone();
        ev.target = self.target.clone();
        ev.tool_use_id = self.tool_use_id.clone();
        ev.agent_type = self.agent_type.clone();
        ev.description = self.description.clone();
        ev.error = self
            .error
            .map(|e| ErrorKind::ALL[usize::from(e) % ErrorKind::ALL.len()]);
        ev.error_code = self.error_code.clone();
        ev.text = self.text.clone();
        ev.cause = self.cause.clone();
        // JSON numbers are finite: the normalizer never produces NaN or infinities.
        ev.retry_in_ms = self.retry_in_ms.filter(|v| v.is_finite());
        ev.retry_attempt = self.retry_attempt;
        ev.max_retries = self.max_retries;
        ev.trigger = self.trigger.clone();
        ev.pre_tokens = self.pre_tokens;
        ev.post_tokens = self.post_tokens;
        ev.command = self.command.clone();
        ev.think = self.think;
        ev.model = self.model.clone();
        ev.duration_ms = self.duration_ms;
        ev.raw = self.raw.as_deref().map(Arc::from);
        ev
    }
}

const HOSTILE: &str = r#"
let a = [];
fn on_event(ev) { log("alive"); }
fn on_prompt(ev) { let x = []; for i in 0..15000 { x = [x]; } }
fn on_text(ev) { let parts = (ev.text ?? "").split(""); }
fn on_thinking(ev) { let chars = (ev.text ?? "").to_chars(); }
fn on_reading(ev) { let s = ev.text ?? ""; for i in 0..60000 { s.index_of("needle"); } }
fn on_writing(ev) { for i in 0..50 { a = [a]; } }
fn on_bash(ev) { let v = parse_json(ev.target ?? "[]"); }
fn on_tool(ev) { let r = ev.raw; emit("deep", #{a: a}); }
fn on_status(ev) { ev.state.n = (ev.state.n ?? 0) + 1; after(ev.line % 5000, "t"); }
fn on_timer(t) { t.state.seen = [t.state]; every(1, "again"); }
"#;

fn hostile_host(clock: &ManualClock) -> ScriptHost {
    let limits = Limits {
        max_call_time: std::time::Duration::from_millis(20),
        max_string_size: 4096,
        max_array_size: 1000,
        max_map_size: 1000,
        max_data_depth: 16,
        ..Limits::default()
    };
    let mut host = ScriptHost::new(HostConfig {
        limits,
        clock: Arc::new(clock.clone()),
        ..HostConfig::default()
    });
    if let Err(err) = host.load_source("hostile.rhai", HOSTILE, None) {
        panic!("hostile.rhai does not load: {err}");
    }
    host
}

fn check_hostile(host: &mut ScriptHost, event: &Event, time: std::time::SystemTime) {
    let (actions, diagnostics) = host.handle_event(event);
    let alive = actions
        .iter()
        .filter(|a| matches!(&a.kind, familiar_model::ActionKind::Log { text } if text == "alive"))
        .count();
    assert_eq!(alive, 1, "hostile.rhai stopped running on {event:?}");
    let (_, timer_diagnostics) = host.tick(time);
    for diag in diagnostics.iter().chain(&timer_diagnostics) {
        assert!(diag.line.is_some(), "an error without a position: {diag}");
    }
}

fuzz_target!(|events: Vec<FuzzEvent>| {
    let clock = ManualClock::new();
    let mut host = ScriptHost::new(HostConfig {
        clock: Arc::new(clock.clone()),
        ..HostConfig::default()
    });
    for (name, source) in SHIPPED {
        if let Err(err) = host.load_source(name, source, None) {
            panic!("shipped script {name} does not load: {err}");
        }
    }
    let mut hostile = hostile_host(&clock);
    let mut time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_767_261_600);
    let (mut actions, mut diagnostics) = (Vec::new(), Vec::new());
    for fuzz_event in events.iter().take(256) {
        clock.advance_secs(f64::from(fuzz_event.advance_ms) / 1000.0);
        time += std::time::Duration::from_millis(u64::from(fuzz_event.advance_ms));
        let event = fuzz_event.to_event();
        check_hostile(&mut hostile, &event, time);
        host.handle(&event, &mut actions, &mut diagnostics);
        if let Some(error) = diagnostics.iter().find(|d| d.severity == Severity::Error) {
            panic!("shipped script failed on {event:?}: {error}");
        }
        actions.clear();
        diagnostics.clear();
    }
});
