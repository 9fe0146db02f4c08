//! Mana: context in bands, unknown context, compaction and snapshots.

use super::*;

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
    assert_eq!(mana(&mut app).label(), "0 left of 200k");
}

#[test]
fn unknown_context_is_unknown_not_empty() {
    let mut app = settled();
    let m = mana(&mut app);
    assert_eq!(m.band(), ManaBand::Unknown);
    assert_eq!(m.remaining(), None);
    assert_eq!(m.label(), "? left of 200k");
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

/// Issue 14: the "rest 152k -> ?" note stayed after the context was known again.
#[test]
fn the_rest_note_goes_once_the_context_is_known_again() {
    let mut app = settled();
    let mut compact = event(EventKind::CompactBoundary, None);
    compact.pre_tokens = Some(152_000);
    send(&mut app, GameFeed::Event(compact));
    app.update();
    let c = mana(&mut app).compaction_note(5.0);
    assert_eq!(c.map(|c| (c.pre, c.post)), Some((Some(152_000), None)));
    send(
        &mut app,
        GameFeed::Event(event(EventKind::Text, Some(30_000))),
    );
    app.update();
    assert_eq!(mana(&mut app).compaction_note(5.0), None);
    // With its size known, the note shows its few seconds, then goes.
    let mut compact = event(EventKind::CompactBoundary, Some(20_000));
    compact.pre_tokens = Some(150_000);
    compact.post_tokens = Some(20_000);
    send(&mut app, GameFeed::Event(compact));
    app.update();
    assert!(mana(&mut app).compaction_note(5.0).is_some());
    seconds(&mut app, 5.5);
    assert_eq!(mana(&mut app).compaction_note(5.0), None);
}

/// Issue 14: the bar filled with what is left while its label said tokens used, and the rest
/// note counted tokens used too. Bar, label, figures and note now all count what is left.
#[test]
fn the_mana_bar_its_label_figures_and_rest_note_all_count_tokens_left() {
    let mut app = settled();
    send(
        &mut app,
        GameFeed::Event(event(EventKind::Text, Some(152_000))),
    );
    seconds(&mut app, 1.5);
    let m = mana(&mut app);
    assert!((m.shown - 0.24).abs() < 0.01, "the bar shows {}", m.shown);
    assert_eq!(m.label(), "48k left of 200k");
    assert_eq!(
        familiar_game::logic::mana_figures(&m),
        "48,000 of 200,000 tokens left (24 %)"
    );
    let mut compact = event(EventKind::CompactBoundary, Some(40_000));
    compact.pre_tokens = Some(152_000);
    compact.post_tokens = Some(40_000);
    send(&mut app, GameFeed::Event(compact));
    app.update();
    let m = mana(&mut app);
    let c = m.compaction_note(5.0).expect("the rest note shows");
    assert_eq!(m.rest_label(c), "rest 48k -> 160k left");
    assert_eq!(m.label(), "160k left of 200k");
}

#[test]
fn the_plate_knows_project_branch_and_how_long_the_status_lasts() {
    let mut app = app();
    seconds(&mut app, 10.0);
    let mut snapshot = Event::new(EventKind::Snapshot, 40);
    snapshot.session = Some("s1".into());
    snapshot.status = Status::WaitingForInput;
    snapshot.duration_ms = Some(90_000);
    snapshot.cwd = Some("/home/user/spotter".into());
    snapshot.git_branch = Some("fix/parser".into());
    send(&mut app, GameFeed::Event(snapshot));
    app.update();
    let now = app.world().resource::<Time>().elapsed_secs();
    let e = familiar(&mut app, "s1");
    let info = app
        .world()
        .get::<SessionInfo>(e)
        .cloned()
        .unwrap_or_default();
    assert_eq!(info.project.as_deref(), Some("spotter"));
    assert_eq!(info.branch.as_deref(), Some("fix/parser"));
    let held = now - info.status_since;
    assert!((89.0..=91.0).contains(&held), "waiting for {held} s");
    // A new status starts its clock; the same status keeps it.
    seconds(&mut app, 3.0);
    send(&mut app, GameFeed::Event(event(EventKind::Prompt, None)));
    app.update();
    let started = app.world().get::<SessionInfo>(e).map(|i| i.status_since);
    seconds(&mut app, 2.0);
    send(&mut app, GameFeed::Event(event(EventKind::Text, None)));
    app.update();
    let now = app.world().resource::<Time>().elapsed_secs();
    let info = app
        .world()
        .get::<SessionInfo>(e)
        .cloned()
        .unwrap_or_default();
    assert_eq!(Some(info.status_since), started);
    assert!((2.0..=2.2).contains(&(now - info.status_since)));
    assert_eq!(info.branch.as_deref(), Some("fix/parser"), "kept");
}

/// "For how long" is the events' own recorded time where they say it: a replay at 10x (here,
/// ten minutes of records in a second of game time) reads ten minutes, not one second; after
/// the latest event the game clock runs on.
#[test]
fn a_status_lasts_as_long_as_the_records_say() {
    let mut app = settled();
    let at = |kind: EventKind, status: Status, ts: &str| {
        let mut ev = event(kind, Some(10));
        ev.status = status;
        ev.ts = Some(ts.to_string());
        ev
    };
    send(
        &mut app,
        GameFeed::Event(at(
            EventKind::Success,
            Status::WaitingForInput,
            "2026-02-11T09:59:00.000Z",
        )),
    );
    app.update();
    send(
        &mut app,
        GameFeed::Event(at(
            EventKind::Prompt,
            Status::Working,
            "2026-02-11T10:00:00.000Z",
        )),
    );
    app.update();
    seconds(&mut app, 0.5);
    send(
        &mut app,
        GameFeed::Event(at(
            EventKind::Text,
            Status::Working,
            "2026-02-11T10:10:00.000Z",
        )),
    );
    app.update();
    let now = app.world().resource::<Time>().elapsed_secs();
    let e = familiar(&mut app, "s1");
    let info = app
        .world()
        .get::<SessionInfo>(e)
        .cloned()
        .unwrap_or_default();
    let held = info.held(now);
    assert!((600.0..=601.0).contains(&held), "working for {held} s");
    seconds(&mut app, 2.0);
    let now = app.world().resource::<Time>().elapsed_secs();
    let held = info.held(now);
    assert!(
        (602.0..=603.0).contains(&held),
        "then the clock runs on: {held} s"
    );
}
