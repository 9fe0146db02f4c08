//! Companions: subagents come, work and leave, capped; inline sidechains count as theirs.

use super::*;

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
    seconds(&mut app, 1.5);
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

#[test]
fn a_companion_shows_its_subagents_own_context() {
    let mut app = settled();
    send(
        &mut app,
        GameFeed::Action(action(ActionKind::CompanionSpawn {
            id: "toolu_1".to_string(),
            kind: "Explore".to_string(),
        })),
    );
    app.update();
    assert_eq!(companions(&mut app)[0].context, None, "unknown at first");
    let mut sub = event(EventKind::Reading, Some(30_000));
    sub.agent = Some("a1".to_string());
    send(&mut app, GameFeed::Event(sub));
    app.update();
    assert_eq!(companions(&mut app)[0].context, Some((30_000, 200_000)));
    let mut unknown = event(EventKind::Text, None);
    unknown.agent = Some("a1".to_string());
    send(&mut app, GameFeed::Event(unknown));
    app.update();
    assert_eq!(
        companions(&mut app)[0].context,
        Some((30_000, 200_000)),
        "an event without context keeps the last known"
    );
}

#[test]
fn companions_walk_in_from_a_puff_and_walk_out_into_one() {
    use familiar_game::ambience::{COMPANION_WALK_SECS, companion_walk};
    let start = companion_walk(0.0, None);
    assert_eq!((start.away, start.puff), (1.0, Some(0)));
    let mid = companion_walk(COMPANION_WALK_SECS * 0.6, None);
    assert!(
        mid.puff.is_none() && mid.away > 0.0 && mid.away < 1.0,
        "{mid:?}"
    );
    let home = companion_walk(COMPANION_WALK_SECS, None);
    assert_eq!((home.away, home.puff), (0.0, None));
    let going = companion_walk(5.0, Some(COMPANION_WALK_SECS * 0.4));
    assert!(going.away > 0.0 && going.puff.is_none(), "{going:?}");
    let gone = companion_walk(5.0, Some(COMPANION_WALK_SECS * 0.99));
    assert_eq!(gone.away, 1.0);
    assert_eq!(gone.puff, Some(0), "it vanishes in the puff it came in");
}
