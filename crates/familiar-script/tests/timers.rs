//! Time for scripts: `after`, `every` and `cancel` set timers that `ScriptHost::tick` fires
//! into `on_timer(t)` from the caller's clock, and `ev.state` / `t.state` keep a map per
//! session.

mod support;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use familiar_model::{ActionKind, Event, EventKind, Status};
use familiar_script::ScriptHost;
use support::{ev, loaded, logs, run};

/// The example of docs/scripting.md, word for word.
const WAITING: &str = r#"
fn on_status(ev) {
    if ev.status == "waiting_for_input" { after(30000, "nudge"); } else { cancel("nudge"); }
}
fn on_timer(t) {
    if t.name == "nudge" { notify("Claude Code", "Waiting for your input for 30 s"); }
}
"#;

const T0: u64 = 1_767_261_600; // 2026-01-01T10:00:00Z

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(T0 + secs)
}

fn ts(secs: u64) -> String {
    familiar_model::time::format_timestamp(at(secs))
}

fn status(session: &str, status: Status, secs: u64, line: u64) -> Event {
    let mut event = Event::new(EventKind::Status, line);
    event.session = Some(session.into());
    event.status = status;
    event.ts = Some(ts(secs));
    event
}

fn tick(host: &mut ScriptHost, secs: u64) -> Vec<(ActionKind, Option<String>, u64)> {
    let (actions, diags) = host.tick(at(secs));
    let rendered: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert_eq!(rendered, Vec::<String>::new());
    actions
        .into_iter()
        .map(|a| (a.kind, a.session, a.line))
        .collect()
}

fn nudge() -> ActionKind {
    ActionKind::Notify {
        title: "Claude Code".into(),
        body: "Waiting for your input for 30 s".into(),
        urgency: familiar_model::Urgency::Normal,
    }
}

#[test]
fn notify_after_30_s_waiting_for_input_in_five_lines() {
    let (mut host, _) = loaded(WAITING);
    run(&mut host, &status("s1", Status::WaitingForInput, 0, 7));
    assert_eq!(tick(&mut host, 29), vec![]);
    // Tagged with the session and line of the status event that set the timer.
    assert_eq!(tick(&mut host, 30), vec![(nudge(), Some("s1".into()), 7)]);
    assert_eq!(tick(&mut host, 90), vec![], "a one-shot timer fires once");

    // The user answered within 30 s: no nudge.
    run(&mut host, &status("s1", Status::WaitingForInput, 100, 8));
    run(&mut host, &status("s1", Status::Working, 110, 9));
    assert_eq!(tick(&mut host, 200), vec![]);
}

#[test]
fn timers_of_two_sessions_are_apart() {
    let (mut host, _) = loaded(WAITING);
    run(&mut host, &status("s1", Status::WaitingForInput, 0, 1));
    run(&mut host, &status("s2", Status::WaitingForInput, 10, 2));
    run(&mut host, &status("s2", Status::Working, 20, 3));
    assert_eq!(tick(&mut host, 60), vec![(nudge(), Some("s1".into()), 1)]);
}

#[test]
fn every_repeats_and_skips_missed_periods_and_ticks_never_go_back() {
    let (mut host, _) = loaded(
        "fn on_session_start(ev) { every(1000, \"beat\"); }\n\
         fn on_timer(t) { log(`${t.name} ${t.every} ${t.at}`); if t.at >= 1767261605.0 { cancel(\"beat\"); } }",
    );
    let mut start = ev(EventKind::SessionStart, 1);
    start.ts = Some(ts(0));
    run(&mut host, &start);
    let beats = |host: &mut ScriptHost, secs| {
        let (actions, _) = host.tick(at(secs));
        logs(&actions.into_iter().map(|a| a.kind).collect::<Vec<_>>())
    };
    assert_eq!(beats(&mut host, 1), vec!["beat 1000 1767261601.0"]);
    assert_eq!(
        beats(&mut host, 0),
        Vec::<String>::new(),
        "time does not go back"
    );
    // Three periods missed: one call, at the first missed due time, and the rhythm goes on.
    assert_eq!(beats(&mut host, 4), vec!["beat 1000 1767261602.0"]);
    assert_eq!(beats(&mut host, 5), vec!["beat 1000 1767261605.0"]);
    assert_eq!(
        beats(&mut host, 9),
        Vec::<String>::new(),
        "cancelled in on_timer"
    );
}

