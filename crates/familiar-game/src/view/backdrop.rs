//! The world around the familiars: the backdrop of the local time of day (dawn, day, dusk,
//! night) lit by the weather, clouds and rain that errors bring, the light of a success, and
//! the campfire beside a resting or sleeping familiar. The look is `crate::ambience::sky` of the
//! local hour (wall clock, read here: presentation, not session state) and of
//! `logic::WorldWeather`.

use bevy::prelude::*;

use super::{Background, PixelScale, canvas_size, row};
use crate::ambience::{MAX_CLOUDS, SUNSHINE_SECS, sky};
use crate::anim::Anim;
use crate::assets;
use crate::clock::LocalClock;
use crate::logic::{Animation, Effects, Familiar, WorldWeather};
use crate::sheet::{SKY_PHASES, SKY_SIZE, WORLD, WORLD_CLOUD, WORLD_RAIN_CLOUD};

#[derive(Resource, Clone)]
pub(crate) struct WorldArt {
    pub(super) world: Handle<Image>,
    pub(super) world_layout: Handle<TextureAtlasLayout>,
    sky: Handle<Image>,
    sky_layout: Handle<TextureAtlasLayout>,
}

#[derive(Component)]
pub(crate) struct Cloud(usize);

#[derive(Component)]
pub(crate) struct RainDrop(usize);

#[derive(Component)]
pub(crate) struct Sunshine;

#[derive(Component)]
pub(crate) struct Campfire;

const RAIN_DROPS: usize = 48;

pub(super) fn setup_world(
    mut commands: Commands,
    mut images: ResMut<Assets<Image>>,
    mut layouts: ResMut<Assets<TextureAtlasLayout>>,
) {
    let art = WorldArt {
        world: images.add(assets::image(assets::WORLD_PNG, "world.png")),
        world_layout: layouts.add(TextureAtlasLayout::from_grid(
            UVec2::splat(WORLD.frame),
            WORLD.columns,
            WORLD.rows.len() as u32,
            None,
            None,
        )),
        sky: images.add(assets::image(assets::SKY_PNG, "sky.png")),
        sky_layout: layouts.add(TextureAtlasLayout::from_grid(
            UVec2::new(SKY_SIZE[0], SKY_SIZE[1]),
            1,
            SKY_PHASES,
            None,
            None,
        )),
    };
    for i in 0..MAX_CLOUDS {
        commands.spawn((
            world_sprite(&art, WORLD_CLOUD),
            Transform::from_xyz(0.0, 0.0, -90.0 + i as f32 * 0.1),
            Visibility::Hidden,
            Cloud(i),
        ));
    }
    for i in 0..RAIN_DROPS {
        commands.spawn((
            Sprite::from_color(Color::srgba(0.6, 0.75, 1.0, 0.7), Vec2::ONE),
            Transform::from_xyz(0.0, 0.0, -80.0),
            Visibility::Hidden,
            RainDrop(i),
        ));
    }
    commands.spawn((
        Sprite::from_color(Color::srgba(1.0, 0.9, 0.5, 0.0), Vec2::ONE),
        Transform::from_xyz(0.0, 0.0, -85.0),
        Visibility::Hidden,
        Sunshine,
    ));
    commands.insert_resource(art);
}

/// Local hour of the day, fractional (UTC when the time zone is unknown), from the
/// [`LocalClock`] (a scene fixes it). `FAMILIAR_HOUR` (0..24) overrides the system's clock, to
/// look at every phase.
fn local_hour(clock: &LocalClock) -> f32 {
    if clock.fixed.is_some() {
        return clock.now().hours();
    }
    if let Some(h) = std::env::var("FAMILIAR_HOUR")
        .ok()
        .and_then(|v| v.trim().parse::<f32>().ok())
        .filter(|h| (0.0..24.0).contains(h))
    {
        return h;
    }
    clock.now().hours()
}

/// Deterministic scatter for rain and clouds.
fn scatter(i: usize, k: u32) -> f32 {
    let mut x = (i as u32).wrapping_mul(0x9E37_79B9) ^ k.wrapping_mul(0x85EB_CA6B);
    x ^= x >> 13;
    x = x.wrapping_mul(0xC2B2_AE35);
    x ^= x >> 16;
    (x & 0xFFFF) as f32 / 65_536.0
}

