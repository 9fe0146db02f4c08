//! The optional screenshot (`GameOptions::screenshot`): after some frames with the familiars on
//! stage, or with no session yet once the window says where it looks (or, playing a scene,
//! after that many frames from the start), capture the window, save it, and quit.

use std::time::Duration;

use bevy::app::AppExit;
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};

use super::Options;
use crate::anim::Anim;
use crate::logic::Animation;

#[derive(Default)]
pub(super) struct ShotState {
    frames: u32,
    requested: bool,
    started: Option<std::time::Instant>,
}

pub(super) fn screenshot(
    mut commands: Commands,
    options: Res<Options>,
    familiars: Query<&Animation>,
    notice: Res<crate::logic::Notice>,
    mut state: Local<ShotState>,
    mut exit: MessageWriter<AppExit>,
) {
    let Some(shot) = &options.0.screenshot else {
        return;
    };
    let started = *state.started.get_or_insert_with(std::time::Instant::now);
    // Count frames once a familiar is on stage and past its entrance (a puff of smoke).
    // A scene counts every frame: its cues and clock make frame N the same picture each run.
    let on_stage = options.0.scene.is_some()
        || (!familiars.is_empty() && familiars.iter().all(|a| a.0.current() != Anim::Enter))
        || (familiars.is_empty() && notice.waiting.is_some());
    if on_stage {
        state.frames += 1;
    }
    if !state.requested && state.frames >= shot.after_frames {
        state.requested = true;
        let path = shot.path.clone();
        commands.spawn(Screenshot::primary_window()).observe(
            move |captured: On<ScreenshotCaptured>, mut exit: MessageWriter<AppExit>| {
                let result = captured
                    .image
                    .clone()
                    .try_into_dynamic()
                    .map_err(|e| e.to_string())
                    .and_then(|img| {
                        if let Some(dir) = path.parent() {
                            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
                        }
                        img.to_rgba8().save(&path).map_err(|e| e.to_string())
                    });
                match result {
                    Ok(()) => {
                        tracing::info!(path = %path.display(), "screenshot saved");
                        exit.write(AppExit::Success);
                    }
                    Err(e) => {
                        tracing::error!(path = %path.display(), "screenshot failed: {e}");
                        exit.write(AppExit::from_code(3));
                    }
                }
            },
        );
    }
    // A watchdog, so a renderer that never delivers cannot hang a test run forever.
    if started.elapsed() > Duration::from_secs(180) {
        tracing::error!("no screenshot after 180 s; giving up");
        exit.write(AppExit::from_code(4));
    }
}
