//! The world's reactions, kept from the session model's events and the animations: the
//! weather (errors cloud it, success clears it), each familiar's effects (a burst when a
//! victory or a hurt starts, the motes of "think hard" and "ultrathink"). The game's sounds
//! are not chosen here: the pipeline chooses them from the events (`familiar_audio::GameCues`),
//! with a window or without. The pure rules are in [`crate::ambience`];
//! `view::backdrop` and `view::effects` draw the result. Part of `logic`.

use bevy::prelude::*;
use familiar_model::{ErrorKind, Event, EventKind};

use super::Animation;
use crate::ambience::{Burst, Trouble, Weather};
use crate::anim::Anim;

/// The sky's weather, one for the whole scene.
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
}

/// The scene of the work going on (`crate::ambience::WorkScene`), from the main agents' events.
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
    {
        let mut scene = world.resource_mut::<SceneOfWork>();
        let next = scene.0.after(ev.kind);
        if scene.0 != next {
            scene.0 = next;
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
            if let Some(trouble) = trouble {
                world.resource_mut::<WorldWeather>().0.error(trouble);
                if let Some(mut fx) = world.get_mut::<Effects>(e) {
                    fx.trouble = Some(trouble);
                }
            }
        }
        EventKind::Success => world.resource_mut::<WorldWeather>().0.success(),
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

/// Ages the weather and the effects, and starts the burst of each victory or hurt that began.
pub fn react(
    time: Res<Time>,
    mut weather: ResMut<WorldWeather>,
    mut familiars: Query<(&mut Animation, &mut Effects)>,
    mut activity: ResMut<super::Activity>,
) {
    let dt = time.delta_secs();
    weather.0.tick(dt);
    let mut moving = weather.0.moving();
    for (mut anim, mut fx) in &mut familiars {
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
    if moving && !activity.animating {
        activity.animating = true;
    }
}
