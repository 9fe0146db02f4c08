//! Shows the [`Wardrobe`] of the user's profile: each familiar wears its hat and accessory
//! as two sprite layers over its own (children of its sprite, showing the same frame of
//! `wearables.png`, whose blocks are frame-aligned with the familiar's sheet), a new hat
//! drops onto every head with a bounce, and the scene decor earned stands over the backdrop
//! (one backdrop-sized layer each, placed where `draw` places the backdrop). Companions wear
//! a tiny version of the hat, on their bobbing heads. Part of `view`.

use bevy::prelude::*;

use super::{Background, FamiliarParts, Layout, row};
use crate::assets;
use crate::logic::{Companion, Familiar};
use crate::progression::UserProfile;
use crate::progression::wardrobe::{
    COMPANION_HAT, DECOR, DECOR_SIZE, Wardrobe, companion_hat_index, companion_hats,
    companion_head, decor_columns, wearable_index, wearables_rows,
};
use crate::sheet::{COMPANION_SHEET, SHEET};

/// How long a new hat takes to drop onto the head.
const DROP_SECS: f32 = 0.6;
/// From how high above the head it drops, in sprite pixels.
const DROP_FROM: f32 = 14.0;

#[derive(Resource)]
pub(super) struct WardrobeArt {
    wearables: Handle<Image>,
    wearables_layout: Handle<TextureAtlasLayout>,
    companion_hats: Handle<Image>,
    companion_hats_layout: Handle<TextureAtlasLayout>,
}

/// A companion's tiny hat (a child of the companion).
#[derive(Component)]
pub(super) struct CompanionHat(Entity);

/// The layers a familiar wears: hat, then accessory.
#[derive(Component)]
pub(super) struct Worn([Entity; 2]);

/// One decor layer over the backdrop: its row in `decor.png`.
#[derive(Component)]
pub(super) struct DecorLayer(usize);

/// When the hat worn now was put on (game clock), for its drop; `None` before the first
/// look at the profile, so the hat a user starts with is simply there.
#[derive(Resource, Default)]
pub(super) struct HatChange {
    hat: Option<&'static str>,
    since: Option<f32>,
    seen: bool,
}

pub(super) fn setup(
    mut commands: Commands,
    mut images: ResMut<Assets<Image>>,
    mut layouts: ResMut<Assets<TextureAtlasLayout>>,
) {
    let wearables = images.add(assets::image(assets::WEARABLES_PNG, "wearables.png"));
    let wearables_layout = layouts.add(TextureAtlasLayout::from_grid(
        UVec2::splat(SHEET.frame),
        SHEET.columns,
        wearables_rows(),
        None,
        None,
    ));
    let decor = images.add(assets::image(assets::DECOR_PNG, "decor.png"));
    let decor_layout = layouts.add(TextureAtlasLayout::from_grid(
        UVec2::new(DECOR_SIZE.0, DECOR_SIZE.1),
        decor_columns(),
        DECOR.len() as u32,
        None,
        None,
    ));
    for (row, _) in DECOR.iter().enumerate() {
        commands.spawn((
            Sprite::from_atlas_image(
                decor.clone(),
                TextureAtlas {
                    layout: decor_layout.clone(),
                    index: row * decor_columns() as usize,
                },
            ),
            Transform::default(),
            Visibility::Hidden,
            DecorLayer(row),
        ));
    }
    let companion_hats_layout = layouts.add(TextureAtlasLayout::from_grid(
        UVec2::new(COMPANION_HAT.0, COMPANION_HAT.1),
        companion_hats().count() as u32,
        1,
        None,
        None,
    ));
    commands.insert_resource(WardrobeArt {
        wearables,
        wearables_layout,
        companion_hats: images.add(assets::image(
            assets::COMPANION_HATS_PNG,
            "companion-hats.png",
        )),
        companion_hats_layout,
    });
}

