//! The shipped scripts (`scripts/*.rhai`, `scripts/examples/*.rhai`) over every real
//! transcript in `shared/fixtures/real/`: they load without warnings, run without errors, and
//! map the events as documented. Expected counts are computed from the events themselves.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use familiar_model::{Action, ActionKind, ErrorKind, Event, EventKind, Status, Urgency};
use familiar_script::{EventClock, HostConfig, ScriptHost};
use familiar_transcript::{NormalizerConfig, normalize_bytes};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scripts_dir() -> PathBuf {
    repo().join("scripts")
}

fn real_fixtures() -> Vec<PathBuf> {
    let files = familiar_testkit::real_fixtures();
    assert!(files.len() >= 10, "real fixtures missing: {files:?}");
    files
}

fn events_of(path: &Path) -> Vec<Event> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let config = NormalizerConfig {
        keep_raw: true,
        ..NormalizerConfig::default()
    };
    normalize_bytes(&bytes, &config).0
}

fn host_with(scripts: &[&str]) -> ScriptHost {
    let mut host = ScriptHost::new(HostConfig {
        clock: Arc::new(EventClock::new()),
        ..HostConfig::default()
    });
    for script in scripts {
        let report = host
            .load_file(&scripts_dir().join(script))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            report.warnings.is_empty(),
            "{script}: {:?}",
            report.warnings
        );
    }
    host
}

/// Run `host` over one transcript; panics on any diagnostic.
fn run_over(host: &mut ScriptHost, path: &Path) -> (Vec<Event>, Vec<Action>) {
    let events = events_of(path);
    let mut actions = Vec::new();
    let mut diagnostics = Vec::new();
    for event in &events {
        host.handle(event, &mut actions, &mut diagnostics);
    }
    let rendered: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        rendered.is_empty(),
        "{}:\n{}",
        path.display(),
        rendered.join("\n")
    );
    (events, actions)
}

fn count_by<T: Ord>(items: impl Iterator<Item = T>) -> BTreeMap<T, usize> {
    let mut map = BTreeMap::new();
    for item in items {
        *map.entry(item).or_insert(0) += 1;
    }
    map
}