#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(super) fn draw_sky(
    time: Res<Time>,
    art: Option<Res<WorldArt>>,
    weather: Res<WorldWeather>,
    clock: Res<LocalClock>,
    familiars: Query<(Entity, &Familiar)>,
    mut hour: Local<Option<(f32, f32)>>,
    mut background: Query<&mut Sprite, (With<Background>, Without<Cloud>, Without<RainDrop>)>,
    mut clouds: Query<
        (&Cloud, &mut Sprite, &mut Transform, &mut Visibility),
        (Without<Background>, Without<RainDrop>),
    >,
    mut drops: Query<
        (&RainDrop, &mut Transform, &mut Visibility),
        (Without<Cloud>, Without<Sunshine>),
    >,
    mut sun: Query<
        (&mut Sprite, &mut Transform, &mut Visibility),
        (
            With<Sunshine>,
            Without<Background>,
            Without<Cloud>,
            Without<RainDrop>,
        ),
    >,
) {
    let Some(art) = art else {
        return;
    };
    let t = time.elapsed_secs();
    // The clock is read once a minute of game time at most: the phase changes by the hour.
    let h = match *hour {
        Some((at, h)) if t - at < 60.0 => h,
        _ => {
            let h = local_hour(&clock);
            *hour = Some((t, h));
            h
        }
    };
    let look = sky(h, weather.0.gloom);
    if let Ok(mut sprite) = background.single_mut() {
        if sprite.image != art.sky {
            sprite.image = art.sky.clone();
        }
        let index = look.phase.index();
        match sprite.texture_atlas.as_mut() {
            Some(atlas) if atlas.index != index => atlas.index = index,
            Some(_) => {}
            None => {
                sprite.texture_atlas = Some(TextureAtlas {
                    layout: art.sky_layout.clone(),
                    index,
                })
            }
        }
        let c = Color::srgb(look.light[0], look.light[1], look.light[2]);
        if sprite.color != c {
            sprite.color = c;
        }
    }
    let size = canvas_size();
    let (_, l) = row(&familiars);
    let s = l.scale.max(1.0);
    // Clouds drift in the layout's band under the plates (the sky above is HUD), above the
    // floaters' text, behind the familiars; the cloud's art spans rows 9 to 22 of its frame.
    let (band, cs) = l.cloud_band();
    let cloud_top = size.y / 2.0 - band.min.y - 7.0 * cs;
    for (cloud, mut sprite, mut tr, mut vis) in &mut clouds {
        if cloud.0 >= look.clouds {
            *vis = Visibility::Hidden;
            continue;
        }
        *vis = Visibility::Inherited;
        if let Some(atlas) = sprite.texture_atlas.as_mut() {
            atlas.index = if look.rain {
                WORLD_RAIN_CLOUD
            } else {
                WORLD_CLOUD
            };
        }
        // Spread over the sky's width, drifting slowly right and wrapping.
        let span = size.x + 40.0 * s;
        let x0 = (cloud.0 as f32 + 0.5) / MAX_CLOUDS as f32 * span + scatter(cloud.0, 1) * 20.0;
        let x = (x0 + t * 3.0 * s).rem_euclid(span) - span / 2.0;
        let y = cloud_top - scatter(cloud.0, 2) * 2.0 * cs;
        tr.translation.x = x;
        tr.translation.y = y;
        tr.scale = Vec3::splat(cs);
    }
    for (drop, mut tr, mut vis) in &mut drops {
        if !look.rain {
            *vis = Visibility::Hidden;
            continue;
        }
        *vis = Visibility::Inherited;
        let fall = size.y * 0.9;
        let speed = 180.0 + scatter(drop.0, 3) * 80.0;
        let y = size.y / 2.0 - 20.0 * s - (scatter(drop.0, 4) * fall + t * speed).rem_euclid(fall);
        let x = (scatter(drop.0, 5) - 0.5) * size.x;
        tr.translation = Vec3::new(x, y, -80.0);
        tr.scale = Vec3::new(s.min(2.0), 4.0 * s, 1.0);
    }
    if let Ok((mut sprite, mut tr, mut vis)) = sun.single_mut() {
        match weather.0.sunshine {
            Some(age) => {
                let a = 0.22 * (1.0 - age / SUNSHINE_SECS).clamp(0.0, 1.0);
                sprite.color = Color::srgba(1.0, 0.92, 0.55, a);
                tr.scale = Vec3::new(size.x, size.y, 1.0);
                *vis = Visibility::Inherited;
            }
            None => *vis = Visibility::Hidden,
        }
    }
}

/// A sprite of the world's sheet (`world.png`), frame `index`.
pub(super) fn world_sprite(art: &WorldArt, index: usize) -> Sprite {
    Sprite::from_atlas_image(
        art.world.clone(),
        TextureAtlas {
            layout: art.world_layout.clone(),
            index,
        },
    )
}

/// A campfire burns beside each familiar that rests (after a compaction) or sleeps.
pub(super) fn attach_campfires(
    mut commands: Commands,
    art: Option<Res<WorldArt>>,
    added: Query<Entity, Added<Effects>>,
) {
    let Some(art) = art else {
        return;
    };
    for e in &added {
        let fire = commands
            .spawn((
                world_sprite(&art, 0),
                Transform::default(),
                Visibility::Hidden,
                Campfire,
            ))
            .id();
        commands.entity(e).add_child(fire);
    }
}

pub(super) fn draw_campfires(
    time: Res<Time>,
    scale: Res<PixelScale>,
    familiars: Query<(&Animation, &Children)>,
    mut fires: Query<(&mut Sprite, &mut Transform, &mut Visibility), With<Campfire>>,
) {
    let s = scale.0;
    for (anim, children) in &familiars {
        let resting = anim.0.current() == Anim::Rest;
        for child in children.iter() {
            let Ok((mut sprite, mut tr, mut vis)) = fires.get_mut(child) else {
                continue;
            };
            if !resting {
                *vis = Visibility::Hidden;
                continue;
            }
            *vis = Visibility::Inherited;
            // Left of the familiar, on the ground (its feet are 21 art pixels under its
            // centre, the fire's base 13 under the frame's).
            tr.translation = Vec3::new(-26.0 * s, -8.0 * s, -0.5);
            tr.scale = Vec3::splat(s);
            // Asleep the window wakes every 2 s, so the flame flickers at the frame rate
            // the window has.
            let (frames, fps) = WORLD.rows[0];
            let frame = (time.elapsed_secs() * fps) as usize % frames as usize;
            if let Some(atlas) = sprite.texture_atlas.as_mut()
                && atlas.index != frame
            {
                atlas.index = frame;
            }
        }
    }
}
