//! Which handlers the host calls. It skips an event that no loaded script has a handler for
//! (found once per load or reload, not per event), so these pin that the skip never drops an
//! event a script wants: `on_event` sees every kind, a handler only in a later script is still
//! called, and a handler added by a hot reload is called from the next event on (by both
//! `handle` and `handle_shared`, the stage's way).

mod support;

use std::fs;
use std::path::Path;
use std::sync::Arc;

use familiar_model::{Event, EventKind};
use familiar_script::ScriptHost;
use support::{ev, host, loaded, logs, run};

/// Texts logged by the scripts for `event`, through `handle_shared` (no diagnostics allowed).
fn logged_shared(host: &mut ScriptHost, event: Event) -> Vec<String> {
    let mut actions = Vec::new();
    let mut diagnostics = Vec::new();
    host.handle_shared(&Arc::new(event), &mut actions, &mut diagnostics);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let kinds: Vec<_> = actions.into_iter().map(|a| a.kind).collect();
    logs(&kinds)
}

fn logged(host: &mut ScriptHost, event: &Event) -> Vec<String> {
    let (actions, diagnostics) = run(host, event);
    assert_eq!(diagnostics, Vec::<String>::new());
    logs(&actions)
}

#[test]
fn on_event_is_called_for_every_kind_of_event() {
    let (mut host, _) = loaded("fn on_event(ev) { print(ev.kind); }\n");
    for (line, kind) in (1..).zip(EventKind::ALL) {
        assert_eq!(
            logged(&mut host, &ev(kind, line)),
            vec![kind.as_str()],
            "handle, {kind:?}"
        );
        assert_eq!(
            logged_shared(&mut host, ev(kind, line)),
            vec![kind.as_str()],
            "handle_shared, {kind:?}"
        );
    }
}

#[test]
fn a_kind_handler_in_a_later_script_is_called_when_the_first_has_none() {
    let (mut host, _) = host();
    for (name, source) in [
        (
            "first.rhai",
            "fn on_bash(ev) { print(`first ${ev.kind}`); }\n",
        ),
        (
            "second.rhai",
            "fn on_reading(ev) { print(`second ${ev.kind}`); }\n",
        ),
        (
            "third.rhai",
            "fn on_event(ev) { print(`third ${ev.kind}`); }\n",
        ),
    ] {
        host.load_source(name, source, None)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(
        logged(&mut host, &ev(EventKind::Bash, 1)),
        vec!["first bash", "third bash"]
    );
    assert_eq!(
        logged_shared(&mut host, ev(EventKind::Reading, 2)),
        vec!["second reading", "third reading"]
    );
    assert_eq!(
        logged(&mut host, &ev(EventKind::Writing, 3)),
        vec!["third writing"]
    );
}

fn write(path: &Path, text: &str) {
    fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_handler_added_by_hot_reload_is_called_from_the_next_event_on() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("mine.rhai");
    write(&path, "fn on_bash(ev) { print(`bash ${ev.line}`); }\n");
    let (mut host, _) = host();
    host.load_file(&path).unwrap_or_else(|e| panic!("{e}"));
    // No script has on_reading or on_event yet: nothing is called.
    assert_eq!(
        logged(&mut host, &ev(EventKind::Reading, 1)),
        Vec::<String>::new()
    );
    assert_eq!(
        logged_shared(&mut host, ev(EventKind::Reading, 2)),
        Vec::<String>::new()
    );

    write(
        &path,
        "fn on_bash(ev) { print(`bash ${ev.line}`); }\n\
         fn on_reading(ev) { print(`reading ${ev.line}`); }\n",
    );
    host.reload(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        logged(&mut host, &ev(EventKind::Reading, 3)),
        vec!["reading 3"]
    );
    assert_eq!(
        logged_shared(&mut host, ev(EventKind::Reading, 4)),
        vec!["reading 4"]
    );

    // A catch-all added by a reload sees the kinds no handler had before.
    write(
        &path,
        "fn on_event(ev) { print(`any ${ev.kind}`); }\n\
         fn on_bash(ev) { print(`bash ${ev.line}`); }\n",
    );
    host.reload(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        logged_shared(&mut host, ev(EventKind::Thinking, 5)),
        vec!["any thinking"]
    );
    assert_eq!(
        logged(&mut host, &ev(EventKind::Bash, 6)),
        vec!["any bash", "bash 6"]
    );
    // And a handler removed by a reload is no longer called.
    write(&path, "fn on_bash(ev) { print(`bash ${ev.line}`); }\n");
    host.reload(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        logged(&mut host, &ev(EventKind::Reading, 7)),
        Vec::<String>::new()
    );
}
