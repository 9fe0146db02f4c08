//! The reacting world: the approval pose, bursts on victory and hurt, the think aura, the
//! weather; and the pure rules behind them (`familiar_game::ambience`).

use super::*;
use familiar_game::ambience::{
    Burst, MAX_CLOUDS, PARTICLE_SLOTS, Phase, RAIN_GLOOM, Trouble, Weather, aura_count,
    aura_particle, sky,
};
use familiar_game::logic::{AURA_SECS, Effects, WorldWeather};
use familiar_model::ErrorKind;

fn status(app: &mut App, status: Status) {
    let mut ev = event(EventKind::Status, Some(10_000));
    ev.status = status;
    send(app, GameFeed::Event(ev));
    app.update();
}

fn effects(app: &mut App) -> Effects {
    let e = familiar(app, "s1");
    app.world().get::<Effects>(e).cloned().unwrap_or_default()
}

fn gloom(app: &mut App) -> f32 {
    app.world().resource::<WorldWeather>().0.gloom
}

fn error(app: &mut App, kind: ErrorKind) {
    let mut ev = event(EventKind::Error, Some(10_000));
    ev.error = Some(kind);
    send(app, GameFeed::Event(ev));
}

#[test]
fn the_approval_wait_asks_until_the_status_changes() {
    let mut app = settled();
    status(&mut app, Status::WaitingForApproval);
    assert_eq!(anim(&mut app), Anim::Ask);
    seconds(&mut app, 30.0);
    assert_eq!(
        anim(&mut app),
        Anim::Ask,
        "it keeps asking while the wait lasts"
    );
    animate(&mut app, "hurt");
    app.update();
    assert_eq!(anim(&mut app), Anim::Hurt, "other animations still play");
    seconds(&mut app, 1.5);
    assert_eq!(anim(&mut app), Anim::Ask, "and it asks again after");
    status(&mut app, Status::Working);
    assert_eq!(anim(&mut app), Anim::Idle);
    status(&mut app, Status::WaitingForInput);
    assert_eq!(
        anim(&mut app),
        Anim::Idle,
        "waiting for input is not asking"
    );
}

#[test]
fn an_approval_wait_wakes_a_sleeping_familiar() {
    let mut app = settled();
    status(&mut app, Status::Idle);
    assert_eq!(anim(&mut app), Anim::Rest);
    status(&mut app, Status::WaitingForApproval);
    assert_eq!(anim(&mut app), Anim::Ask);
}

#[test]
fn a_victory_throws_confetti() {
    let mut app = settled();
    animate(&mut app, "victory");
    app.update();
    assert_eq!(effects(&mut app).burst.map(|b| b.0), Some(Burst::Confetti));
    seconds(&mut app, 2.0);
    assert_eq!(effects(&mut app).burst, None, "the burst ends");
}

#[test]
fn a_hurt_shows_whether_a_tool_or_the_api_failed() {
    for (kind, burst) in [
        (ErrorKind::Tool, Burst::Sparks),
        (ErrorKind::Api, Burst::Crackle),
    ] {
        let mut app = settled();
        error(&mut app, kind);
        animate(&mut app, "hurt");
        app.update();
        assert_eq!(
            effects(&mut app).burst.map(|b| b.0),
            Some(burst),
            "{kind:?}"
        );
    }
}

#[test]
fn errors_cloud_the_sky_and_success_clears_it() {
    let mut app = settled();
    error(&mut app, ErrorKind::Rejected);
    app.update();
    assert_eq!(gloom(&mut app), 0.0, "your own rejection is no bad weather");
    error(&mut app, ErrorKind::Tool);
    error(&mut app, ErrorKind::Api);
    app.update();
    assert!(gloom(&mut app) >= RAIN_GLOOM, "a run of errors brings rain");
    send(
        &mut app,
        GameFeed::Event(event(EventKind::Success, Some(10_000))),
    );
    app.update();
    assert_eq!(gloom(&mut app), 0.0);
    assert!(app.world().resource::<WorldWeather>().0.sunshine.is_some());
    assert!(
        app.world().resource::<Activity>().animating,
        "the light shines"
    );
}

