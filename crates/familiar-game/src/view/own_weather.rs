//! A session's own weather while several share the window: the sky stays clear
//! (`logic::WorldWeather` is the one session's only while it is alone), and a session whose
//! errors clouded its weather gets a cloud of its own over its familiar, dark and raining once
//! the gloom reaches `crate::ambience::RAIN_GLOOM`, until its success or time clears it. So
//! the user sees which session failed (issue 27: the whole sky rained for one). Part of `view`.

use bevy::prelude::*;

use super::PixelScale;
use super::backdrop::{WorldArt, world_sprite};
use crate::ambience::RAIN_GLOOM;
use crate::logic::Effects;
use crate::sheet::{WORLD_CLOUD, WORLD_RAIN_CLOUD};

/// The cloud over one familiar.
#[derive(Component)]
pub(crate) struct OwnCloud;

/// One drop of its rain.
#[derive(Component)]
pub(crate) struct OwnDrop(usize);

const DROPS: usize = 12;

/// Gives each familiar that arrives its cloud and drops (hidden until needed).
pub(super) fn attach_own_weather(
    mut commands: Commands,
    art: Option<Res<WorldArt>>,
    added: Query<Entity, Added<Effects>>,
) {
    let Some(art) = art else {
        return;
    };
    for e in &added {
        let cloud = commands
            .spawn((
                world_sprite(&art, WORLD_CLOUD),
                Transform::default(),
                Visibility::Hidden,
                OwnCloud,
            ))
            .id();
        commands.entity(e).add_child(cloud);
        for i in 0..DROPS {
            let drop = commands
                .spawn((
                    Sprite::from_color(Color::srgba(0.6, 0.75, 1.0, 0.9), Vec2::ONE),
                    Transform::default(),
                    Visibility::Hidden,
                    OwnDrop(i),
                ))
                .id();
            commands.entity(e).add_child(drop);
        }
    }
}

#[allow(clippy::type_complexity)]
pub(super) fn draw_own_weather(
    time: Res<Time>,
    scale: Res<PixelScale>,
    familiars: Query<(&Effects, &Children)>,
    mut clouds: Query<(&mut Sprite, &mut Transform, &mut Visibility), With<OwnCloud>>,
    mut drops: Query<(&OwnDrop, &mut Transform, &mut Visibility), Without<OwnCloud>>,
) {
    let s = scale.0;
    let several = familiars.iter().count() > 1;
    let t = time.elapsed_secs();
    for (fx, children) in &familiars {
        let gloom = fx.weather.gloom;
        let cloudy = several && gloom > 0.0;
        let rain = cloudy && gloom >= RAIN_GLOOM;
        for child in children.iter() {
            if let Ok((mut sprite, mut tr, mut vis)) = clouds.get_mut(child) {
                let shown = if cloudy {
                    Visibility::Inherited
                } else {
                    Visibility::Hidden
                };
                if *vis != shown {
                    *vis = shown;
                }
                if !cloudy {
                    continue;
                }
                let index = if rain { WORLD_RAIN_CLOUD } else { WORLD_CLOUD };
                if let Some(atlas) = sprite.texture_atlas.as_mut()
                    && atlas.index != index
                {
                    atlas.index = index;
                }
                // Over the head (the familiar's frame is 48 pixels, its head ~20 above its
                // centre; the cloud's art spans rows 9 to 22 of its 32), drifting a little.
                let drift = (t * 0.8).sin() * 2.0;
                tr.translation = Vec3::new(drift * s, 31.0 * s, 0.4);
                tr.scale = Vec3::splat(s);
            } else if let Ok((drop, mut tr, mut vis)) = drops.get_mut(child) {
                let shown = if rain {
                    Visibility::Inherited
                } else {
                    Visibility::Hidden
                };
                if *vis != shown {
                    *vis = shown;
                }
                if !rain {
                    continue;
                }
                // From under the cloud to the ground beside the feet, behind the familiar.
                let (top, fall) = (24.0, 46.0);
                let phase = drop.0 as f32 / DROPS as f32;
                let y = top - ((phase * 7.0 + t * 1.6) * fall).rem_euclid(fall);
                let x = (phase - 0.5) * 26.0 + if drop.0 % 2 == 0 { 1.5 } else { -1.5 };
                tr.translation = Vec3::new(x * s, y * s, -0.4);
                tr.scale = Vec3::new(s.min(2.0), 3.0 * s, 1.0);
            }
        }
    }
}
