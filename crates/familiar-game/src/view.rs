//! Drawing and input: turns the logic components of `logic.rs` into sprites, text and UI,
//! handles the keys, switches the window between full rate (while something moves) and a
//! low-power reactive mode, bridges the pipeline's channel into the game with wake-ups, and
//! takes the optional screenshot. Nothing here decides game state; it only shows it.

use std::sync::Mutex;
use std::time::Duration;

use bevy::app::AppExit;
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::sprite::{Anchor, Text2dShadow};
use bevy::window::PrimaryWindow;
use bevy::winit::{EventLoopProxyWrapper, UpdateMode, WinitSettings, WinitUserEvent};
use crossbeam_channel::{Receiver, Sender};
use familiar_model::ReplayControl;

use crate::anim::Anim;
use crate::art::{self, COMPANION_SHEET, ICONS, SHEET};
use crate::assets;
use crate::logic::{
    self, Activity, Animation, COMPANION_ENTER_SECS, COMPANION_LEAVE_SECS, Companion, FLOATER_SECS,
    Familiar, FeedChannel, Floater, Focus, LogStrip, LogicSet, Mana, ManaBand, Mark, Progress,
    Quest, Speech,
};
use crate::{GameFeed, GameOptions};

/// Mana colour of each band (the screenshot test checks these).
pub fn band_color(band: ManaBand) -> [u8; 3] {
    match band {
        ManaBand::Plenty => [74, 163, 255],
        ManaBand::Low => [240, 180, 41],
        ManaBand::Critical => [255, 77, 94],
        ManaBand::Unknown => [120, 116, 140],
    }
}

/// The empty part of the mana bar.
pub const BAR_EMPTY: [u8; 3] = [34, 26, 54];
const BAR_BORDER: [u8; 3] = [12, 8, 22];
const XP_FILL: [u8; 3] = [120, 230, 120];

fn rgb(c: [u8; 3]) -> Color {
    Color::srgb_u8(c[0], c[1], c[2])
}

/// Where things go for a window size and number of familiars. World coordinates have their
/// origin at the window centre, y up, one unit per logical pixel; screen rectangles are in
/// logical pixels from the top-left corner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    pub window: Vec2,
    pub count: usize,
    /// Integer pixel-art scale.
    pub scale: f32,
    /// World y of the floor line.
    pub ground_y: f32,
    pub bar_width: f32,
}

pub const BAR_HEIGHT: f32 = 12.0;
/// How long the "rest pre -> post" note shows after a compaction.
const COMPACTION_NOTE_SECS: f32 = 5.0;
const HUD_HEIGHT: f32 = 44.0;

pub fn layout(window: Vec2, count: usize) -> Layout {
    let count = count.max(1);
    let spacing = window.x / count as f32;
    let scale = (spacing / 60.0)
        .min(window.y / 100.0)
        .floor()
        .clamp(1.0, 4.0);
    Layout {
        window,
        count,
        scale,
        ground_y: -window.y / 2.0 + (window.y * 0.1).max(16.0),
        bar_width: (spacing - 24.0).clamp(60.0, 150.0),
    }
}

impl Layout {
    /// World x of the familiar at `index` (0-based, left to right).
    pub fn familiar_x(&self, index: usize) -> f32 {
        let spacing = self.window.x / self.count as f32;
        -self.window.x / 2.0 + spacing * (index as f32 + 0.5)
    }

    /// World centre of the familiar's sprite (its frame has two empty rows under the feet).
    pub fn sprite_center(&self, index: usize) -> Vec2 {
        Vec2::new(
            self.familiar_x(index),
            self.ground_y + (SHEET.frame as f32 / 2.0 - 2.0) * self.scale,
        )
    }

    /// Screen rectangle of the familiar's sprite.
    pub fn sprite_rect(&self, index: usize) -> Rect {
        let c = self.to_screen(self.sprite_center(index));
        let half = SHEET.frame as f32 * self.scale / 2.0;
        Rect::new(c.x - half, c.y - half, c.x + half, c.y + half)
    }

    /// Screen y of the top of the familiar's hat.
    fn head_top_screen(&self) -> f32 {
        self.to_screen(Vec2::new(0.0, self.ground_y + 40.0 * self.scale))
            .y
    }

    /// Screen rectangle of the familiar's HUD block (label, mana bar, XP bar).
    pub fn hud_rect(&self, index: usize) -> Rect {
        let x = self.to_screen(Vec2::new(self.familiar_x(index), 0.0)).x;
        let bottom = self.head_top_screen() - 4.0;
        let top = (bottom - HUD_HEIGHT).max(46.0);
        Rect::new(
            x - self.bar_width / 2.0,
            top,
            x + self.bar_width / 2.0,
            top + HUD_HEIGHT,
        )
    }

    /// Screen rectangle of the mana bar including its 2-pixel border.
    pub fn mana_bar_rect(&self, index: usize) -> Rect {
        let hud = self.hud_rect(index);
        let top = hud.min.y + 16.0;
        Rect::new(hud.min.x, top, hud.max.x, top + BAR_HEIGHT)
    }

    pub fn to_screen(&self, world: Vec2) -> Vec2 {
        Vec2::new(world.x + self.window.x / 2.0, self.window.y / 2.0 - world.y)
    }
}

