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
             large (limit 1048576 bytes)\n  |\n8 | fn on_bash(ev) { let s = \"ab\"; loop { s += \
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
            "body.rhai:2:16: error in <top level>: Length of string too large (limit 1048576 \
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

/// A host whose calls have no time budget to speak of, so only the limit under test stops them.
fn host_with_limits(limits: Limits, source: &str) -> ScriptHost {
    let mut host = ScriptHost::new(HostConfig {
        limits,
        clock: Arc::new(ManualClock::new()),
        ..HostConfig::default()
    });
    if let Err(err) = host.load_source("test.rhai", source, None) {
        panic!("{err}");
    }
    host
}

fn prompt_with_text(line: u64, text: String) -> familiar_model::Event {
    let mut event = ev(EventKind::Prompt, line);
    event.text = Some(text);
    event
}

#[test]
fn nesting_an_array_15000_deep_is_stopped_by_the_time_limit_not_a_stack_overflow() {
    // The issue's script: it passed `check` and aborted the whole program in a window.
    let mut host = host_with_limits(
        Limits::default(),
        "fn on_prompt(ev) { let a = []; for i in 0..15000 { a = [a]; } }\n\
         fn on_text(ev) { say(\"still alive\"); }",
    );
    let (actions, diags) = run(&mut host, &ev(EventKind::Prompt, 1));
    assert_eq!(actions, vec![]);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0].starts_with(
            "test.rhai:1:4: error in on_prompt (event prompt from line 1): Time limit exceeded: \
             more than 500 ms in one call (an endless loop, or too much work for one event?)"
        ),
        "{}",
        diags[0]
    );
    let (actions, _) = run(&mut host, &ev(EventKind::Text, 2));
    assert_eq!(
        actions,
        vec![ActionKind::Say {
            text: "still alive".into()
        }]
    );
}

#[test]
fn printing_and_comparing_data_3000_levels_deep_does_not_overflow_the_stack() {
    // Without a time budget the data gets deep enough that Rhai's recursive printing and
    // comparison need far more than a test thread's 2 MiB (about 8 KB a level in a debug
    // build): the host runs calls on a stack of its own size.
    let limits = Limits {
        max_call_time: std::time::Duration::from_secs(3600),
        max_operations: 10_000_000,
        ..Limits::default()
    };
    let mut host = host_with_limits(
        limits,
        "fn on_prompt(ev) {\n  let a = [];\n  for i in 0..3000 { a = [a]; }\n  \
         print(a.len());\n  let s = `${a}`;\n  log(`${s.len()} ${a == a}`);\n}",
    );
    let (actions, diags) = run(&mut host, &ev(EventKind::Prompt, 1));
    assert_eq!(diags, Vec::<String>::new());
    assert_eq!(support::logs(&actions), vec!["1", "6002 true"]);
}

#[test]
fn state_nested_past_the_depth_limit_is_reset_with_a_located_error() {
    let (mut host, _) = loaded(
        "let a = [];\nfn on_prompt(ev) { for i in 0..100 { a = [a]; } }\n\
         fn on_text(ev) { say(`${type_of(a)}`); }",
    );
    let (_, diags) = run(&mut host, &ev(EventKind::Prompt, 1));
    assert_eq!(diags, Vec::<String>::new(), "100 levels are fine");
    let (_, diags) = run(&mut host, &ev(EventKind::Prompt, 2));
    assert_eq!(
        diags,
        vec![
            "test.rhai:2:4: error in on_prompt (event prompt from line 2): state variable `a` \
             holds data nested more than 128 levels deep; it is reset to ()\n  |\n2 | fn \
             on_prompt(ev) { for i in 0..100 { a = [a]; } }\n  |    ^"
                .to_owned()
        ]
    );
    let (actions, _) = run(&mut host, &ev(EventKind::Text, 3));
    assert_eq!(actions, vec![ActionKind::Say { text: "()".into() }]);
}

#[test]
fn deep_state_built_while_loading_fails_the_load() {
    let (mut host, _) = support::host();
    let err = host
        .load_source(
            "deep.rhai",
            "let a = [];\nfn init() { for i in 0..200 { a = [a]; } }",
            None,
        )
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("deep.rhai: error: state variable `a` holds data nested more than 128 levels deep")
    );
}

