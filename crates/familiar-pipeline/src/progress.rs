//! The user's progression has one owner, the [`crate::Stage`], through [`Progression`]: it
//! adds the scripts' `xp` actions to the [`Profile`], says each level reached ("Level 3!" and
//! the `level_up` sound, on the session that earned it), tells the window the new profile, and
//! tells the scripts (`progress()`). `familiar watch` keeps the profile between runs in
//! `progress.json` under the data directory (through `familiar-save`: versioned, atomic,
//! under a lock, adding this run's gain to what another Familiar saved meanwhile); replays,
//! the demo and the dry runs start from a fresh profile and keep nothing.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use familiar_model::Action;
use familiar_model::progression::{Change, Profile, gain};
use familiar_save::{FailureGate, Versioned};
use serde::{Deserialize, Serialize};

/// How often a changing profile is written, at most (and once more at the end).
const SAVE_EVERY: Duration = Duration::from_secs(1);

/// Where `familiar watch` keeps the user's progression: `<data dir>/progress.json`
/// (`~/.local/share/familiar/progress.json` on Linux, or under `$XDG_DATA_HOME`).
pub fn default_path() -> Option<PathBuf> {
    familiar_save::data_dir().map(|dir| dir.join("progress.json"))
}

/// The profile as the save file holds it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
struct Saved(Profile);

impl Versioned for Saved {
    const KIND: &'static str = "progress";
    const VERSION: u32 = 1;
}

/// The user's profile, and where it is kept (see the module documentation).
#[derive(Debug, Default)]
pub struct Progression {
    profile: Profile,
    keeper: Option<Keeper>,
}

#[derive(Debug)]
struct Keeper {
    path: PathBuf,
    /// What the file held when last read or written: this run's gain is the difference.
    saved: Profile,
    last_save: Option<Instant>,
    gate: FailureGate,
}

impl Progression {
    /// A profile of its own, kept nowhere (replays, the demo, dry runs).
    pub fn fresh() -> Progression {
        Progression::default()
    }

    /// The profile saved at `path`, kept there. A damaged, cut-short or newer file is set
    /// aside with one warning and play starts fresh; a file that can be neither read nor moved
    /// aside is left alone (nothing is saved over it).
    pub fn kept_at(path: &Path) -> Progression {
        let (saved, may_save) = match familiar_save::load::<Saved>(path) {
            Ok(saved) => (saved.map(|Saved(p)| p).unwrap_or_default(), true),
            Err(err) => {
                tracing::warn!("progress: {err}");
                (Profile::default(), err.may_save())
            }
        };
        // A save of an older version lacks this one's unlocks of the levels it reached.
        let mut profile = saved.clone();
        profile.add(0);
        Progression {
            keeper: may_save.then(|| Keeper {
                path: path.to_path_buf(),
                saved,
                last_save: None,
                gate: FailureGate::default(),
            }),
            profile,
        }
    }

    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Adds the `xp` actions among `actions`, in order, and appends after them what each
    /// level reached calls for (the bubble and the sound, on the earner's session). Returns
    /// what changed, when the profile did ([`Change::update`] tells the window).
    pub fn apply(&mut self, actions: &mut Vec<Action>) -> Option<Change> {
        let (change, said) = gain(&mut self.profile, actions);
        actions.extend(said);
        change
    }

    /// Save the profile if it changed and the last save is old enough (`now`: the wall
    /// clock), or whatever its age when `force` (the run ends). Whether the profile changed
    /// by it: another Familiar's gain, saved meanwhile, is now added to this one's.
    pub fn save(&mut self, now: Instant, force: bool) -> bool {
        let Some(keeper) = &mut self.keeper else {
            return false;
        };
        if self.profile == keeper.saved {
            return false;
        }
        let due = keeper
            .last_save
            .is_none_or(|last| now.saturating_duration_since(last) >= SAVE_EVERY);
        if !due && !force {
            return false;
        }
        keeper.last_save = Some(now);
        // Another Familiar may share the file: this run's gain is added to its save.
        let base = keeper.saved.clone();
        let ours = &self.profile;
        let result = familiar_save::update(&keeper.path, |saved: Option<Saved>| {
            Saved(ours.merged(&base, saved.map(|Saved(p)| p)))
        });
        let mut changed = false;
        let result = result.map(|Saved(merged)| {
            keeper.saved = merged.clone();
            changed = merged != self.profile;
            self.profile = merged;
        });
        if let Some(err) = keeper.gate.note(result) {
            tracing::warn!("progress: {err}; play goes on");
        }
        changed
    }
}