/// Handles to the embedded art.
#[derive(Resource, Clone)]
struct Art {
    familiar: Handle<Image>,
    familiar_layout: Handle<TextureAtlasLayout>,
    companion: Handle<Image>,
    companion_layout: Handle<TextureAtlasLayout>,
    icons: Handle<Image>,
    icons_layout: Handle<TextureAtlasLayout>,
    background: Handle<Image>,
}

#[derive(Resource)]
struct Replay(Option<ReplayControl>);

#[derive(Resource, Clone, Copy, PartialEq, Eq)]
struct HudVisible(bool);

#[derive(Resource)]
struct Options(GameOptions);

/// The parts drawn for one familiar.
#[derive(Component)]
struct FamiliarParts {
    sprite: Entity,
    mark: Entity,
    stars: Entity,
    hud: Entity,
    label: Entity,
    mana_fill: Entity,
    mana_text: Entity,
    xp_fill: Entity,
    note: Entity,
    bubble: Entity,
    bubble_text: Entity,
}

/// A UI root that belongs to a familiar and goes when it goes.
#[derive(Component)]
struct HudOf(Entity);

/// Every UI root `h` hides.
#[derive(Component)]
struct HudRoot;

#[derive(Component)]
struct Background;

#[derive(Component)]
struct CompanionLabel;

/// The current pixel-art scale (from the layout), for things placed relative to a familiar.
#[derive(Resource, Clone, Copy)]
struct PixelScale(f32);

#[derive(Component)]
struct QuestBanner;
#[derive(Component)]
struct QuestText;
#[derive(Component)]
struct LogPanel;
#[derive(Component)]
struct LogText;
#[derive(Component)]
struct StatusText;

pub struct ViewPlugin {
    pub options: GameOptions,
}

impl Plugin for ViewPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(Replay(self.options.replay.clone()))
            .insert_resource(HudVisible(true))
            .insert_resource(PixelScale(3.0))
            .insert_resource(Options(self.options.clone()))
            .add_systems(Startup, setup)
            .add_systems(
                Update,
                (
                    (attach_familiars, attach_companions, attach_floaters),
                    (
                        place_familiars,
                        draw_familiars,
                        orbit_stars,
                        draw_companions,
                        draw_floaters,
                        draw_hud,
                        despawn_orphan_huds,
                    ),
                )
                    .chain()
                    .after(LogicSet),
            )
            .add_systems(Update, (keys, power_mode, screenshot, count_frames));
    }
}

/// Low-power settings: draw when something happens to the window, a feed item arrives, or
/// every `wait`. Mouse motion elsewhere on the desktop does not wake it.
pub fn idle_settings(wait: Duration) -> WinitSettings {
    WinitSettings {
        focused_mode: UpdateMode::reactive_low_power(wait),
        unfocused_mode: UpdateMode::reactive_low_power(wait),
    }
}

