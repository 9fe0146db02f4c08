//! The animation state machine, status marks and sleep.

use super::*;

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
