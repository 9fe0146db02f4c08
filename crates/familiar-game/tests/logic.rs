//! Headless ECS tests of the game logic: `MinimalPlugins`, no window, time advanced by hand
//! (100 ms per update), feed items written as messages or sent over the real channel.

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use familiar_game::GameFeed;
use familiar_game::anim::Anim;
use familiar_game::logic::{
    Activity, Animation, Companion, Familiar, FeedChannel, FeedMessage, Floater, GameConfig,
    GameLogicPlugin, LogStrip, Mana, ManaBand, Mark, Progress, Quest, Speech,
};
use familiar_model::{Action, ActionKind, AgentKind, Event, EventKind, Status};

const STEP_MS: u64 = 100;

fn app() -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(GameLogicPlugin)
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            STEP_MS,
        )));
    // The first update has a zero delta; run it so every later one advances 100 ms.
    app.update();
    app
}

fn seconds(app: &mut App, secs: f32) {
    let steps = (secs * 1000.0 / STEP_MS as f32).round() as usize;
    for _ in 0..steps {
        app.update();
    }
}

fn action_in(session: &str, kind: ActionKind) -> Action {
    Action {
        kind,
        script: "test.rhai".to_string(),
        session: Some(session.to_string()),
        agent: None,
        line: 1,
        event: EventKind::Tool,
    }
}

fn action(kind: ActionKind) -> Action {
    action_in("s1", kind)
}

fn event(kind: EventKind, used: Option<u64>) -> Event {
    let mut ev = Event::new(kind, 1);
    ev.session = Some("s1".to_string());
    ev.context_used = used;
    ev.status = Status::Working;
    ev
}

fn send(app: &mut App, item: GameFeed) {
    app.world_mut().write_message(FeedMessage(item));
}

fn animate(app: &mut App, name: &str) {
    send(
        app,
        GameFeed::Action(action(ActionKind::Animate {
            name: name.to_string(),
        })),
    );
}

fn familiar(app: &mut App, session: &str) -> Entity {
    let mut q = app.world_mut().query::<(Entity, &Familiar)>();
    let found = q
        .iter(app.world())
        .find(|(_, f)| f.session == session)
        .map(|(e, _)| e);
    found.unwrap_or_else(|| panic!("no familiar for session {session}"))
}

fn anim(app: &mut App) -> Anim {
    let e = familiar(app, "s1");
    app.world()
        .get::<Animation>(e)
        .map(|a| a.0.current())
        .unwrap_or(Anim::Idle)
}

fn mana(app: &mut App) -> Mana {
    let e = familiar(app, "s1");
    app.world().get::<Mana>(e).cloned().unwrap_or_default()
}

/// A familiar for `s1` past its entrance.
fn settled() -> App {
    let mut app = app();
    send(
        &mut app,
        GameFeed::Event(event(EventKind::SessionStart, None)),
    );
    app.update();
    assert_eq!(anim(&mut app), Anim::Enter, "a new familiar enters first");
    seconds(&mut app, 1.5);
    assert_eq!(anim(&mut app), Anim::Idle);
    app
}

#[test]
fn each_animate_action_plays_its_animation() {
    for (name, expected) in [
        ("cast", Anim::Cast),
        ("attack", Anim::Attack),
        ("write", Anim::Write),
        ("think", Anim::Think),
        ("victory", Anim::Victory),
        ("hurt", Anim::Hurt),
        ("blocked", Anim::Blocked),
        ("rest", Anim::Rest),
        ("enter", Anim::Enter),
    ] {
        let mut app = settled();
        animate(&mut app, name);
        app.update();
        assert_eq!(anim(&mut app), expected, "animate({name})");
    }
}

