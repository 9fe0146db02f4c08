//! The user's progression across runs, headless (`MinimalPlugins`, the logic and the
//! progression plugins) on a real save file in a temporary directory: the level after a
//! restart is the level before; a damaged, cut-short, old or newer save is set aside (renamed,
//! not deleted) and play starts fresh; a save that cannot be written never stops play.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bevy::app::AppExit;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use familiar_game::GameFeed;
use familiar_game::logic::{Familiar, FeedMessage, GameLogicPlugin, LogStrip, Progress};
use familiar_game::progression::persist::{ProgressionPlugin, load_profile};
use familiar_game::progression::wardrobe::Wardrobe;
use familiar_game::progression::{Profile, UnlockKind};
use familiar_model::{Action, ActionKind, Event, EventKind, Status};

fn app(path: Option<&Path>) -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(GameLogicPlugin)
        .add_plugins(ProgressionPlugin {
            path: path.map(Path::to_path_buf),
        })
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

fn xp(app: &mut App, session: &str, amount: i64) {
    send(
        app,
        GameFeed::Action(Action {
            kind: ActionKind::Xp { amount },
            script: "test.rhai".to_owned(),
            session: Some(session.to_owned()),
            agent: None,
            line: 1,
            event: EventKind::Tool,
        }),
    );
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

fn profile(app: &App) -> Profile {
    app.world().resource::<Profile>().clone()
}

/// Close the app as the window does: an `AppExit`, then the frame it ends.
fn exit(mut app: App) {
    app.world_mut().write_message(AppExit::Success);
    app.update();
}

fn tempdir() -> tempfile::TempDir {
    match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => panic!("tempdir: {e}"),
    }
}

#[test]
fn the_level_after_a_restart_is_the_level_before() {
    let dir = tempdir();
    let path = dir.path().join("familiar/progress.json");
    let mut first = app(Some(&path));
    arrive(&mut first, "s1");
    xp(&mut first, "s1", 60);
    xp(&mut first, "s1", 40);
    let before = progress(&mut first, "s1");
    assert_eq!((before.xp, before.level), (100, 3));
    exit(first);

    let text = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(text.contains("\"familiar\": \"progress\""), "{text}");
    let mut second = app(Some(&path));
    assert_eq!(profile(&second).level(), 3);
    arrive(&mut second, "another session");
    let after = progress(&mut second, "another session");
    assert_eq!((after.xp, after.level), (before.xp, before.level));
    assert_eq!(after.level_up_age, None, "no level-up for arriving");
    assert_eq!(
        profile(&second).best(UnlockKind::Hat).map(|u| u.id),
        Some("hat.pointed")
    );
}

#[test]
fn every_familiar_shows_the_users_level_and_the_earner_celebrates() {
    let mut app = app(None);
    arrive(&mut app, "a");
    arrive(&mut app, "b");
    xp(&mut app, "b", 12);
    let (a, b) = (progress(&mut app, "a"), progress(&mut app, "b"));
    assert_eq!((a.xp, a.level, b.xp, b.level), (12, 2, 12, 2));
    assert!(
        b.level_up_age.is_some(),
        "the familiar that earned it plays the level-up"
    );
    assert_eq!(a.level_up_age, None);
    let log = app.world().resource::<LogStrip>().lines.clone();
    assert!(
        log.iter().any(|line| line == "Unlocked: pointed hat"),
        "{log:?}"
    );
}

/// A bad save is moved aside as `progress.json.<tag>`, unchanged, and play starts fresh and
/// saves a new file.
fn set_aside_then_fresh(contents: &[u8], tag: &str) {
    let dir = tempdir();
    let path = dir.path().join("progress.json");
    assert!(std::fs::write(&path, contents).is_ok());
    let mut app = app(Some(&path));
    assert_eq!(profile(&app), Profile::default(), "{tag}");
    arrive(&mut app, "s1");
    xp(&mut app, "s1", 15);
    exit(app);
    let aside = format!("progress.json.{tag}");
    assert_eq!(
        familiar_testkit::saved_file_names(dir.path()),
        ["progress.json", aside.as_str()],
        "{tag}"
    );
    assert_eq!(
        std::fs::read(dir.path().join(&aside)).ok().as_deref(),
        Some(contents),
        "{tag}"
    );
    assert_eq!(load_profile(&path).0.xp, 15, "{tag}");
}

#[test]
fn a_corrupt_save_is_set_aside_and_play_starts_fresh() {
    set_aside_then_fresh(b"not json at all \xff", "corrupt");
    set_aside_then_fresh(
        br#"{"familiar": "progress", "version": 1, "data": {"xp": "lots"}}"#,
        "corrupt",
    );
    set_aside_then_fresh(
        br#"{"familiar": "script-store", "version": 1, "data": {}}"#,
        "corrupt",
    );
}

