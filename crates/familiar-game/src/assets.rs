//! The pixel art, embedded in the binary so `familiar` works from any directory (Bevy would
//! otherwise look for `assets/` beside the executable). The PNGs are written by the
//! `gen-sprites` tool (`crates/familiar-game-tools/src/bin/gen-sprites/`); its tests check they
//! are up to date.

use bevy::asset::RenderAssetUsages;
use bevy::image::{CompressedImageFormats, ImageSampler, ImageType};
use bevy::prelude::*;

pub const FAMILIAR_PNG: &[u8] = include_bytes!("../../../assets/familiar.png");
pub const COMPANION_PNG: &[u8] = include_bytes!("../../../assets/companion.png");
pub const ICONS_PNG: &[u8] = include_bytes!("../../../assets/icons.png");
pub const BACKGROUND_PNG: &[u8] = include_bytes!("../../../assets/background.png");
pub const WEARABLES_PNG: &[u8] = include_bytes!("../../../assets/wearables.png");
pub const DECOR_PNG: &[u8] = include_bytes!("../../../assets/decor.png");
pub const COMPANION_HATS_PNG: &[u8] = include_bytes!("../../../assets/companion-hats.png");
pub const WORLD_PNG: &[u8] = include_bytes!("../../../assets/world.png");
pub const SKY_PNG: &[u8] = include_bytes!("../../../assets/sky.png");
pub const SCENES_PNG: &[u8] = include_bytes!("../../../assets/scenes.png");

/// Decodes an embedded PNG into a nearest-filtered image (crisp pixels when scaled up).
pub fn image(bytes: &[u8], name: &str) -> Image {
    match Image::from_buffer(
        bytes,
        ImageType::Extension("png"),
        CompressedImageFormats::NONE,
        true,
        ImageSampler::nearest(),
        RenderAssetUsages::RENDER_WORLD,
    ) {
        Ok(image) => image,
        Err(e) => {
            // Only possible if the committed PNG is corrupt; show a magenta square instead of
            // taking the whole game down.
            tracing::error!("embedded asset {name} does not decode: {e}");
            Image::default()
        }
    }
}
