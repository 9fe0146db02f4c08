//! The user's progression kept between `familiar watch` runs by its one owner
//! (`familiar_pipeline::progress::Progression`), on real save files in a temporary
//! directory: the level after a restart is the level before; a damaged, cut-short, old or
//! newer save is set aside (renamed, not deleted) and play starts fresh; a save that cannot
//! be written never stops play; two Familiars add up.

use std::path::Path;
use std::time::Instant;

use familiar_model::progression::Profile;
use familiar_model::{Action, ActionKind, EventKind};
use familiar_pipeline::progress::Progression;

fn xp(amount: i64) -> Vec<Action> {
    vec![Action {
        kind: ActionKind::Xp { amount },
        script: "default.rhai".to_owned(),
        session: Some("s1".to_owned()),
        agent: None,
        line: 1,
        event: EventKind::Bash,
    }]
}

fn earn(progression: &mut Progression, amount: i64) {
    progression.apply(&mut xp(amount));
}

fn saved(path: &Path) -> Profile {
    Progression::kept_at(path).profile().clone()
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"))
}

#[test]
fn the_level_after_a_restart_is_the_level_before() {
    let dir = tempdir();
    let path = dir.path().join("familiar/progress.json");
    let mut first = Progression::kept_at(&path);
    earn(&mut first, 60);
    earn(&mut first, 40);
    first.save(Instant::now(), true);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(text.contains("\"familiar\": \"progress\""), "{text}");
    let second = Progression::kept_at(&path);
    assert_eq!((second.profile().xp, second.profile().level()), (100, 3));
    assert!(second.profile().unlocks.contains("hat.pointed"));
}

/// A bad save is moved aside as `progress.json.<tag>`, unchanged, and play starts fresh and
/// saves a new file.
fn set_aside_then_fresh(contents: &[u8], tag: &str) {
    let dir = tempdir();
    let path = dir.path().join("progress.json");
    assert!(std::fs::write(&path, contents).is_ok());
    let mut progression = Progression::kept_at(&path);
    assert_eq!(progression.profile(), &Profile::default(), "{tag}");
    earn(&mut progression, 15);
    progression.save(Instant::now(), true);
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
    assert_eq!(saved(&path).xp, 15, "{tag}");
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
fn a_save_written_by_the_window_of_earlier_versions_still_loads() {
    // What the window saved before the pipeline owned the profile (the same file and format),
    // at level 10, with an unlock this version does not know: kept as it is.
    let dir = tempdir();
    let path = dir.path().join("progress.json");
    let old = br#"{"familiar": "progress", "version": 1, "data": {"xp": 7300,
        "unlocks": ["accessory.scarf", "hat.crown", "hat.pointed", "scene.night",
        "scene.from-a-later-version"]}}"#;
    assert!(std::fs::write(&path, old).is_ok());
    let mut progression = Progression::kept_at(&path);
    assert_eq!(
        (progression.profile().xp, progression.profile().level()),
        (7300, 10)
    );
    earn(&mut progression, 1);
    progression.save(Instant::now(), true);
    let again = saved(&path);
    assert_eq!(again.xp, 7301);
    assert!(again.unlocks.contains("scene.from-a-later-version"));
    // The next XP earned what this version added below level 10.
    assert!(again.unlocks.contains("accessory.specs"));
}

#[test]
fn an_unwritable_data_dir_never_stops_play() {
    let dir = tempdir();
    // A file where the directory should be: every save fails.
    let blocker = dir.path().join("familiar");
    assert!(std::fs::write(&blocker, "x").is_ok());
    let mut progression = Progression::kept_at(&blocker.join("progress.json"));
    earn(&mut progression, 10);
    progression.save(Instant::now(), true);
    earn(&mut progression, 10);
    progression.save(Instant::now(), true);
    assert_eq!(progression.profile().xp, 20);
    assert_eq!(std::fs::read_to_string(&blocker).ok().as_deref(), Some("x"));
}

#[test]
fn a_full_disk_keeps_the_last_save() {
    let dir = tempdir();
    let path = dir.path().join("progress.json");
    let mut progression = Progression::kept_at(&path);
    earn(&mut progression, 10);
    progression.save(Instant::now(), false);
    assert_eq!(saved(&path).xp, 10, "the first change is saved at once");
    // Every write to /dev/full fails with ENOSPC, as on a full disk.
    let tmp = familiar_save::file::temp_path(&path);
    assert!(std::os::unix::fs::symlink("/dev/full", &tmp).is_ok());
    earn(&mut progression, 5);
    progression.save(Instant::now(), true);
    assert_eq!(progression.profile().xp, 15, "play went on");
    assert_eq!(saved(&path).xp, 10);
}

#[test]
fn a_fresh_profile_reads_and_writes_nothing() {
    let dir = tempdir();
    let path = dir.path().join("progress.json");
    let mut kept = Progression::kept_at(&path);
    earn(&mut kept, 1000);
    kept.save(Instant::now(), true);
    let mut fresh = Progression::fresh();
    assert_eq!(fresh.profile(), &Profile::default());
    earn(&mut fresh, 10);
    fresh.save(Instant::now(), true);
    assert_eq!(saved(&path).xp, 1000);
}

#[test]
fn two_familiars_add_up_and_saves_come_at_most_once_a_second() {
    let dir = tempdir();
    let path = dir.path().join("familiar/progress.json");
    let mut one = Progression::kept_at(&path);
    let mut two = Progression::kept_at(&path);
    earn(&mut one, 30);
    earn(&mut two, 30);
    let now = Instant::now();
    assert!(
        !one.save(now, false),
        "nothing else was saved: one's profile stays"
    );
    // Within a second of its last save, only a forced save writes.
    earn(&mut one, 5);
    assert!(!one.save(now, false));
    assert_eq!(saved(&path).xp, 30);
    // Two adds its 30 to the 30 one saved, and learns of them; one then adds the 5 it
    // gained since.
    assert!(two.save(now, true));
    assert_eq!(two.profile().xp, 60);
    assert!(one.save(now, true));
    assert_eq!(saved(&path).xp, 65);
    assert_eq!(saved(&path).level(), 2);
}

/// A save of an older version, which had fewer unlocks: the levels it reached earn this
/// version's at once (not at the next level), and they are saved.
#[test]
fn an_older_versions_save_earns_the_unlocks_of_its_levels_on_load() {
    let dir = tempdir();
    let path = dir.path().join("progress.json");
    let old = br#"{"familiar": "progress", "version": 1, "data": {"xp": 300, "unlocks": ["hat.pointed"]}}"#;
    assert!(std::fs::write(&path, old).is_ok());
    let mut progression = Progression::kept_at(&path);
    let unlocks: Vec<_> = progression.profile().unlocks.iter().cloned().collect();
    assert_eq!(progression.profile().level(), 4);
    assert_eq!(
        unlocks,
        ["accessory.scarf", "hat.pointed", "scene.bookshelf"],
        "every unlock up to level 4"
    );
    progression.save(Instant::now(), true);
    assert_eq!(saved(&path).unlocks.len(), 3);
    assert_eq!(saved(&path).xp, 300);
}
