//! `store`: the map a script keeps across runs (`docs/scripting.md`, "Keeping state across
//! runs"). Real files in a temporary store directory: a restart (a new host) sees what the
//! last one saved; a damaged, cut-short, old or newer file is set aside (renamed, not deleted)
//! and the script starts with an empty store; a store that cannot be written never stops
//! the script.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use familiar_model::EventKind;
use familiar_script::{HostConfig, ManualClock, ScriptHost};
use support::{ev, logs, run, test_limits};

const COUNTER: &str = r#"
let loaded = store.count ?? 0;     // the body sees the store too
fn on_event(ev) {
    store.count = (store.count ?? 0) + 1;
    store.names = (store.names ?? []) + [ev.kind];
    log(`count ${store.count} loaded ${loaded}`);
}
"#;

fn tempdir() -> tempfile::TempDir {
    match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => panic!("tempdir: {e}"),
    }
}

fn host_in(dir: Option<&Path>) -> ScriptHost {
    ScriptHost::new(HostConfig {
        clock: Arc::new(ManualClock::new()),
        limits: test_limits(),
        store_dir: dir.map(Path::to_path_buf),
        ..HostConfig::default()
    })
}

/// Load `source` as `counter.rhai`, returning the load warnings.
fn load(host: &mut ScriptHost, source: &str) -> Vec<String> {
    match host.load_source("counter.rhai", source, None) {
        Ok(report) => report.warnings.iter().map(ToString::to_string).collect(),
        Err(err) => panic!("{err}"),
    }
}

/// The log lines of `n` events.
fn events(host: &mut ScriptHost, n: u64) -> Vec<String> {
    let mut lines = Vec::new();
    for line in 1..=n {
        let (actions, diagnostics) = run(host, &ev(EventKind::Reading, line));
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        lines.extend(logs(&actions));
    }
    lines
}

fn store_file(dir: &Path) -> PathBuf {
    dir.join("counter.rhai.json")
}

#[test]
fn the_store_survives_a_restart() {
    let dir = tempdir();
    let mut host = host_in(Some(dir.path()));
    assert!(load(&mut host, COUNTER).is_empty());
    assert_eq!(
        events(&mut host, 3).last().map(String::as_str),
        Some("count 3 loaded 0")
    );
    drop(host);
    let text = std::fs::read_to_string(store_file(dir.path())).unwrap_or_default();
    assert!(text.contains("\"familiar\": \"script-store\""), "{text}");
    assert!(text.contains("\"version\": 1"), "{text}");

    let mut again = host_in(Some(dir.path()));
    load(&mut again, COUNTER);
    assert_eq!(
        events(&mut again, 2),
        ["count 4 loaded 3", "count 5 loaded 3"]
    );
    again.save_stores();
    let text = std::fs::read_to_string(store_file(dir.path())).unwrap_or_default();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(json["data"]["count"], 5);
    assert_eq!(json["data"]["names"].as_array().map(Vec::len), Some(5));
    assert_eq!(
        familiar_testkit::saved_file_names(dir.path()),
        ["counter.rhai.json"]
    );
}

#[test]
fn values_keep_their_types_across_a_restart() {
    let dir = tempdir();
    let mut host = host_in(Some(dir.path()));
    load(
        &mut host,
        r#"fn on_event(ev) { store.i = 7; store.f = 2.5; store.s = "日本 ✨"; store.b = true;
            store.nested = #{ list: [1, #{ deep: () }] }; }"#,
    );
    events(&mut host, 1);
    drop(host);
    let mut again = host_in(Some(dir.path()));
    load(
        &mut again,
        r#"fn on_event(ev) { log(`${type_of(store.i)} ${type_of(store.f)} ${store.s} ${store.b} ${store.nested.list[1].deep == ()}`); }"#,
    );
    assert_eq!(events(&mut again, 1), ["i64 f64 日本 ✨ true true"]);
}

fn set_aside_then_fresh(contents: &[u8], tag: &str) {
    let dir = tempdir();
    assert!(std::fs::write(store_file(dir.path()), contents).is_ok());
    let mut host = host_in(Some(dir.path()));
    load(&mut host, COUNTER);
    assert_eq!(events(&mut host, 1), ["count 1 loaded 0"], "{tag}");
    drop(host);
    let aside = format!("counter.rhai.json.{tag}");
    assert_eq!(
        familiar_testkit::saved_file_names(dir.path()),
        ["counter.rhai.json", aside.as_str()],
        "{tag}"
    );
    // Set aside as it was, not deleted or rewritten.
    assert_eq!(
        std::fs::read(dir.path().join(&aside)).ok().as_deref(),
        Some(contents),
        "{tag}"
    );
}