#[test]
fn session_state_is_kept_per_session_and_shared_with_the_timers() {
    let (mut host, _) = loaded(
        "let total = 0;\n\
         fn on_prompt(ev) {\n\
             total += 1;\n\
             ev.state.prompts = (ev.state.prompts ?? 0) + 1;\n\
             log(`${ev.session}: ${ev.state.prompts} of ${total}`);\n\
             after(0, \"report\");\n\
         }\n\
         fn on_timer(t) { log(`${t.session} has ${t.state.prompts}`); }",
    );
    let prompt = |session: &str, line| {
        let mut event = ev(EventKind::Prompt, line);
        event.session = Some(session.into());
        event.ts = Some(ts(line));
        event
    };
    let mut seen = Vec::new();
    for (session, line) in [("a", 1), ("b", 2), ("a", 3)] {
        seen.extend(logs(&run(&mut host, &prompt(session, line)).0));
    }
    assert_eq!(seen, vec!["a: 1 of 1", "b: 1 of 2", "a: 2 of 3"]);
    let (actions, _) = host.tick(at(10));
    let kinds: Vec<ActionKind> = actions.into_iter().map(|a| a.kind).collect();
    // The timers fire in the order they were set; "a" was set again at line 3 and moved.
    assert_eq!(logs(&kinds), vec!["b has 1", "a has 2"]);
}

#[test]
fn a_timer_set_while_loading_is_a_located_error() {
    let (mut host, _) = support::host();
    let err = host
        .load_source("t.rhai", "fn init() {\n  after(10, \"x\");\n}", None)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some(
            "t.rhai:2:3: error in init: Runtime error: after: timers are set from a handler \
             (on_event, on_<kind>, on_timer), not while the script loads\n  |\n2 |   after(10, \
             \"x\");\n  |   ^"
        )
    );
}

#[test]
fn a_misspelled_timer_field_says_which_was_meant() {
    let (mut host, _) =
        loaded("fn on_prompt(ev) { after(0, \"x\"); }\nfn on_timer(t) {\n  log(t.nmae);\n}");
    let mut prompt = ev(EventKind::Prompt, 1);
    prompt.ts = Some(ts(0));
    run(&mut host, &prompt);
    let (_, diags) = host.tick(at(1));
    let rendered: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert_eq!(
        rendered,
        vec![
            "test.rhai:3:9: error in on_timer (event prompt from line 1): the timer has no field \
             `nmae`; did you mean `name`?\n  |\n3 |   log(t.nmae);\n  |         ^"
        ]
    );
}

/// Setting the same names again moves their timers: a script at its bound can still do that.
#[test]
fn a_script_at_its_timer_bound_can_still_move_its_timers() {
    let (mut host, _) = loaded(
        r#"
fn on_text(ev) { for i in 0..1000 { after(1e12, `t${i}`); } }
fn on_writing(ev) { for i in 0..1000 { every(1e12, `t${i}`); } after(5, "t0"); }
fn on_bash(ev) { after(5, "one more"); }
"#,
    );
    for (kind, line) in [(EventKind::Text, 1), (EventKind::Writing, 2)] {
        let (_, diags) = run(&mut host, &ev(kind, line));
        assert!(diags.is_empty(), "{kind:?}: {diags:?}");
    }
    let (_, diags) = run(&mut host, &ev(EventKind::Bash, 3));
    assert!(
        diags.len() == 1 && diags[0].contains("after: more than 1000 timers"),
        "{diags:?}"
    );
}
