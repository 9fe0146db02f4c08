//! The `Event` type as scripts see it: every field, `()` for absent ones, `ev.raw`, and a
//! misspelled field as a located error.

mod support;

use familiar_model::{AgentKind, ErrorKind, Event, EventKind, Status};
use familiar_script::EVENT_FIELDS;
use support::{loaded, logs, run};

fn full_event() -> Event {
    let mut ev = Event::new(EventKind::Error, 17);
    ev.session = Some("sess".into());
    ev.agent = Some("a1".into());
    ev.sidechain = true;
    ev.ts = Some("2025-06-02T18:46:51.500Z".into());
    ev.context_used = Some(150_000);
    ev.context_limit = 200_000;
    ev.status = Status::WaitingForApproval;
    ev.agent_kind = AgentKind::Codex;
    ev.tool = Some("Bash".into());
    ev.target = Some("cargo test".into());
    ev.tool_use_id = Some("toolu_1".into());
    ev.agent_type = Some("general-purpose".into());
    ev.description = Some("Find things".into());
    ev.error = Some(ErrorKind::Api);
    ev.error_code = Some("rate_limit".into());
    ev.text = Some("You've hit your limit".into());
    ev.message = Some("You've hit your limit".into());
    ev.cause = Some("ConnectionRefused".into());
    ev.retry_in_ms = Some(563.5);
    ev.retry_attempt = Some(2);
    ev.max_retries = Some(10);
    ev.trigger = Some("auto".into());
    ev.pre_tokens = Some(155_317);
    ev.post_tokens = Some(12_000);
    ev.command = Some("/clear".into());
    ev.think = Some(3);
    ev.model = Some("claude-opus-4-5".into());
    ev.duration_ms = Some(122_537);
    ev.previous_status = Some(Status::Working);
    ev.cwd = Some("/home/u/proj".into());
    ev.git_branch = Some("main".into());
    ev.host = Some("me@devbox".into());
    ev.plan = Some(vec![familiar_model::PlanItem {
        text: "Run CI".into(),
        status: familiar_model::PlanStatus::InProgress,
        active_form: Some("Running CI".into()),
    }]);
    ev.raw = Some(r#"{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":5}},"isApiErrorMessage":true}"#.into());
    ev
}

/// A script that logs `name=value (type)` for every documented field.
fn dump_script() -> String {
    let mut body = String::from("fn on_event(ev) {\n");
    for field in EVENT_FIELDS {
        if *field == "raw" {
            continue;
        }
        body.push_str(&format!(
            "    log(`{field}=${{ev.{field}}} (${{type_of(ev.{field})}})`);\n"
        ));
    }
    body.push_str("}\n");
    body
}

#[test]
fn every_field_reads_with_its_value_and_type() {
    let (mut host, _) = loaded(&dump_script());
    let (actions, diags) = run(&mut host, &full_event());
    assert_eq!(diags, Vec::<String>::new());
    assert_eq!(
        logs(&actions),
        vec![
            "kind=error (string)",
            "session=sess (string)",
            "agent=a1 (string)",
            "sidechain=true (bool)",
            "ts=2025-06-02T18:46:51.500Z (string)",
            "ts_secs=1748890011.5 (f64)",
            "line=17 (i64)",
            "context_used=150000 (i64)",
            "context_limit=200000 (i64)",
            "context_remaining=50000 (i64)",
            "status=waiting_for_approval (string)",
            "agent_kind=codex (string)",
            "tool=Bash (string)",
            "target=cargo test (string)",
            "tool_use_id=toolu_1 (string)",
            "agent_type=general-purpose (string)",
            "description=Find things (string)",
            "error=api (string)",
            "error_code=rate_limit (string)",
            "text=You've hit your limit (string)",
            "message=You've hit your limit (string)",
            "cause=ConnectionRefused (string)",
            "retry_in_ms=563.5 (f64)",
            "retry_attempt=2 (i64)",
            "max_retries=10 (i64)",
            "trigger=auto (string)",
            "pre_tokens=155317 (i64)",
            "post_tokens=12000 (i64)",
            "command=/clear (string)",
            "think=3 (i64)",
            "model=claude-opus-4-5 (string)",
            "duration_ms=122537 (i64)",
            "previous_status=working (string)",
            "cwd=/home/u/proj (string)",
            "git_branch=main (string)",
            "host=me@devbox (string)",
            r#"plan=[#{"active_form": "Running CI", "status": "in_progress", "text": "Run CI"}] (array)"#,
            "state=#{} (map)",
        ]
    );
}

#[test]
fn absent_optional_fields_read_as_unit() {
    let (mut host, _) = loaded(&dump_script());
    let (actions, diags) = run(&mut host, &Event::new(EventKind::Text, 3));
    assert_eq!(diags, Vec::<String>::new());
    // The agent is always known: Claude Code unless the event says otherwise.
    assert!(logs(&actions).contains(&"agent_kind=claude-code (string)".to_owned()));
    let units: Vec<String> = logs(&actions)
        .into_iter()
        .filter(|l| l.ends_with("(())"))
        .map(|l| l.split('=').next().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        units,
        vec![
            "session",
            "agent",
            "ts",
            "ts_secs",
            "context_used",
            "context_remaining",
            "tool",
            "target",
            "tool_use_id",
            "agent_type",
            "description",
            "error",
            "error_code",
            "text",
            "message",
            "cause",
            "retry_in_ms",
            "retry_attempt",
            "max_retries",
            "trigger",
            "pre_tokens",
            "post_tokens",
            "command",
            "think",
            "model",
            "duration_ms",
            "previous_status",
            "cwd",
            "git_branch",
            "host",
            "plan",
        ]
    );
}

#[test]
fn plan_items_read_as_maps_with_their_status() {
    let (mut host, _) = loaded(
        r#"fn on_thinking(ev) {
            for item in ev.plan ?? [] {
                log(`${item.status}: ${item.text}`);
            }
        }"#,
    );
    let mut ev = full_event();
    ev.kind = EventKind::Thinking;
    let (actions, diags) = run(&mut host, &ev);
    assert_eq!(diags, Vec::<String>::new());
    assert_eq!(logs(&actions), vec!["in_progress: Run CI"]);
}