#[test]
fn a_corrupt_store_is_set_aside_and_the_script_starts_afresh() {
    set_aside_then_fresh(b"{\"familiar\": \"script-store\", oops", "corrupt");
    set_aside_then_fresh(b"\xff\xfe\x00", "corrupt");
    // Another kind of save file is not a store.
    set_aside_then_fresh(
        br#"{"familiar": "progress", "version": 1, "data": {"count": 9}}"#,
        "corrupt",
    );
}

#[test]
fn a_truncated_store_is_set_aside() {
    let full = br#"{"familiar": "script-store", "version": 1, "data": {"count": 9}}"#;
    set_aside_then_fresh(&full[..full.len() - 2], "corrupt");
}

#[test]
fn a_store_from_a_newer_familiar_is_set_aside_not_misread() {
    set_aside_then_fresh(
        br#"{"familiar": "script-store", "version": 2, "data": {"count": 9}}"#,
        "newer",
    );
}

#[test]
fn an_old_store_version_is_set_aside() {
    // Version 1 is the first; nothing older was ever written, so it cannot be read.
    set_aside_then_fresh(
        br#"{"familiar": "script-store", "version": 0, "data": {"count": 9}}"#,
        "old",
    );
}

#[test]
fn an_unwritable_store_dir_never_stops_the_script() {
    let dir = tempdir();
    // A file where the store directory should be: every save fails.
    let blocker = dir.path().join("stores");
    assert!(std::fs::write(&blocker, "x").is_ok());
    let mut host = host_in(Some(&blocker));
    load(&mut host, COUNTER);
    assert_eq!(events(&mut host, 3).len(), 3);
    host.save_stores();
    drop(host);
    assert_eq!(std::fs::read_to_string(&blocker).ok().as_deref(), Some("x"));
}

#[test]
fn a_full_disk_keeps_the_last_saved_store() {
    let dir = tempdir();
    let mut host = host_in(Some(dir.path()));
    load(&mut host, COUNTER);
    events(&mut host, 1);
    host.save_stores();
    // Every write to /dev/full fails with ENOSPC, as on a full disk.
    let tmp = familiar_save::file::temp_path(&store_file(dir.path()));
    assert!(std::os::unix::fs::symlink("/dev/full", &tmp).is_ok());
    assert_eq!(events(&mut host, 2).len(), 2);
    host.save_stores();
    let text = std::fs::read_to_string(store_file(dir.path())).unwrap_or_default();
    assert!(text.contains("\"count\": 1"), "{text}");
    // The failed write left no temporary file; once there is room, the next save has it all.
    assert!(tmp.symlink_metadata().is_err());
    drop(host);
    let text = std::fs::read_to_string(store_file(dir.path())).unwrap_or_default();
    assert!(text.contains("\"count\": 3"), "{text}");
}

#[test]
fn without_a_store_dir_the_store_lives_in_memory_only() {
    let dir = tempdir();
    for _ in 0..2 {
        let mut host = host_in(None);
        load(&mut host, COUNTER);
        assert_eq!(
            events(&mut host, 2),
            ["count 1 loaded 0", "count 2 loaded 0"]
        );
    }
    assert!(familiar_testkit::saved_file_names(dir.path()).is_empty());
}

#[test]
fn the_store_survives_a_hot_reload() {
    let dir = tempdir();
    let script = dir.path().join("counter.rhai");
    assert!(std::fs::write(&script, COUNTER).is_ok());
    let mut host = host_in(None);
    assert!(host.load_file(&script).is_ok());
    events(&mut host, 2);
    let edited = COUNTER.replace("log(`count", "log(`edited count");
    assert!(std::fs::write(&script, edited).is_ok());
    assert!(host.reload(&script).is_ok());
    assert_eq!(events(&mut host, 1), ["edited count 3 loaded 2"]);
}

#[test]
fn scripts_have_a_store_each() {
    let dir = tempdir();
    let mut host = host_in(Some(dir.path()));
    for name in ["a.rhai", "b.rhai"] {
        let source = format!("fn on_event(ev) {{ store.me = \"{name}\"; }}");
        assert!(host.load_source(name, &source, None).is_ok());
    }
    events(&mut host, 1);
    drop(host);
    assert_eq!(
        familiar_testkit::saved_file_names(dir.path()),
        ["a.rhai.json", "b.rhai.json"]
    );
    let b = std::fs::read_to_string(dir.path().join("b.rhai.json")).unwrap_or_default();
    assert!(b.contains("\"me\": \"b.rhai\""), "{b}");
}

