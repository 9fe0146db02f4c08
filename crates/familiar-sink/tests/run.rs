//! `run` actions: refused unless allowed; argv reaches the program unchanged (no shell: quotes,
//! `;`, `$(...)` stay data); exit status recorded; a program over its time limit is killed.

mod support;

use std::time::Duration;

use familiar_model::ActionKind;
use familiar_sink::{ChildOutput, RunOutcome, RunPolicy, RunSink, Sink};
use support::action;

fn run(argv: &[&str]) -> familiar_model::Action {
    action(
        ActionKind::Run {
            argv: argv.iter().map(|a| (*a).to_owned()).collect(),
        },
        "s1",
    )
}

fn allowed() -> RunPolicy {
    RunPolicy {
        allowed: true,
        timeout: Duration::from_secs(60),
        max_running: 4,
        output: ChildOutput::Null,
    }
}

#[test]
fn refused_unless_allowed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let marker = dir.path().join("ran");
    let mut sink = RunSink::new(RunPolicy::default());
    sink.handle(&run(&["touch", marker.to_str().expect("utf-8 path")]));
    sink.flush();
    assert_eq!(sink.refused(), 1);
    assert!(sink.outcomes().is_empty());
    assert!(!marker.exists());
}

#[test]
fn argv_reaches_the_program_unchanged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("args");
    let pwned = dir.path().join("pwned");
    let tricky = [
        "it's \"quoted\"",
        "a; touch PWNED",
        "$(touch PWNED)",
        "`touch PWNED`",
        "two  spaces\nnewline",
        "*",
        "",
    ]
    .map(|arg| arg.replace("PWNED", pwned.to_str().expect("utf-8 path")));
    // `sh` is only the program under test here: it gets the arguments as positional
    // parameters and writes each, NUL-terminated, without evaluating them.
    let script = r#"for a in "$@"; do printf '%s\0' "$a"; done > "$0""#;
    let mut argv = vec!["sh", "-c", script, out.to_str().expect("utf-8 path")];
    argv.extend(tricky.iter().map(String::as_str));
    let mut sink = RunSink::new(allowed());
    sink.handle(&run(&argv));
    sink.flush();

    let written = std::fs::read(&out).expect("program wrote its arguments");
    let received: Vec<String> = written
        .split(|b| *b == 0)
        .take(tricky.len())
        .map(|arg| String::from_utf8(arg.to_vec()).expect("utf-8"))
        .collect();
    assert_eq!(received, tricky);
    assert!(!pwned.exists(), "an argument was interpreted by a shell");
    assert_eq!(sink.failures(), 0);
    assert!(matches!(
        sink.outcomes().as_slice(),
        [RunOutcome::Exited { code: Some(0), .. }]
    ));
}

#[test]
fn exit_status_missing_programs_and_time_limit() {
    let mut policy = allowed();
    policy.timeout = Duration::from_millis(200);
    let mut sink = RunSink::new(policy);
    // Flushed one at a time so the order of outcomes is fixed.
    sink.handle(&run(&["sh", "-c", "exit 3"]));
    sink.flush();
    sink.handle(&run(&["/nonexistent/familiar-test-program"]));
    sink.handle(&run(&[]));
    sink.handle(&run(&["sleep", "60"]));
    sink.flush();

    let outcomes = sink.outcomes();
    assert_eq!(outcomes.len(), 3, "{outcomes:?}");
    assert!(matches!(
        &outcomes[0],
        RunOutcome::Exited { code: Some(3), .. }
    ));
    assert!(matches!(
        &outcomes[1],
        RunOutcome::NotStarted { argv, .. } if argv[0] == "/nonexistent/familiar-test-program"
    ));
    assert!(matches!(&outcomes[2], RunOutcome::Killed { argv } if argv[0] == "sleep"));
    // exit 3, not found, empty argv, killed.
    assert_eq!(sink.failures(), 4);
}