fn setup(
    mut commands: Commands,
    mut images: ResMut<Assets<Image>>,
    mut layouts: ResMut<Assets<TextureAtlasLayout>>,
) {
    let grid = |sheet: art::SheetLayout| {
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
    commands.spawn(Camera2d);
    commands.spawn((
        Sprite::from_image(art.background.clone()),
        Transform::from_xyz(0.0, 0.0, -100.0),
        Background,
    ));
    commands.insert_resource(art);

    // Quest banner, top centre.
    commands
        .spawn((
            Node {
                position_type: PositionType::Absolute,
                top: px(6),
                left: px(0),
                right: px(0),
                justify_content: JustifyContent::Center,
                ..default()
            },
            HudRoot,
            QuestBanner,
            Visibility::Hidden,
        ))
        .with_children(|p| {
            p.spawn((
                Node {
                    padding: UiRect::axes(px(8), px(3)),
                    border: UiRect::all(px(2)),
                    border_radius: BorderRadius::all(px(4)),
                    max_width: percent(92),
                    ..default()
                },
                BackgroundColor(rgb([246, 226, 176])),
                BorderColor::all(rgb([120, 72, 36])),
            ))
            .with_child((
                Text::new(""),
                TextFont {
                    font_size: FontSize::Px(12.0),
                    ..default()
                },
                TextColor(rgb([70, 40, 20])),
                QuestText,
            ));
        });

    // Log strip (emit / log actions), top left under the banner: the floor belongs to the
    // familiars.
    commands
        .spawn((
            Node {
                position_type: PositionType::Absolute,
                top: px(50),
                left: px(4),
                max_width: percent(60),
                padding: UiRect::axes(px(5), px(2)),
                border_radius: BorderRadius::all(px(3)),
                ..default()
            },
            BackgroundColor(Color::srgba(0.05, 0.03, 0.1, 0.7)),
            HudRoot,
            LogPanel,
            Visibility::Hidden,
        ))
        .with_child((
            Text::new(""),
            TextFont {
                font_size: FontSize::Px(10.0),
                ..default()
            },
            TextColor(rgb([210, 220, 255])),
            LogText,
        ));

    // Replay status, top right.
    commands.spawn((
        Node {
            position_type: PositionType::Absolute,
            top: px(6),
            right: px(8),
            ..default()
        },
        Text::new(""),
        TextFont {
            font_size: FontSize::Px(11.0),
            ..default()
        },
        TextColor(rgb([255, 230, 140])),
        StatusText,
        HudRoot,
    ));
}

fn text_font(size: f32) -> TextFont {
    TextFont {
        font_size: FontSize::Px(size),
        ..default()
    }
}

fn attach_familiars(
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
                        index: art::ICON_EXCLAIM,
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
                                index: art::ICON_STAR,
                            },
                        ),
                        Transform::from_xyz(i as f32, 0.0, 2.0),
                    ));
                }
            })
            .id();
        commands
            .entity(e)
            .insert((Transform::default(), Visibility::default()))
            .add_children(&[sprite, mark, stars]);

        // HUD block: label, mana bar, XP bar, note (compaction / level-up).
        let label = commands
            .spawn((
                Text::new(familiar.label.clone()),
                text_font(11.0),
                TextColor(rgb([235, 228, 255])),
                TextShadow::default(),
                // Fixed height, so the bars sit where `Layout::mana_bar_rect` says.
                Node {
                    height: px(14),
                    ..default()
                },
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
        let mana_text = commands
            .spawn((
                Node {
                    position_type: PositionType::Absolute,
                    left: px(0),
                    right: px(0),
                    top: px(-2),
                    justify_content: JustifyContent::Center,
                    ..default()
                },
                Text::new(""),
                text_font(9.0),
                TextColor(Color::WHITE),
                TextLayout::justify(Justify::Center),
                TextShadow::default(),
            ))
            .id();
        let mana_bar = commands
            .spawn((
                Node {
                    width: percent(100),
                    height: px(BAR_HEIGHT),
                    border: UiRect::all(px(2)),
                    margin: UiRect::top(px(2)),
                    ..default()
                },
                BackgroundColor(rgb(BAR_EMPTY)),
                BorderColor::all(rgb(BAR_BORDER)),
            ))
            .add_children(&[mana_fill, mana_text])
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
                    width: percent(100),
                    height: px(6),
                    border: UiRect::all(px(1)),
                    margin: UiRect::top(px(1)),
                    ..default()
                },
                BackgroundColor(rgb(BAR_EMPTY)),
                BorderColor::all(rgb(BAR_BORDER)),
            ))
            .add_child(xp_fill)
            .id();
        let note = commands
            .spawn((
                Text::new(""),
                text_font(10.0),
                TextColor(rgb([255, 230, 140])),
                TextShadow::default(),
                Node {
                    position_type: PositionType::Absolute,
                    top: px(-14),
                    ..default()
                },
            ))
            .id();
        let hud = commands
            .spawn((
                Node {
                    position_type: PositionType::Absolute,
                    flex_direction: FlexDirection::Column,
                    align_items: AlignItems::Center,
                    height: px(HUD_HEIGHT),
                    ..default()
                },
                HudOf(e),
                HudRoot,
            ))
            .add_children(&[note, label, mana_bar, xp_bar])
            .id();
        let bubble_text = commands
            .spawn((Text::new(""), text_font(11.0), TextColor(rgb([30, 20, 50]))))
            .id();
        let bubble = commands
            .spawn((
                Node {
                    position_type: PositionType::Absolute,
                    padding: UiRect::axes(px(6), px(3)),
                    border: UiRect::all(px(2)),
                    border_radius: BorderRadius::all(px(6)),
                    max_width: px(190),
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
            hud,
            label,
            mana_fill,
            mana_text,
            xp_fill,
            note,
            bubble,
            bubble_text,
        });
    }
}

/// Tint per subagent type, so several kinds of companions are told apart.
fn companion_tint(kind: &str) -> Color {
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

fn attach_companions(
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
                Text2d::new(c.kind.clone()),
                text_font(9.0),
                TextColor(rgb([220, 225, 255])),
                Anchor::TOP_CENTER,
                Transform::from_xyz(0.0, -12.0, 1.0),
                CompanionLabel,
            ));
    }
}

fn attach_floaters(mut commands: Commands, added: Query<(Entity, &Floater), Added<Floater>>) {
    for (e, f) in &added {
        commands.entity(e).insert((
            Text2d::new(f.text.clone()),
            text_font(11.0),
            TextColor(rgb([255, 250, 210])),
            Anchor::BOTTOM_RIGHT,
            Text2dShadow::default(),
            Transform::from_xyz(0.0, 0.0, 10.0),
            Visibility::default(),
        ));
    }
}

fn window_size(window: &Query<&Window, With<PrimaryWindow>>) -> Vec2 {
    window
        .single()
        .map(|w| Vec2::new(w.resolution.width(), w.resolution.height()))
        .unwrap_or(Vec2::new(480.0, 320.0))
}

/// Ordered familiars (by slot) and the layout for them.
fn row(familiars: &Query<(Entity, &Familiar)>, window: Vec2) -> (Vec<Entity>, Layout) {
    let mut all: Vec<(usize, Entity)> = familiars.iter().map(|(e, f)| (f.slot, e)).collect();
    all.sort();
    let order: Vec<Entity> = all.into_iter().map(|(_, e)| e).collect();
    let l = layout(window, order.len());
    (order, l)
}

