//! XP into the user's [`Profile`]: an `xp` action adds to the one profile every familiar
//! shares (the user's level, kept between runs by `crate::progression::persist`), each
//! familiar's [`Progress`] shows it, the familiar that earned a level-up plays its effect,
//! and each unlock earned is announced in the log strip. Part of `logic`.

use bevy::prelude::*;

use super::GameConfig;
use super::state::{LogStrip, Progress};
use crate::progression::Profile;

/// What a familiar shows of `profile` (no level-up playing).
pub(crate) fn progress_of(profile: &Profile) -> Progress {
    Progress {
        xp: profile.xp,
        level: profile.level(),
        level_up_age: None,
    }
}

/// `amount` XP earned by familiar `earner`.
pub(crate) fn gain(world: &mut World, earner: Entity, amount: i64) {
    let (gain, shown) = {
        let mut profile = world.get_resource_or_init::<Profile>();
        let gain = profile.add(amount);
        (gain, progress_of(&profile))
    };
    let mut q = world.query::<(Entity, &mut Progress)>();
    for (e, mut p) in q.iter_mut(world) {
        p.xp = shown.xp;
        p.level = shown.level;
        if e == earner && gain.level_up_from.is_some() {
            p.level_up_age = Some(0.0);
        }
    }
    let cap = world.resource::<GameConfig>().log_lines;
    let mut log = world.resource_mut::<LogStrip>();
    for unlock in gain.unlocked {
        log.push(format!("Unlocked: {}", unlock.name), cap);
    }
}
