//! Every action function, the tags on actions, several scripts in order, state, `once_per`
//! and `run` with and without permission.

mod support;

use familiar_model::{ActionKind, ErrorKind, Event, EventKind, Status, Urgency};
use serde_json::json;
use support::{ev, host, host_with, loaded, logs, run};

#[test]
fn each_action_function_queues_its_action() {
    let (mut host, _) = loaded(
        r#"
        fn on_event(ev) {
            animate("attack");
            say("hello");
            quest("Fix the bug");
            notify("Title", "Body");
            notify("Urgent", "Now", "critical");
            notify("Later", "Maybe", "low");
            sound("push");
            xp(7);
            rest();
            companion_spawn("toolu_1", "general-purpose");
            companion_leave("toolu_1");
            emit("confetti", #{ colour: "red", count: 3, nested: #{ ok: true }, list: [1, "a"] });
            log("a log line");
        }
        "#,
    );
    let (actions, diags) = run(&mut host, &ev(EventKind::Bash, 3));
    assert_eq!(diags, Vec::<String>::new());
    let expected = vec![
        ActionKind::Animate {
            name: "attack".into(),
        },
        ActionKind::Say {
            text: "hello".into(),
        },
        ActionKind::Quest {
            text: "Fix the bug".into(),
        },
        ActionKind::Notify {
            title: "Title".into(),
            body: "Body".into(),
            urgency: Urgency::Normal,
        },
        ActionKind::Notify {
            title: "Urgent".into(),
            body: "Now".into(),
            urgency: Urgency::Critical,
        },
        ActionKind::Notify {
            title: "Later".into(),
            body: "Maybe".into(),
            urgency: Urgency::Low,
        },
        ActionKind::Sound {
            name: "push".into(),
        },
        ActionKind::Xp { amount: 7 },
        ActionKind::Rest,
        ActionKind::CompanionSpawn {
            id: "toolu_1".into(),
            kind: "general-purpose".into(),
        },
        ActionKind::CompanionLeave {
            id: "toolu_1".into(),
        },
        ActionKind::Emit {
            name: "confetti".into(),
            data: json!({"colour": "red", "count": 3, "nested": {"ok": true}, "list": [1, "a"]})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        },
        ActionKind::Log {
            text: "a log line".into(),
        },
    ];
    assert_eq!(actions, expected);
}

#[test]
fn print_and_debug_become_log_actions() {
    let (mut host, _) = loaded(r#"fn on_event(ev) { print("printed"); debug("dbg"); }"#);
    let (actions, _) = run(&mut host, &ev(EventKind::Text, 1));
    assert_eq!(logs(&actions), vec!["printed", "\"dbg\""]);
}

#[test]
fn bad_arguments_are_located_errors_and_queue_nothing_more() {
    let (mut host, _) = loaded(
        r#"
fn on_event(ev) {
    notify("t", "b", "urgent");
    say("never");
}
"#,
    );
    let (actions, diags) = run(&mut host, &ev(EventKind::Text, 9));
    assert_eq!(actions, vec![]);
    assert_eq!(
        diags,
        vec![
            "test.rhai:3:5: error in on_event (event text from line 9): Runtime error: notify: \
             urgency must be \"low\", \"normal\" or \"critical\", not \"urgent\"\n  |\n3 |     \
             notify(\"t\", \"b\", \"urgent\");\n  |     ^"
        ]
    );
}

#[test]
fn actions_carry_their_script_and_cause_but_no_session_state() {
    let (mut host, _) = loaded(r#"fn on_error(ev) { animate("hurt"); }"#);
    let mut event = ev(EventKind::Error, 42);
    event.agent = Some("a881341".into());
    event.context_used = Some(150_000);
    event.context_limit = 1_000_000;
    event.status = Status::WaitingForInput;
    event.error = Some(ErrorKind::Tool);
    let (actions, _) = host.handle_event(&event);
    assert_eq!(actions.len(), 1);
    let action = &actions[0];
    assert_eq!(action.script, "test.rhai");
    assert_eq!(action.session.as_deref(), Some("s1"));
    assert_eq!(action.agent.as_deref(), Some("a881341"));
    assert_eq!(action.line, 42);
    assert_eq!(action.event, EventKind::Error);
    // Session state is the session model's, told by events; actions copy none of it.
    assert_eq!(
        serde_json::to_value(action).ok(),
        Some(json!({
            "action": "animate", "name": "hurt", "script": "test.rhai", "session": "s1",
            "agent": "a881341", "line": 42, "event": "error"
        }))
    );
}

#[test]
fn several_scripts_run_in_load_order_and_tag_their_actions() {
    let (mut host, _) = host();
    for (name, src) in [
        ("first.rhai", r#"fn on_bash(ev) { say("first"); }"#),
        ("second.rhai", r#"fn on_event(ev) { say("second"); }"#),
        ("third.rhai", r#"fn on_bash(ev) { say("third"); }"#),
    ] {
        host.load_source(name, src, None)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(
        host.script_names(),
        vec!["first.rhai", "second.rhai", "third.rhai"]
    );
    let (actions, _) = host.handle_event(&ev(EventKind::Bash, 1));
    let tagged: Vec<(String, ActionKind)> =
        actions.into_iter().map(|a| (a.script, a.kind)).collect();
    let say = |s: &str| ActionKind::Say { text: s.into() };
    assert_eq!(
        tagged,
        vec![
            ("first.rhai".into(), say("first")),
            ("second.rhai".into(), say("second")),
            ("third.rhai".into(), say("third")),
        ]
    );
    // Only the script with `on_event` sees a reading event.
    let (actions, _) = host.handle_event(&ev(EventKind::Reading, 2));
    assert_eq!(
        actions
            .iter()
            .map(|a| a.script.as_str())
            .collect::<Vec<_>>(),
        vec!["second.rhai"]
    );
}

#[test]
fn on_event_runs_before_the_kind_handler() {
    let (mut host, _) = loaded(
        r#"
        fn on_event(ev) { log("any " + ev.kind); }
        fn on_prompt(ev) { log("prompt"); }
        "#,
    );
    let (actions, _) = run(&mut host, &ev(EventKind::Prompt, 1));
    assert_eq!(logs(&actions), vec!["any prompt", "prompt"]);
}

#[test]
fn script_level_variables_persist_between_calls_and_init_runs_once() {
    let (mut host, _) = loaded(
        r#"
        let count = 0;
        let streak = [];
        fn init() { count = 100; let from_init = "yes"; }
        fn on_event(ev) {
            count += 1;
            streak.push(ev.line);
            log(`${count} ${streak} ${from_init}`);
        }
        "#,
    );
    let mut seen = Vec::new();
    for line in 1..=3 {
        let (actions, diags) = run(&mut host, &ev(EventKind::Text, line));
        assert_eq!(diags, Vec::<String>::new());
        seen.extend(logs(&actions));
    }
    assert_eq!(
        seen,
        vec!["101 [1] yes", "102 [1, 2] yes", "103 [1, 2, 3] yes"]
    );
}

#[test]
fn helpers_cannot_see_state_and_the_error_says_why() {
    let (mut host, _) = loaded(
        r#"
let total = 0;
fn add(n) { total += n; }
fn on_event(ev) { add(1); }
"#,
    );
    let (_, diags) = run(&mut host, &ev(EventKind::Text, 5));
    assert_eq!(
        diags,
        vec![
            "test.rhai:3:13: error in on_event (event text from line 5): Variable not found: \
             total\n  |\n3 | fn add(n) { total += n; }\n  |             ^\n  = note: in \
             function 'add', called at test.rhai:4:19\n  = note: 'total' is a script-level \
             variable: only handlers see state; pass it to the function as an argument and \
             return the new value"
        ]
    );
}

#[test]
fn once_per_passes_once_per_interval_per_key_and_per_script() {
    let (mut host, clock) = host();
    let src = r#"fn on_event(ev) {
        if once_per("a", 60) { log("a"); }
        if once_per("b", 0.5) { log("b"); }
    }"#;
    host.load_source("one.rhai", src, None)
        .unwrap_or_else(|e| panic!("{e}"));
    host.load_source("two.rhai", src, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut at = |secs: f64| {
        clock.set_secs(secs);
        let (actions, _) = host.handle_event(&ev(EventKind::Text, 1));
        actions
            .into_iter()
            .map(|a| match a.kind {
                ActionKind::Log { text } => format!("{}:{text}", a.script),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        at(1000.0),
        vec!["one.rhai:a", "one.rhai:b", "two.rhai:a", "two.rhai:b"]
    );
    assert_eq!(at(1000.2), Vec::<String>::new());
    assert_eq!(at(1000.5), vec!["one.rhai:b", "two.rhai:b"]);
    assert_eq!(at(1059.9), vec!["one.rhai:b", "two.rhai:b"]);
    // `a` is due again; `b` passed 0.1 s ago.
    assert_eq!(at(1060.0), vec!["one.rhai:a", "two.rhai:a"]);
}

const RUN_SCRIPT: &str = r#"
fn on_bash(ev) {
    run(["notify-send", ev.target, "it's \"quoted\"; rm -rf / $(reboot) `id` | cat > x"]);
}
"#;

fn bash_event() -> Event {
    let mut event = ev(EventKind::Bash, 12);
    event.target = Some("echo 'hi'; $(whoami) && \"x\"".into());
    event
}

#[test]
fn run_is_refused_without_permission_with_a_located_warning() {
    let (mut host, _) = host_with(false);
    host.load_source("runner.rhai", RUN_SCRIPT, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let (actions, diags) = host.handle_event(&bash_event());
    assert_eq!(actions, vec![]);
    let rendered: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert_eq!(
        rendered,
        vec![
            "runner.rhai:3:5: warning in on_bash (event bash from line 12): \
             run([\"notify-send\",\"echo 'hi'; $(whoami) && \\\"x\\\"\",\"it's \\\"quoted\\\"; \
             rm -rf / $(reboot) `id` | cat > x\"]) refused: running programs is not allowed \
             (use --allow-run)\n  |\n3 |     run([\"notify-send\", ev.target, \"it's \
             \\\"quoted\\\"; rm -rf / $(reboot) `id` | cat > x\"]);\n  |     ^"
        ]
    );
    // The same call site is reported once, not on every event.
    let (actions, diags) = host.handle_event(&bash_event());
    assert_eq!((actions.len(), diags.len()), (0, 0));
}

/// Issue 28: the warning printed the whole argv, 16 MiB of it on stderr. It shows the start
/// and how long the argv was.
#[test]
fn a_refused_runs_warning_shows_a_huge_argv_cut() {
    let (mut host, _) = host_with(false);
    host.load_source(
        "big.rhai",
        "fn on_bash(ev) { let s = \"x\"; s.pad(1000000, \"x\"); run([\"echo\", s]); }",
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (_, diags) = host.handle_event(&bash_event());
    let rendered: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert_eq!(rendered.len(), 1, "{rendered:?}");
    assert!(rendered[0].len() < 1_000, "{} bytes", rendered[0].len());
    assert!(
        rendered[0].contains("… (1000011 characters)) refused"),
        "{}",
        &rendered[0][..300.min(rendered[0].len())]
    );
}

#[test]
fn run_with_permission_keeps_argv_exactly() {
    let (mut host, _) = host_with(true);
    host.load_source("runner.rhai", RUN_SCRIPT, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let (actions, diags) = host.handle_event(&bash_event());
    assert!(diags.is_empty(), "{diags:?}");
    let kinds: Vec<ActionKind> = actions.into_iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        vec![ActionKind::Run {
            argv: vec![
                "notify-send".into(),
                "echo 'hi'; $(whoami) && \"x\"".into(),
                "it's \"quoted\"; rm -rf / $(reboot) `id` | cat > x".into(),
            ]
        }]
    );
}

#[test]
fn run_rejects_empty_and_non_string_argv() {
    let (mut host, _) = host_with(true);
    host.load_source(
        "bad.rhai",
        "fn on_text(ev) { run([]); }\nfn on_bash(ev) { run([\"ls\", 1]); }",
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (actions, diags) = run(&mut host, &ev(EventKind::Text, 1));
    assert_eq!(actions, vec![]);
    assert_eq!(
        diags,
        vec![
            "bad.rhai:1:18: error in on_text (event text from line 1): Runtime error: run: \
             expects a non-empty array [program, args...]\n  |\n1 | fn on_text(ev) { run([]); \
             }\n  |                  ^"
        ]
    );
    let (actions, diags) = run(&mut host, &ev(EventKind::Bash, 2));
    assert_eq!(actions, vec![]);
    assert_eq!(diags.len(), 1);
    assert!(
        diags[0].contains("run: argument 1 must be a string, not i64"),
        "{}",
        diags[0]
    );
}

#[test]
fn actions_queued_while_loading_are_dropped_with_a_warning() {
    let (mut host, _) = host();
    let report = host
        .load_source(
            "greet.rhai",
            "say(\"hi from the body\");\nfn init() { say(\"hi from init\"); }\nfn on_text(ev) { say(\"text\"); }",
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let warnings: Vec<String> = report.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        vec![
            "greet.rhai: warning: 2 action(s) queued while loading were dropped: actions need an \
             event (use on_session_start for a greeting)"
        ]
    );
    let (actions, _) = run(&mut host, &ev(EventKind::Text, 1));
    assert_eq!(
        actions,
        vec![ActionKind::Say {
            text: "text".into()
        }]
    );
}

#[test]
fn permission_to_run_can_change_at_run_time() {
    let (mut host, _) = host_with(false);
    host.load_source("runner.rhai", RUN_SCRIPT, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(host.handle_event(&bash_event()).0.len(), 0);
    host.set_allow_run(true);
    let kinds: Vec<&str> = host
        .handle_event(&bash_event())
        .0
        .iter()
        .map(|a| a.kind.name())
        .collect();
    assert_eq!(kinds, vec!["run"]);
}

#[test]
fn two_scripts_with_one_name_get_a_warning_and_raw_use_is_detected() {
    let (mut host, _) = host();
    let first = host
        .load_source("mine.rhai", "fn on_text(ev) { say(\"a\"); }", None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(first.warnings.is_empty());
    assert!(!host.uses_raw());
    let second = host
        .load_source(
            "mine.rhai",
            "fn on_text(ev) { log(ev.raw.cwd ?? \"\"); }",
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let warnings: Vec<String> = second.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        vec![
            "mine.rhai: warning: another loaded script is also named mine.rhai: their actions \
             carry the same tag; rename one to tell them apart"
        ]
    );
    assert!(host.uses_raw());
}

#[test]
fn actions_queued_before_a_failure_are_kept() {
    let (mut host, _) = loaded(
        "fn on_text(ev) {\n    say(\"before\");\n    let x = 1 / 0;\n    say(\"after\");\n}\n",
    );
    let (actions, diags) = run(&mut host, &ev(EventKind::Text, 1));
    assert_eq!(
        actions,
        vec![ActionKind::Say {
            text: "before".into()
        }]
    );
    assert_eq!(diags.len(), 1);
    assert!(
        diags[0].starts_with("test.rhai:3:15: error in on_text"),
        "{}",
        diags[0]
    );
}