#[test]
fn an_intense_prompt_brings_the_think_aura_for_its_turn() {
    let mut app = settled();
    let mut prompt = event(EventKind::Prompt, Some(10_000));
    prompt.think = Some(3);
    send(&mut app, GameFeed::Event(prompt));
    app.update();
    assert_eq!(effects(&mut app).aura(), 3);
    seconds(&mut app, AURA_SECS - 1.0);
    let mut thinking = event(EventKind::Thinking, Some(10_000));
    thinking.think = Some(3);
    send(&mut app, GameFeed::Event(thinking));
    seconds(&mut app, 2.0);
    assert_eq!(effects(&mut app).aura(), 3, "thinking events carry it on");
    seconds(&mut app, AURA_SECS);
    assert_eq!(effects(&mut app).aura(), 0, "it fades when thinking stops");
    let mut plain = event(EventKind::Prompt, Some(10_000));
    plain.think = Some(0);
    send(&mut app, GameFeed::Event(plain));
    app.update();
    assert_eq!(effects(&mut app).aura(), 0, "a plain prompt has none");
}

#[test]
fn the_phase_follows_the_local_hour() {
    for (hour, phase) in [
        (0.0, Phase::Night),
        (4.99, Phase::Night),
        (5.0, Phase::Dawn),
        (7.5, Phase::Dawn),
        (8.0, Phase::Day),
        (13.0, Phase::Day),
        (17.0, Phase::Dusk),
        (19.9, Phase::Dusk),
        (20.0, Phase::Night),
        (23.9, Phase::Night),
        (24.5, Phase::Night),
        (-1.0, Phase::Night),
        (f32::NAN, Phase::Night),
    ] {
        assert_eq!(Phase::at(hour), phase, "hour {hour}");
    }
    let indices: Vec<usize> = Phase::ALL.iter().map(|p| p.index()).collect();
    assert_eq!(indices, vec![0, 1, 2, 3]);
}

#[test]
fn the_sky_darkens_and_rains_with_gloom() {
    let clear = sky(13.0, 0.0);
    assert_eq!(clear.light, [1.0; 3]);
    assert_eq!((clear.clouds, clear.rain), (0, false));
    let grey = sky(13.0, 0.3);
    assert!(grey.clouds > 0 && !grey.rain);
    assert!(grey.light.iter().all(|c| *c < 1.0));
    let storm = sky(13.0, 1.0);
    assert!(storm.rain);
    assert_eq!(storm.clouds, MAX_CLOUDS);
    assert!(storm.light[0] < grey.light[0], "more gloom, less light");
    assert!(sky(13.0, 7.0) == storm, "gloom is clamped");
    assert_eq!(sky(22.0, 0.0).phase, Phase::Night);
}

#[test]
fn weather_clears_by_itself_and_at_once_on_success() {
    let mut w = Weather::default();
    w.error(Trouble::Tool);
    let after_tool = w.gloom;
    w.error(Trouble::Api);
    assert!(
        w.gloom - after_tool > after_tool,
        "an API failure weighs more"
    );
    assert!(w.moving(), "it rains");
    w.tick(1_000.0);
    assert_eq!(w.gloom, 0.0);
    assert!(!w.moving());
    w.error(Trouble::Api);
    w.success();
    assert_eq!(w.gloom, 0.0);
    assert!(w.sunshine.is_some());
    w.tick(10.0);
    assert_eq!(w.sunshine, None);
}

#[test]
fn ultrathink_has_more_and_brighter_particles_than_think_hard() {
    assert_eq!(aura_count(0), 0);
    assert_eq!(aura_count(1), 0, "plain thinking has the animation only");
    assert!(aura_count(2) > 0);
    assert!(aura_count(3) > aura_count(2));
    assert!(aura_count(3) <= PARTICLE_SLOTS);
    let brightest = |think: u8| {
        (0..aura_count(think))
            .flat_map(|i| (0..40).filter_map(move |k| aura_particle(think, i, k as f32 * 0.1)))
            .map(|p| {
                p.color[3] as u32 * (p.color[0] as u32 + p.color[1] as u32 + p.color[2] as u32)
            })
            .max()
            .unwrap_or(0)
    };
    assert!(brightest(3) > brightest(2));
    assert!(aura_particle(2, aura_count(2), 0.0).is_none());
}