#[allow(clippy::type_complexity)]
fn place_familiars(
    window: Query<&Window, With<PrimaryWindow>>,
    familiars: Query<(Entity, &Familiar)>,
    mut transforms: Query<&mut Transform, (With<Familiar>, Without<Background>)>,
    mut background: Query<(&mut Sprite, &mut Transform), (With<Background>, Without<Familiar>)>,
    mut scale: ResMut<PixelScale>,
) {
    let size = window_size(&window);
    let (order, l) = row(&familiars, size);
    scale.0 = l.scale;
    for (i, e) in order.iter().enumerate() {
        if let Ok(mut t) = transforms.get_mut(*e) {
            let c = l.sprite_center(i);
            t.translation = Vec3::new(c.x, c.y, i as f32);
        }
    }
    // The backdrop covers the window, its floor under the familiars' feet.
    if let Ok((mut sprite, mut t)) = background.single_mut() {
        let scale = (size.x / 160.0).max(size.y / 100.0).ceil();
        sprite.custom_size = Some(Vec2::new(160.0, 100.0) * scale);
        let floor_from_bottom = (100.0 - 84.0) * scale;
        let y = l.ground_y - floor_from_bottom + 50.0 * scale;
        t.translation = Vec3::new(
            0.0,
            y.max(size.y / 2.0 - 50.0 * scale)
                .min(-size.y / 2.0 + 50.0 * scale),
            -100.0,
        );
    }
}

#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn draw_familiars(
    time: Res<Time>,
    window: Query<&Window, With<PrimaryWindow>>,
    all: Query<(Entity, &Familiar)>,
    familiars: Query<(
        Entity,
        &Familiar,
        &Animation,
        &Mana,
        &Progress,
        &Mark,
        &Speech,
        &FamiliarParts,
    )>,
    mut sprites: Query<(&mut Sprite, &mut Transform, &mut Visibility), Without<Familiar>>,
    mut nodes: Query<(&mut Node, &mut Visibility), (Without<Sprite>, Without<Familiar>)>,
    mut texts: Query<&mut Text>,
    mut colors: Query<&mut BackgroundColor>,
    hud_visible: Res<HudVisible>,
) {
    let size = window_size(&window);
    let (order, l) = row(&all, size);
    let t = time.elapsed_secs();
    for (e, familiar, anim, mana, progress, mark, speech, parts) in &familiars {
        let index = order.iter().position(|x| *x == e).unwrap_or(0);
        let current = anim.0.current();
        let (frames, fps) = SHEET.rows[current.row()];
        let frame = if anim.0.sleeping() {
            // Asleep the Zzz drift at a quarter of the rate: the window wakes every 2 s.
            anim.0.frame(frames, 0.5)
        } else if anim.0.calm() {
            0
        } else {
            anim.0.frame(frames, fps)
        };
        if let Ok((mut sprite, mut tr, _)) = sprites.get_mut(parts.sprite) {
            if let Some(atlas) = sprite.texture_atlas.as_mut() {
                atlas.index = current.row() * SHEET.columns as usize + frame as usize;
            }
            tr.scale = Vec3::splat(l.scale);
        }
        // Status mark bobbing beside the hat.
        if let Ok((mut sprite, mut tr, mut vis)) = sprites.get_mut(parts.mark) {
            match Mark::symbol(*mark) {
                Some(symbol) => {
                    if let Some(atlas) = sprite.texture_atlas.as_mut() {
                        atlas.index = if symbol == '!' {
                            art::ICON_EXCLAIM
                        } else {
                            art::ICON_QUESTION
                        };
                    }
                    let bob = if (t * 2.0) as i64 % 2 == 0 { 0.0 } else { 1.0 };
                    tr.translation = Vec3::new(14.0 * l.scale, (14.0 + bob) * l.scale, 5.0);
                    tr.scale = Vec3::splat((l.scale * 0.75).max(1.0));
                    *vis = Visibility::Inherited;
                }
                None => *vis = Visibility::Hidden,
            }
        }
        // Level-up stars circling.
        if let Ok((_, _, mut vis)) = sprites.get_mut(parts.stars) {
            *vis = if progress.level_up_age.is_some() {
                Visibility::Inherited
            } else {
                Visibility::Hidden
            };
        }

        // HUD block.
        let hud_rect = l.hud_rect(index);
        if let Ok((mut node, mut vis)) = nodes.get_mut(parts.hud) {
            node.left = px(hud_rect.min.x);
            node.top = px(hud_rect.min.y);
            node.width = px(hud_rect.width());
            *vis = if hud_visible.0 {
                Visibility::Inherited
            } else {
                Visibility::Hidden
            };
        }
        if let Ok(mut text) = texts.get_mut(parts.label) {
            let want = format!("{}  Lv {}", familiar.label, progress.level.max(1));
            if text.0 != want {
                text.0 = want;
            }
        }
        let band = mana.band();
        if let Ok((mut node, _)) = nodes.get_mut(parts.mana_fill) {
            let fill = if band == ManaBand::Unknown {
                1.0
            } else {
                mana.shown
            };
            node.width = percent(fill * 100.0);
        }
        if let Ok(mut color) = colors.get_mut(parts.mana_fill) {
            color.0 = rgb(band_color(band));
        }
        if let Ok(mut text) = texts.get_mut(parts.mana_text) {
            let want = mana.label();
            if text.0 != want {
                text.0 = want;
            }
        }
        if let Ok((mut node, _)) = nodes.get_mut(parts.xp_fill) {
            node.width = percent(progress.fraction() * 100.0);
        }
        if let Ok(mut text) = texts.get_mut(parts.note) {
            let want = if let Some(age) = progress.level_up_age
                && age < 2.0
            {
                format!("LEVEL UP! Lv {}", progress.level)
            } else if let Some(c) = mana.compaction
                && c.age < COMPACTION_NOTE_SECS
            {
                let side = |v: Option<u64>| v.map(logic::tokens).unwrap_or_else(|| "?".into());
                format!("rest {} -> {}", side(c.pre), side(c.post))
            } else {
                String::new()
            };
            if text.0 != want {
                text.0 = want;
            }
        }
        // Speech bubble beside the head.
        let head = l.to_screen(l.sprite_center(index) + Vec2::new(16.0 * l.scale, 8.0 * l.scale));
        if let Ok((mut node, mut vis)) = nodes.get_mut(parts.bubble) {
            match &speech.0 {
                Some(_) if hud_visible.0 => {
                    if l.count == 1 {
                        // Alone: beside the head.
                        node.left = px(head.x.min(size.x - 200.0).max(4.0));
                        node.max_width = px(190);
                        node.bottom = px(size.y - head.y);
                    } else {
                        // In a row: inside the familiar's own column, above its HUD block.
                        let spacing = size.x / l.count as f32;
                        node.left = px(spacing * index as f32 + 6.0);
                        node.max_width = px(spacing - 12.0);
                        node.bottom = px(size.y - hud_rect.min.y + 16.0);
                    }
                    *vis = Visibility::Inherited;
                }
                _ => *vis = Visibility::Hidden,
            }
        }
        if let Some((said, _)) = &speech.0
            && let Ok(mut text) = texts.get_mut(parts.bubble_text)
            && text.0 != *said
        {
            text.0 = said.clone();
        }
    }
}

