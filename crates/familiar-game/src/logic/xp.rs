//! The user's progression on screen: each [`GameFeed::Progress`](crate::GameFeed) replaces
//! the window's [`UserProfile`] (the pipeline owns it), every familiar's [`Progress`] shows it,
//! the familiar whose session earned a level plays its effect, and each unlock earned is
//! announced in the log strip. Part of `logic`.

use bevy::prelude::*;
use familiar_model::progression::ProgressUpdate;

use super::GameConfig;
use super::state::{Familiar, LogStrip, Progress};
use crate::progression::{Profile, UserProfile, unlock};

/// What a familiar shows of `profile` (no level-up playing).
pub(crate) fn progress_of(profile: &Profile) -> Progress {
    Progress {
        xp: profile.xp,
        level: profile.level(),
        level_up_age: None,
    }
}

/// The profile is now `update.profile`.
pub(crate) fn apply(world: &mut World, update: ProgressUpdate) {
    let shown = progress_of(&update.profile);
    world.insert_resource(UserProfile(update.profile));
    let earner = update
        .level_up
        .and_then(|up| up.session)
        .unwrap_or_default();
    let mut q = world.query::<(&Familiar, &mut Progress)>();
    for (familiar, mut p) in q.iter_mut(world) {
        p.xp = shown.xp;
        p.level = shown.level;
        if !earner.is_empty() && familiar.session == earner {
            p.level_up_age = Some(0.0);
        }
    }
    let cap = world.resource::<GameConfig>().log_lines;
    let mut log = world.resource_mut::<LogStrip>();
    for name in update
        .unlocked
        .iter()
        .filter_map(|id| unlock(id))
        .map(|u| u.name)
    {
        log.push(format!("Unlocked: {name}"), cap);
    }
}
