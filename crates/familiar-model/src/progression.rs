//! The user's progression, as plain data: total XP, the level it gives, and the unlocks
//! (hats, accessories, scenes) earned at level milestones. One [`Profile`] per user, shared by
//! every session and every Familiar running: the pipeline's `Stage` is its one owner (it adds
//! the scripts' `xp` actions, says the level-ups, keeps it between `watch` runs); the window
//! and the scripts (`progress()`) only read it. No I/O here.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::{Action, ActionKind};

/// The script name on the actions the progression adds (the level-up bubble and sound).
pub const PROGRESSION: &str = "familiar";

/// The highest level.
pub const MAX_LEVEL: u32 = 999;

/// Total XP needed to reach `level`: 10 × (level − 1)³. Level 2 comes after 10 XP (a few
/// tool calls: the demo reaches it), level 5 after 640, level 10 after 7,290, level 20 after
/// 68,590: quick at first, then slow enough to mean weeks of work.
pub fn xp_for_level(level: u32) -> i64 {
    let steps = i64::from(level.clamp(1, MAX_LEVEL) - 1);
    10 * steps * steps * steps
}

/// The level `xp` total XP gives.
pub fn level_for(xp: i64) -> u32 {
    let mut level = 1;
    while level < MAX_LEVEL && xp >= xp_for_level(level + 1) {
        level += 1;
    }
    level
}

/// What an unlock is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnlockKind {
    Hat,
    Accessory,
    Scene,
}

/// Something earned at a level milestone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unlock {
    /// Stable id, kept in the save file (`hat.pointed`).
    pub id: &'static str,
    pub kind: UnlockKind,
    /// What the player reads (`pointed hat`).
    pub name: &'static str,
    /// Reaching this level earns it.
    pub level: u32,
}

/// Every unlock, by level: one every level or two early on, then every few levels (a few
/// days of work each, see [`xp_for_level`]). Ids are kept in save files: never rename or
/// remove one (`scene.night`, once a night sky, is the paper lanterns now).
pub const UNLOCKS: &[Unlock] = &[
    Unlock {
        id: "hat.pointed",
        kind: UnlockKind::Hat,
        name: "pointed hat",
        level: 2,
    },
    Unlock {
        id: "accessory.scarf",
        kind: UnlockKind::Accessory,
        name: "scarf",
        level: 3,
    },
    Unlock {
        id: "scene.bookshelf",
        kind: UnlockKind::Scene,
        name: "bookshelf",
        level: 4,
    },
    Unlock {
        id: "scene.night",
        kind: UnlockKind::Scene,
        name: "paper lanterns",
        level: 5,
    },
    Unlock {
        id: "hat.beanie",
        kind: UnlockKind::Hat,
        name: "knitted beanie",
        level: 6,
    },
    Unlock {
        id: "accessory.specs",
        kind: UnlockKind::Accessory,
        name: "reading glasses",
        level: 7,
    },
    Unlock {
        id: "scene.fireflies",
        kind: UnlockKind::Scene,
        name: "fireflies",
        level: 8,
    },
    Unlock {
        id: "hat.crown",
        kind: UnlockKind::Hat,
        name: "crown",
        level: 10,
    },
    Unlock {
        id: "scene.banner",
        kind: UnlockKind::Scene,
        name: "guild banner",
        level: 12,
    },
    Unlock {
        id: "accessory.cape",
        kind: UnlockKind::Accessory,
        name: "cape",
        level: 14,
    },
    Unlock {
        id: "scene.crystal",
        kind: UnlockKind::Scene,
        name: "crystal ball",
        level: 16,
    },
    Unlock {
        id: "scene.owl",
        kind: UnlockKind::Scene,
        name: "owl",
        level: 18,
    },
    Unlock {
        id: "hat.archmage",
        kind: UnlockKind::Hat,
        name: "archmage's hat",
        level: 20,
    },
];

/// The unlock with this id, if this version knows it.
pub fn unlock(id: &str) -> Option<&'static Unlock> {
    UNLOCKS.iter().find(|u| u.id == id)
}

/// The user's progression: what the save file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// Total XP, never below zero.
    pub xp: i64,
    /// Ids of the unlocks earned. Never taken back (losing XP keeps them), and ids this
    /// version does not know are kept as they are.
    #[serde(default)]
    pub unlocks: BTreeSet<String>,
}

/// What one [`Profile::add`] changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gain {
    /// The level before, when it rose.
    pub level_up_from: Option<u32>,
    /// Unlocks earned now, by level.
    pub unlocked: Vec<&'static Unlock>,
}

impl Profile {
    pub fn level(&self) -> u32 {
        level_for(self.xp)
    }