/// Level-up stars orbit the familiar while the effect plays.
fn orbit_stars(
    familiars: Query<(&Progress, &FamiliarParts)>,
    children: Query<&Children>,
    mut transforms: Query<&mut Transform, Without<Familiar>>,
) {
    for (progress, parts) in &familiars {
        let Some(age) = progress.level_up_age else {
            continue;
        };
        let Ok(kids) = children.get(parts.stars) else {
            continue;
        };
        for (i, kid) in kids.iter().enumerate() {
            if let Ok(mut t) = transforms.get_mut(kid) {
                let a = age * 3.0 + i as f32 * std::f32::consts::TAU / 5.0;
                let r = 70.0 + age * 20.0;
                t.translation = Vec3::new(r * a.cos(), 10.0 + 0.5 * r * a.sin(), 2.0);
                t.scale = Vec3::splat(2.0);
            }
        }
    }
}

#[allow(clippy::type_complexity)]
fn draw_companions(
    window: Query<&Window, With<PrimaryWindow>>,
    all: Query<(Entity, &Familiar)>,
    owners: Query<&Transform, (With<Familiar>, Without<Companion>)>,
    mut companions: Query<
        (&Companion, &Children, &mut Sprite, &mut Transform),
        (Without<Familiar>, Without<CompanionLabel>),
    >,
    mut labels: Query<
        &mut Transform,
        (With<CompanionLabel>, Without<Companion>, Without<Familiar>),
    >,
) {
    let size = window_size(&window);
    let (_, l) = row(&all, size);
    // Companions of each owner, oldest nearest.
    let mut by_owner: Vec<(Entity, u64)> = companions
        .iter()
        .map(|(c, ..)| (c.owner, c.order))
        .collect();
    by_owner.sort_by_key(|(_, order)| *order);
    for (c, children, mut sprite, mut t) in &mut companions {
        let Ok(owner) = owners.get(c.owner) else {
            continue;
        };
        let rank = by_owner
            .iter()
            .filter(|(o, _)| *o == c.owner)
            .position(|(_, order)| *order == c.order)
            .unwrap_or(0);
        let side = if rank % 2 == 0 { 1.0 } else { -1.0 };
        let step = (rank / 2) as f32;
        let x = owner.translation.x + side * (26.0 + step * 16.0) * l.scale;
        let y = l.ground_y + 10.0 * l.scale;
        t.translation = Vec3::new(x, y, 3.0 + rank as f32 * 0.1);
        sprite.custom_size = Some(Vec2::splat(COMPANION_SHEET.frame as f32 * l.scale));
        for child in children.iter() {
            if let Ok(mut lt) = labels.get_mut(child) {
                lt.translation = Vec3::new(0.0, -9.0 * l.scale, 1.0);
            }
        }
        let (row_i, frame) = if let Some(left) = c.leaving {
            let f = ((1.0 - left / COMPANION_LEAVE_SECS) * 3.99).clamp(0.0, 3.0) as usize;
            (2, f)
        } else if c.age < COMPANION_ENTER_SECS {
            (2, ((c.age / COMPANION_ENTER_SECS) * 4.0).min(3.0) as usize)
        } else if c.busy > 0.0 {
            (1, (c.age * COMPANION_SHEET.rows[1].1) as usize % 4)
        } else {
            (0, (c.age * COMPANION_SHEET.rows[0].1) as usize % 4)
        };
        if let Some(atlas) = sprite.texture_atlas.as_mut() {
            atlas.index = row_i * COMPANION_SHEET.columns as usize + frame;
        }
        let alpha = c
            .leaving
            .map(|l| (1.0 - l / COMPANION_LEAVE_SECS).clamp(0.0, 1.0))
            .unwrap_or(1.0);
        sprite.color = companion_tint(&c.kind).with_alpha(alpha);
    }
}

