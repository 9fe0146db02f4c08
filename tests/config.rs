//! The config file is read by every command, through one merge with the flags: a key of
//! `docs/config.md` works from the file as from its flag, and the flag wins.

mod common;

use std::path::Path;

use common::watch::{Watch, append, prompt_record, sentinel};
use common::{Test, fixture, ndjson};

/// The limits the events of `familiar events FIXTURE` carry, with this config file.
fn limits_of_events(config: Option<&Path>, flags: &[&str]) -> Vec<u64> {
    let mut test = Test::new()
        .arg("events")
        .args(flags)
        .arg(fixture("demo.jsonl"));
    if let Some(config) = config {
        test = test.env("FAMILIAR_CONFIG", config);
    }
    let output = test.run();
    ndjson(&output)
        .iter()
        .filter_map(|event| event["context_limit"].as_u64())
        .collect()
}

#[test]
fn context_limit_in_the_config_file_sets_the_window_of_every_command() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("config.toml");
    std::fs::write(&config, "context_limit = 1000000\n").expect("config");

    // events: every event, from the file; the flag wins over it.
    let limits = limits_of_events(Some(&config), &[]);
    assert!(!limits.is_empty() && limits.iter().all(|&limit| limit == 1_000_000));
    // A size as the help writes it (`1M`, `300k`) is a token count.
    let flagged = limits_of_events(Some(&config), &["--context-limit", "300k"]);
    assert!(flagged.iter().all(|&limit| limit == 300_000), "{flagged:?}");
    assert!(
        limits_of_events(None, &[]).contains(&200_000),
        "without the file, the window is detected"
    );

    // sessions and watch (whose events the window draws): the same file.
    let claude = tmp.path().join("claude");
    let project = claude.join("projects").join("-work-x");
    std::fs::create_dir_all(&project).expect("mkdir");
    let transcript = project.join("s-watch.jsonl");
    append(&transcript, prompt_record("go").as_bytes());
    let output = Test::new()
        .args(["sessions", "--all", "--json"])
        .env("CLAUDE_CONFIG_DIR", &claude)
        .env("FAMILIAR_CONFIG", &config)
        .run();
    let table: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(table[0]["context_limit"], 1_000_000, "{table:#}");

    // The watcher reads the config file of its XDG_CONFIG_HOME (the harness isolates it
    // under the config dir): the same file there.
    let watch_config = claude.join(".config/familiar");
    std::fs::create_dir_all(&watch_config).expect("mkdir");
    std::fs::copy(&config, watch_config.join("config.toml")).expect("config");
    let watch = Watch::start(&claude, tmp.path(), &["--all"]);
    let snapshot: serde_json::Value =
        serde_json::from_str(&watch.line_containing("\"kind\":\"snapshot\"")).expect("JSON");
    assert_eq!(snapshot["context_limit"], 1_000_000, "{snapshot}");
    append(&transcript, prompt_record("again").as_bytes());
    append(&transcript, sentinel("after-config").as_bytes());
    let events = watch.events_until("after-config");
    assert!(
        events
            .iter()
            .all(|line| line.contains("\"context_limit\":1000000")),
        "{events:?}"
    );
}