/// Gives each new familiar its two (hidden) wearable layers.
pub(super) fn dress_familiars(
    mut commands: Commands,
    art: Res<WardrobeArt>,
    added: Query<(Entity, &FamiliarParts), Without<Worn>>,
) {
    for (e, parts) in &added {
        let layer = |z: f32| {
            (
                Sprite::from_atlas_image(
                    art.wearables.clone(),
                    TextureAtlas {
                        layout: art.wearables_layout.clone(),
                        index: 0,
                    },
                ),
                Transform::from_xyz(0.0, 0.0, z),
                Visibility::Hidden,
            )
        };
        let hat = commands.spawn(layer(0.02)).id();
        let accessory = commands.spawn(layer(0.01)).id();
        commands
            .entity(parts.sprite)
            .add_children(&[hat, accessory]);
        commands.entity(e).insert(Worn([hat, accessory]));
    }
}

/// Gives each new companion its (hidden) tiny hat.
pub(super) fn dress_companions(
    mut commands: Commands,
    art: Res<WardrobeArt>,
    added: Query<Entity, (With<Companion>, Without<CompanionHat>)>,
) {
    for e in &added {
        let hat = commands
            .spawn((
                Sprite::from_atlas_image(
                    art.companion_hats.clone(),
                    TextureAtlas {
                        layout: art.companion_hats_layout.clone(),
                        index: 0,
                    },
                ),
                Transform::from_xyz(0.0, 0.0, 0.05),
                Visibility::Hidden,
            ))
            .id();
        commands.entity(e).add_child(hat).insert(CompanionHat(hat));
    }
}

/// The drop of a hat put on `age` seconds ago: its height above the head (sprite pixels),
/// falling, then one small bounce; 0 once it sits.
pub(crate) fn drop_height(age: f32) -> f32 {
    if !(0.0..DROP_SECS).contains(&age) {
        return 0.0;
    }
    let fall = DROP_SECS * 0.6;
    if age < fall {
        let t = age / fall;
        DROP_FROM * (1.0 - t * t)
    } else {
        let t = (age - fall) / (DROP_SECS - fall);
        3.0 * 4.0 * t * (1.0 - t)
    }
}

