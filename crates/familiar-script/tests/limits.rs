//! The sandbox: each limit stops a runaway script, the error is reported once and counted,
//! and the next event is handled as usual.

mod support;

use std::sync::Arc;

use familiar_model::{ActionKind, EventKind};
use familiar_script::{ErrorCount, HostConfig, Limits, ManualClock, ScriptHost};
use support::{ev, loaded, run};

const RUNAWAY: &str = r#"
let handled = 0;
fn deeper(n) { deeper(n + 1) }
fn on_event(ev) { handled += 1; }
fn on_text(ev) { let x = 0; loop { x += 1; } }
fn on_prompt(ev) { while true {} }
fn on_error(ev) { deeper(0); }
fn on_bash(ev) { let s = "ab"; loop { s += s; } }
fn on_reading(ev) { let a = []; a.pad(200000, 0); }
fn on_success(ev) { say(`still alive after ${handled}`); }
"#;

#[test]
fn every_runaway_is_stopped_reported_and_the_next_event_proceeds() {
    let (mut host, _) = loaded(RUNAWAY);
    let cases = [
        (
            EventKind::Text,
            "test.rhai:5:4: error in on_text (event text from line 1): Too many operations: more \
             than 200000 in one call (an endless loop?)\n  |\n5 | fn on_text(ev) { let x = 0; \
             loop { x += 1; } }\n  |    ^",
        ),
        (
            EventKind::Prompt,
            "test.rhai:6:4: error in on_prompt (event prompt from line 2): Too many operations: \
             more than 200000 in one call (an endless loop?)\n  |\n6 | fn on_prompt(ev) { while \
             true {} }\n  |    ^",
        ),
        (
            EventKind::Error,
            "test.rhai:7:4: error in on_error (event error from line 3): Stack overflow: more \
             than 48 nested function calls (runaway recursion?)\n  |\n7 | fn on_error(ev) { \
             deeper(0); }\n  |    ^",
        ),
        (
            EventKind::Bash,
            "test.rhai:8:4: error in on_bash (event bash from line 4): Length of string too \
             large (limit 16777216 bytes)\n  |\n8 | fn on_bash(ev) { let s = \"ab\"; loop { s += \
             s; } }\n  |    ^",
        ),
        (
            EventKind::Reading,
            "test.rhai:9:4: error in on_reading (event reading from line 5): Size of array/BLOB \
             too large (limit 100000 elements)\n  |\n9 | fn on_reading(ev) { let a = []; \
             a.pad(200000, 0); }\n  |    ^",
        ),
    ];
    for (line, (kind, expected)) in (1..).zip(cases) {
        let (actions, diags) = run(&mut host, &ev(kind, line));
        assert_eq!(actions, vec![], "{kind}");
        assert_eq!(diags, vec![expected.to_owned()], "{kind}");
    }
    // The engine goes on: state kept by on_event, which ran before each failing handler.
    let (actions, diags) = run(&mut host, &ev(EventKind::Success, 6));
    assert_eq!(diags, Vec::<String>::new());
    assert_eq!(
        actions,
        vec![ActionKind::Say {
            text: "still alive after 6".into()
        }]
    );
}

#[test]
fn a_repeated_error_is_reported_once_and_counted_per_handler() {
    let (mut host, _) = loaded("fn on_text(ev) { loop {} }\nfn on_bash(ev) { let x = 1 / 0; }");
    let mut reported = 0;
    for line in 1..=4 {
        reported += run(&mut host, &ev(EventKind::Text, line)).1.len();
    }
    for line in 5..=6 {
        reported += run(&mut host, &ev(EventKind::Bash, line)).1.len();
    }
    assert_eq!(reported, 2);
    assert_eq!(
        host.error_counts(),
        vec![
            ErrorCount {
                script: "test.rhai".into(),
                handler: "on_bash".into(),
                count: 2
            },
            ErrorCount {
                script: "test.rhai".into(),
                handler: "on_text".into(),
                count: 4
            },
        ]
    );
}

