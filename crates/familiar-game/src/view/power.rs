//! Power: the window draws at full rate only while something moves, and otherwise wakes for
//! its next timer (low-power reactive mode); plus the frame counter for benchmarks.

use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy::winit::{UpdateMode, WinitSettings};

use super::bridge::Pacing;
use super::{COMPACTION_NOTE_SECS, Options};
use crate::logic::{Activity, Animation, FeedChannel, Mana, Speech};

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
/// bubble to hide, falling asleep) or at most every few seconds. Feed items wake the loop
/// through the bridge, which also wakes it for each animation frame while the window
/// animates (`pacer`); without a bridge, Bevy's timer does.
#[allow(clippy::too_many_arguments)]
pub(super) fn power_mode(
    options: Res<Options>,
    activity: Res<Activity>,
    familiars: Query<(&Animation, &Speech, &Mana)>,
    settings: Option<ResMut<WinitSettings>>,
    pacing: Option<Res<Pacing>>,
    channel: Option<Res<FeedChannel>>,
    mut opened: Local<Option<Instant>>,
) {
    let now = Instant::now();
    let Some(mut settings) = settings else {
        return;
    };
    if options.0.continuous {
        return;
    }
    // Regression: under Xvfb the window stayed a blank rectangle in 3 of 5 starts, because
    // the few frames drawn before the window was mapped were all the low-power mode drew
    // until something happened. Draw at full rate for the first moments, then go reactive.
    let opened = *opened.get_or_insert(now);
    if now.duration_since(opened) < FIRST_FRAMES_AT_FULL_RATE {
        if settings.focused_mode != UpdateMode::Continuous {
            *settings = WinitSettings::game();
        }
        return;
    }
    // Items left in the channel (more than a frame takes) keep the frames coming too.
    let pending = channel.is_some_and(|c| !c.0.is_empty());
    let animating = activity.animating || pending;
    if let Some(pacing) = &pacing {
        pacing.frame(now, animating);
    }
    let wait = if animating {
        if pacing.is_some() {
            PACED
        } else {
            ANIMATION_FRAME
        }
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

/// Bevy's own wait while the bridge wakes the loop for each animation frame (`pacer`): long,
/// so that Bevy's timer adds no frames of its own (it runs from the last frame it timed, not
/// from the bridge's), yet a window left animating by a bridge that stopped still draws now and
/// then.
pub(super) const PACED: Duration = Duration::from_secs(10);

/// The frame time while something moves: 16 fps. Every lasting motion moves about one pixel a
/// frame at 16 fps (floaters rise 14 canvas pixels a second, think motes 9-19 art pixels,
/// clouds 3), so more frames would mostly repeat the last; the 8, 4 and 2 fps rows of the
/// sprite sheets fall on whole frames; only bursts and rain move faster. Each frame costs real
/// CPU where rendering is software (llvmpipe): 20 fps cost a quarter more for no smoother
/// picture. Feed items add frames only while they come more often than one an animation frame
/// (`pacer`).
pub(super) const ANIMATION_FRAME: Duration = Duration::from_micros(62_500);

/// How long a new window draws at full rate before it may go reactive.
pub(super) const FIRST_FRAMES_AT_FULL_RATE: Duration = Duration::from_millis(1500);

pub(super) fn count_frames(options: Res<Options>) {
    if let Some(counter) = &options.0.frame_counter {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::FeedChannel;
    use crate::{GameFeed, GameOptions};

    /// An item left in the channel (more than a frame takes) keeps the frames coming: the
    /// bridge is told the window animates, and Bevy's timer leaves the frames to it.
    #[test]
    fn an_item_waiting_keeps_the_frames_coming() {
        let (tx, rx) = crossbeam_channel::unbounded();
        let (pacing, poked) = Pacing::new();
        let mut app = App::new();
        app.add_plugins(MinimalPlugins)
            .insert_resource(Options(GameOptions {
                window_memory: None,
                ..GameOptions::default()
            }))
            .insert_resource(Activity::default())
            .insert_resource(idle_settings(Duration::from_secs(5)))
            .insert_resource(pacing.clone())
            .insert_resource(FeedChannel(rx))
            .add_systems(Update, power_mode);
        app.update();
        // Past the first moments at full rate (wall-clock by design: the window's mapping).
        std::thread::sleep(FIRST_FRAMES_AT_FULL_RATE + Duration::from_millis(100));
        assert!(tx.send(GameFeed::Quit).is_ok());
        app.update();
        let mode = |app: &App| app.world().resource::<WinitSettings>().unfocused_mode;
        assert!(pacing.animating(), "the bridge keeps the frames coming");
        assert!(poked.try_recv().is_ok(), "and is told so at once");
        assert_eq!(mode(&app), UpdateMode::reactive_low_power(PACED));
        let drained: Vec<GameFeed> = app.world().resource::<FeedChannel>().0.try_iter().collect();
        assert_eq!(drained.len(), 1);
        app.update();
        assert!(!pacing.animating());
        assert_eq!(
            mode(&app),
            UpdateMode::reactive_low_power(Duration::from_secs(5))
        );
    }
}