#[test]
fn a_burst_respects_minimum_durations_and_priorities() {
    let mut app = settled();
    animate(&mut app, "cast");
    app.update();
    animate(&mut app, "write");
    animate(&mut app, "attack");
    app.update();
    assert_eq!(
        anim(&mut app),
        Anim::Cast,
        "equal priority waits for the minimum"
    );
    seconds(&mut app, 0.6);
    assert_eq!(
        anim(&mut app),
        Anim::Attack,
        "the latest pending request of equal rank"
    );
    animate(&mut app, "hurt");
    app.update();
    assert_eq!(anim(&mut app), Anim::Hurt, "an error interrupts at once");
    animate(&mut app, "think");
    app.update();
    assert_eq!(anim(&mut app), Anim::Hurt);
    seconds(&mut app, 0.8);
    assert_eq!(anim(&mut app), Anim::Think);
    seconds(&mut app, 2.5);
    assert_eq!(anim(&mut app), Anim::Idle, "falls back to idle");
}

#[test]
fn unknown_animations_are_reported_in_the_log_strip() {
    let mut app = settled();
    animate(&mut app, "moonwalk");
    app.update();
    assert_eq!(anim(&mut app), Anim::Idle);
    let log = app.world().resource::<LogStrip>();
    assert!(log.lines.iter().any(|l| l.contains("moonwalk")), "{log:?}");
}

#[test]
fn mana_follows_context_in_bands() {
    let mut app = settled();
    for (used, remaining, band) in [
        (50_000, 150_000, ManaBand::Plenty),
        (120_000, 80_000, ManaBand::Low),
        (170_000, 30_000, ManaBand::Critical),
        (210_000, 0, ManaBand::Critical),
    ] {
        send(
            &mut app,
            GameFeed::Event(event(EventKind::Text, Some(used))),
        );
        seconds(&mut app, 1.5);
        let m = mana(&mut app);
        assert_eq!(m.remaining(), Some(remaining), "used {used}");
        assert_eq!(m.band(), band, "used {used}");
        let expected = remaining as f32 / 200_000.0;
        assert!(
            (m.shown - expected).abs() < 0.01,
            "shown {} for {used}",
            m.shown
        );
    }
    assert_eq!(mana(&mut app).label(), "0/200k");
}

#[test]
fn unknown_context_is_unknown_not_empty() {
    let mut app = settled();
    let m = mana(&mut app);
    assert_eq!(m.band(), ManaBand::Unknown);
    assert_eq!(m.remaining(), None);
    assert_eq!(m.label(), "?/200k");
    send(
        &mut app,
        GameFeed::Event(event(EventKind::Text, Some(50_000))),
    );
    app.update();
    assert_eq!(
        mana(&mut app).shown,
        0.75,
        "the first known value shows at once"
    );
    send(&mut app, GameFeed::Event(event(EventKind::Text, None)));
    app.update();
    assert_eq!(mana(&mut app).band(), ManaBand::Unknown);
}

#[test]
fn compaction_rests_and_the_bar_follows_the_events_context() {
    let mut app = settled();
    send(
        &mut app,
        GameFeed::Event(event(EventKind::Text, Some(180_000))),
    );
    app.update();
    assert_eq!(mana(&mut app).band(), ManaBand::Critical);
    // The session model gives the compaction event the post-compaction context.
    let mut compact = event(EventKind::CompactBoundary, Some(20_000));
    compact.pre_tokens = Some(180_000);
    compact.post_tokens = Some(20_000);
    send(&mut app, GameFeed::Event(compact));
    send(&mut app, GameFeed::Action(action(ActionKind::Rest)));
    app.update();
    assert_eq!(anim(&mut app), Anim::Rest);
    let m = mana(&mut app);
    assert_eq!(m.remaining(), Some(180_000), "refilled to the post size");
    let c = m
        .compaction
        .unwrap_or_else(|| panic!("no compaction recorded"));
    assert_eq!((c.pre, c.post), (Some(180_000), Some(20_000)));
    // The game keeps no estimate: unknown is unknown until the model knows again.
    send(&mut app, GameFeed::Event(event(EventKind::Text, None)));
    app.update();
    assert_eq!(mana(&mut app).remaining(), None);
    send(
        &mut app,
        GameFeed::Event(event(EventKind::Text, Some(30_000))),
    );
    app.update();
    assert_eq!(mana(&mut app).remaining(), Some(170_000));
    seconds(&mut app, 4.0);
    assert_eq!(anim(&mut app), Anim::Idle, "rest ends after its hold");
}