#[test]
fn map_size_and_operation_limits_are_configurable() {
    let limits = Limits {
        max_map_size: 10,
        max_operations: 1_000,
        ..Limits::default()
    };
    let mut host = ScriptHost::new(HostConfig {
        limits,
        clock: Arc::new(ManualClock::new()),
        ..HostConfig::default()
    });
    host.load_source(
        "maps.rhai",
        "fn on_text(ev) { let m = #{}; for i in 0..20 { m[`k${i}`] = i; } log(`${m.len()}`); }\n\
         fn on_bash(ev) { let x = 0; for i in 0..2000 { x += i; } }",
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (_, diags) = run(&mut host, &ev(EventKind::Text, 1));
    assert_eq!(diags.len(), 1);
    assert!(
        diags[0].contains("Size of object map too large (limit 10 entries)"),
        "{}",
        diags[0]
    );
    let (_, diags) = run(&mut host, &ev(EventKind::Bash, 2));
    assert_eq!(diags.len(), 1);
    assert!(
        diags[0].contains("Too many operations: more than 1000 in one call"),
        "{}",
        diags[0]
    );
}

#[test]
fn a_runaway_body_or_init_fails_the_load_instead_of_hanging() {
    let (mut host, _) = support::host();
    let err = host
        .load_source(
            "spin.rhai",
            "let x = 0;\nfn init() { loop { x += 1; } }",
            None,
        )
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some(
            "spin.rhai:2:4: error in init: Too many operations: more than 200000 in one call (an \
             endless loop?)\n  |\n2 | fn init() { loop { x += 1; } }\n  |    ^"
        )
    );
    let err = host
        .load_source("body.rhai", "let s = \"x\";\nwhile true { s += s; }", None)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some(
            "body.rhai:2:16: error in <top level>: Length of string too large (limit 16777216 \
             bytes)\n  |\n2 | while true { s += s; }\n  |                ^"
        )
    );
    assert!(host.script_names().is_empty());
}

#[test]
fn eval_and_deep_expressions_are_refused_at_load() {
    let (mut host, _) = support::host();
    let err = host
        .load_source("ev.rhai", "fn on_text(ev) { eval(\"say(1)\"); }", None)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some(
            "ev.rhai:1:18: error: reserved keyword 'eval' is disabled\n  |\n1 | fn on_text(ev) { \
             eval(\"say(1)\"); }\n  |                  ^"
        )
    );
    let deep = format!("let x = {}1{};", "(".repeat(200), ")".repeat(200));
    let err = host
        .load_source("deep.rhai", &deep, None)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.starts_with("deep.rhai:1:") && err.contains("Expression exceeds maximum complexity"),
        "{err}"
    );
}

#[test]
fn a_raw_record_over_the_limits_fails_with_a_size_error() {
    let limits = Limits {
        max_string_size: 10,
        ..Limits::default()
    };
    let mut host = ScriptHost::new(HostConfig {
        limits,
        clock: Arc::new(ManualClock::new()),
        ..HostConfig::default()
    });
    host.load_source(
        "raw.rhai",
        "fn on_text(ev) { let r = ev.raw; log(`${r.type}`); }",
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut small = ev(EventKind::Text, 1);
    small.raw = Some(r#"{"type":"user"}"#.into());
    let (actions, diags) = run(&mut host, &small);
    assert_eq!((actions.len(), diags.len()), (1, 0), "{diags:?}");
    let mut big = ev(EventKind::Text, 2);
    big.raw = Some(r#"{"type":"user","out":"0123456789abcdef"}"#.into());
    let (actions, diags) = run(&mut host, &big);
    assert_eq!(actions, vec![]);
    assert_eq!(diags.len(), 1);
    assert!(
        diags[0].contains("Length of string too large (limit 10 bytes)"),
        "{}",
        diags[0]
    );
}
