//! Creates what the scene shows: the camera, backdrop and UI roots at start-up, and the
//! sprites and HUD nodes of each familiar, companion and floater when the logic adds one.
//! `draw` updates them every frame.

use bevy::prelude::*;
use bevy::sprite::Anchor;

use super::layout::{BAR_HEIGHT, PAD};
use super::text::{PixelText, ui_text, world_text};
use super::{
    Art, BAR_BORDER, BAR_EMPTY, Background, CompanionLabel, FamiliarParts, HudOf, HudRoot,
    LogPanel, LogText, PLATE_BG, QuestBanner, QuestText, StatusPlate, StatusText, XP_BAR_LEFT,
    XP_FILL, band_color, rgb,
};
use crate::assets;
use crate::logic::{Companion, Familiar, Floater, ManaBand};
use crate::sheet::{self, COMPANION_SHEET, ICONS, SHEET};

pub(super) fn setup(
    mut commands: Commands,
    mut images: ResMut<Assets<Image>>,
    mut layouts: ResMut<Assets<TextureAtlasLayout>>,
) {
    let grid = |sheet: sheet::SheetLayout| {
        TextureAtlasLayout::from_grid(
            UVec2::splat(sheet.frame),
            sheet.columns,
            sheet.rows.len() as u32,
            None,
            None,
        )
    };
    let art = Art {
        familiar: images.add(assets::image(assets::FAMILIAR_PNG, "familiar.png")),
        familiar_layout: layouts.add(grid(SHEET)),
        companion: images.add(assets::image(assets::COMPANION_PNG, "companion.png")),
        companion_layout: layouts.add(grid(COMPANION_SHEET)),
        icons: images.add(assets::image(assets::ICONS_PNG, "icons.png")),
        icons_layout: layouts.add(grid(ICONS)),
        background: images.add(assets::image(assets::BACKGROUND_PNG, "background.png")),
    };
    commands.spawn((
        Sprite::from_image(art.background.clone()),
        Transform::from_xyz(0.0, 0.0, -100.0),
        Background,
    ));
    commands.insert_resource(art);

    // The top row, the log strip: placed each frame by `hud` from the layout, clipped to it.
    let clip = |node: Node| Node {
        position_type: PositionType::Absolute,
        overflow: Overflow::clip(),
        ..node
    };
    commands
        .spawn((
            clip(Node {
                padding: UiRect::axes(px(5), px(1)),
                border: UiRect::all(px(1)),
                border_radius: BorderRadius::all(px(3)),
                ..default()
            }),
            BackgroundColor(rgb([246, 226, 176])),
            BorderColor::all(rgb([120, 72, 36])),
            HudRoot,
            QuestBanner,
            Visibility::Hidden,
        ))
        .with_child((ui_text(PixelText::new("", rgb([70, 40, 20]))), QuestText));
    commands
        .spawn((
            clip(Node {
                padding: UiRect::axes(px(5), px(1)),
                border_radius: BorderRadius::all(px(3)),
                ..default()
            }),
            BackgroundColor(super::hud::log_background()),
            HudRoot,
            LogPanel,
            Visibility::Hidden,
        ))
        .with_child((
            ui_text(PixelText::new("", rgb(super::hud::LOG_TEXT))),
            LogText,
        ));
    // Replay status, top right, on its own dark plate (the moon is behind it).
    commands
        .spawn((
            clip(Node {
                padding: UiRect::axes(px(4), px(1)),
                border_radius: BorderRadius::all(px(3)),
                justify_content: JustifyContent::Center,
                ..default()
            }),
            BackgroundColor(rgb(PLATE_BG)),
            HudRoot,
            StatusPlate,
            Visibility::Hidden,
        ))
        .with_child((
            ui_text(PixelText::new("", rgb([255, 230, 140]))),
            StatusText,
        ));
}