#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(super) fn draw_wardrobe(
    time: Res<Time>,
    profile: Res<UserProfile>,
    mut change: ResMut<HatChange>,
    familiars: Query<(&FamiliarParts, &Worn), With<Familiar>>,
    mut sprites: Query<
        (&mut Sprite, &mut Transform, &mut Visibility),
        (Without<Background>, Without<DecorLayer>, Without<Companion>),
    >,
    mut decor: Query<
        (&DecorLayer, &mut Sprite, &mut Transform, &mut Visibility),
        (Without<Worn>, Without<FamiliarParts>, Without<Background>),
    >,
    background: Query<(&Sprite, &Transform), (With<Background>, Without<DecorLayer>)>,
    companions: Query<(&Sprite, &CompanionHat), (With<Companion>, Without<DecorLayer>)>,
    all: Query<(Entity, &Familiar)>,
    mut placed: Local<Option<(Layout, Vec<bool>, (f32, Vec<bool>))>>,
) {
    let t = time.elapsed_secs();
    let wardrobe = Wardrobe::of(&profile);
    let hat = wardrobe.hat.map(|u| u.id);
    if !change.seen || hat != change.hat {
        // A hat put on while playing drops in; the one the user starts with is just there.
        change.since = change.seen.then_some(t);
        change.hat = hat;
        change.seen = true;
    }
    let drop = change.since.map(|s| drop_height(t - s)).unwrap_or(0.0);
    let worn = [hat, wardrobe.accessory.map(|u| u.id)];
    for (parts, layers) in &familiars {
        let Ok((sprite, ..)) = sprites.get(parts.sprite) else {
            continue;
        };
        let index = sprite.texture_atlas.as_ref().map(|a| a.index).unwrap_or(0);
        let (color, flip) = (sprite.color, sprite.flip_x);
        for (i, layer) in layers.0.iter().enumerate() {
            let Ok((mut s, mut tr, mut vis)) = sprites.get_mut(*layer) else {
                continue;
            };
            match worn[i].and_then(|id| wearable_index(id, index)) {
                Some(at) => {
                    if let Some(atlas) = s.texture_atlas.as_mut()
                        && atlas.index != at
                    {
                        atlas.index = at;
                    }
                    s.color = color;
                    s.flip_x = flip;
                    tr.translation.y = if i == 0 { drop } else { 0.0 };
                    *vis = Visibility::Inherited;
                }
                None => *vis = Visibility::Hidden,
            }
        }
    }
    // The companions' tiny hats, on the wisp's head in each frame, faded with it.
    let tiny = hat.and_then(companion_hat_index);
    for (sprite, hat_of) in &companions {
        let Ok((mut s, mut tr, mut vis)) = sprites.get_mut(hat_of.0) else {
            continue;
        };
        let index = sprite.texture_atlas.as_ref().map(|a| a.index).unwrap_or(0);
        let columns = COMPANION_SHEET.columns as usize;
        let head = companion_head(index / columns, index % columns);
        let (Some(at), Some(head), Some(size)) = (tiny, head, sprite.custom_size) else {
            *vis = Visibility::Hidden;
            continue;
        };
        // The companion is sized through `custom_size`: one of its pixels is `px` wide.
        let px = size.x / COMPANION_SHEET.frame as f32;
        let half = COMPANION_SHEET.frame as f32 / 2.0;
        let bottom = half - head as f32;
        tr.translation.x = 0.5 * px;
        tr.translation.y = (bottom + COMPANION_HAT.1 as f32 / 2.0) * px;
        s.custom_size = Some(Vec2::new(COMPANION_HAT.0 as f32, COMPANION_HAT.1 as f32) * px);
        s.color = Color::WHITE.with_alpha(sprite.color.alpha());
        if let Some(atlas) = s.texture_atlas.as_mut() {
            atlas.index = at;
        }
        *vis = Visibility::Inherited;
    }
    // Decor over the backdrop, wherever and however big `draw` makes it.
    let Ok((_, bg)) = background.single() else {
        return;
    };
    let (_, l) = row(&all);
    let earned: Vec<bool> = DECOR
        .iter()
        .map(|d| wardrobe.decor.iter().any(|w| w.id == d.id))
        .collect();
    // Placed again only when the layout or what is earned changes, not every frame.
    if placed
        .as_ref()
        .is_none_or(|(at, had, _)| *at != l || *had != earned)
    {
        let placement = decor_placement(&l, &earned);
        *placed = Some((l, earned, placement));
    }
    let Some((_, _, (scale, shown))) = placed.as_ref() else {
        return;
    };
    let art = decor_art();
    for (layer, mut sprite, mut tr, mut vis) in &mut decor {
        let d = &DECOR[layer.0];
        if !shown.get(layer.0).copied().unwrap_or(false) {
            *vis = Visibility::Hidden;
            continue;
        }
        let frame = (t * d.fps) as usize % d.frames.max(1) as usize;
        if let Some(atlas) = sprite.texture_atlas.as_mut() {
            atlas.index = layer.0 * decor_columns() as usize + frame;
        }
        let centre = l.decor_layer(*scale, art.get(layer.0).copied().unwrap_or_default());
        let [w, h] = crate::sheet::SKY_SIZE;
        let size = Vec2::new(w as f32, h as f32) * *scale;
        if sprite.custom_size != Some(size) {
            sprite.custom_size = Some(size);
        }
        tr.translation = centre.extend(bg.translation.z + 1.0 + layer.0 as f32 * 0.1);
        *vis = Visibility::Inherited;
    }
}

/// Where the decor goes in layout `l`, given which of [`DECOR`] are `earned` (by its order):
/// the scale its layers are drawn at ([`Layout::decor_scale`]), and which of them show (earned,
/// with room when a prop, and what it stands on showing too).
fn decor_placement(l: &Layout, earned: &[bool]) -> (f32, Vec<bool>) {
    let art = decor_art();
    let earned_prop = |i: usize| DECOR[i].prop && earned.get(i).copied().unwrap_or(false);
    let props: Vec<[u32; 4]> = (0..DECOR.len())
        .filter(|&i| earned_prop(i))
        .filter_map(|i| art.get(i).copied())
        .collect();
    let scale = l.decor_scale(&props);
    let fits: Vec<bool> = (0..DECOR.len())
        .map(|i| {
            earned.get(i).copied().unwrap_or(false)
                && (!DECOR[i].prop || art.get(i).is_some_and(|a| l.decor_fits(scale, *a)))
        })
        .collect();
    let shown = DECOR
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let support =
                d.on.and_then(|id| DECOR.iter().position(|other| other.id == id));
            fits[i] && support.is_none_or(|s| fits[s])
        })
        .collect();
    (scale, shown)
}