#[test]
fn raw_is_the_original_record_as_a_map() {
    let (mut host, _) = loaded(
        r#"fn on_event(ev) {
            let raw = ev.raw;
            log(`${type_of(raw)} ${raw.type} ${raw.message.usage.input_tokens} ${raw.isApiErrorMessage} ${raw.missing}`);
            log(`${ev.raw.message.id}`);
        }"#,
    );
    let (actions, diags) = run(&mut host, &full_event());
    assert_eq!(diags, Vec::<String>::new());
    assert_eq!(logs(&actions), vec!["map assistant 5 true ", "m1"]);

    // Without a kept record, raw is ().
    let (mut host, _) = loaded("fn on_event(ev) { log(type_of(ev.raw)); }");
    let (actions, _) = run(&mut host, &Event::new(EventKind::Text, 1));
    assert_eq!(logs(&actions), vec!["()"]);
}

#[test]
fn a_misspelled_field_is_a_located_error() {
    let (mut host, _) =
        loaded("fn on_bash(ev) {\n    if ev.targte.contains(\"git\") { say(\"git\"); }\n}\n");
    let (actions, diags) = run(&mut host, &Event::new(EventKind::Bash, 4));
    assert_eq!(actions, vec![]);
    assert_eq!(
        diags,
        vec![
            "test.rhai:2:11: error in on_bash (event bash from line 4): the event has no field \
             `targte`; did you mean `target`?\n  |\n2 |     if ev.targte.contains(\"git\") { \
             say(\"git\"); }\n  |           ^"
        ]
    );
}

#[test]
fn fields_are_read_only() {
    let (mut host, _) = loaded("fn on_text(ev) { ev.text = \"changed\"; }");
    let (_, diags) = run(&mut host, &Event::new(EventKind::Text, 1));
    assert_eq!(diags.len(), 1);
    assert!(
        diags[0].starts_with("test.rhai:1:21: error in on_text (event text from line 1): "),
        "{}",
        diags[0]
    );
}

#[test]
fn an_event_prints_as_its_json_line() {
    let (mut host, _) = loaded("fn on_text(ev) { log(`${ev}`); print(ev); }");
    let mut event = Event::new(EventKind::Text, 2);
    event.text = Some("hi".into());
    let (actions, _) = run(&mut host, &event);
    let line = r#"{"kind":"text","session":null,"agent":null,"sidechain":false,"ts":null,"line":2,"context_used":null,"context_limit":200000,"status":"unknown","text":"hi"}"#;
    assert_eq!(logs(&actions), vec![line, line]);
}
