//! The I/O edge of the progression: [`ProgressionPlugin`] reads the [`Profile`] when the game
//! starts and saves it when it changes (at most once a second, and at once when the app
//! exits), through `familiar-save`, adding this window's gain to what the file holds then
//! (another Familiar's window may share it: [`Profile::merged`]). A damaged, cut-short or newer save is set aside with one
//! warning and play starts from a fresh profile; a save that cannot be written (read-only
//! directory, full disk) is one warning per run of failures, and play goes on. Without a path
//! (replays, the demo, tests) the profile lasts as long as the window.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bevy::app::AppExit;
use bevy::prelude::*;
use familiar_save::FailureGate;

use super::Profile;

/// Where `familiar watch` keeps the user's progression: `<data dir>/progress.json`
/// (`~/.local/share/familiar/progress.json` on Linux, or under `$XDG_DATA_HOME`).
pub fn default_progress_path() -> Option<PathBuf> {
    familiar_save::data_dir().map(|dir| dir.join("progress.json"))
}

/// How often a changing profile is written, at most.
const SAVE_EVERY: Duration = Duration::from_secs(1);

/// Reads the profile at `path`: a fresh one when there is none, or when it was set aside
/// (with one warning). The flag says whether saving there is safe (not over a file that could
/// be neither read nor moved aside).
pub fn load_profile(path: &Path) -> (Profile, bool) {
    match familiar_save::load::<Profile>(path) {
        Ok(profile) => (profile.unwrap_or_default(), true),
        Err(err) => {
            tracing::warn!("progress: {err}");
            (Profile::default(), err.may_save())
        }
    }
}

/// Loads and saves the [`Profile`] resource (see the module documentation). Without this
/// plugin, `GameLogicPlugin` starts a fresh profile that is never saved.
pub struct ProgressionPlugin {
    pub path: Option<PathBuf>,
}

#[derive(Resource)]
struct Saver {
    path: PathBuf,
    /// What the file holds now.
    saved: Profile,
    last_save: Option<Duration>,
    gate: FailureGate,
}

impl Plugin for ProgressionPlugin {
    fn build(&self, app: &mut App) {
        let Some(path) = &self.path else {
            app.init_resource::<Profile>();
            return;
        };
        let (profile, may_save) = load_profile(path);
        if may_save {
            app.insert_resource(Saver {
                path: path.clone(),
                saved: profile.clone(),
                last_save: None,
                gate: FailureGate::default(),
            })
            .add_systems(Last, save_profile);
        }
        app.insert_resource(profile);
    }
}

fn save_profile(
    time: Res<Time<Real>>,
    mut exits: MessageReader<AppExit>,
    mut profile: ResMut<Profile>,
    mut saver: ResMut<Saver>,
) {
    let exiting = exits.read().count() > 0;
    if *profile == saver.saved {
        return;
    }
    let now = time.elapsed();
    let due = saver
        .last_save
        .is_none_or(|last| now.saturating_sub(last) >= SAVE_EVERY);
    if !due && !exiting {
        return;
    }
    saver.last_save = Some(now);
    // Another Familiar's window may share the file: this one's gain is added to its save.
    let base = saver.saved.clone();
    let result = familiar_save::update(&saver.path, |saved: Option<Profile>| {
        profile.merged(&base, saved)
    })
    .map(|merged| {
        if merged != *profile {
            *profile = merged.clone();
        }
        saver.saved = merged;
    });
    if let Some(err) = saver.gate.note(result) {
        tracing::warn!("progress: {err}; play goes on");
    }
}
