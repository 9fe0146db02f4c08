//! The world's reactions, kept from the session model's events and the animations: each
//! session's weather (its errors cloud it, its success clears it), the whole sky's only while
//! that session is alone on screen (with several, a session's rain falls from a cloud of its
//! own over its familiar: the user can tell which one failed), and its scene of work, the
//! backdrop's while every session on screen is at the same; and each familiar's effects (a burst when a
//! victory or a hurt starts, the motes of "think hard" and "ultrathink"). The game's sounds
//! are not chosen here: the pipeline chooses them from the events (`familiar_audio::GameCues`),
//! with a window or without. The pure rules are in [`crate::ambience`];
//! `view::backdrop` and `view::effects` draw the result. Part of `logic`.

use bevy::prelude::*;
use familiar_model::{ErrorKind, Event, EventKind};

use super::Animation;
use crate::ambience::{Burst, Trouble, Weather};
use crate::anim::Anim;

/// The sky's weather: the one session's on screen, clear while there are several (each then
/// has its own, [`Effects::weather`]).
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq)]
pub struct WorldWeather(pub Weather);

/// A familiar's effects.
#[derive(Component, Debug, Clone, Default, PartialEq)]
pub struct Effects {
    /// The burst playing and its age in seconds.
    pub burst: Option<(Burst, f32)>,
    /// Thinking intensity of the current turn (the events' `think`: 2 think hard, 3
    /// ultrathink), and seconds since a thinking event last said so. The aura shows for
    /// [`AURA_SECS`] after each.
    pub think: u8,
    pub think_age: f32,
    /// What the last error was, so the hurt that follows shows it.
    pub trouble: Option<Trouble>,
    /// This session's weather: its own errors and successes.
    pub weather: Weather,
    /// The scene of this session's work.
    pub work: crate::ambience::WorkScene,
}

/// The scene of the work going on (`crate::ambience::WorkScene`): the one every session on
/// screen is at, open while they are at different work.
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SceneOfWork(pub crate::ambience::WorkScene);

/// How long the think aura lasts after the last thinking event of an intense turn.
pub const AURA_SECS: f32 = 4.0;

impl Effects {
    /// The think level whose aura shows now (0: none).
    pub fn aura(&self) -> u8 {
        if self.think_age < AURA_SECS {
            self.think
        } else {
            0
        }
    }
}

/// A main-agent event of familiar `e`: the weather, and the intensity of thinking.
pub(crate) fn observe_event(world: &mut World, e: Entity, ev: &Event) {
    if let Some(mut fx) = world.get_mut::<Effects>(e) {
        let next = fx.work.after(ev.kind);
        if fx.work != next {
            fx.work = next;
        }
    }
    match ev.kind {
        EventKind::Error => {
            // Your own rejections and interrupts are no bad weather.
            let trouble = match ev.error {
                Some(ErrorKind::Tool) => Some(Trouble::Tool),
                Some(ErrorKind::Api) => Some(Trouble::Api),
                _ => None,
            };
            if let Some(trouble) = trouble
                && let Some(mut fx) = world.get_mut::<Effects>(e)
            {
                fx.weather.error(trouble);
                fx.trouble = Some(trouble);
            }
        }
        EventKind::Success => {
            if let Some(mut fx) = world.get_mut::<Effects>(e) {
                fx.weather.success();
            }
        }
        EventKind::Prompt | EventKind::Thinking => {
            if let Some(mut fx) = world.get_mut::<Effects>(e) {
                // A prompt sets the turn's intensity (none resets it); thinking events
                // carry it on (docs/events.md, `think`).
                if ev.kind == EventKind::Prompt || ev.think.is_some() {
                    fx.think = ev.think.unwrap_or(0);
                    fx.think_age = 0.0;
                }
            }
        }
        _ => {}
    }
}

/// A subagent's event: its companion's context (its own chain's, which every event of it
/// carries), for the companion's small mana bar.
pub(crate) fn companion_context(world: &mut World, owner: Entity, agent: &str, ev: &Event) {
    let Some(used) = ev.context_used else {
        return;
    };
    if let Some(c) = super::feed::companion_for(world, owner, agent)
        && let Some(mut comp) = world.get_mut::<super::Companion>(c)
    {
        comp.context = Some((used, ev.context_limit));
    }
}

/// Ages the weather and the effects, starts the burst of each victory or hurt that began, and
/// gives the sky the weather of the one session on screen (clear while there are several, each
/// with its own cloud), and the backdrop the scene every session on screen is at (open while
/// they are at different work).
pub fn react(
    time: Res<Time>,
    mut weather: ResMut<WorldWeather>,
    mut scene: ResMut<SceneOfWork>,
    mut familiars: Query<(&mut Animation, &mut Effects)>,
    mut activity: ResMut<super::Activity>,
) {
    let dt = time.delta_secs();
    let mut moving = false;
    let alone = familiars.iter().count() == 1;
    let mut sky = Weather::default();
    // The scene every session on screen is at, if they agree.
    let mut agreed: Option<Option<crate::ambience::WorkScene>> = None;
    for (mut anim, mut fx) in &mut familiars {
        fx.weather.tick(dt);
        moving |= fx.weather.moving();
        if alone {
            sky = fx.weather;
        }
        agreed = Some(match agreed {
            None => Some(fx.work),
            Some(scene) => scene.filter(|scene| *scene == fx.work),
        });
        fx.think_age += dt;
        if let Some((burst, age)) = fx.burst.as_mut() {
            *age += dt;
            if *age >= burst.secs() {
                fx.burst = None;
            }
        }
        if let Some(started) = anim.0.take_started() {
            let burst = match started {
                Anim::Victory => Some(Burst::Confetti),
                Anim::Hurt => Some(match fx.trouble.take() {
                    Some(Trouble::Api) => Burst::Crackle,
                    _ => Burst::Sparks,
                }),
                _ => None,
            };
            if let Some(b) = burst {
                fx.burst = Some((b, 0.0));
            }
        }
        moving |= fx.burst.is_some() || fx.aura() >= 2;
    }
    if weather.0 != sky {
        weather.0 = sky;
    }
    let work = agreed.flatten().unwrap_or_default();
    if scene.0 != work {
        scene.0 = work;
    }
    if moving && !activity.animating {
        activity.animating = true;
    }
}
