//! The sun or the moon, as its own sprite over the backdrop (`sheet::WORLD_SUN`,
//! `sheet::WORLD_MOON`), where the layout finds free sky (`Layout::sky_body_rect`: no text
//! over it, above the hills), in the light of the backdrop `backdrop::draw_sky` chose: the moon
//! at night, the sun by day, reddened at dawn and dusk. The decor and clouds stand in front. Part of
//! `view`; it reads the backdrop's phase from the backdrop sprite rather than the clock again.

use bevy::prelude::*;

use super::backdrop::WorldArt;
use super::layout::SKY_BODY_SCALE;
use super::{Background, canvas_size, row};
use crate::ambience::Phase;
use crate::logic::Familiar;
use crate::sheet::{WORLD_MOON, WORLD_SUN};

/// The sun or the moon.
#[derive(Component)]
pub(crate) struct SkyBody;

/// Over the backdrop (-100), behind the scene decor (-99 and up: a bookshelf stands in front
/// of the moon) and the clouds (-90 and up).
const Z: f32 = -99.5;

#[allow(clippy::type_complexity)]
pub(super) fn draw_sky_body(
    mut commands: Commands,
    art: Option<Res<WorldArt>>,
    familiars: Query<(Entity, &Familiar)>,
    background: Query<&Sprite, (With<Background>, Without<SkyBody>)>,
    mut body: Query<(&mut Sprite, &mut Transform, &mut Visibility), With<SkyBody>>,
    mut placed: Local<Option<(usize, Option<Rect>)>>,
) {
    let Some(art) = art else {
        return;
    };
    let Ok(backdrop) = background.single() else {
        return;
    };
    let Some(phase) = backdrop
        .texture_atlas
        .as_ref()
        .and_then(|a| Phase::ALL.get(a.index).copied())
    else {
        return;
    };
    let Ok((mut sprite, mut tr, mut vis)) = body.single_mut() else {
        commands.spawn((
            Sprite::from_atlas_image(
                art.world.clone(),
                TextureAtlas {
                    layout: art.world_layout.clone(),
                    index: WORLD_MOON,
                },
            ),
            Transform::from_xyz(0.0, 0.0, Z),
            Visibility::Hidden,
            SkyBody,
        ));
        return;
    };
    // The search for free sky runs when the number of familiars changes, not every frame.
    let count = familiars.iter().count();
    let rect = match *placed {
        Some((n, rect)) if n == count => rect,
        _ => {
            let (_, l) = row(&familiars);
            let rect = l.sky_body_rect();
            *placed = Some((count, rect));
            rect
        }
    };
    let Some(rect) = rect else {
        if *vis != Visibility::Hidden {
            *vis = Visibility::Hidden;
        }
        return;
    };
    let size = canvas_size();
    let c = rect.center();
    let at = Vec3::new(
        (c.x - size.x / 2.0).round(),
        (size.y / 2.0 - c.y).round(),
        Z,
    );
    if tr.translation != at {
        tr.translation = at;
        tr.scale = Vec3::splat(SKY_BODY_SCALE);
    }
    if *vis != Visibility::Inherited {
        *vis = Visibility::Inherited;
    }
    let (index, tint) = match phase {
        Phase::Night => (WORLD_MOON, [1.0, 1.0, 1.0]),
        Phase::Dawn => (WORLD_SUN, [1.0, 0.78, 0.55]),
        Phase::Day => (WORLD_SUN, [1.0, 1.0, 1.0]),
        Phase::Dusk => (WORLD_SUN, [1.0, 0.55, 0.4]),
    };
    if let Some(atlas) = sprite.texture_atlas.as_mut()
        && atlas.index != index
    {
        atlas.index = index;
    }
    // In the light of the backdrop: a stormy sky dims the sun too.
    let light = backdrop.color.to_srgba();
    let color = Color::srgb(
        tint[0] * light.red,
        tint[1] * light.green,
        tint[2] * light.blue,
    );
    if sprite.color != color {
        sprite.color = color;
    }
}