#[test]
fn a_snapshot_brings_a_familiar_with_its_mana_status_and_project() {
    let mut app = app();
    let mut snapshot = Event::new(EventKind::Snapshot, 40);
    snapshot.session = Some("258c7280-ae70".into());
    snapshot.context_used = Some(150_000);
    snapshot.context_limit = 1_000_000;
    snapshot.status = Status::Idle;
    snapshot.cwd = Some("/home/user/spotter".into());
    send(&mut app, GameFeed::Event(snapshot));
    app.update();
    let e = familiar(&mut app, "258c7280-ae70");
    let world = app.world();
    assert_eq!(
        world.get::<Familiar>(e).map(|f| f.label.clone()),
        Some("spotter 258c72".into())
    );
    let mana = world.get::<Mana>(e).expect("mana");
    assert_eq!((mana.used, mana.limit), (Some(150_000), 1_000_000));
    assert!(
        world.get::<Animation>(e).is_some_and(|a| a.0.sleeping()),
        "an idle session sleeps from the first frame"
    );
}

#[test]
fn a_codex_session_says_which_agent_it_is() {
    let mut app = app();
    let mut snapshot = Event::new(EventKind::Snapshot, 3);
    snapshot.session = Some("01a20936-daa5-7031-9c10-cb9fc41a4f8e".into());
    snapshot.agent_kind = AgentKind::Codex;
    snapshot.cwd = Some("/home/user/spotter".into());
    send(&mut app, GameFeed::Event(snapshot));
    app.update();
    let e = familiar(&mut app, "01a20936-daa5-7031-9c10-cb9fc41a4f8e");
    assert_eq!(
        app.world().get::<Familiar>(e).map(|f| f.label.clone()),
        Some("spotter codex 1a4f8e".into())
    );
}

#[test]
fn status_marks_and_sleep() {
    let mut app = settled();
    let mut ev = event(EventKind::Tool, Some(1));
    ev.status = Status::WaitingForApproval;
    send(&mut app, GameFeed::Event(ev.clone()));
    app.update();
    let e = familiar(&mut app, "s1");
    assert_eq!(
        app.world().get::<Mark>(e).and_then(|m| m.symbol()),
        Some('!')
    );
    ev.status = Status::WaitingForInput;
    send(&mut app, GameFeed::Event(ev.clone()));
    app.update();
    assert_eq!(
        app.world().get::<Mark>(e).and_then(|m| m.symbol()),
        Some('?')
    );
    ev.status = Status::Idle;
    ev.kind = EventKind::Status;
    send(&mut app, GameFeed::Event(ev.clone()));
    app.update();
    assert_eq!(app.world().get::<Mark>(e).and_then(|m| m.symbol()), None);
    assert!(
        app.world()
            .get::<Animation>(e)
            .is_some_and(|a| a.0.sleeping())
    );
    assert_eq!(
        anim(&mut app),
        Anim::Rest,
        "asleep shows the rest animation"
    );
    ev.status = Status::Working;
    send(&mut app, GameFeed::Event(ev));
    app.update();
    assert_eq!(anim(&mut app), Anim::Idle, "work wakes it");
}

#[test]
fn sleeps_only_when_the_session_model_says_idle() {
    // Regression: the game fell asleep after 90 s of its own clock while the session model
    // still said `working`. Sleep now comes from `idle` status events alone.
    let mut app = app();
    send(
        &mut app,
        GameFeed::Event(event(EventKind::SessionStart, None)),
    );
    seconds(&mut app, 600.0);
    let e = familiar(&mut app, "s1");
    let asleep = |app: &App| {
        app.world()
            .get::<Animation>(e)
            .is_some_and(|a| a.0.sleeping())
    };
    assert!(
        !asleep(&app),
        "ten quiet minutes are not idle by themselves"
    );
    let mut idle = event(EventKind::Status, None);
    idle.status = Status::Idle;
    send(&mut app, GameFeed::Event(idle));
    app.update();
    assert!(asleep(&app));
    seconds(&mut app, 1.0);
    assert!(
        !app.world().resource::<Activity>().animating,
        "asleep is low power"
    );
}

