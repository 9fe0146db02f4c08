//! Hot reload with real files: a good change swaps, a broken change keeps the old script and
//! reports where it broke, fixing it swaps again; the watcher sees real edits (inotify).

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use familiar_model::{ActionKind, EventKind};
use familiar_script::{ScriptError, ScriptWatcher};
use support::{ev, host, run};

fn write(path: &Path, text: &str) {
    fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

fn says(host: &mut familiar_script::ScriptHost, line: u64) -> Vec<String> {
    let (actions, diags) = run(host, &ev(EventKind::Bash, line));
    assert_eq!(diags, Vec::<String>::new());
    actions
        .into_iter()
        .map(|a| match a {
            ActionKind::Say { text } => text,
            other => format!("{other:?}"),
        })
        .collect()
}

const V1: &str = "let n = 0;\nfn on_bash(ev) { n += 1; say(`v1 ${n}`); }\n";
const V2: &str =
    "let n = 100;\nfn init() { n += 1; }\nfn on_bash(ev) { n += 1; say(`v2 ${n}`); }\n";
const BROKEN: &str = "let n = 0;\nfn on_bash(ev) {\n    say(`v3 ${n}`;\n}\n";
const V3: &str = "let n = 0;\nfn on_bash(ev) { n += 10; say(`v3 ${n}`); }\n";

#[test]
fn good_change_swaps_broken_change_keeps_old_fixed_change_swaps_again() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("mine.rhai");
    write(&path, V1);
    let (mut host, _) = host();
    host.load_file(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(says(&mut host, 1), vec!["v1 1"]);
    assert_eq!(says(&mut host, 2), vec!["v1 2"]);

    // A good change: new code, state reset, init() run again.
    write(&path, V2);
    let report = host.reload(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.handlers, vec!["init", "on_bash"]);
    assert_eq!(says(&mut host, 3), vec!["v2 102"]);

    // A broken change: the located error comes back and v2 keeps running with its state.
    write(&path, BROKEN);
    let err = host.reload(&path).err().map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some(
            "mine.rhai:3:18: error: Expecting ',' to separate the arguments to function call \
             'say'\n  |\n3 |     say(`v3 ${n}`;\n  |                  ^"
        )
    );
    assert_eq!(says(&mut host, 4), vec!["v2 103"]);

    // Fixed again.
    write(&path, V3);
    host.reload(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(says(&mut host, 5), vec!["v3 10"]);
    assert_eq!(host.script_names(), vec!["mine.rhai"]);
}

#[test]
fn a_change_that_fails_in_init_keeps_the_old_script() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("mine.rhai");
    write(&path, V1);
    let (mut host, _) = host();
    host.load_file(&path).unwrap_or_else(|e| panic!("{e}"));
    write(
        &path,
        "let n = 0;\nfn init() { n = [1][5]; }\nfn on_bash(ev) { say(\"never\"); }\n",
    );
    let err = host.reload(&path).err();
    let diag = err.as_ref().and_then(ScriptError::diagnostic);
    assert_eq!(
        diag.map(|d| d.headline()),
        Some(
            "mine.rhai:2:21: error in init: Array index 5 out of bounds: only 1 element in array"
                .to_owned()
        )
    );
    assert_eq!(says(&mut host, 1), vec!["v1 1"]);
}

#[test]
fn reloading_an_unknown_or_vanished_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("mine.rhai");
    write(&path, V1);
    let (mut host, _) = host();
    host.load_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let other = dir.path().join("other.rhai");
    assert!(matches!(host.reload(&other), Err(ScriptError::NotLoaded(p)) if p == other));
    fs::remove_file(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(host.reload(&path), Err(ScriptError::Io { .. })));
    assert_eq!(says(&mut host, 1), vec!["v1 1"]);
}

#[test]
fn a_changed_module_reloads_the_script_that_imports_it() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let util = dir.path().join("util.rhai");
    let main = dir.path().join("main.rhai");
    write(&util, "fn word() { \"old\" }\n");
    write(
        &main,
        "fn on_bash(ev) { import \"util\" as u; say(u::word()); }\n",
    );
    let (mut host, _) = host();
    host.load_file(&main).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(says(&mut host, 1), vec!["old"]);
    write(&util, "fn word() { \"new\" }\n");
    let results = host.reload_changed(std::slice::from_ref(&util));
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, main);
    assert!(results[0].1.is_ok());
    assert_eq!(says(&mut host, 2), vec!["new"]);
}

