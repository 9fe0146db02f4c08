//! The timers: animations, mana easing, level-up effects, speech, companions and floaters age
//! by the frame's delta; and whether anything moves (so the window draws at full rate).

use bevy::prelude::*;

use super::{
    Activity, Animation, COMPANION_ENTER_SECS, COMPANION_LEAVE_SECS, Companion, FLOATER_SECS,
    Floater, Mana, Progress, Speech,
};

/// Advances every timer by the frame's delta and decides whether the window must animate.
#[allow(clippy::type_complexity)]
pub fn advance(
    time: Res<Time>,
    mut commands: Commands,
    mut familiars: Query<(&mut Animation, &mut Mana, &mut Progress, &mut Speech)>,
    mut companions: Query<(Entity, &mut Companion)>,
    mut floaters: Query<(Entity, &mut Floater)>,
    mut activity: ResMut<Activity>,
) {
    let dt = time.delta_secs();
    let mut animating = false;
    for (mut anim, mut mana, mut progress, mut speech) in &mut familiars {
        anim.0.tick(dt);
        animating |= !anim.0.settled();
        let target = mana.fraction().unwrap_or(mana.shown);
        let diff = target - mana.shown;
        if diff.abs() > 0.002 {
            // Ease towards the target in about half a second.
            mana.shown += diff * (dt * 6.0).min(1.0);
            animating = true;
        } else {
            mana.shown = target;
        }
        if let Some(c) = mana.compaction.as_mut() {
            c.age += dt;
        }
        if let Some(age) = progress.level_up_age.as_mut() {
            *age += dt;
            animating = true;
            if *age > 2.0 {
                progress.level_up_age = None;
            }
        }
        if let Some((_, left)) = speech.0.as_mut() {
            *left -= dt;
            if *left <= 0.0 {
                speech.0 = None;
            }
        }
    }
    for (e, mut c) in &mut companions {
        c.age += dt;
        c.busy = (c.busy - dt).max(0.0);
        if c.age < COMPANION_ENTER_SECS || c.busy > 0.0 {
            animating = true;
        }
        if let Some(l) = c.leaving.as_mut() {
            *l += dt;
            animating = true;
            if *l >= COMPANION_LEAVE_SECS {
                commands.entity(e).despawn();
            }
        }
    }
    for (e, mut f) in &mut floaters {
        f.age += dt;
        animating = true;
        if f.age >= FLOATER_SECS {
            commands.entity(e).despawn();
        }
    }
    activity.set_if_neq(Activity { animating });
}
