//! What the unlocks look like on screen, as plain data: the hat and accessory a familiar wears
//! and the scene decor shown ([`Wardrobe::of`], a pure function of the [`Profile`]), and the
//! layouts of the two sheets that draw them. `gen-sprites` draws `wearables.png` by
//! [`WEARABLES`] (one block per wearable, frame-aligned with the familiar's sheet
//! [`crate::sheet::SHEET`], so a layer shows the same atlas index as the familiar under it)
//! and `decor.png` by [`DECOR`] (one row of backdrop-sized layers per decor); `view::wardrobe`
//! shows them.

use super::{Profile, Unlock, UnlockKind};
use crate::sheet::SHEET;

/// The wearables' sheet, block by block: ids of hat and accessory unlocks.
pub const WEARABLES: &[&str] = &[
    "hat.pointed",
    "hat.beanie",
    "hat.crown",
    "hat.archmage",
    "accessory.scarf",
    "accessory.specs",
    "accessory.cape",
];

/// Frames in one wearable's block: the familiar's whole sheet.
pub fn frames_per_wearable() -> usize {
    SHEET.columns as usize * SHEET.rows.len()
}

/// Rows of the wearables' sheet: [`WEARABLES`] blocks stacked, each laid out like [`SHEET`]
/// (same frame size and columns).
pub fn wearables_rows() -> u32 {
    SHEET.rows.len() as u32 * WEARABLES.len() as u32
}

/// Atlas index, in the wearables' sheet, of wearable `id` over the familiar's atlas index
/// `familiar_index`.
pub fn wearable_index(id: &str, familiar_index: usize) -> Option<usize> {
    let block = WEARABLES.iter().position(|w| *w == id)?;
    Some(block * frames_per_wearable() + familiar_index)
}

/// A companion's tiny hat: one frame per hat of [`WEARABLES`], left to right, in
/// `companion-hats.png`; it sits with its bottom on the wisp's head.
pub const COMPANION_HAT: (u32, u32) = (12, 10);

/// The hats of [`WEARABLES`], in their order in `companion-hats.png`.
pub fn companion_hats() -> impl Iterator<Item = &'static str> {
    WEARABLES
        .iter()
        .copied()
        .filter(|id| id.starts_with("hat."))
}

/// Frame of hat `id` in `companion-hats.png`.
pub fn companion_hat_index(id: &str) -> Option<usize> {
    companion_hats().position(|h| h == id)
}

/// Where the head of the companion wisp is in frame `frame` of row `row` of
/// [`crate::sheet::COMPANION_SHEET`]: the row (from the frame's top) the tiny hat's bottom
/// sits on; `None` while it appears (row 2), too small for a hat. The wisp bobs by a pixel
/// or two: `gen-sprites` checks these against the sheet it draws.
pub fn companion_head(row: usize, frame: usize) -> Option<i32> {
    const BOB: [i32; 4] = [0, -1, -2, -1];
    match row {
        0 => Some(11 + BOB[frame % 4]),
        1 => Some(11 + BOB[(frame + 1) % 4]),
        _ => None,
    }
}

/// A decor layer: as big as the backdrop, transparent but for the decor, drawn over it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decor {
    /// The scene unlock that shows it.
    pub id: &'static str,
    /// Its animation (1 frame: still).
    pub frames: u32,
    pub fps: f32,
    /// A prop that stands in one place (a bookshelf, a banner), kept off the familiars and
    /// the text by the layout; otherwise something of the air that passes everywhere (the
    /// fireflies).
    pub prop: bool,
    /// The prop it stands on (the owl perches on the bookshelf): not shown without it.
    pub on: Option<&'static str>,
}

/// The backdrop's size in pixels, and so every decor layer's.
pub const DECOR_SIZE: (u32, u32) = (160, 100);

/// The decor's sheet: one row per decor, its frames left to right.
pub const DECOR: &[Decor] = &[
    Decor {
        id: "scene.bookshelf",
        frames: 1,
        fps: 1.0,
        prop: true,
        on: None,
    },
    Decor {
        id: "scene.night",
        frames: 2,
        fps: 1.5,
        prop: true,
        on: None,
    },
    Decor {
        id: "scene.fireflies",
        frames: 4,
        fps: 3.0,
        prop: false,
        on: None,
    },
    Decor {
        id: "scene.banner",
        frames: 2,
        fps: 2.0,
        prop: true,
        on: None,
    },
    Decor {
        id: "scene.crystal",
        frames: 4,
        fps: 4.0,
        prop: true,
        on: None,
    },
    Decor {
        id: "scene.owl",
        frames: 2,
        fps: 0.5,
        prop: true,
        on: Some("scene.bookshelf"),
    },
];

/// Columns of the decor's sheet: the longest animation.
pub fn decor_columns() -> u32 {
    DECOR.iter().map(|d| d.frames).max().unwrap_or(1)
}

/// Size of the decor sheet (its frames are not square, unlike a [`crate::sheet::SheetLayout`]).
pub fn decor_sheet_size() -> (u32, u32) {
    (
        DECOR_SIZE.0 * decor_columns(),
        DECOR_SIZE.1 * DECOR.len() as u32,
    )
}