#[test]
fn emitting_data_nested_past_the_depth_limit_is_an_error() {
    let (mut host, _) = loaded(
        "fn on_prompt(ev) {\n  let a = [];\n  for i in 0..200 { a = [a]; }\n  emit(\"deep\", #{a: a});\n}",
    );
    let (actions, diags) = run(&mut host, &ev(EventKind::Prompt, 1));
    assert_eq!(actions, vec![]);
    assert_eq!(diags.len(), 1);
    assert!(
        diags[0].starts_with("test.rhai:4:3: error in on_prompt (event prompt from line 1): ")
            && diags[0].contains("emit: data nested more than 128 levels deep"),
        "{}",
        diags[0]
    );
}

#[test]
fn sixty_thousand_index_of_on_8_mib_stop_at_the_time_limit() {
    // 104 s inside one call before the operation limit fired, the pipeline stalled meanwhile.
    let mut host = host_with_limits(
        Limits::default(),
        "fn on_prompt(ev) {\n  let s = ev.text;\n  let n = 0;\n  \
         for i in 0..60000 { n += s.index_of(\"needle\"); }\n}",
    );
    let text = "x".repeat(8 * 1024 * 1024);
    let (_, diags) = run(&mut host, &prompt_with_text(1, text));
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0].starts_with(
            "test.rhai:1:4: error in on_prompt (event prompt from line 1): Time limit exceeded: \
             more than 500 ms in one call"
        ),
        "{}",
        diags[0]
    );
}

#[test]
fn splitting_a_16_mib_string_into_too_many_pieces_stops_at_the_array_limit() {
    // `s.split("")` built 16 million strings (1.1 GB) before the limit was checked.
    let (mut host, _) = loaded(
        "fn on_prompt(ev) { let parts = ev.text.split(\"\"); }\n\
         fn on_text(ev) { let chars = ev.text.to_chars(); }\n\
         fn on_bash(ev) { let words = ev.text.split(); }\n\
         fn on_reading(ev) { let words = ev.text.split('a'); }\n\
         fn on_writing(ev) { let v = parse_json(ev.text); }\n\
         fn on_tool(ev) { let parts = ev.text.split(\"\\n\"); log(`${parts.len()} ${parts[1]}`); }",
    );
    let big = "a ".repeat(8 * 1024 * 1024);
    let json = format!("[{}0]", "0,".repeat(8 * 1024 * 1024 - 1));
    // Like the other limits, it points at the handler (Rhai drops the position of size errors).
    let (_, diags) = run(&mut host, &prompt_with_text(1, big.clone()));
    assert_eq!(
        diags,
        vec![
            "test.rhai:1:4: error in on_prompt (event prompt from line 1): Size of array/BLOB \
             too large (limit 100000 elements)\n  |\n1 | fn on_prompt(ev) { let parts = \
             ev.text.split(\"\"); }\n  |    ^"
        ]
    );
    for (line, (kind, text)) in (2..).zip([
        (EventKind::Text, big.clone()),
        (EventKind::Bash, big.clone()),
        (EventKind::Reading, big),
        (EventKind::Writing, json),
    ]) {
        let mut event = prompt_with_text(line, text);
        event.kind = kind;
        let (actions, diags) = run(&mut host, &event);
        assert_eq!(actions, vec![]);
        assert_eq!(diags.len(), 1, "{kind}: {diags:?}");
        assert!(
            diags[0].starts_with(&format!("test.rhai:{line}:"))
                && diags[0].contains("Size of array/BLOB too large (limit 100000 elements)"),
            "{kind}: {}",
            diags[0]
        );
    }
    // Under the limit, the bounded `split` behaves as Rhai's own.
    let mut event = prompt_with_text(9, "first\nsecond\n".into());
    event.kind = EventKind::Tool;
    let (actions, diags) = run(&mut host, &event);
    assert_eq!(diags, Vec::<String>::new());
    assert_eq!(support::logs(&actions), vec!["3 second"]);
}

#[test]
fn a_text_over_the_string_limit_reads_as_its_beginning() {
    let (mut host, _) =
        loaded("fn on_prompt(ev) { let t = ev.text; log(`${t.len()} ${t.sub_string(0, 3)}`); }");
    // 20 MiB of a 3-byte character: the cut falls inside one and backs off to its start.
    let text = "€".repeat(20 * 1024 * 1024 / 3);
    let (actions, diags) = run(&mut host, &prompt_with_text(1, text));
    assert_eq!(diags, Vec::<String>::new());
    let limit = familiar_script::Limits::default().max_string_size;
    assert_eq!(support::logs(&actions), vec![format!("{} €€€", limit / 3)]);
}