/// Wait (bounded) until the watcher reports `path`; the bound only avoids hanging forever.
fn wait_for(watcher: &ScriptWatcher, path: &Path) -> Vec<PathBuf> {
    let mut seen = Vec::new();
    for _ in 0..50 {
        let changed = watcher.wait_changes(Duration::from_millis(200), Duration::from_millis(50));
        let hit = changed.iter().any(|p| p.file_name() == path.file_name());
        seen.extend(changed);
        if hit {
            break;
        }
    }
    seen
}

#[test]
fn the_watcher_reports_real_edits_and_drives_reload() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("watched.rhai");
    write(&path, V1);
    let (mut host, _) = host();
    host.load_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let watcher = ScriptWatcher::new(&host.script_paths()).unwrap_or_else(|e| panic!("{e}"));

    // An in-place write.
    write(&path, V2);
    let changed = wait_for(&watcher, &path);
    assert!(
        changed.iter().any(|p| p.ends_with("watched.rhai")),
        "{changed:?}"
    );
    let results = host.reload_changed(&changed);
    assert_eq!(results.len(), 1);
    assert!(results[0].1.is_ok());
    assert_eq!(says(&mut host, 1), vec!["v2 102"]);

    // An editor-style save: write a temporary file, rename it over the script.
    let tmp = dir.path().join(".watched.rhai.swp");
    write(&tmp, V3);
    fs::rename(&tmp, &path).unwrap_or_else(|e| panic!("{e}"));
    let changed = wait_for(&watcher, &path);
    let results = host.reload_changed(&changed);
    assert!(
        results.iter().any(|(p, r)| p == &path && r.is_ok()),
        "{changed:?}"
    );
    assert_eq!(says(&mut host, 2), vec!["v3 10"]);

    // Files that are not scripts are not reported.
    write(&dir.path().join("notes.txt"), "hello");
    write(&path, V1);
    let changed = wait_for(&watcher, &path);
    assert!(
        changed
            .iter()
            .all(|p| p.extension().is_some_and(|e| e == "rhai")),
        "{changed:?}"
    );
}

#[test]
fn only_scripts_importing_a_changed_module_are_reloaded() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let util = dir.path().join("util.rhai");
    let user = dir.path().join("user.rhai");
    let other = dir.path().join("other.rhai");
    write(&util, "fn word() { \"old\" }\n");
    write(
        &user,
        "fn on_bash(ev) { import \"util\" as u; say(u::word()); }\n",
    );
    write(
        &other,
        "let n = 0;\nfn on_bash(ev) { n += 1; say(`${n}`); }\n",
    );
    let (mut host, _) = host();
    host.load_file(&user).unwrap_or_else(|e| panic!("{e}"));
    host.load_file(&other).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(says(&mut host, 1), vec!["old", "1"]);

    // An unrelated new .rhai file beside them reloads nothing (the counter keeps counting).
    let unrelated = dir.path().join("scratch.rhai");
    write(&unrelated, "fn x() {}\n");
    assert!(host.reload_changed(&[unrelated]).is_empty());
    assert_eq!(says(&mut host, 2), vec!["old", "2"]);

    write(&util, "fn word() { \"new\" }\n");
    let reloaded: Vec<PathBuf> = host
        .reload_changed(std::slice::from_ref(&util))
        .into_iter()
        .map(|(p, r)| {
            assert!(r.is_ok(), "{r:?}");
            p
        })
        .collect();
    assert_eq!(reloaded, vec![user]);
    assert_eq!(says(&mut host, 3), vec!["new", "3"]);
}

#[test]
fn a_change_taken_from_the_receiver_is_still_reported() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("select.rhai");
    write(&path, V1);
    let watcher = ScriptWatcher::new(std::slice::from_ref(&path)).unwrap_or_else(|e| panic!("{e}"));
    write(&path, V2);
    // A select! loop wakes up on the first message (bounded wait so a failure cannot hang).
    let woke = watcher.receiver().recv_timeout(Duration::from_secs(10));
    assert!(woke.is_ok(), "no change seen");
    let changed = watcher.try_changes();
    assert!(
        changed.iter().any(|p| p.ends_with("select.rhai")),
        "{changed:?}"
    );
}