/// What a user's familiars wear and what their scene shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Wardrobe {
    /// The best hat earned (the highest-level one).
    pub hat: Option<&'static Unlock>,
    /// The best accessory earned.
    pub accessory: Option<&'static Unlock>,
    /// Every scene decor earned, by level.
    pub decor: Vec<&'static Decor>,
}

impl Wardrobe {
    /// The wardrobe of `profile`: its best hat and accessory, and all its decor. Ids this
    /// version does not know are skipped (kept in the profile all the same).
    pub fn of(profile: &Profile) -> Wardrobe {
        Wardrobe {
            hat: profile.best(UnlockKind::Hat),
            accessory: profile.best(UnlockKind::Accessory),
            decor: profile
                .unlocked()
                .filter_map(|u| DECOR.iter().find(|d| d.id == u.id))
                .collect(),
        }
    }

    /// The worn wearables' ids: hat first, so the accessory layers over it.
    pub fn worn(&self) -> impl Iterator<Item = &'static str> + '_ {
        [self.hat, self.accessory]
            .into_iter()
            .flatten()
            .map(|u| u.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progression::{UNLOCKS, unlock, xp_for_level};

    fn at_level(level: u32) -> Profile {
        let mut p = Profile::default();
        p.add(xp_for_level(level));
        p
    }

    fn ids(w: &Wardrobe) -> (Option<&str>, Option<&str>, Vec<&str>) {
        (
            w.hat.map(|u| u.id),
            w.accessory.map(|u| u.id),
            w.decor.iter().map(|d| d.id).collect(),
        )
    }

    #[test]
    fn a_new_user_wears_nothing() {
        assert_eq!(Wardrobe::of(&Profile::default()), Wardrobe::default());
        assert_eq!(Wardrobe::of(&at_level(1)).worn().count(), 0);
    }

    #[test]
    fn the_best_hat_and_accessory_earned_are_worn() {
        assert_eq!(
            ids(&Wardrobe::of(&at_level(2))),
            (Some("hat.pointed"), None, vec![])
        );
        assert_eq!(
            ids(&Wardrobe::of(&at_level(5))),
            (
                Some("hat.pointed"),
                Some("accessory.scarf"),
                vec!["scene.bookshelf", "scene.night"]
            )
        );
        let top = Wardrobe::of(&at_level(20));
        assert_eq!(top.hat.map(|u| u.id), Some("hat.archmage"));
        assert_eq!(top.accessory.map(|u| u.id), Some("accessory.cape"));
        assert_eq!(top.decor.len(), DECOR.len());
        assert_eq!(
            top.worn().collect::<Vec<_>>(),
            ["hat.archmage", "accessory.cape"]
        );
    }

    #[test]
    fn losing_xp_keeps_the_wardrobe() {
        let mut p = at_level(10);
        let before = Wardrobe::of(&p);
        p.add(-1_000_000);
        assert_eq!(p.level(), 1);
        assert_eq!(Wardrobe::of(&p), before);
    }

    #[test]
    fn unknown_ids_are_kept_but_not_drawn() {
        let mut p = at_level(3);
        p.unlocks.insert("hat.from-a-later-version".to_owned());
        p.unlocks.insert("scene.from-a-later-version".to_owned());
        let w = Wardrobe::of(&p);
        assert_eq!(
            ids(&w),
            (Some("hat.pointed"), Some("accessory.scarf"), vec![])
        );
        assert!(p.unlocks.contains("hat.from-a-later-version"));
    }

    #[test]
    fn every_unlock_is_drawn_once_and_only_unlocks_are_drawn() {
        for u in UNLOCKS {
            let wearable = WEARABLES.iter().filter(|w| **w == u.id).count();
            let decor = DECOR.iter().filter(|d| d.id == u.id).count();
            match u.kind {
                UnlockKind::Hat | UnlockKind::Accessory => assert_eq!((wearable, decor), (1, 0)),
                UnlockKind::Scene => assert_eq!((wearable, decor), (0, 1)),
            }
        }
        for id in WEARABLES.iter().copied().chain(DECOR.iter().map(|d| d.id)) {
            assert!(unlock(id).is_some(), "{id} is no unlock");
        }
        for d in DECOR {
            assert!(d.frames >= 1 && d.frames <= decor_columns() && d.fps > 0.0);
        }
    }

    #[test]
    fn companions_have_a_tiny_version_of_every_hat() {
        let hats: Vec<_> = UNLOCKS
            .iter()
            .filter(|u| u.kind == UnlockKind::Hat)
            .map(|u| companion_hat_index(u.id))
            .collect();
        assert!(hats.iter().all(Option::is_some));
        assert_eq!(companion_hat_index("accessory.scarf"), None);
        assert_eq!(companion_hats().count(), hats.len());
        assert_eq!(companion_head(2, 3), None);
        assert!(companion_head(0, 2) < companion_head(0, 0));
    }

    #[test]
    fn wearable_blocks_follow_the_familiar_sheet() {
        let per = frames_per_wearable();
        assert_eq!(wearable_index("hat.pointed", 0), Some(0));
        assert_eq!(wearable_index("hat.beanie", 7), Some(per + 7));
        assert_eq!(wearable_index("hat.unknown", 0), None);
        assert_eq!(
            wearables_rows() as usize * SHEET.columns as usize,
            per * WEARABLES.len()
        );
    }
}
