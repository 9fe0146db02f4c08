//! Drawing and input: turns the logic components of `logic` into sprites, text and UI,
//! handles the keys, switches the window between full rate (while something moves) and a
//! low-power reactive mode, bridges the pipeline's channel into the game with wake-ups, and
//! takes the optional screenshot. Nothing here decides game state; it only shows it.
//!
//! - `canvas`: the fixed low-resolution canvas everything is drawn on, shown scaled by whole
//!   numbers in the window; mouse positions back to canvas pixels;
//! - `blit`: the render pass that copies the canvas into the window;
//! - `text`: [`PixelText`], the one way to show text (Familiar's pixel font, `crate::font`);
//! - `layout`: where everything goes on the canvas for a number of familiars (pure);
//! - `spawn`: the entities and UI nodes created at start-up and when a familiar, companion or
//!   floater arrives;
//! - `draw`: places and animates them each frame from the logic components;
//! - `hud`: the quest banner, the log strip and the replay status;
//! - `panel`: what the agent is doing (plan, quest, last actions), the focused session's
//!   card and the bars' tooltips;
//! - `pointer`: hover and click-to-focus, from the layout's hit-tests;
//! - `input`: the keys;
//! - `power`: full rate or low power, and the frame counter;
//! - `capture`: the optional screenshot;
//! - `bridge`: the pipeline's channel into the game, waking the event loop;
//! - `pacer`: when the bridge wakes it while the window animates: each animation frame, and
//!   frames for feed input;
//! - `wardrobe`: the hats and accessories the familiars wear, and the scene decor;
//! - `backdrop`: the sky of the time of day, the weather, the campfire of rest;
//! - `own_weather`: a session's own cloud and rain while several share the window;
//! - `sky`: the sun or the moon, in the free sky the layout finds;
//! - `scene_of_work`: the far hills dressed for the work going on (a library, a forge);
//! - `effects`: the particles of bursts and think auras, the companions' mana bars;
//! - `title`: the window's title, named after its sessions' projects;
//! - `notice`: the pipeline's own word: where it looks while no session is there, the end of
//!   a replay.
//!
//! This file holds what they share: the plugin, the marker components and the colours.

mod backdrop;
mod blit;
mod bridge;
mod canvas;
mod capture;
mod draw;
mod effects;
mod hud;
mod input;
mod layout;
mod notice;
mod own_weather;
mod pacer;
mod panel;
mod pointer;
mod power;
mod scene_of_work;
mod sky;
mod spawn;
mod text;
mod title;
mod wardrobe;

use bevy::prelude::*;
use familiar_model::ReplayControl;

use crate::GameOptions;
use crate::logic::{Familiar, LogicSet, ManaBand};

pub use bridge::add_feed_bridge;
pub use canvas::{
    CANVAS, Canvas, DEFAULT_WINDOW, MIN_WINDOW, canvas_for, canvas_scale, canvas_size,
    canvas_to_window, cursor_to_canvas, window_to_canvas,
};
pub use layout::{Hit, Layout, layout};
pub use pointer::{FocusPlugin, PointerAt};
pub use power::idle_settings;
pub use text::{PixelText, set_text, ui_text, world_text};

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
pub(crate) const BAR_BORDER: [u8; 3] = [12, 8, 22];
pub(crate) const XP_FILL: [u8; 3] = [120, 230, 120];
/// The plates' background: opaque, so the sky's stars never show through the text.
pub const PLATE_BG: [u8; 3] = [24, 18, 44];
/// Where the XP bar starts in a plate, after "Lv 12".
pub(crate) const XP_BAR_LEFT: f32 = 40.0;

pub(crate) fn rgb(c: [u8; 3]) -> Color {
    Color::srgb_u8(c[0], c[1], c[2])
}

/// How long the "rest pre -> post" note shows after a compaction.
pub(crate) const COMPACTION_NOTE_SECS: f32 = 5.0;

/// Handles to the embedded art.
#[derive(Resource, Clone)]
pub(crate) struct Art {
    pub(crate) familiar: Handle<Image>,
    pub(crate) familiar_layout: Handle<TextureAtlasLayout>,
    pub(crate) companion: Handle<Image>,
    pub(crate) companion_layout: Handle<TextureAtlasLayout>,
    pub(crate) icons: Handle<Image>,
    pub(crate) icons_layout: Handle<TextureAtlasLayout>,
    pub(crate) background: Handle<Image>,
}

#[derive(Resource)]
pub(crate) struct Replay(pub(crate) Option<ReplayControl>);

#[derive(Resource, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HudVisible(pub(crate) bool);

#[derive(Resource)]
pub(crate) struct Options(pub(crate) GameOptions);