pub(super) fn attach_familiars(
    mut commands: Commands,
    art: Res<Art>,
    added: Query<(Entity, &Familiar), Added<Familiar>>,
) {
    for (e, familiar) in &added {
        let sprite = commands
            .spawn((
                Sprite::from_atlas_image(
                    art.familiar.clone(),
                    TextureAtlas {
                        layout: art.familiar_layout.clone(),
                        index: 0,
                    },
                ),
                Transform::default(),
            ))
            .id();
        let mark = commands
            .spawn((
                Sprite::from_atlas_image(
                    art.icons.clone(),
                    TextureAtlas {
                        layout: art.icons_layout.clone(),
                        index: sheet::ICON_EXCLAIM,
                    },
                ),
                Transform::default(),
                Visibility::Hidden,
            ))
            .id();
        let stars = commands
            .spawn((Transform::default(), Visibility::Hidden))
            .with_children(|p| {
                for i in 0..5 {
                    p.spawn((
                        Sprite::from_atlas_image(
                            art.icons.clone(),
                            TextureAtlas {
                                layout: art.icons_layout.clone(),
                                index: sheet::ICON_STAR,
                            },
                        ),
                        Transform::from_xyz(i as f32, 0.0, 2.0),
                    ));
                }
            })
            .id();
        // The familiar's number, under its feet, when the plates stand in a grid away from it.
        let tag = commands
            .spawn((
                world_text(PixelText::new("", rgb([235, 228, 255])).with_shadow()),
                Anchor::TOP_CENTER,
                Transform::default(),
                Visibility::Hidden,
            ))
            .id();
        commands
            .entity(e)
            .insert((Transform::default(), Visibility::default()))
            .add_children(&[sprite, mark, stars, tag]);

        // The plate: name, status, mana bar, level and XP, and what the session is doing; every
        // part at a fixed place
        // (`layout`), clipped to the plate.
        let at = |left: f32, top: f32| Node {
            position_type: PositionType::Absolute,
            left: px(left),
            top: px(top),
            ..default()
        };
        // Text rows: a line is 16 pixels, capitals on its rows 7 to 13 (`font`).
        let name = commands
            .spawn((
                ui_text(PixelText::new(familiar.label.clone(), rgb([235, 228, 255]))),
                at(PAD, 0.0),
            ))
            .id();
        let status_icon = commands
            .spawn((
                ImageNode::from_atlas_image(
                    art.icons.clone(),
                    TextureAtlas {
                        layout: art.icons_layout.clone(),
                        index: sheet::ICON_STAR,
                    },
                ),
                Node {
                    width: px(12),
                    height: px(12),
                    ..at(PAD, 15.0)
                },
                Visibility::Hidden,
            ))
            .id();
        let status_text = commands
            .spawn((
                ui_text(PixelText::new("", rgb([200, 196, 230]))),
                at(PAD + 15.0, 13.0),
            ))
            .id();
        let mana_fill = commands
            .spawn((
                Node {
                    width: percent(100),
                    height: percent(100),
                    ..default()
                },
                BackgroundColor(rgb(band_color(ManaBand::Unknown))),
            ))
            .id();
        // One dark pixel under each glyph, legible on every band colour.
        let mana_text = commands
            .spawn(ui_text(PixelText::new("", Color::WHITE).with_shadow()))
            .id();
        // Centred in the bar, capitals in the middle of its 10 inner rows.
        let mana_label = commands
            .spawn(Node {
                position_type: PositionType::Absolute,
                left: px(0),
                right: px(0),
                top: px(-6),
                justify_content: JustifyContent::Center,
                ..default()
            })
            .add_child(mana_text)
            .id();
        let mana_bar = commands
            .spawn((
                Node {
                    height: px(BAR_HEIGHT),
                    right: px(PAD),
                    border: UiRect::all(px(1)),
                    overflow: Overflow::clip(),
                    ..at(PAD, 30.0)
                },
                BackgroundColor(rgb(BAR_EMPTY)),
                BorderColor::all(rgb(BAR_BORDER)),
            ))
            .add_children(&[mana_fill, mana_label])
            .id();
        let level_text = commands
            .spawn((ui_text(PixelText::new("", rgb(XP_FILL))), at(PAD, 39.0)))
            .id();
        let xp_fill = commands
            .spawn((
                Node {
                    width: percent(0),
                    height: percent(100),
                    ..default()
                },
                BackgroundColor(rgb(XP_FILL)),
            ))
            .id();
        let xp_bar = commands
            .spawn((
                Node {
                    height: px(6),
                    right: px(PAD),
                    border: UiRect::all(px(1)),
                    ..at(XP_BAR_LEFT, 46.0)
                },
                BackgroundColor(rgb(BAR_EMPTY)),
                BorderColor::all(rgb(BAR_BORDER)),
            ))
            .add_child(xp_fill)
            .id();
        // What the session is doing now, under the rest (with more than one session).
        let doing_text = commands
            .spawn((
                ui_text(PixelText::new("", rgb([170, 200, 235]))),
                at(PAD, super::layout::PLATE_HEIGHT - 3.0),
                Visibility::Hidden,
            ))
            .id();
        let plate = commands
            .spawn((
                Node {
                    position_type: PositionType::Absolute,
                    border: UiRect::all(px(1)),
                    border_radius: BorderRadius::all(px(3)),
                    overflow: Overflow::clip(),
                    ..default()
                },
                BackgroundColor(rgb(PLATE_BG)),
                BorderColor::all(rgb([70, 56, 110])),
                HudOf(e),
                HudRoot,
            ))
            .add_children(&[
                name,
                status_icon,
                status_text,
                mana_bar,
                level_text,
                xp_bar,
                doing_text,
            ])
            .id();
        let bubble_text = commands
            .spawn(ui_text(
                PixelText::new("", rgb([30, 20, 50])).with_max_lines(2),
            ))
            .id();
        let bubble = commands
            .spawn((
                Node {
                    position_type: PositionType::Absolute,
                    padding: UiRect::axes(px(4), px(1)),
                    border: UiRect::all(px(1)),
                    border_radius: BorderRadius::all(px(6)),
                    overflow: Overflow::clip(),
                    ..default()
                },
                BackgroundColor(rgb([252, 250, 255])),
                BorderColor::all(rgb([35, 22, 54])),
                Visibility::Hidden,
                HudOf(e),
            ))
            .add_child(bubble_text)
            .id();
        commands.entity(e).insert(FamiliarParts {
            sprite,
            mark,
            stars,
            tag,
            plate,
            name,
            status_icon,
            status_text,
            mana_bar,
            mana_fill,
            mana_text,
            level_text,
            xp_bar,
            xp_fill,
            doing_text,
            bubble,
            bubble_text,
        });
    }
}