fn draw_floaters(
    scale: Res<PixelScale>,
    owners: Query<&Transform, (With<Familiar>, Without<Floater>)>,
    mut floaters: Query<(&Floater, &mut Transform, &mut TextColor), Without<Familiar>>,
) {
    for (f, mut t, mut color) in &mut floaters {
        let Ok(owner) = owners.get(f.owner) else {
            continue;
        };
        // Up the familiar's left side (companions stand on its right first), under the HUD.
        let rise = f.age * 14.0;
        t.translation = Vec3::new(
            owner.translation.x - 12.0 * scale.0,
            owner.translation.y + 2.0 * scale.0 + rise,
            20.0,
        );
        let alpha = (1.0 - f.age / FLOATER_SECS).clamp(0.0, 1.0);
        color.0 = color.0.with_alpha(alpha);
    }
}

#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn draw_hud(
    focus: Res<Focus>,
    familiars: Query<(&Familiar, &Quest)>,
    log: Res<LogStrip>,
    replay: Res<Replay>,
    hud_visible: Res<HudVisible>,
    mut banner: Query<&mut Visibility, (With<QuestBanner>, Without<LogPanel>)>,
    mut panel: Query<&mut Visibility, (With<LogPanel>, Without<QuestBanner>)>,
    mut quest_text: Query<&mut Text, (With<QuestText>, Without<LogText>, Without<StatusText>)>,
    mut log_text: Query<&mut Text, (With<LogText>, Without<QuestText>, Without<StatusText>)>,
    mut status: Query<&mut Text, (With<StatusText>, Without<QuestText>, Without<LogText>)>,
) {
    let several = familiars.iter().count() > 1;
    let quest = focus
        .0
        .and_then(|e| familiars.get(e).ok())
        .and_then(|(f, q)| {
            q.0.as_ref().map(|text| {
                if several {
                    format!("Quest ({}): {text}", f.label)
                } else {
                    format!("Quest: {text}")
                }
            })
        });
    if let Ok(mut vis) = banner.single_mut() {
        *vis = if quest.is_some() && hud_visible.0 {
            Visibility::Inherited
        } else {
            Visibility::Hidden
        };
    }
    if let (Some(q), Ok(mut text)) = (quest, quest_text.single_mut())
        && text.0 != q
    {
        text.0 = q;
    }
    if let Ok(mut vis) = panel.single_mut() {
        *vis = if !log.lines.is_empty() && hud_visible.0 {
            Visibility::Inherited
        } else {
            Visibility::Hidden
        };
    }
    if log.is_changed()
        && let Ok(mut text) = log_text.single_mut()
    {
        text.0 = log.lines.iter().cloned().collect::<Vec<_>>().join("\n");
    }
    if let Ok(mut text) = status.single_mut() {
        let want = match &replay.0 {
            Some(r) if r.paused() => format!("PAUSED  x{}", speed_label(r.speed())),
            Some(r) => format!("x{}", speed_label(r.speed())),
            None => String::new(),
        };
        let want = if hud_visible.0 { want } else { String::new() };
        if text.0 != want {
            text.0 = want;
        }
    }
}