    /// Adds XP (a negative amount takes some away, never below zero) and earns the unlocks of
    /// the levels reached; `add(0)` earns those of the level it has (a profile saved by an
    /// older version, which had fewer).
    pub fn add(&mut self, amount: i64) -> Gain {
        let before = self.level();
        self.xp = self.xp.saturating_add(amount).max(0);
        let after = self.level();
        let mut gain = Gain {
            level_up_from: (after > before).then_some(before),
            unlocked: Vec::new(),
        };
        // XP within a level (nearly every gain: a headless run adds some for each event)
        // earns nothing. The unlocks of the levels reached are looked at when a level is
        // reached, and by `add(0)`, which a loaded or merged profile is given: a newer
        // version's unlocks of levels it already had.
        if after == before && amount != 0 {
            return gain;
        }
        // Looked up before an id is copied: this passes the unlocks already earned.
        for u in UNLOCKS.iter().filter(|u| u.level <= after) {
            if !self.unlocks.contains(u.id) {
                self.unlocks.insert(u.id.to_owned());
                gain.unlocked.push(u);
            }
        }
        gain
    }

    /// The earned unlocks this version knows, by level.
    pub fn unlocked(&self) -> impl Iterator<Item = &'static Unlock> + '_ {
        UNLOCKS.iter().filter(|u| self.unlocks.contains(u.id))
    }

    /// What the familiar wears or shows of `kind`: the highest-level one earned.
    pub fn best(&self, kind: UnlockKind) -> Option<&'static Unlock> {
        self.unlocked().filter(|u| u.kind == kind).last()
    }

    /// What to save when another Familiar may have saved since this one last read
    /// or saved (`base`): `saved` (the file now) with this profile's XP gained since `base`
    /// added, and the unlocks of both. Two Familiars of 30 XP each save 60, not 30.
    pub fn merged(&self, base: &Profile, saved: Option<Profile>) -> Profile {
        let Some(mut merged) = saved else {
            return self.clone();
        };
        let gained = self.xp.saturating_sub(base.xp);
        merged.xp = merged.xp.saturating_add(gained).max(0);
        merged.unlocks.extend(self.unlocks.iter().cloned());
        // The merged XP may reach levels neither reached alone.
        merged.add(0);
        merged
    }

    /// Progress within the current level, 0..1.
    pub fn fraction(&self) -> f32 {
        let level = self.level();
        let lo = xp_for_level(level);
        let hi = xp_for_level(level + 1);
        ((self.xp - lo) as f32 / (hi - lo).max(1) as f32).clamp(0.0, 1.0)
    }
}

/// What the window is told when the profile changed: the whole profile, and what the change
/// brought (the level-up and the session that earned it, the unlocks), so that the familiar
/// that earned it celebrates and each unlock is announced once.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgressUpdate {
    pub profile: Profile,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level_up: Option<LevelUp>,
    /// Ids of the unlocks this change earned, by level.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unlocked: Vec<String>,
}

/// A level reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelUp {
    /// The level before.
    pub from: u32,
    /// The session whose work earned it (`None` for XP given outside any session).
    pub session: Option<String>,
}

/// What the `xp` actions of one call changed in the profile, short of the profile itself:
/// [`Change::update`] makes what the window is told. A caller with no window (a headless run
/// handles hundreds of thousands of events a second) never copies the profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    pub level_up: Option<LevelUp>,
    /// Ids of the unlocks earned, by level.
    pub unlocked: Vec<String>,
}

impl Change {
    /// What to tell the window: `profile` (after the change) and what the change brought.
    pub fn update(self, profile: &Profile) -> ProgressUpdate {
        ProgressUpdate {
            profile: profile.clone(),
            level_up: self.level_up,
            unlocked: self.unlocked,
        }
    }
}

/// Adds the `xp` actions among `actions` to `profile`, in order. Returns what changed (`None`
/// when the profile did not), and what each level reached calls for, to carry out after
/// `actions`: "Level N!" said and the `level_up` sound, on the session that earned it.
pub fn gain(profile: &mut Profile, actions: &[Action]) -> (Option<Change>, Vec<Action>) {
    if !actions
        .iter()
        .any(|a| matches!(a.kind, ActionKind::Xp { .. }))
    {
        return (None, Vec::new());
    }
    // Unlocks are never taken back, so the profile changed when its XP did or one was earned.
    let xp_before = profile.xp;
    let mut change = Change::default();
    let mut said = Vec::new();
    for action in actions {
        let ActionKind::Xp { amount } = action.kind else {
            continue;
        };
        let gain = profile.add(amount);
        change
            .unlocked
            .extend(gain.unlocked.iter().map(|u| u.id.to_owned()));
        if let Some(from) = gain.level_up_from {
            change.level_up = Some(LevelUp {
                from: change
                    .level_up
                    .as_ref()
                    .map_or(from, |earlier| earlier.from),
                session: action.session.clone(),
            });
            let like = |kind| Action {
                kind,
                script: PROGRESSION.to_owned(),
                ..action.clone()
            };
            said.push(like(ActionKind::Say {
                text: format!("Level {}!", profile.level()),
            }));
            said.push(like(ActionKind::Sound {
                name: "level_up".to_owned(),
            }));
        }
    }
    let changed = profile.xp != xp_before || !change.unlocked.is_empty();
    (changed.then_some(change), said)
}

