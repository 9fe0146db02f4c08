//! The scene of the work going on (`logic::SceneOfWork`): the far hills dressed as a library
//! while the agents read or write, as a forge while they run commands (`scenes.png`, one
//! backdrop-sized overlay per scene), over the backdrop wherever `draw` places it, behind the
//! sun or moon, the decor and everything else. Part of `view`.

use bevy::prelude::*;

use super::Background;
use crate::ambience::WorkScene;
use crate::assets;
use crate::logic::SceneOfWork;
use crate::sheet::SKY_SIZE;

/// The overlay of the scene.
#[derive(Component)]
pub(crate) struct SceneOverlay;

/// Over the backdrop (-100), behind the sun or moon (-99.5) and the decor (-99 and up).
const Z: f32 = -99.9;

#[allow(clippy::type_complexity)]
pub(super) fn draw_scene(
    mut commands: Commands,
    scene: Res<SceneOfWork>,
    mut images: ResMut<Assets<Image>>,
    mut layouts: ResMut<Assets<TextureAtlasLayout>>,
    background: Query<(&Sprite, &Transform), (With<Background>, Without<SceneOverlay>)>,
    mut overlay: Query<(&mut Sprite, &mut Transform, &mut Visibility), With<SceneOverlay>>,
) {
    let Ok((mut sprite, mut tr, mut vis)) = overlay.single_mut() else {
        let [w, h] = SKY_SIZE;
        let image = images.add(assets::image(assets::SCENES_PNG, "scenes.png"));
        let layout = layouts.add(TextureAtlasLayout::from_grid(
            UVec2::new(w, h),
            1,
            WorkScene::OVERLAID.len() as u32,
            None,
            None,
        ));
        commands.spawn((
            Sprite::from_atlas_image(image, TextureAtlas { layout, index: 0 }),
            Transform::from_xyz(0.0, 0.0, Z),
            Visibility::Hidden,
            SceneOverlay,
        ));
        return;
    };
    let (Some(row), Ok((bg_sprite, bg))) = (scene.0.row(), background.single()) else {
        if *vis != Visibility::Hidden {
            *vis = Visibility::Hidden;
        }
        return;
    };
    if let Some(atlas) = sprite.texture_atlas.as_mut()
        && atlas.index != row
    {
        atlas.index = row;
    }
    if sprite.custom_size != bg_sprite.custom_size {
        sprite.custom_size = bg_sprite.custom_size;
    }
    let at = bg.translation.with_z(Z);
    if tr.translation != at {
        tr.translation = at;
    }
    // In the light of the backdrop (the hour and the weather).
    if sprite.color != bg_sprite.color {
        sprite.color = bg_sprite.color;
    }
    if *vis != Visibility::Inherited {
        *vis = Visibility::Inherited;
    }
}
