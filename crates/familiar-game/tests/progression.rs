//! The user's progression on screen, headless (`MinimalPlugins` and the logic plugin): the
//! window shows the profile the pipeline sends (`GameFeed::Progress`), on every familiar, and
//! never counts XP itself; the familiar whose session reached a level celebrates, and each
//! unlock is announced once in the log. (Keeping the profile between runs is the pipeline's:
//! `crates/familiar-pipeline/tests/progress.rs`.)

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use familiar_game::GameFeed;
use familiar_game::logic::{Familiar, FeedMessage, GameLogicPlugin, LogStrip, Progress};
use familiar_game::progression::wardrobe::Wardrobe;
use familiar_game::progression::{Profile, ProgressUpdate, UserProfile, earn};
use familiar_model::{Action, ActionKind, Event, EventKind, Status};

fn app() -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(GameLogicPlugin)
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            100,
        )));
    app.update();
    app
}

fn send(app: &mut App, item: GameFeed) {
    app.world_mut().write_message(FeedMessage(item));
    app.update();
}

fn xp_action(session: &str, amount: i64) -> Action {
    Action {
        kind: ActionKind::Xp { amount },
        script: "test.rhai".to_owned(),
        session: Some(session.to_owned()),
        agent: None,
        line: 1,
        event: EventKind::Tool,
    }
}

/// `amount` XP earned by `session`, as the pipeline sends it: the action, then the profile it
/// made of `profile`.
fn xp(app: &mut App, profile: &mut Profile, session: &str, amount: i64) {
    let action = xp_action(session, amount);
    let (update, _said) = earn(profile, std::slice::from_ref(&action));
    send(app, GameFeed::Action(action));
    if let Some(update) = update {
        send(app, GameFeed::Progress(update));
    }
}

fn arrive(app: &mut App, session: &str) {
    let mut ev = Event::new(EventKind::SessionStart, 1);
    ev.session = Some(session.to_owned());
    ev.status = Status::Working;
    send(app, GameFeed::Event(ev));
}

fn progress(app: &mut App, session: &str) -> Progress {
    let mut q = app.world_mut().query::<(&Familiar, &Progress)>();
    let found = q
        .iter(app.world())
        .find(|(f, _)| f.session == session)
        .map(|(_, p)| p.clone());
    found.unwrap_or_else(|| panic!("no familiar for {session}"))
}

fn shown(app: &App) -> Profile {
    app.world().resource::<UserProfile>().0.clone()
}

#[test]
fn every_familiar_shows_the_users_level_and_the_earner_celebrates() {
    let mut app = app();
    let mut profile = Profile::default();
    arrive(&mut app, "a");
    arrive(&mut app, "b");
    xp(&mut app, &mut profile, "b", 12);
    let (a, b) = (progress(&mut app, "a"), progress(&mut app, "b"));
    assert_eq!((a.xp, a.level, b.xp, b.level), (12, 2, 12, 2));
    assert!(
        b.level_up_age.is_some(),
        "the familiar that earned it plays the level-up"
    );
    assert_eq!(a.level_up_age, None);
    let log = app.world().resource::<LogStrip>().lines.clone();
    assert_eq!(
        log.iter()
            .filter(|line| *line == "Unlocked: pointed hat")
            .count(),
        1,
        "{log:?}"
    );
}

#[test]
fn the_window_never_counts_xp_itself() {
    let mut app = app();
    arrive(&mut app, "s1");
    // An `xp` action alone (no profile from the pipeline) changes nothing on screen: two
    // counters could disagree, one cannot.
    send(&mut app, GameFeed::Action(xp_action("s1", 500)));
    assert_eq!(shown(&app), Profile::default());
    assert_eq!(progress(&mut app, "s1").xp, 0);
}

#[test]
fn a_familiar_arriving_later_shows_the_profile_as_it_is_without_celebrating() {
    let mut app = app();
    let mut profile = Profile::default();
    profile.add(100);
    send(
        &mut app,
        GameFeed::Progress(ProgressUpdate {
            profile: profile.clone(),
            ..ProgressUpdate::default()
        }),
    );
    arrive(&mut app, "late");
    let late = progress(&mut app, "late");
    assert_eq!((late.xp, late.level, late.level_up_age), (100, 3, None));
    assert_eq!(shown(&app), profile);
    assert_eq!(
        Wardrobe::of(&shown(&app)).hat.map(|u| u.id),
        Some("hat.pointed")
    );
    // A profile with less XP (another Familiar's save merged, a hand edit) is shown as sent.
    let mut lower = Profile::default();
    lower.add(20);
    send(
        &mut app,
        GameFeed::Progress(ProgressUpdate {
            profile: lower,
            ..ProgressUpdate::default()
        }),
    );
    assert_eq!(progress(&mut app, "late").xp, 20);
}
