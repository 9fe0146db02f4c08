//! The config file: every key parsed, flags merged over it, and golden error texts for files
//! that must not load (each with its line, column and a caret under the culprit).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use familiar_config::{
    Config, ConfigError, Overrides, QuietHours, Settings, Source, load_from, parse,
};
use familiar_model::EventKind;

const FULL: &str = r#"
scripts = ["mine.rhai", "/abs/other.rhai"]
context_limit = 1000000
allow_run = true
poll = true
idle_timeout = "90s"

[notifications]
enabled = true
bell_fallback = true
events = { success = false, error = true, compact_boundary = false }

[run]
timeout = "5s"

[sound]
enabled = false
volume = 0.25
quiet_hours = "22:30-07:00"
repeat_gap = "10s"

[remote]
hosts = ["devbox", "me@vm:2222:~/src/app"]
bin = "~/.cargo/bin/familiar"
"#;

#[test]
fn every_key_is_read_and_relative_scripts_sit_beside_the_file() {
    let config = parse(FULL, Path::new("/home/u/.config/familiar/config.toml")).expect("parses");
    assert_eq!(
        config.scripts,
        vec![
            PathBuf::from("/home/u/.config/familiar/mine.rhai"),
            PathBuf::from("/abs/other.rhai")
        ]
    );
    assert_eq!(config.context_limit, Some(1_000_000));
    assert!(config.allow_run && config.poll);
    assert_eq!(config.idle_timeout, Some(Duration::from_secs(90)));
    assert!(config.notifications.bell_fallback);
    assert_eq!(config.run.timeout, Duration::from_secs(5));
    assert!(!config.sound.enabled);
    assert_eq!(config.sound.volume, 0.25);
    assert_eq!(
        config.sound.quiet_hours,
        Some(QuietHours {
            start: 22 * 60 + 30,
            end: 7 * 60
        })
    );
    assert_eq!(config.sound.repeat_gap, Duration::from_secs(10));
    assert_eq!(config.remote.hosts, ["devbox", "me@vm:2222:~/src/app"]);
    assert_eq!(config.remote.bin, "~/.cargo/bin/familiar");

    let settings = config.merge(&Overrides::default());
    assert!(!settings.sound && settings.sound_volume == 0.25);
    assert_eq!(
        settings.muted_events,
        BTreeSet::from([EventKind::CompactBoundary, EventKind::Success])
    );
}

#[test]
fn an_empty_file_is_the_defaults() {
    let config = parse("", Path::new("config.toml")).expect("parses");
    assert_eq!(config, Config::default());
    let settings = config.merge(&Overrides::default());
    assert_eq!(settings, Settings::default());
    assert!(settings.notifications && !settings.allow_run && !settings.poll);
}

#[test]
fn flags_override_the_file_and_scripts_add_up() {
    let config = parse(FULL, Path::new("/c/config.toml")).expect("parses");
    let flags = Overrides {
        scripts: vec![PathBuf::from("extra.rhai")],
        context_limit: Some(200_000),
        allow_run: Some(false),
        poll: None,
        notifications: Some(false),
        idle_timeout: Some(Duration::from_secs(10)),
        sound: Some(true),
        remote_hosts: vec!["laptop".to_owned()],
        remote_bin: Some("/opt/familiar".to_owned()),
    };
    let settings = config.merge(&flags);
    assert_eq!(
        settings.scripts,
        vec![
            PathBuf::from("/c/mine.rhai"),
            PathBuf::from("/abs/other.rhai"),
            PathBuf::from("extra.rhai")
        ]
    );
    assert_eq!(settings.context_limit, Some(200_000));
    assert!(!settings.allow_run);
    assert!(
        settings.poll,
        "not given on the command line: the file's value"
    );
    assert!(!settings.notifications);
    assert_eq!(settings.idle_timeout, Some(Duration::from_secs(10)));
    assert_eq!(
        settings.remote_hosts,
        ["devbox", "me@vm:2222:~/src/app", "laptop"],
        "--remote adds to the configured hosts"
    );
    assert_eq!(settings.remote_bin, "/opt/familiar");
}

#[test]
fn settings_render_for_doctor() {
    let settings = parse(FULL, Path::new("/c/config.toml"))
        .expect("parses")
        .merge(&Overrides::default());
    assert_eq!(
        settings.to_string(),
        r#"scripts = ["/c/mine.rhai", "/abs/other.rhai"]
context_limit = 1000000
allow_run = true
poll = true
idle_timeout = "1m 30s"
notifications.enabled = true
notifications.bell_fallback = true
notifications muted for = [compact_boundary, success]
run.timeout = "5s"
sound.enabled = false
sound.volume = 0.25
sound.quiet_hours = "22:30-07:00"
sound.repeat_gap = "10s"
remote.hosts = ["devbox", "me@vm:2222:~/src/app"]
remote.bin = "~/.cargo/bin/familiar""#
    );
}