fn speed_label(speed: f64) -> String {
    if speed >= 10.0 {
        format!("{speed:.0}")
    } else {
        format!("{speed:.2}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

fn despawn_orphan_huds(
    mut commands: Commands,
    huds: Query<(Entity, &HudOf)>,
    familiars: Query<(), With<Familiar>>,
) {
    for (e, of) in &huds {
        if familiars.get(of.0).is_err() {
            commands.entity(e).despawn();
        }
    }
}

fn keys(
    input: Res<ButtonInput<KeyCode>>,
    replay: Res<Replay>,
    mut hud: ResMut<HudVisible>,
    mut exit: MessageWriter<AppExit>,
) {
    if input.just_pressed(KeyCode::KeyQ) || input.just_pressed(KeyCode::Escape) {
        exit.write(AppExit::Success);
    }
    if input.just_pressed(KeyCode::KeyH) {
        hud.0 = !hud.0;
    }
    if let Some(r) = &replay.0 {
        if input.just_pressed(KeyCode::Space) {
            r.toggle_pause();
        }
        if input.just_pressed(KeyCode::Equal) || input.just_pressed(KeyCode::NumpadAdd) {
            r.set_speed(r.speed() * 2.0);
        }
        if input.just_pressed(KeyCode::Minus) || input.just_pressed(KeyCode::NumpadSubtract) {
            r.set_speed(r.speed() / 2.0);
        }
    }
}

/// Full rate only while something moves; a few frames a second while a familiar breathes;
/// once all are calm (idle a while, or asleep) the window wakes only for its next timer (a
/// bubble to hide, falling asleep) or at most every few seconds. Feed items wake the loop at
/// once through the bridge.
fn power_mode(
    options: Res<Options>,
    activity: Res<Activity>,
    familiars: Query<(&Animation, &Speech, &Mana)>,
    settings: Option<ResMut<WinitSettings>>,
    mut opened: Local<Option<std::time::Instant>>,
) {
    let Some(mut settings) = settings else {
        return;
    };
    if options.0.continuous {
        return;
    }
    // Regression: under Xvfb the window stayed a blank rectangle in 3 of 5 starts, because
    // the few frames drawn before the window was mapped were all the low-power mode drew
    // until something happened. Draw at full rate for the first moments, then go reactive.
    let opened = *opened.get_or_insert_with(std::time::Instant::now);
    if opened.elapsed() < FIRST_FRAMES_AT_FULL_RATE {
        if settings.focused_mode != UpdateMode::Continuous {
            *settings = WinitSettings::game();
        }
        return;
    }
    let wait = if activity.animating {
        // 20 fps: the sprite sheets run at 2-10 fps, easing and floaters look smooth at 20,
        // and each frame costs real CPU where rendering is software (llvmpipe).
        Duration::from_millis(50)
    } else if familiars.iter().any(|(a, ..)| !a.0.calm()) {
        Duration::from_millis(333)
    } else {
        let mut next: f32 = if familiars.iter().any(|(a, ..)| a.0.sleeping()) {
            2.0 // the Zzz drift slowly
        } else {
            5.0
        };
        for (anim, speech, mana) in &familiars {
            next = next.min(anim.0.next_change());
            if let Some((_, left)) = &speech.0 {
                next = next.min(*left);
            }
            if let Some(c) = mana.compaction
                && c.age < COMPACTION_NOTE_SECS
            {
                next = next.min(COMPACTION_NOTE_SECS - c.age);
            }
        }
        Duration::from_secs_f32(next.clamp(0.033, 5.0))
    };
    let want = UpdateMode::reactive_low_power(wait);
    if settings.focused_mode != want || settings.unfocused_mode != want {
        *settings = idle_settings(wait);
    }
}

/// How long a new window draws at full rate before it may go reactive.
const FIRST_FRAMES_AT_FULL_RATE: Duration = Duration::from_millis(1500);

fn count_frames(options: Res<Options>) {
    if let Some(counter) = &options.0.frame_counter {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[derive(Default)]
struct ShotState {
    frames: u32,
    requested: bool,
    started: Option<std::time::Instant>,
}

fn screenshot(
    mut commands: Commands,
    options: Res<Options>,
    familiars: Query<&Animation>,
    mut state: Local<ShotState>,
    mut exit: MessageWriter<AppExit>,
) {
    let Some(shot) = &options.0.screenshot else {
        return;
    };
    let started = *state.started.get_or_insert_with(std::time::Instant::now);
    // Count frames once a familiar is on stage and past its entrance (a puff of smoke).
    let on_stage = !familiars.is_empty() && familiars.iter().all(|a| a.0.current() != Anim::Enter);
    if on_stage {
        state.frames += 1;
    }
    if !state.requested && state.frames >= shot.after_frames {
        state.requested = true;
        let path = shot.path.clone();
        commands.spawn(Screenshot::primary_window()).observe(
            move |captured: On<ScreenshotCaptured>, mut exit: MessageWriter<AppExit>| {
                let result = captured
                    .image
                    .clone()
                    .try_into_dynamic()
                    .map_err(|e| e.to_string())
                    .and_then(|img| {
                        if let Some(dir) = path.parent() {
                            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
                        }
                        img.to_rgba8().save(&path).map_err(|e| e.to_string())
                    });
                match result {
                    Ok(()) => {
                        tracing::info!(path = %path.display(), "screenshot saved");
                        exit.write(AppExit::Success);
                    }
                    Err(e) => {
                        tracing::error!(path = %path.display(), "screenshot failed: {e}");
                        exit.write(AppExit::from_code(3));
                    }
                }
            },
        );
    }
    // A watchdog, so a renderer that never delivers cannot hang a test run forever.
    if started.elapsed() > Duration::from_secs(180) {
        tracing::error!("no screenshot after 180 s; giving up");
        exit.write(AppExit::from_code(4));
    }
}

/// Carries the pipeline's channel into the game and wakes the event loop when items arrive,
/// so a reactive (idle) window reacts at once instead of at its next timeout.
pub fn add_feed_bridge(app: &mut App, feed: Receiver<GameFeed>) {
    // Bounded like the pipeline's own channel, so a stalled window still pushes back on the
    // pipeline instead of the bridge buffering without end.
    let (tx, rx) = crossbeam_channel::bounded(BRIDGE_CAPACITY);
    app.insert_resource(FeedChannel(rx))
        .insert_resource(BridgeStart(Mutex::new(Some((feed, tx)))))
        .add_systems(Startup, start_bridge);
}

const BRIDGE_CAPACITY: usize = 4096;

#[derive(Resource)]
struct BridgeStart(Mutex<Option<(Receiver<GameFeed>, Sender<GameFeed>)>>);

/// Dropped with the app, which stops the bridge thread.
#[derive(Resource)]
#[allow(dead_code)]
struct BridgeStop(Sender<()>);

fn start_bridge(
    mut commands: Commands,
    start: Res<BridgeStart>,
    proxy: Option<Res<EventLoopProxyWrapper>>,
) {
    let Some((feed, tx)) = start.0.lock().ok().and_then(|mut g| g.take()) else {
        return;
    };
    let proxy = proxy.map(|p| (**p).clone());
    let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(0);
    let spawned = std::thread::Builder::new()
        .name("familiar-game-feed".to_string())
        .spawn(move || {
            loop {
                crossbeam_channel::select! {
                    recv(feed) -> item => {
                        let Ok(item) = item else { break };
                        // Wake the loop only when the game had drained everything: otherwise a
                        // wake-up is already on its way.
                        let was_empty = tx.is_empty();
                        if tx.send(item).is_err() {
                            break;
                        }
                        if was_empty && let Some(p) = &proxy {
                            let _ = p.send_event(WinitUserEvent::WakeUp);
                        }
                    }
                    recv(stop_rx) -> _ => break,
                }
            }
        });
    match spawned {
        Ok(_) => commands.insert_resource(BridgeStop(stop_tx)),
        Err(e) => tracing::warn!("feed bridge thread did not start ({e}); polling instead"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_keeps_things_inside_the_window() {
        for (w, h) in [(480.0, 320.0), (320.0, 200.0), (1280.0, 720.0)] {
            for n in 1..=4 {
                let l = layout(Vec2::new(w, h), n);
                for i in 0..n {
                    let s = l.sprite_rect(i);
                    assert!(
                        s.min.x >= -1.0 && s.max.x <= w + 1.0,
                        "{w}x{h} n={n}: {s:?}"
                    );
                    assert!(s.max.y <= h, "{w}x{h} n={n}: {s:?}");
                    let bar = l.mana_bar_rect(i);
                    assert!(
                        bar.min.y > 0.0 && bar.max.y < s.min.y + 20.0,
                        "{bar:?} {s:?}"
                    );
                }
            }
        }
        assert_eq!(layout(Vec2::new(480.0, 320.0), 1).scale, 3.0);
    }

    #[test]
    fn keys_pause_change_speed_hide_the_hud_and_quit() {
        let control = ReplayControl::new(1.0);
        let mut app = App::new();
        app.add_plugins(MinimalPlugins)
            .add_message::<AppExit>()
            .init_resource::<ButtonInput<KeyCode>>()
            .insert_resource(Replay(Some(control.clone())))
            .insert_resource(HudVisible(true))
            .add_systems(Update, keys);
        let press = |app: &mut App, key: KeyCode| {
            let mut input = app.world_mut().resource_mut::<ButtonInput<KeyCode>>();
            input.reset_all();
            input.press(key);
            app.update();
            let mut input = app.world_mut().resource_mut::<ButtonInput<KeyCode>>();
            input.release(key);
            input.clear();
        };
        press(&mut app, KeyCode::Space);
        assert!(control.paused());
        press(&mut app, KeyCode::Space);
        assert!(!control.paused());
        press(&mut app, KeyCode::Equal);
        press(&mut app, KeyCode::NumpadAdd);
        assert_eq!(control.speed(), 4.0);
        press(&mut app, KeyCode::Minus);
        assert_eq!(control.speed(), 2.0);
        press(&mut app, KeyCode::KeyH);
        assert!(!app.world().resource::<HudVisible>().0);
        let exits = |app: &App| app.world().resource::<Messages<AppExit>>().len();
        assert_eq!(exits(&app), 0);
        press(&mut app, KeyCode::KeyQ);
        assert!(exits(&app) > 0, "q quits");
    }

    #[test]
    fn the_bridge_carries_the_feed_without_a_window() {
        use familiar_model::{Event, EventKind};
        let mut app = App::new();
        app.add_plugins(MinimalPlugins)
            .add_plugins(crate::GameLogicPlugin);
        let (tx, rx) = crossbeam_channel::bounded(8);
        add_feed_bridge(&mut app, rx);
        let mut ev = Event::new(EventKind::Text, 1);
        ev.session = Some("bridged".into());
        ev.context_used = Some(20_000);
        // More items than either channel holds: the bridge must keep draining.
        let sender = std::thread::spawn(move || {
            (0..BRIDGE_CAPACITY + 100).all(|_| tx.send(GameFeed::Event(ev.clone())).is_ok())
        });
        let mut seen = false;
        // Polls (up to ~20 s on a loaded machine); normally done in a few updates.
        for _ in 0..10_000 {
            app.update();
            let mut q = app.world_mut().query::<(&Familiar, &Mana)>();
            seen = q
                .iter(app.world())
                .any(|(f, m)| f.session == "bridged" && m.remaining() == Some(180_000));
            if seen && sender.is_finished() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(seen, "the bridged event never arrived");
        assert!(sender.join().unwrap_or(false), "the sender was cut off");
    }

    #[test]
    fn speeds_read_well() {
        assert_eq!(speed_label(1.0), "1");
        assert_eq!(speed_label(0.5), "0.5");
        assert_eq!(speed_label(0.25), "0.25");
        assert_eq!(speed_label(64.0), "64");
    }
}
