//! Headless ECS tests of the game logic: `MinimalPlugins`, no window, time advanced by hand
//! (100 ms per update), feed items written as messages or sent over the real channel.
//!
//! This file holds the helpers; the tests are grouped by what they watch: `animation` (the
//! state machine, marks and sleep), `mana` (context and compaction), `hud` (XP, speech,
//! quest, log strip, floaters), `companions` (subagents), `sessions` (several familiars,
//! the channel), `focus` (click-to-focus, hover, the panel's state) and `world` (the approval
//! pose, effects, weather, sound cues).

mod animation;
mod companions;
mod focus;
mod hud;
mod mana;
mod reactions;
mod sessions;

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use familiar_game::GameFeed;
use familiar_game::anim::Anim;
use familiar_game::logic::{
    Activity, Animation, Companion, Familiar, FeedChannel, FeedMessage, Floater, GameConfig,
    GameLogicPlugin, LogStrip, Mana, ManaBand, Mark, Progress, Quest, SessionInfo, Speech,
};
use familiar_model::{Action, ActionKind, AgentKind, Event, EventKind, Status};

pub const STEP_MS: u64 = 100;

pub fn app() -> App {
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

pub fn seconds(app: &mut App, secs: f32) {
    let steps = (secs * 1000.0 / STEP_MS as f32).round() as usize;
    for _ in 0..steps {
        app.update();
    }
}

pub fn action_in(session: &str, kind: ActionKind) -> Action {
    Action {
        kind,
        script: "test.rhai".to_string(),
        session: Some(session.to_string()),
        agent: None,
        line: 1,
        event: EventKind::Tool,
    }
}

pub fn action(kind: ActionKind) -> Action {
    action_in("s1", kind)
}

pub fn event(kind: EventKind, used: Option<u64>) -> Event {
    let mut ev = Event::new(kind, 1);
    ev.session = Some("s1".to_string());
    ev.context_used = used;
    ev.status = Status::Working;
    ev
}

pub fn send(app: &mut App, item: GameFeed) {
    app.world_mut().write_message(FeedMessage(item));
}

pub fn animate(app: &mut App, name: &str) {
    send(
        app,
        GameFeed::Action(action(ActionKind::Animate {
            name: name.to_string(),
        })),
    );
}

pub fn familiar(app: &mut App, session: &str) -> Entity {
    let mut q = app.world_mut().query::<(Entity, &Familiar)>();
    let found = q
        .iter(app.world())
        .find(|(_, f)| f.session == session)
        .map(|(e, _)| e);
    found.unwrap_or_else(|| panic!("no familiar for session {session}"))
}

pub fn anim(app: &mut App) -> Anim {
    let e = familiar(app, "s1");
    app.world()
        .get::<Animation>(e)
        .map(|a| a.0.current())
        .unwrap_or(Anim::Idle)
}

pub fn mana(app: &mut App) -> Mana {
    let e = familiar(app, "s1");
    app.world().get::<Mana>(e).cloned().unwrap_or_default()
}

/// A familiar for `s1` past its entrance.
pub fn settled() -> App {
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