fn error_text(text: &str) -> String {
    match parse(text, Path::new("/c/config.toml")) {
        Ok(config) => panic!("should not parse: {config:?}"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn golden_wrong_type() {
    assert_eq!(
        error_text("poll = false\nallow_run = \"yes\"\n"),
        r#"invalid config file /c/config.toml:2:13: invalid type: string "yes", expected a boolean
  |
2 | allow_run = "yes"
  |             ^^^^^"#
    );
}

#[test]
fn golden_unknown_key() {
    assert_eq!(
        error_text("alow_run = true\n"),
        r#"invalid config file /c/config.toml:1:1: unknown field `alow_run`, expected one of `scripts`, `context_limit`, `allow_run`, `poll`, `idle_timeout`, `notifications`, `run`, `sound`, `remote`
  |
1 | alow_run = true
  | ^^^^^^^^"#
    );
}

#[test]
fn golden_unknown_event_kind() {
    assert_eq!(
        error_text("[notifications]\nevents = { sucess = false }\n"),
        r#"invalid config file /c/config.toml:2:12: unknown variant `sucess`, expected one of `session_start`, `prompt`, `thinking`, `text`, `reading`, `writing`, `bash`, `tool`, `subagent_start`, `subagent_end`, `error`, `compact_boundary`, `success`, `summary`, `status`, `snapshot`
  |
2 | events = { sucess = false }
  |            ^^^^^^"#
    );
}

#[test]
fn golden_bad_duration() {
    assert_eq!(
        error_text("[run]\ntimeout = \"5 parsecs\"\n"),
        r#"invalid config file /c/config.toml:2:11: invalid duration "5 parsecs" (unknown time unit "parsecs", supported units: ns, us/µs, ms, sec, min, hours, days, weeks, months, years (and few variations)); write e.g. "30s" or "5m"
  |
2 | timeout = "5 parsecs"
  |           ^^^^^^^^^^^"#
    );
}

#[test]
fn golden_syntax_error() {
    assert_eq!(
        error_text("scripts = [\"a.rhai\"\npoll = true\n"),
        r#"invalid config file /c/config.toml:2:1: missing comma between array elements, expected `,`
  |
2 | poll = true
  | ^"#
    );
}

#[test]
fn missing_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let absent = dir.path().join("config.toml");
    let loaded = load_from(Source::Default(absent.clone())).expect("defaults");
    assert!(!loaded.found);
    assert_eq!(loaded.config, Config::default());

    let err = load_from(Source::Env(absent.clone())).expect_err("named file must exist");
    assert!(matches!(err, ConfigError::MissingNamed { .. }));
    assert_eq!(
        err.to_string(),
        format!(
            "config file {} (named by FAMILIAR_CONFIG) does not exist",
            absent.display()
        )
    );

    std::fs::write(&absent, "poll = 1\n").expect("write");
    let err = load_from(Source::Default(absent.clone())).expect_err("invalid");
    assert!(
        matches!(
            err,
            ConfigError::Invalid {
                line: 1,
                column: 8,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn the_documented_example_config_loads() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/config.md"))
        .expect("docs/config.md");
    let start = doc.find("```toml\n").expect("a toml example") + "```toml\n".len();
    let end = start + doc[start..].find("```").expect("end of the example");
    let config = parse(&doc[start..end], Path::new("/c/config.toml")).expect("the example parses");
    assert_eq!(config.scripts, vec![PathBuf::from("/c/scripts/mine.rhai")]);
    assert_eq!(config.idle_timeout, Some(Duration::from_secs(300)));
    assert_eq!(
        config.merge(&Overrides::default()).muted_events,
        BTreeSet::from([EventKind::Success])
    );
    assert_eq!(
        config.sound.quiet_hours.map(|h| h.to_string()).as_deref(),
        Some("22:00-07:00")
    );
}

#[test]
fn sound_flags_win_over_the_file_and_sound_is_on_by_default() {
    assert!(Settings::default().sound);
    let config = parse("[sound]\nenabled = true\n", Path::new("c.toml")).expect("parses");
    let muted = config.merge(&Overrides {
        sound: Some(false),
        ..Overrides::default()
    });
    assert!(!muted.sound);
}

#[test]
fn quiet_hours_wrap_past_midnight() {
    let night: QuietHours = "22:00-07:00".parse().expect("parses");
    assert!(night.contains(22 * 60) && night.contains(3 * 60) && night.contains(6 * 60 + 59));
    assert!(!night.contains(7 * 60) && !night.contains(12 * 60) && !night.contains(21 * 60 + 59));
    let lunch: QuietHours = "12:00-13:30".parse().expect("parses");
    assert!(lunch.contains(12 * 60 + 10) && !lunch.contains(13 * 60 + 30));
    assert_eq!(lunch.to_string(), "12:00-13:30");
}

#[test]
fn bad_sound_settings_are_located_errors() {
    for (text, needle) in [
        ("[sound]\nvolume = 1.5\n", "volume 1.5 is out of range"),
        (
            "[sound]\nquiet_hours = \"22h-7h\"\n",
            "invalid quiet hours \"22h-7h\"",
        ),
        (
            "[sound]\nquiet_hours = \"25:00-07:00\"\n",
            "invalid quiet hours",
        ),
        ("[sound]\nquiet_hours = \"08:00-08:00\"\n", "are empty"),
        ("[sound]\nvolum = 0.5\n", "unknown field `volum`"),
    ] {
        let err = parse(text, Path::new("c.toml"))
            .expect_err(text)
            .to_string();
        assert!(err.contains("c.toml:2:"), "{err}");
        assert!(err.contains(needle), "{text}: {err}");
    }
}

/// `context_limit` as people write it (`"1M"`), or as a number; a word is a located error.
#[test]
fn context_limit_takes_a_size_or_a_number() {
    let path = Path::new("/c/config.toml");
    for (text, want) in [
        ("context_limit = \"1M\"\n", 1_000_000),
        ("context_limit = \"200k\"\n", 200_000),
        ("context_limit = 1000000\n", 1_000_000),
    ] {
        let config = parse(text, path).expect("parses");
        assert_eq!(config.context_limit, Some(want), "{text}");
    }
    let error = error_text("context_limit = \"lots\"\n");
    assert!(
        error.contains("config.toml:1:") && error.contains("invalid token count \"lots\""),
        "{error}"
    );
}