#[test]
fn a_truncated_save_is_set_aside() {
    let full = br#"{"familiar": "progress", "version": 1, "data": {"xp": 500, "unlocks": []}}"#;
    set_aside_then_fresh(&full[..40], "corrupt");
}

#[test]
fn an_old_save_version_is_set_aside() {
    // Version 1 is the first; nothing older was ever written, so nothing older is read.
    set_aside_then_fresh(
        br#"{"familiar": "progress", "version": 0, "data": {"xp": 500}}"#,
        "old",
    );
}

#[test]
fn a_save_from_a_newer_familiar_is_set_aside_not_misread() {
    set_aside_then_fresh(
        br#"{"familiar": "progress", "version": 2, "data": {"xp": 500, "unlocks": []}}"#,
        "newer",
    );
}

#[test]
fn a_save_round_trips_with_unlocks_this_version_does_not_know() {
    let dir = tempdir();
    let path = dir.path().join("progress.json");
    let mut saved = Profile::default();
    saved.add(300);
    saved.unlocks.insert("hat.from-a-later-version".to_owned());
    assert!(familiar_save::save(&path, &saved).is_ok());
    assert_eq!(load_profile(&path), (saved, true));
}

#[test]
fn a_save_written_before_the_wardrobe_still_loads_and_dresses_the_familiar() {
    // What the first version wrote at level 10: its four unlocks, `scene.night` (then a
    // night sky, now the paper lanterns) among them, and one this version does not know.
    let dir = tempdir();
    let path = dir.path().join("progress.json");
    let old = br#"{"familiar": "progress", "version": 1, "data": {"xp": 7300,
        "unlocks": ["accessory.scarf", "hat.crown", "hat.pointed", "scene.night",
        "scene.from-a-later-version"]}}"#;
    assert!(std::fs::write(&path, old).is_ok());
    let (mut loaded, may_save) = load_profile(&path);
    assert!(may_save);
    assert_eq!((loaded.xp, loaded.level()), (7300, 10));
    let w = Wardrobe::of(&loaded);
    assert_eq!(w.hat.map(|u| u.id), Some("hat.crown"));
    assert_eq!(w.accessory.map(|u| u.id), Some("accessory.scarf"));
    assert_eq!(
        w.decor.iter().map(|d| d.id).collect::<Vec<_>>(),
        ["scene.night"]
    );
    // The next XP earns what this version added below level 10, and keeps the unknown id.
    let gain = loaded.add(1);
    assert_eq!(
        gain.unlocked.iter().map(|u| u.id).collect::<Vec<_>>(),
        [
            "scene.bookshelf",
            "hat.beanie",
            "accessory.specs",
            "scene.fireflies"
        ]
    );
    assert!(loaded.unlocks.contains("scene.from-a-later-version"));
    assert_eq!(Wardrobe::of(&loaded).hat.map(|u| u.id), Some("hat.crown"));
    assert_eq!(
        Wardrobe::of(&loaded).accessory.map(|u| u.id),
        Some("accessory.specs")
    );
}

#[test]
fn an_unwritable_data_dir_never_stops_play() {
    let dir = tempdir();
    // A file where the directory should be: every save fails.
    let blocker = dir.path().join("familiar");
    assert!(std::fs::write(&blocker, "x").is_ok());
    let mut app = app(Some(&blocker.join("progress.json")));
    arrive(&mut app, "s1");
    xp(&mut app, "s1", 10);
    for _ in 0..30 {
        app.update();
    }
    xp(&mut app, "s1", 10);
    assert_eq!(progress(&mut app, "s1").xp, 20);
    exit(app);
    assert_eq!(std::fs::read_to_string(&blocker).ok().as_deref(), Some("x"));
}

#[test]
fn a_full_disk_keeps_the_last_save() {
    let dir = tempdir();
    let path = dir.path().join("progress.json");
    let mut app = app(Some(&path));
    arrive(&mut app, "s1");
    xp(&mut app, "s1", 10);
    assert_eq!(
        load_profile(&path).0.xp,
        10,
        "the first change is saved at once"
    );
    // Every write to /dev/full fails with ENOSPC, as on a full disk.
    let tmp = familiar_save::file::temp_path(&path);
    assert!(std::os::unix::fs::symlink("/dev/full", &tmp).is_ok());
    xp(&mut app, "s1", 5);
    app.world_mut().write_message(AppExit::Success);
    app.update();
    assert_eq!(progress(&mut app, "s1").xp, 15, "play went on");
    assert_eq!(load_profile(&path).0.xp, 10);
}

#[test]
fn without_a_path_nothing_is_read_or_written() {
    let dir = tempdir();
    let path: PathBuf = dir.path().join("progress.json");
    let mut saved = Profile::default();
    saved.add(1000);
    assert!(familiar_save::save(&path, &saved).is_ok());
    let mut app = app(None);
    assert_eq!(profile(&app), Profile::default());
    arrive(&mut app, "s1");
    xp(&mut app, "s1", 10);
    exit(app);
    assert_eq!(load_profile(&path).0, saved);
}