#[test]
fn xp_levels_up() {
    let mut app = settled();
    let e = familiar(&mut app, "s1");
    send(
        &mut app,
        GameFeed::Action(action(ActionKind::Xp { amount: 60 })),
    );
    app.update();
    let p = app.world().get::<Progress>(e).cloned().unwrap_or_default();
    assert_eq!((p.xp, p.level, p.level_up_age), (60, 1, None));
    assert!((p.fraction() - 0.6).abs() < 1e-6);
    send(
        &mut app,
        GameFeed::Action(action(ActionKind::Xp { amount: 50 })),
    );
    app.update();
    let p = app.world().get::<Progress>(e).cloned().unwrap_or_default();
    assert_eq!((p.xp, p.level), (110, 2));
    assert!(p.level_up_age.is_some(), "level-up effect plays");
    assert!(app.world().resource::<Activity>().animating);
    seconds(&mut app, 2.5);
    let p = app.world().get::<Progress>(e).cloned().unwrap_or_default();
    assert_eq!(p.level_up_age, None, "the effect ends");
    send(
        &mut app,
        GameFeed::Action(action(ActionKind::Xp { amount: -1000 })),
    );
    app.update();
    let p = app.world().get::<Progress>(e).cloned().unwrap_or_default();
    assert_eq!((p.xp, p.level), (0, 1), "never below zero");
}

fn companions(app: &mut App) -> Vec<Companion> {
    let mut q = app.world_mut().query::<&Companion>();
    q.iter(app.world()).cloned().collect()
}

#[test]
fn companions_come_work_and_leave() {
    let mut app = settled();
    let spawn = |id: &str, kind: &str| {
        GameFeed::Action(action(ActionKind::CompanionSpawn {
            id: id.to_string(),
            kind: kind.to_string(),
        }))
    };
    send(&mut app, spawn("toolu_1", "Explore"));
    send(&mut app, spawn("toolu_1", "Explore"));
    send(&mut app, spawn("toolu_2", "general-purpose"));
    app.update();
    let c = companions(&mut app);
    assert_eq!(c.len(), 2, "a repeated spawn is ignored");
    assert!(c.iter().any(|c| c.kind == "Explore"));

    // The subagent's own events animate a companion, not the familiar or its mana.
    let before = mana(&mut app);
    seconds(&mut app, 0.3);
    let mut sub = event(EventKind::Reading, Some(5_000));
    sub.agent = Some("a881341".to_string());
    send(&mut app, GameFeed::Event(sub));
    app.update();
    let c = companions(&mut app);
    let bound: Vec<_> = c
        .iter()
        .filter(|c| c.agent.as_deref() == Some("a881341"))
        .collect();
    assert_eq!(bound.len(), 1, "{c:?}");
    assert_eq!(
        bound[0].id, "toolu_1",
        "the oldest companion takes the agent"
    );
    assert!(bound[0].busy > 0.0);
    assert_eq!(mana(&mut app).remaining(), before.remaining());
    assert_eq!(anim(&mut app), Anim::Idle);

    send(
        &mut app,
        GameFeed::Action(action(ActionKind::CompanionLeave {
            id: "toolu_1".to_string(),
        })),
    );
    app.update();
    assert!(companions(&mut app).iter().any(|c| c.leaving.is_some()));
    seconds(&mut app, 1.0);
    let c = companions(&mut app);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].id, "toolu_2");
}