/// Tint per subagent type, so several kinds of companions are told apart.
pub(super) fn companion_tint(kind: &str) -> Color {
    const TINTS: [[u8; 3]; 6] = [
        [140, 230, 255],
        [255, 190, 120],
        [160, 255, 170],
        [255, 160, 220],
        [210, 180, 255],
        [255, 240, 140],
    ];
    let h = kind.bytes().fold(2_166_136_261u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(16_777_619)
    });
    rgb(TINTS[(h as usize) % TINTS.len()])
}

pub(super) fn attach_companions(
    mut commands: Commands,
    art: Res<Art>,
    added: Query<(Entity, &Companion), Added<Companion>>,
) {
    for (e, c) in &added {
        let mut sprite = Sprite::from_atlas_image(
            art.companion.clone(),
            TextureAtlas {
                layout: art.companion_layout.clone(),
                index: 8,
            },
        );
        sprite.color = companion_tint(&c.kind);
        // Sized through `custom_size`, not the transform, so the kind label keeps its size.
        commands
            .entity(e)
            .insert((sprite, Transform::default(), Visibility::default()))
            .with_child((
                world_text(PixelText::new(c.kind.clone(), rgb([220, 225, 255])).with_shadow()),
                Anchor::TOP_CENTER,
                Transform::from_xyz(0.0, -12.0, 1.0),
                CompanionLabel,
            ));
    }
}

pub(super) fn attach_floaters(
    mut commands: Commands,
    added: Query<(Entity, &Floater), Added<Floater>>,
) {
    for (e, f) in &added {
        commands.entity(e).insert((
            world_text(PixelText::new(f.text.clone(), rgb([255, 250, 210])).with_shadow()),
            Anchor::BOTTOM_RIGHT,
            Transform::from_xyz(0.0, 0.0, 10.0),
            Visibility::default(),
        ));
    }
}