#[test]
fn a_script_that_hides_the_store_is_warned_and_keeps_nothing() {
    let dir = tempdir();
    let mut host = host_in(Some(dir.path()));
    let warnings = load(&mut host, "let store = 5;\nfn on_event(ev) { store += 1; }");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("declares or assigns its own")),
        "{warnings:?}"
    );
    events(&mut host, 2);
    drop(host);
    assert!(familiar_testkit::saved_file_names(dir.path()).is_empty());
}

#[test]
fn a_store_holding_what_json_cannot_keep_is_not_saved_and_the_script_goes_on() {
    let dir = tempdir();
    let mut host = host_in(Some(dir.path()));
    load(
        &mut host,
        "fn on_event(ev) { store.f = Fn(\"on_event\"); store.n = (store.n ?? 0) + 1; log(`${store.n}`); }",
    );
    assert_eq!(events(&mut host, 2), ["1", "2"]);
    drop(host);
    assert!(!store_file(dir.path()).exists());
}

#[test]
fn the_store_is_not_listed_as_script_state() {
    let mut host = host_in(None);
    let report = host.load_source(
        "s.rhai",
        "let total = 0;\nfn on_event(ev) { store.x = 1; }",
        None,
    );
    let state = report.map(|r| r.state).unwrap_or_default();
    assert_eq!(state, ["total"]);
    // ... but `familiar check` warns about a helper that uses it, like any state.
    let report = host.load_source("h.rhai", "fn helper() { store.x }", None);
    let warnings: Vec<String> = report
        .map(|r| r.warnings.iter().map(ToString::to_string).collect())
        .unwrap_or_default();
    assert!(
        warnings.iter().any(|w| w.contains("`store`")),
        "{warnings:?}"
    );
}

/// Issue 28: a store changed by the last events of a burst was saved only at a later event
/// or a clean exit, so a crash (`kill -9`) a few seconds later lost it. A tick (the watcher's
/// clock, four times a second) saves it within a second.
#[test]
fn a_burst_is_saved_within_a_second_without_another_event() {
    let dir = tempdir();
    let mut host = host_in(Some(dir.path()));
    assert!(load(&mut host, COUNTER).is_empty());
    // The first event is saved at once; the next two come within the second after it.
    events(&mut host, 3);
    let saved = || std::fs::read_to_string(store_file(dir.path())).unwrap_or_default();
    assert!(saved().contains("\"count\": 1"), "{}", saved());
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let (actions, diagnostics) = host.tick(std::time::SystemTime::now());
    assert!(actions.is_empty() && diagnostics.is_empty());
    assert!(saved().contains("\"count\": 3"), "{}", saved());
    // Nothing of the host is dropped yet: the tick saved it, not an exit.
    drop(host);
}

/// Issue 28: two Familiars (one per project) sharing a script's store (then `default.rhai`'s
/// XP) saved 30 + 30 as 30. Each save now adds its own changes to what the file holds.
#[test]
fn two_familiars_sharing_a_store_add_up_their_counts() {
    let dir = tempdir();
    let default = "fn on_reading(ev) { store.xp = (store.xp ?? 0) + 1; }";
    let mut one = host_in(Some(dir.path()));
    let mut two = host_in(Some(dir.path()));
    for host in [&mut one, &mut two] {
        if let Err(err) = host.load_source("default.rhai", default, None) {
            panic!("{err}");
        }
    }
    let xp = || -> i64 {
        let text = std::fs::read_to_string(dir.path().join("default.rhai.json"));
        let json: serde_json::Value =
            serde_json::from_str(&text.unwrap_or_default()).unwrap_or_default();
        json["data"]["xp"].as_i64().unwrap_or(-1)
    };
    // Interleaved bursts of 30 readings (1 XP each), each saved before the other's.
    for round in 0..2 {
        for host in [&mut one, &mut two] {
            for line in 1..=15 {
                run(host, &ev(EventKind::Reading, line));
            }
            host.save_stores();
        }
        assert_eq!(xp(), 30 * (round + 1), "after round {round}");
    }
    drop(one);
    drop(two);
    assert_eq!(xp(), 60);
    // A restart starts from the sum.
    let mut three = host_in(Some(dir.path()));
    if let Err(err) = three.load_source("default.rhai", default, None) {
        panic!("{err}");
    }
    run(&mut three, &ev(EventKind::Reading, 1));
    three.save_stores();
    assert_eq!(xp(), 61);
}