/// [`gain`], with what to tell the window when the profile changed.
pub fn earn(profile: &mut Profile, actions: &[Action]) -> (Option<ProgressUpdate>, Vec<Action>) {
    let (change, said) = gain(profile, actions);
    (change.map(|change| change.update(profile)), said)
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_windows_gains_add_up_and_unlocks_join() {
        let base = super::Profile::default();
        let mut one = base.clone();
        one.add(30);
        let mut two = base.clone();
        two.add(30);
        // The first saves over nothing; the second merges into the first's save.
        let saved = one.merged(&base, None);
        let merged = two.merged(&base, Some(saved.clone()));
        assert_eq!(merged.xp, 60);
        assert_eq!(merged.level(), super::level_for(60));
        assert!(merged.unlocks.is_superset(&saved.unlocks));
        // Nothing gained since: the file stays as it is.
        assert_eq!(merged.merged(&merged, Some(merged.clone())), merged);
    }

    use super::*;
    use crate::EventKind;

    fn xp(session: &str, amount: i64) -> Action {
        Action {
            kind: ActionKind::Xp { amount },
            script: "default.rhai".to_owned(),
            session: Some(session.to_owned()),
            agent: None,
            line: 7,
            event: EventKind::Bash,
        }
    }

    #[test]
    fn a_level_reached_is_said_once_on_the_session_that_earned_it() {
        let mut profile = Profile::default();
        let (update, said) = earn(&mut profile, &[xp("a", 4)]);
        assert!(said.is_empty(), "no level yet");
        assert_eq!(update.map(|u| (u.profile.xp, u.level_up)), Some((4, None)));

        let (update, said) = earn(&mut profile, &[xp("b", 6), xp("b", 1)]);
        let said: Vec<_> = said
            .iter()
            .map(|a| {
                (
                    a.kind.clone(),
                    a.script.as_str(),
                    a.session.as_deref(),
                    a.line,
                )
            })
            .collect();
        let say = ActionKind::Say {
            text: "Level 2!".to_owned(),
        };
        let sound = ActionKind::Sound {
            name: "level_up".to_owned(),
        };
        assert_eq!(
            said,
            [
                (say, PROGRESSION, Some("b"), 7),
                (sound, PROGRESSION, Some("b"), 7)
            ]
        );
        let update = update.expect("changed");
        assert_eq!(update.profile.xp, 11);
        assert_eq!(
            update.level_up,
            Some(LevelUp {
                from: 1,
                session: Some("b".to_owned())
            })
        );
        assert_eq!(update.unlocked, ["hat.pointed"]);
        // Nothing about XP: nothing to tell.
        let rest = Action {
            kind: ActionKind::Rest,
            ..xp("a", 0)
        };
        assert_eq!(earn(&mut profile, &[rest]), (None, Vec::new()));
        // XP that changes nothing (none below zero): nothing to tell either.
        let mut empty = Profile::default();
        assert_eq!(earn(&mut empty, &[xp("a", -5)]), (None, Vec::new()));
    }

    #[test]
    fn a_change_is_told_when_the_xp_or_the_unlocks_moved_and_only_then() {
        // Up and down again: the same profile, nothing to tell.
        let mut profile = Profile::default();
        assert_eq!(
            gain(&mut profile, &[xp("a", 5), xp("a", -5)]),
            (None, Vec::new())
        );
        // Up a level and down again: the XP is back, but the unlock earned stays, and is told.
        let (change, said) = gain(&mut profile, &[xp("a", 10), xp("a", -10)]);
        assert_eq!(profile.xp, 0);
        assert_eq!(said.len(), 2, "Level 2! and its sound");
        let change = change.expect("an unlock was earned");
        assert_eq!(change.unlocked, ["hat.pointed"]);
        // What the window is told is the profile after the change.
        let update = change.update(&profile);
        assert_eq!(
            (update.profile, update.unlocked),
            (profile.clone(), vec!["hat.pointed".to_owned()])
        );
        // Earned again, an unlock already held is not told twice.
        let (change, _) = gain(&mut profile, &[xp("a", 10)]);
        assert_eq!(change.map(|c| c.unlocked), Some(Vec::new()));
    }

    #[test]
    fn two_levels_in_one_call_are_both_said_and_the_update_starts_from_the_first() {
        let mut profile = Profile::default();
        let (update, said) = earn(&mut profile, &[xp("a", 10), xp("a", 70)]);
        let texts: Vec<_> = said
            .iter()
            .filter_map(|a| match &a.kind {
                ActionKind::Say { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["Level 2!", "Level 3!"]);
        assert_eq!(update.and_then(|u| u.level_up).map(|l| l.from), Some(1));
    }

    #[test]
    fn the_curve_starts_quick_and_grows() {
        assert_eq!(
            (1..=6).map(xp_for_level).collect::<Vec<_>>(),
            [0, 10, 80, 270, 640, 1250]
        );
        assert_eq!(level_for(0), 1);
        assert_eq!(level_for(9), 1);
        assert_eq!(level_for(10), 2);
        assert_eq!(level_for(79), 2);
        assert_eq!(level_for(80), 3);
        assert_eq!(level_for(i64::MAX), MAX_LEVEL);
        assert_eq!(level_for(-5), 1);
        for level in 1..MAX_LEVEL {
            assert!(xp_for_level(level + 1) > xp_for_level(level));
            assert_eq!(level_for(xp_for_level(level)), level);
        }
    }

    #[test]
    fn levels_earn_their_unlocks_once() {
        let mut p = Profile::default();
        assert_eq!(p.add(5), Gain::default());
        let gain = p.add(5);
        assert_eq!(gain.level_up_from, Some(1));
        assert_eq!(
            gain.unlocked.iter().map(|u| u.id).collect::<Vec<_>>(),
            ["hat.pointed"]
        );
        assert_eq!(p.best(UnlockKind::Hat).map(|u| u.name), Some("pointed hat"));
        // A big jump earns every unlock on the way.
        let gain = p.add(10_000);
        assert_eq!(gain.level_up_from, Some(2));
        assert_eq!(
            gain.unlocked.iter().map(|u| u.id).collect::<Vec<_>>(),
            [
                "accessory.scarf",
                "scene.bookshelf",
                "scene.night",
                "hat.beanie",
                "accessory.specs",
                "scene.fireflies",
                "hat.crown"
            ]
        );
        assert_eq!(p.level(), 11);
        assert_eq!(p.best(UnlockKind::Hat).map(|u| u.id), Some("hat.crown"));
        assert_eq!(
            p.best(UnlockKind::Scene).map(|u| u.id),
            Some("scene.fireflies")
        );
        // Losing XP lowers the level but keeps what was earned.
        let gain = p.add(-1_000_000);
        assert_eq!((p.xp, p.level()), (0, 1));
        assert_eq!(gain, Gain::default());
        assert_eq!(p.unlocked().count(), 8);
    }

    #[test]
    fn unknown_unlocks_from_a_later_version_are_kept() {
        let mut p = Profile::default();
        p.unlocks.insert("hat.from-the-future".to_owned());
        p.add(10);
        assert!(p.unlocks.contains("hat.from-the-future"));
        assert_eq!(p.unlocked().count(), 1);
    }

    #[test]
    fn a_profile_missing_its_levels_unlocks_earns_them_by_add_0_or_the_next_level() {
        // As an older version saved it: level 4, but none of the unlocks this one has there.
        let mut p = Profile {
            xp: xp_for_level(4),
            ..Profile::default()
        };
        assert_eq!(p.add(1), Gain::default(), "XP within a level earns nothing");
        let gain = p.add(0);
        assert_eq!(
            gain.unlocked.iter().map(|u| u.id).collect::<Vec<_>>(),
            ["hat.pointed", "accessory.scarf", "scene.bookshelf"]
        );
        assert_eq!(p.add(0), Gain::default(), "once");
        let mut q = Profile {
            xp: xp_for_level(4),
            ..Profile::default()
        };
        let gain = q.add(xp_for_level(5) - q.xp);
        assert_eq!(gain.level_up_from, Some(4));
        assert_eq!(
            gain.unlocked.len(),
            4,
            "every level's, up to the one reached"
        );
    }

    #[test]
    fn fraction_is_progress_within_the_level() {
        let p = Profile {
            xp: 45,
            ..Profile::default()
        };
        assert_eq!(p.level(), 2);
        assert!((p.fraction() - 0.5).abs() < 1e-6);
    }

    #[test]
    fn unlock_ids_are_unique_and_levels_in_order() {
        for (i, u) in UNLOCKS.iter().enumerate() {
            assert_eq!(unlock(u.id), Some(u));
            assert!(UNLOCKS[..i].iter().all(|v| v.id != u.id));
            assert!(UNLOCKS[..i].iter().all(|v| v.level <= u.level));
            assert!(u.level >= 2);
        }
    }
}
