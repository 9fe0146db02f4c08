//! The user's progression as the window shows it. The profile itself (XP, the level it
//! gives, the unlocks) is `familiar_model::progression`, owned by the pipeline's `Stage`, which
//! sends it whole whenever it changes ([`crate::GameFeed::Progress`]); the window keeps the
//! latest as the [`UserProfile`] resource and never counts XP itself. `wardrobe` says what the
//! unlocks put on screen (the hat and accessory worn, the scene decor).

pub mod wardrobe;

use bevy::prelude::Resource;

pub use familiar_model::progression::*;

/// The user's profile as the pipeline last sent it.
#[derive(Resource, Debug, Clone, Default, PartialEq, Eq)]
pub struct UserProfile(pub Profile);

impl std::ops::Deref for UserProfile {
    type Target = Profile;

    fn deref(&self) -> &Profile {
        &self.0
    }
}
