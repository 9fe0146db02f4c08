//! Several sessions: one familiar each up to the limit; the channel drained each frame.

use super::*;

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
    let info = app.world().get::<SessionInfo>(e).expect("a plate's info");
    assert_eq!(info.name(false).as_deref(), Some("spotter codex"));
    // A compact plate, whose end is cut, names the agent first.
    assert_eq!(info.name(true).as_deref(), Some("codex spotter"));
}

#[test]
fn a_gemini_or_qwen_session_says_which_agent_it_is() {
    for (kind, name) in [(AgentKind::Gemini, "gemini"), (AgentKind::Qwen, "qwen")] {
        agent_says_its_name(kind, name);
    }
}

fn agent_says_its_name(kind: AgentKind, name: &str) {
    let mut app = app();
    let mut snapshot = Event::new(EventKind::Snapshot, 3);
    snapshot.session = Some("6435cd03-7822-42c5-8604-c04e4df1a206".into());
    snapshot.agent_kind = kind;
    snapshot.cwd = Some("/home/user/spotter".into());
    send(&mut app, GameFeed::Event(snapshot));
    app.update();
    let e = familiar(&mut app, "6435cd03-7822-42c5-8604-c04e4df1a206");
    assert_eq!(
        app.world().get::<Familiar>(e).map(|f| f.label.clone()),
        Some(format!("spotter {name} f1a206"))
    );
    assert_eq!(
        app.world()
            .get::<SessionInfo>(e)
            .and_then(|info| info.name(false)),
        Some(format!("spotter {name}"))
    );
}

#[test]
fn a_remote_session_says_its_host_and_when_its_link_is_down() {
    let mut app = app();
    let remote_event = |session: &str, host: Option<&str>| {
        let mut snapshot = Event::new(EventKind::Snapshot, 3);
        snapshot.session = Some(session.into());
        snapshot.cwd = Some("/home/user/spotter".into());
        snapshot.host = host.map(str::to_owned);
        GameFeed::Event(snapshot)
    };
    send(&mut app, remote_event("far", Some("me@devbox")));
    send(&mut app, remote_event("near", None));
    app.update();
    let info = |app: &mut App, session: &str| {
        let e = familiar(app, session);
        app.world()
            .get::<SessionInfo>(e)
            .cloned()
            .expect("a plate's info")
    };
    assert_eq!(
        info(&mut app, "far").name(false).as_deref(),
        Some("spotter @me@devbox")
    );
    assert_eq!(
        info(&mut app, "near").name(false).as_deref(),
        Some("spotter")
    );

    let link = |connected| GameFeed::Remote {
        host: "me@devbox".into(),
        connected,
    };
    send(&mut app, link(false));
    app.update();
    assert!(info(&mut app, "far").reconnecting);
    assert!(!info(&mut app, "near").reconnecting, "another host's plate");
    send(&mut app, link(true));
    app.update();
    assert!(!info(&mut app, "far").reconnecting);
}
