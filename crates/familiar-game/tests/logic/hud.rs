//! What the HUD shows besides mana: XP and levels, speech, quest, log strip, floaters.

use super::*;

/// XP as the pipeline sends it: the `xp` action, then the profile it made.
fn earn_xp(app: &mut App, profile: &mut familiar_game::progression::Profile, amount: i64) {
    let xp = action(ActionKind::Xp { amount });
    let (update, _) = familiar_game::progression::earn(profile, std::slice::from_ref(&xp));
    send(app, GameFeed::Action(xp));
    if let Some(update) = update {
        send(app, GameFeed::Progress(update));
    }
}

#[test]
fn xp_levels_up() {
    let mut app = settled();
    let e = familiar(&mut app, "s1");
    let mut profile = Default::default();
    earn_xp(&mut app, &mut profile, 5);
    app.update();
    let p = app.world().get::<Progress>(e).cloned().unwrap_or_default();
    assert_eq!((p.xp, p.level, p.level_up_age), (5, 1, None));
    assert!((p.fraction() - 0.5).abs() < 1e-6);
    earn_xp(&mut app, &mut profile, 6);
    app.update();
    let p = app.world().get::<Progress>(e).cloned().unwrap_or_default();
    assert_eq!((p.xp, p.level), (11, 2));
    assert!(p.level_up_age.is_some(), "level-up effect plays");
    assert!(app.world().resource::<Activity>().animating);
    seconds(&mut app, 2.5);
    let p = app.world().get::<Progress>(e).cloned().unwrap_or_default();
    assert_eq!(p.level_up_age, None, "the effect ends");
    earn_xp(&mut app, &mut profile, -1000);
    app.update();
    let p = app.world().get::<Progress>(e).cloned().unwrap_or_default();
    assert_eq!((p.xp, p.level), (0, 1), "never below zero");
}

#[test]
fn say_quest_emit_and_log() {
    let mut app = settled();
    let long = "word ".repeat(100);
    send(
        &mut app,
        GameFeed::Action(action(ActionKind::Say {
            text: "Let\u{2019}s read   the\ncode \u{2014} now\u{2026}".into(),
        })),
    );
    send(
        &mut app,
        GameFeed::Action(action(ActionKind::Quest { text: long })),
    );
    let mut data = serde_json::Map::new();
    data.insert("branch".into(), serde_json::Value::String("main".into()));
    send(
        &mut app,
        GameFeed::Action(action(ActionKind::Emit {
            name: "git_push".into(),
            data,
        })),
    );
    send(
        &mut app,
        GameFeed::Action(action(ActionKind::Log {
            text: "hello".into(),
        })),
    );
    // A notification shows in the log too (a replay sends none to the desktop).
    send(
        &mut app,
        GameFeed::Action(action(ActionKind::Notify {
            title: "Claude Code stopped".into(),
            body: "The API answered 500".into(),
            urgency: familiar_model::Urgency::Critical,
        })),
    );
    app.update();
    let e = familiar(&mut app, "s1");
    let said = app.world().get::<Speech>(e).and_then(|s| s.0.clone());
    // Whitespace flattened; the typography kept (the pixel font draws it).
    assert_eq!(
        said.map(|s| s.0),
        Some("Let\u{2019}s read the code \u{2014} now\u{2026}".to_string())
    );
    let quest = app
        .world()
        .get::<Quest>(e)
        .and_then(|q| q.0.clone())
        .unwrap_or_default();
    assert_eq!(quest.chars().count(), 90, "trimmed: {quest}");
    assert!(quest.ends_with('\u{2026}'));
    let log = app.world().resource::<LogStrip>().lines.clone();
    assert_eq!(log.len(), 3);
    assert!(
        log[0].contains("git_push") && log[0].contains("\"branch\":\"main\""),
        "{log:?}"
    );
    assert_eq!(log[1], "hello");
    assert_eq!(log[2], "! Claude Code stopped: The API answered 500");
    seconds(&mut app, 10.0);
    assert_eq!(
        app.world().get::<Speech>(e).and_then(|s| s.0.clone()),
        None,
        "bubble fades"
    );
    for i in 0..10 {
        send(
            &mut app,
            GameFeed::Action(action(ActionKind::Log {
                text: format!("l{i}"),
            })),
        );
    }
    app.update();
    let log = app.world().resource::<LogStrip>().lines.clone();
    assert_eq!(log.len(), GameConfig::default().log_lines);
    assert_eq!(log.back().map(String::as_str), Some("l9"));
}

/// Issue 14: a burst of tools stacked floaters into overlapping text; the newest replaces.
#[test]
fn tool_targets_float_up_one_at_a_time_and_vanish() {
    let mut app = settled();
    let mut ev = event(EventKind::Reading, Some(10));
    ev.target = Some("/home/user/project/src/main.rs".to_string());
    send(&mut app, GameFeed::Event(ev));
    let mut bash = event(EventKind::Bash, Some(10));
    bash.target = Some("cargo test --workspace".to_string());
    send(&mut app, GameFeed::Event(bash));
    app.update();
    let mut q = app.world_mut().query::<&Floater>();
    let mut texts: Vec<String> = q.iter(app.world()).map(|f| f.text.clone()).collect();
    texts.sort();
    assert_eq!(texts, vec!["cargo test --workspace"]);
    assert!(app.world().resource::<Activity>().animating);
    seconds(&mut app, 2.0);
    let mut q = app.world_mut().query::<&Floater>();
    assert_eq!(q.iter(app.world()).count(), 0);
}