/// The box of each decor's art in its backdrop-sized layer (`[x0, y0, x1, y1]`, over all its
/// frames; by [`DECOR`]'s order), read once from the embedded `decor.png`: the layout keeps
/// it off the familiars and the text (`Layout::decor_fits`). An empty decor is an empty box.
pub(crate) fn decor_art() -> &'static [[u32; 4]] {
    static ART: std::sync::OnceLock<Vec<[u32; 4]>> = std::sync::OnceLock::new();
    ART.get_or_init(|| {
        let image = assets::image(assets::DECOR_PNG, "decor.png");
        let width = image.texture_descriptor.size.width as usize;
        let data = image.data.unwrap_or_default();
        let (w, h) = (DECOR_SIZE.0 as usize, DECOR_SIZE.1 as usize);
        (0..DECOR.len())
            .map(|row| {
                let mut art = [u32::MAX, u32::MAX, 0, 0];
                for y in 0..h {
                    for x in 0..w * decor_columns() as usize {
                        let alpha = data.get(((row * h + y) * width + x) * 4 + 3);
                        if alpha.is_some_and(|a| *a > 0) {
                            let (x, y) = ((x % w) as u32, y as u32);
                            art = [
                                art[0].min(x),
                                art[1].min(y),
                                art[2].max(x + 1),
                                art[3].max(y + 1),
                            ];
                        }
                    }
                }
                if art[0] == u32::MAX { [0; 4] } else { art }
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decor_shows_where_it_has_room_and_never_without_its_support() {
        use crate::view::layout::layout;
        let all = vec![true; DECOR.len()];
        let index = |id: &str| DECOR.iter().position(|d| d.id == id).unwrap_or(usize::MAX);
        // A lone familiar: everything earned shows.
        let (_, shown) = decor_placement(&layout(Vec2::new(480.0, 320.0), 1), &all);
        assert!(shown.iter().all(|s| *s), "{shown:?}");
        // Nothing earned: nothing shows.
        let (_, shown) = decor_placement(
            &layout(Vec2::new(480.0, 320.0), 1),
            &vec![false; DECOR.len()],
        );
        assert!(shown.iter().all(|s| !*s));
        // A party of three: the bookshelf has no room beside the first familiar, so the owl
        // that perches on it does not show either.
        let (_, shown) = decor_placement(&layout(Vec2::new(480.0, 320.0), 3), &all);
        assert!(!shown[index("scene.bookshelf")], "{shown:?}");
        assert!(!shown[index("scene.owl")], "{shown:?}");
        assert!(
            shown[index("scene.fireflies")],
            "the air's decor is no prop: {shown:?}"
        );
    }

    #[test]
    fn each_decor_has_art_inside_its_layer() {
        let art = decor_art();
        assert_eq!(art.len(), DECOR.len());
        for (decor, a) in DECOR.iter().zip(art) {
            assert!(a[0] < a[2] && a[1] < a[3], "{}: {a:?}", decor.id);
            assert!(
                a[2] <= DECOR_SIZE.0 && a[3] <= DECOR_SIZE.1,
                "{}: {a:?}",
                decor.id
            );
            // A prop stands in a part of the scene, not over all of it.
            assert!(
                !decor.prop || a[2] - a[0] < DECOR_SIZE.0 / 2,
                "{}: {a:?}",
                decor.id
            );
        }
    }

    #[test]
    fn a_new_hat_drops_then_sits() {
        assert_eq!(drop_height(0.0), DROP_FROM);
        assert!(drop_height(0.1) > drop_height(0.2));
        assert_eq!(drop_height(DROP_SECS * 0.6), 0.0);
        assert!(drop_height(DROP_SECS * 0.8) > 0.0);
        assert_eq!(drop_height(DROP_SECS), 0.0);
        assert_eq!(drop_height(-1.0), 0.0);
        assert_eq!(drop_height(100.0), 0.0);
    }
}