/// The parts drawn for one familiar.
#[derive(Component)]
pub(crate) struct FamiliarParts {
    pub(crate) sprite: Entity,
    pub(crate) mark: Entity,
    pub(crate) stars: Entity,
    pub(crate) tag: Entity,
    pub(crate) plate: Entity,
    pub(crate) name: Entity,
    pub(crate) status_icon: Entity,
    pub(crate) status_text: Entity,
    pub(crate) mana_bar: Entity,
    pub(crate) mana_fill: Entity,
    pub(crate) mana_text: Entity,
    pub(crate) level_text: Entity,
    pub(crate) xp_bar: Entity,
    pub(crate) xp_fill: Entity,
    pub(crate) doing_text: Entity,
    pub(crate) bubble: Entity,
    pub(crate) bubble_text: Entity,
}

/// A UI root that belongs to a familiar and goes when it goes.
#[derive(Component)]
pub(crate) struct HudOf(pub(crate) Entity);

/// Every UI root `h` hides.
#[derive(Component)]
pub(crate) struct HudRoot;

#[derive(Component)]
pub(crate) struct Background;

#[derive(Component)]
pub(crate) struct CompanionLabel;

/// The current pixel-art scale (from the layout), for things placed relative to a familiar.
#[derive(Resource, Clone, Copy)]
pub(crate) struct PixelScale(pub(crate) f32);

#[derive(Component)]
pub(crate) struct QuestBanner;
#[derive(Component)]
pub(crate) struct QuestText;
#[derive(Component)]
pub(crate) struct LogPanel;
#[derive(Component)]
pub(crate) struct LogText;
#[derive(Component)]
pub(crate) struct StatusText;
#[derive(Component)]
pub(crate) struct StatusPlate;

pub struct ViewPlugin {
    pub options: GameOptions,
}

impl Plugin for ViewPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(Replay(self.options.replay.clone()))
            .insert_resource(HudVisible(true))
            .insert_resource(PixelScale(3.0))
            .insert_resource(Options(self.options.clone()))
            .add_plugins((FocusPlugin, blit::CanvasBlitPlugin))
            .init_resource::<wardrobe::HatChange>()
            .add_systems(
                Startup,
                (
                    canvas::setup_canvas,
                    spawn::setup,
                    panel::spawn_panel,
                    notice::spawn_notice,
                    wardrobe::setup,
                    backdrop::setup_world,
                )
                    .chain(),
            )
            .add_systems(First, canvas::fit_canvas)
            .add_systems(
                PostUpdate,
                text::show_pixel_text.before(bevy::ui::UiSystems::Prepare),
            )
            .add_systems(
                Update,
                (
                    (
                        spawn::attach_familiars,
                        spawn::attach_companions,
                        spawn::attach_floaters,
                    ),
                    (title::name_window, notice::draw_notice),
                    (
                        draw::place_familiars,
                        draw::draw_familiars,
                        draw::orbit_stars,
                        draw::draw_companions,
                        draw::draw_floaters,
                        hud::draw_hud,
                        panel::draw_panel,
                        hud::despawn_orphan_huds,
                    ),
                    (
                        wardrobe::dress_familiars,
                        wardrobe::dress_companions,
                        wardrobe::draw_wardrobe,
                        backdrop::attach_campfires,
                        own_weather::attach_own_weather,
                        effects::attach_particles,
                        effects::attach_companion_bars,
                        backdrop::draw_sky,
                        sky::draw_sky_body,
                        scene_of_work::draw_scene,
                        backdrop::draw_campfires,
                        own_weather::draw_own_weather,
                        effects::draw_particles,
                        effects::draw_companion_bars,
                    )
                        .chain(),
                )
                    .chain()
                    .after(LogicSet),
            )
            .add_systems(
                Update,
                (
                    pointer::track.before(pointer::point),
                    input::keys.before(pointer::point),
                    power::power_mode,
                    capture::screenshot,
                    power::count_frames,
                ),
            );
    }
}

/// `text` cut with `…` to `width` canvas pixels (exactly as the pixel font draws it).
pub(crate) fn fit(text: &str, width: f32) -> String {
    crate::font::fit(text, width.max(0.0) as u32)
}

/// Ordered familiars (by slot) and the layout for them on the canvas.
pub(crate) fn row(familiars: &Query<(Entity, &Familiar)>) -> (Vec<Entity>, Layout) {
    let mut all: Vec<(usize, Entity)> = familiars.iter().map(|(e, f)| (f.slot, e)).collect();
    all.sort();
    let order: Vec<Entity> = all.into_iter().map(|(_, e)| e).collect();
    let l = layout(canvas_size(), order.len());
    (order, l)
}