#[test]
fn companions_are_capped() {
    let mut app = settled();
    for i in 0..20 {
        send(
            &mut app,
            GameFeed::Action(action(ActionKind::CompanionSpawn {
                id: format!("t{i}"),
                kind: "Explore".to_string(),
            })),
        );
    }
    app.update();
    assert_eq!(
        companions(&mut app).len(),
        GameConfig::default().max_companions
    );
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
    app.update();
    let e = familiar(&mut app, "s1");
    let said = app.world().get::<Speech>(e).and_then(|s| s.0.clone());
    assert_eq!(
        said.map(|s| s.0),
        Some("Let's read the code - now...".to_string())
    );
    let quest = app
        .world()
        .get::<Quest>(e)
        .and_then(|q| q.0.clone())
        .unwrap_or_default();
    assert_eq!(quest.chars().count(), 90, "trimmed: {quest}");
    assert!(quest.ends_with("..."));
    let log = app.world().resource::<LogStrip>().lines.clone();
    assert_eq!(log.len(), 2);
    assert!(
        log[0].contains("git_push") && log[0].contains("\"branch\":\"main\""),
        "{log:?}"
    );
    assert_eq!(log[1], "hello");
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

#[test]
fn tool_targets_float_up_and_vanish() {
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
    assert_eq!(texts, vec!["cargo test --workspace", "main.rs"]);
    assert!(app.world().resource::<Activity>().animating);
    seconds(&mut app, 2.0);
    let mut q = app.world_mut().query::<&Floater>();
    assert_eq!(q.iter(app.world()).count(), 0);
}

#[test]
fn several_sessions_get_their_own_familiars_up_to_the_limit() {
    let mut app = settled();
    for s in ["s2", "s3", "s4"] {
        send(
            &mut app,
            GameFeed::Action(action_in(
                s,
                ActionKind::Animate {
                    name: "cast".into(),
                },
            )),
        );
        app.update();
        seconds(&mut app, 0.2);
    }
    send(
        &mut app,
        GameFeed::Event({
            let mut event = Event::new(EventKind::Text, 1);
            event.session = Some("s3".into());
            event.cwd = Some("/home/user/familiar".into());
            event
        }),
    );
    // s1 is the least recently active: the fifth session takes its place.
    send(
        &mut app,
        GameFeed::Action(action_in(
            "s5",
            ActionKind::Animate {
                name: "write".into(),
            },
        )),
    );
    app.update();
    let mut q = app.world_mut().query::<&Familiar>();
    let mut all: Vec<(String, usize, String)> = q
        .iter(app.world())
        .map(|f| (f.session.clone(), f.slot, f.label.clone()))
        .collect();
    all.sort();
    assert_eq!(
        all,
        vec![
            ("s2".into(), 1, "s2".into()),
            ("s3".into(), 2, "familiar s3".into()),
            ("s4".into(), 3, "s4".into()),
            ("s5".into(), 0, "s5".into()),
        ]
    );
}

#[test]
fn the_channel_is_drained_each_frame() {
    let mut app = app();
    let (tx, rx) = crossbeam_channel::unbounded();
    app.insert_resource(FeedChannel(rx));
    for used in [10_000, 20_000, 40_000] {
        let sent = tx.send(GameFeed::Event(event(EventKind::Text, Some(used))));
        assert!(sent.is_ok());
    }
    app.update();
    assert_eq!(mana(&mut app).remaining(), Some(160_000));
}

#[test]
fn inline_sidechain_records_are_subagent_activity() {
    let mut app = settled();
    send(
        &mut app,
        GameFeed::Action(action(ActionKind::CompanionSpawn {
            id: "toolu_9".into(),
            kind: "Task".into(),
        })),
    );
    send(
        &mut app,
        GameFeed::Event(event(EventKind::Text, Some(50_000))),
    );
    app.update();
    let mut side = event(EventKind::Reading, Some(3_000));
    side.sidechain = true;
    send(&mut app, GameFeed::Event(side));
    app.update();
    assert_eq!(
        mana(&mut app).remaining(),
        Some(150_000),
        "not the session's context"
    );
    let c = companions(&mut app);
    assert!(
        c[0].busy > 0.0 && c[0].agent.as_deref() == Some("sidechain"),
        "{c:?}"
    );
}
