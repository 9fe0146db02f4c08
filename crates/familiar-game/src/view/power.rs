//! Power: the window draws at full rate only while something moves, and otherwise wakes for
//! its next timer (low-power reactive mode); plus the frame counter for benchmarks.

use std::time::Duration;

use bevy::prelude::*;
use bevy::winit::{UpdateMode, WinitSettings};

use super::{COMPACTION_NOTE_SECS, Options};
use crate::logic::{Activity, Animation, Mana, Speech};

/// Low-power settings: draw when something happens to the window, a feed item arrives, or
/// every `wait`. Mouse motion elsewhere on the desktop does not wake it.
pub fn idle_settings(wait: Duration) -> WinitSettings {
    WinitSettings {
        focused_mode: UpdateMode::reactive_low_power(wait),
        unfocused_mode: UpdateMode::reactive_low_power(wait),
    }
}

/// Full rate only while something moves; a few frames a second while a familiar breathes;
/// once all are calm (idle a while, or asleep) the window wakes only for its next timer (a
/// bubble to hide, falling asleep) or at most every few seconds. Feed items wake the loop at
/// once through the bridge.
pub(super) fn power_mode(
    options: Res<Options>,
    activity: Res<Activity>,
    familiars: Query<(&Animation, &Speech, &Mana)>,
    settings: Option<ResMut<WinitSettings>>,
    mut opened: Local<Option<std::time::Instant>>,
) {
    let Some(mut settings) = settings else {
        return;
    };
    if options.0.continuous {
        return;
    }
    // Regression: under Xvfb the window stayed a blank rectangle in 3 of 5 starts, because
    // the few frames drawn before the window was mapped were all the low-power mode drew
    // until something happened. Draw at full rate for the first moments, then go reactive.
    let opened = *opened.get_or_insert_with(std::time::Instant::now);
    if opened.elapsed() < FIRST_FRAMES_AT_FULL_RATE {
        if settings.focused_mode != UpdateMode::Continuous {
            *settings = WinitSettings::game();
        }
        return;
    }
    let wait = if activity.animating {
        // 20 fps: the sprite sheets run at 2-10 fps, easing and floaters look smooth at 20,
        // and each frame costs real CPU where rendering is software (llvmpipe).
        Duration::from_millis(50)
    } else if familiars.iter().any(|(a, ..)| !a.0.calm()) {
        Duration::from_millis(333)
    } else {
        let mut next: f32 = if familiars.iter().any(|(a, ..)| a.0.sleeping()) {
            2.0 // the Zzz drift slowly
        } else {
            5.0
        };
        for (anim, speech, mana) in &familiars {
            next = next.min(anim.0.next_change());
            if let Some((_, left)) = &speech.0 {
                next = next.min(*left);
            }
            if let Some(c) = mana.compaction
                && c.age < COMPACTION_NOTE_SECS
            {
                next = next.min(COMPACTION_NOTE_SECS - c.age);
            }
        }
        Duration::from_secs_f32(next.clamp(0.033, 5.0))
    };
    let want = UpdateMode::reactive_low_power(wait);
    if settings.focused_mode != want || settings.unfocused_mode != want {
        *settings = idle_settings(wait);
    }
}

/// How long a new window draws at full rate before it may go reactive.
pub(super) const FIRST_FRAMES_AT_FULL_RATE: Duration = Duration::from_millis(1500);

pub(super) fn count_frames(options: Res<Options>) {
    if let Some(counter) = &options.0.frame_counter {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}