#[test]
fn bursts_end_and_stay_within_the_slots() {
    for burst in [Burst::Confetti, Burst::Sparks, Burst::Crackle] {
        assert!(burst.count() + aura_count(3) <= PARTICLE_SLOTS, "{burst:?}");
        assert!(burst.particle(0, 0.0).is_some());
        assert!(burst.particle(0, burst.secs()).is_none(), "{burst:?} ends");
        assert!(burst.particle(burst.count(), 0.0).is_none());
    }
    // Confetti goes up before it falls.
    let up = Burst::Confetti.particle(3, 0.3).map(|p| p.y).unwrap_or(0.0);
    assert!(up > 6.0);
}

/// Issue 14: a scene that changes with the kind of work. The main agent's reads make the
/// library, its commands the forge, a finished turn the open hills.
#[test]
fn the_scene_follows_the_main_agent_s_work() {
    use familiar_game::ambience::WorkScene;
    use familiar_game::logic::SceneOfWork;
    let mut app = settled();
    let scene = |app: &mut App| app.world().resource::<SceneOfWork>().0;
    assert_eq!(scene(&mut app), WorkScene::Open);
    for (kind, expected) in [
        (EventKind::Reading, WorkScene::Library),
        (EventKind::Thinking, WorkScene::Library),
        (EventKind::Bash, WorkScene::Forge),
        (EventKind::Success, WorkScene::Open),
    ] {
        send(&mut app, GameFeed::Event(event(kind, Some(20_000))));
        app.update();
        assert_eq!(scene(&mut app), expected, "after {kind}");
    }
}

/// Issue 27: with several sessions on screen, one failing rained on the whole sky and the
/// backdrop followed whichever read last, so no one could tell which session it was about. The
/// sky is the one session's while it is alone; with several it stays clear and each session
/// keeps its own weather (its own cloud over its familiar); the backdrop shows the work every
/// session is at, and is open while they differ.
#[test]
fn with_several_sessions_weather_and_scene_belong_to_each() {
    use familiar_game::ambience::WorkScene;
    use familiar_game::logic::SceneOfWork;
    let mut app = settled();
    let in_session = |session: &str, kind: EventKind| {
        let mut ev = event(kind, Some(20_000));
        ev.session = Some(session.to_owned());
        ev
    };
    send(
        &mut app,
        GameFeed::Event(in_session("s2", EventKind::SessionStart)),
    );
    app.update();
    let a = familiar(&mut app, "s1");
    let b = familiar(&mut app, "s2");
    for _ in 0..2 {
        let mut ev = in_session("s1", EventKind::Error);
        ev.error = Some(ErrorKind::Api);
        send(&mut app, GameFeed::Event(ev));
    }
    send(&mut app, GameFeed::Event(in_session("s2", EventKind::Bash)));
    app.update();
    let own = |app: &App, e| app.world().get::<Effects>(e).cloned().unwrap_or_default();
    assert!(own(&app, a).weather.gloom >= RAIN_GLOOM, "s1's own rain");
    assert_eq!(own(&app, b).weather.gloom, 0.0, "s2 stays clear");
    assert_eq!(own(&app, b).work, WorkScene::Forge);
    assert_eq!(gloom(&mut app), 0.0, "the sky is nobody's");
    assert_eq!(app.world().resource::<SceneOfWork>().0, WorkScene::Open);

    // Both at commands: the forge is everyone's.
    send(&mut app, GameFeed::Event(in_session("s1", EventKind::Bash)));
    app.update();
    assert_eq!(app.world().resource::<SceneOfWork>().0, WorkScene::Forge);
    assert!(gloom(&mut app) == 0.0);

    // Alone again, s2's weather is the sky's.
    app.world_mut().despawn(b);
    app.update();
    assert!(
        gloom(&mut app) >= RAIN_GLOOM,
        "s1 alone: its rain is the sky's"
    );
}