#[test]
fn default_maps_every_event_as_documented() {
    for path in real_fixtures() {
        let mut host = host_with(&["default.rhai"]);
        let (events, actions) = run_over(&mut host, &path);
        let kinds = count_by(events.iter().map(|e| e.kind));
        let n = |kind: EventKind| kinds.get(&kind).copied().unwrap_or(0);
        let animations = count_by(actions.iter().filter_map(|a| match &a.kind {
            ActionKind::Animate { name } => Some(name.as_str()),
            _ => None,
        }));
        let anim = |name: &str| animations.get(name).copied().unwrap_or(0);
        let name = path.display();
        assert_eq!(
            anim("cast"),
            n(EventKind::Reading) + n(EventKind::Tool),
            "{name}"
        );
        assert_eq!(anim("write"), n(EventKind::Writing), "{name}");
        assert_eq!(anim("attack"), n(EventKind::Bash), "{name}");
        assert_eq!(anim("think"), n(EventKind::Thinking), "{name}");
        assert_eq!(anim("hurt"), n(EventKind::Error), "{name}");
        assert_eq!(anim("victory"), n(EventKind::Success), "{name}");
        let rests = actions
            .iter()
            .filter(|a| a.kind == ActionKind::Rest)
            .count();
        assert_eq!(rests, n(EventKind::CompactBoundary), "{name}");

        let spawns: Vec<&Action> = actions
            .iter()
            .filter(|a| matches!(a.kind, ActionKind::CompanionSpawn { .. }))
            .collect();
        let leaves = actions
            .iter()
            .filter(|a| matches!(a.kind, ActionKind::CompanionLeave { .. }))
            .count();
        assert_eq!(spawns.len(), n(EventKind::SubagentStart), "{name}");
        assert_eq!(leaves, n(EventKind::SubagentEnd), "{name}");

        // A quest for each typed prompt (slash commands excluded), first line only.
        let typed: Vec<&Event> = events
            .iter()
            .filter(|e| {
                e.kind == EventKind::Prompt
                    && e.command.is_none()
                    && e.text.as_deref().is_some_and(|t| !t.is_empty())
            })
            .collect();
        let quests: Vec<&str> = actions
            .iter()
            .filter_map(|a| match &a.kind {
                ActionKind::Quest { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(quests.len(), typed.len(), "{name}");
        for (quest, prompt) in quests.iter().zip(&typed) {
            assert!(!quest.contains('\n'), "{name}: {quest}");
            assert!(quest.chars().count() <= 80, "{name}: {quest}");
            let first = prompt.text.as_deref().unwrap_or_default().lines().next();
            let stem: String = quest.trim_end_matches('…').chars().take(20).collect();
            assert!(
                first.is_some_and(|line| line.trim().starts_with(&stem)),
                "{name}: {quest:?} vs {first:?}"
            );
        }

        // XP adds up to the documented table, and level n comes at 10 × (n − 1)³ in all.
        let table = |e: &Event| -> i64 {
            match e.kind {
                EventKind::Reading | EventKind::Tool => 1,
                EventKind::Writing => 3,
                EventKind::Bash | EventKind::SubagentStart => 2,
                EventKind::Success => 5 + (e.duration_ms.unwrap_or(0) / 60_000).min(10) as i64,
                _ => 0,
            }
        };
        let expected_xp: i64 = events.iter().map(table).sum();
        let got_xp: i64 = actions
            .iter()
            .filter_map(|a| match a.kind {
                ActionKind::Xp { amount } => Some(amount),
                _ => None,
            })
            .sum();
        assert_eq!(got_xp, expected_xp, "{name}");
        // The level is Familiar's, not the script's: it says no level-up itself (the Stage
        // does, from these `xp` actions, `familiar_model::progression::earn`).
        assert!(
            !actions
                .iter()
                .any(|a| matches!(&a.kind, ActionKind::Say { text } if text.starts_with("Level"))),
            "{name}"
        );
        let mut profile = familiar_model::progression::Profile::default();
        let (_, said) = familiar_model::progression::earn(&mut profile, &actions);
        let mut level: i64 = 1;
        while expected_xp >= 10 * level.pow(3) {
            level += 1;
        }
        let level_ups: Vec<String> = said
            .iter()
            .filter_map(|a| match &a.kind {
                ActionKind::Say { text } => Some(text.clone()),
                _ => None,
            })
            .collect();
        let expected_ups: Vec<String> = (2..=level).map(|l| format!("Level {l}!")).collect();
        assert_eq!(level_ups, expected_ups, "{name}");

        // Sounds: a finished turn, and a tool or API failure (a rate limit has its own cue).
        let sounds = count_by(actions.iter().filter_map(|a| match &a.kind {
            ActionKind::Sound { name } => Some(name.as_str()),
            _ => None,
        }));
        let sound = |name: &str| sounds.get(name).copied().unwrap_or(0);
        assert_eq!(sound("done"), n(EventKind::Success), "{name}");
        let failures = events
            .iter()
            .filter(|e| matches!(e.error, Some(ErrorKind::Tool | ErrorKind::Api)))
            .count();
        assert_eq!(sound("error") + sound("rate_limit"), failures, "{name}");

        // Every action is tagged and carries its event's state.
        assert!(actions.iter().all(|a| a.script == "default.rhai"));
    }
}

#[test]
fn notify_errors_tells_about_tool_and_api_errors_only_and_long_turns() {
    let mut total_notifications = 0;
    for path in real_fixtures() {
        let mut host = host_with(&["notify-errors.rhai"]);
        let (events, actions) = run_over(&mut host, &path);
        let name = path.display();
        for action in &actions {
            let ActionKind::Notify { title, .. } = &action.kind else {
                panic!("{name}: unexpected {action:?}");
            };
            let cause = events
                .iter()
                .find(|e| e.line == action.line && e.kind == action.event)
                .unwrap_or_else(|| panic!("{name}: no event for {action:?}"));
            match cause.kind {
                EventKind::Error => assert!(
                    matches!(cause.error, Some(ErrorKind::Tool | ErrorKind::Api)),
                    "{name}: {title} for {cause:?}"
                ),
                EventKind::Success => assert_eq!(title, "Claude Code is waiting for you"),
                other => panic!("{name}: notification for {other}"),
            }
        }
        let has_tool_error = events
            .iter()
            .any(|e| e.error == Some(ErrorKind::Tool) && e.agent.is_none());
        if has_tool_error {
            assert!(
                actions
                    .iter()
                    .any(|a| matches!(&a.kind, ActionKind::Notify { title, .. } if title.ends_with(" failed"))),
                "{name}: tool errors but no notification"
            );
        }
        total_notifications += actions.len();
    }
    assert!(total_notifications > 0);
}

fn notifications(host: &mut ScriptHost, event: &Event) -> Vec<(String, String, Urgency)> {
    let (actions, diags) = host.handle_event(event);
    assert!(diags.is_empty(), "{diags:?}");
    actions
        .into_iter()
        .filter_map(|a| match a.kind {
            ActionKind::Notify {
                title,
                body,
                urgency,
            } => Some((title, body, urgency)),
            _ => None,
        })
        .collect()
}

fn error_event(kind: ErrorKind, ts: &str, text: &str) -> Event {
    let mut ev = Event::new(EventKind::Error, 10);
    ev.error = Some(kind);
    ev.ts = Some(ts.into());
    ev.text = Some(text.into());
    ev
}

#[test]
fn notify_errors_rate_limit_rejection_interrupt_and_debounce() {
    let mut host = host_with(&["notify-errors.rhai"]);
    let mut limit = error_event(
        ErrorKind::Api,
        "2026-01-01T10:00:00Z",
        "You've hit your session limit — resets 11:30am",
    );
    limit.error_code = Some("rate_limit".into());
    assert_eq!(
        notifications(&mut host, &limit),
        vec![(
            "Claude Code hit a usage limit".to_owned(),
            "You've hit your session limit — resets 11:30am".to_owned(),
            Urgency::Critical
        )]
    );
    // Debounced: the same limit a minute later says nothing.
    limit.ts = Some("2026-01-01T10:01:00Z".into());
    assert_eq!(notifications(&mut host, &limit), vec![]);

    for kind in [ErrorKind::Rejected, ErrorKind::Interrupted] {
        let ev = error_event(
            kind,
            "2026-01-01T10:02:00Z",
            "[Request interrupted by user]",
        );
        assert_eq!(notifications(&mut host, &ev), vec![], "{kind:?}");
    }

    let mut tool = error_event(
        ErrorKind::Tool,
        "2026-01-01T10:03:00Z",
        "Exit code 1\nerror[E0308]: mismatched types",
    );
    tool.tool = Some("Bash".into());
    assert_eq!(
        notifications(&mut host, &tool),
        vec![(
            "Bash failed".to_owned(),
            "Exit code 1".to_owned(),
            Urgency::Normal
        )]
    );
    tool.ts = Some("2026-01-01T10:03:30Z".into());
    assert_eq!(notifications(&mut host, &tool), vec![]);
    tool.ts = Some("2026-01-01T10:04:00Z".into());
    assert_eq!(notifications(&mut host, &tool).len(), 1);
}

#[test]
fn notify_errors_long_turn_from_prompt_to_success() {
    let mut host = host_with(&["notify-errors.rhai"]);
    let mut prompt = Event::new(EventKind::Prompt, 1);
    prompt.ts = Some("2026-01-01T10:00:00Z".into());
    assert_eq!(notifications(&mut host, &prompt), vec![]);
    let mut done = Event::new(EventKind::Success, 2);
    done.status = Status::WaitingForInput;
    done.ts = Some("2026-01-01T10:03:20Z".into());
    assert_eq!(
        notifications(&mut host, &done),
        vec![(
            "Claude Code is waiting for you".to_owned(),
            "Turn finished after 3 min".to_owned(),
            Urgency::Normal
        )]
    );
    // A short turn says nothing.
    prompt.ts = Some("2026-01-01T11:00:00Z".into());
    notifications(&mut host, &prompt);
    done.ts = Some("2026-01-01T11:00:20Z".into());
    assert_eq!(notifications(&mut host, &done), vec![]);
    // A subagent's turn says nothing either.
    let mut sub = done.clone();
    sub.agent = Some("a1".into());
    sub.duration_ms = Some(600_000);
    assert_eq!(notifications(&mut host, &sub), vec![]);
}

#[test]
fn examples_load_and_run_over_the_real_transcripts() {
    let examples = [
        "examples/git-push-sound.rhai",
        "examples/tool-counter.rhai",
        "examples/context-warning.rhai",
    ];
    let mut produced = BTreeMap::new();
    for path in real_fixtures() {
        let mut host = host_with(&examples);
        let (_, actions) = run_over(&mut host, &path);
        for action in actions {
            *produced.entry(action.script).or_insert(0) += 1;
        }
    }
    // Each example does something on at least one real session.
    for example in examples {
        let file = example.trim_start_matches("examples/");
        assert!(
            produced.get(file).copied().unwrap_or(0) > 0,
            "{file} produced nothing: {produced:?}"
        );
    }
}

#[test]
fn default_and_notify_errors_together_keep_their_own_tags_and_order() {
    let path = real_fixtures()
        .into_iter()
        .find(|p| p.to_string_lossy().contains("tool-errors"))
        .unwrap_or_else(|| panic!("no tool-errors fixture"));
    let mut host = host_with(&["default.rhai", "notify-errors.rhai"]);
    let (_, actions) = run_over(&mut host, &path);
    let mut last_line = 0;
    let mut last_script_at_line = "";
    for action in &actions {
        if action.line != last_line {
            last_line = action.line;
            last_script_at_line = "";
        }
        // Within one event, default.rhai's actions come before notify-errors.rhai's.
        assert!(action.script.as_str() >= last_script_at_line, "{action:?}");
        last_script_at_line = if action.script == "default.rhai" {
            "default.rhai"
        } else {
            "notify-errors.rhai"
        };
    }
    assert!(actions.iter().any(|a| a.script == "notify-errors.rhai"));
}

#[test]
fn built_in_copies_load_from_text_without_warnings() {
    let mut host = ScriptHost::new(HostConfig::default());
    for (name, source) in familiar_script::SHIPPED {
        let report = host
            .load_source(name, source, None)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(report.warnings.is_empty(), "{name}: {:?}", report.warnings);
        assert!(!report.handlers.is_empty(), "{name}");
    }
    assert_eq!(
        host.script_names(),
        vec!["default.rhai", "notify-errors.rhai"]
    );
}

/// Issue 28: a store holding `level: 3000000` stopped `familiar watch` from starting (the
/// level curve overflowed while `default.rhai` loaded), and `xp: "abc"` became `"abc33333"`.
/// Since issue 27 the level is Familiar's own: `default.rhai` reads nothing from its store
/// and writes nothing to it, so an odd store left by an earlier version changes nothing.
#[test]
fn default_ignores_an_odd_store_of_earlier_versions() {
    for odd in [
        "store.level = 3000000;",
        "store.xp = \"abc\"; store.level = \"x\";",
        "store.xp = -7; store.level = -1;",
        "store.xp = 1e300;",
    ] {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let config = || HostConfig {
            clock: Arc::new(EventClock::new()),
            store_dir: Some(dir.path().to_path_buf()),
            ..HostConfig::default()
        };
        // A script of the same name leaves the odd store behind.
        let mut writer = ScriptHost::new(config());
        writer
            .load_source("default.rhai", odd, None)
            .unwrap_or_else(|e| panic!("{odd}: {e}"));
        drop(writer);
        let before =
            std::fs::read_to_string(dir.path().join("default.rhai.json")).unwrap_or_default();
        let mut host = ScriptHost::new(config());
        host.load_file(&scripts_dir().join("default.rhai"))
            .unwrap_or_else(|e| panic!("{odd}: {e}"));
        let mut reading = Event::new(EventKind::Reading, 1);
        reading.session = Some("s".into());
        let mut actions = Vec::new();
        let mut diagnostics = Vec::new();
        host.handle(&reading, &mut actions, &mut diagnostics);
        assert!(diagnostics.is_empty(), "{odd}: {diagnostics:?}");
        assert!(
            actions
                .iter()
                .any(|a| matches!(a.kind, ActionKind::Xp { amount: 1 })),
            "{odd}: {actions:?}"
        );
        drop(host);
        let after =
            std::fs::read_to_string(dir.path().join("default.rhai.json")).unwrap_or_default();
        assert_eq!(after, before, "{odd}");
    }
}

/// `progress()` reads the user's profile as its owner (the Stage) sets it, counting the `xp`
/// the running call already asked for.
#[test]
fn progress_reads_the_users_profile() {
    let mut host = ScriptHost::new(HostConfig::default());
    host.load_source(
        "p.rhai",
        "fn on_reading(ev) { let a = progress(); xp(5); let b = progress(); \
         say(`${a.xp} ${a.level} ${a.next_level_xp} ${b.xp} ${b.level}`); }",
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    host.set_user_xp(78);
    let mut actions = Vec::new();
    let mut diagnostics = Vec::new();
    host.handle(
        &Event::new(EventKind::Reading, 1),
        &mut actions,
        &mut diagnostics,
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let said: Vec<_> = actions
        .iter()
        .filter_map(|a| match &a.kind {
            ActionKind::Say { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(said, ["78 2 80 83 3"]);
}
