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
