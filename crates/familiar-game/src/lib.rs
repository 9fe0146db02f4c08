//! The Familiar window: a Bevy scene where the coding agent is a pixel-art familiar.
//!
//! This is the only crate of the workspace that depends on Bevy. The pipeline (tailer,
//! normalizer, scripts) runs on its own threads and sends [`GameFeed`] items over a
//! crossbeam channel; [`run_game`] opens the window and blocks until it closes. Inside:
//! - `logic` holds the game state as ECS components and systems (state machine, mana, XP,
//!   companions, marks), tested headless with `MinimalPlugins`;
//! - `anim` is the animation state machine as plain data;
//! - `view` draws that state (sprites, text, UI) on a fixed low-resolution canvas scaled by
//!   whole numbers into the window, and handles keys;
//! - `font` is Familiar's pixel font (own glyphs, GNU Unifont as the fallback), pure;
//! - `sheet` holds the sprite-sheet layouts, and `assets` embeds the sheets (PNGs drawn by the
//!   `gen-sprites` tool, `crates/familiar-game-tools/src/bin/gen-sprites/`, into `assets/`);
//! - `probe` checks, before Bevy starts, that a window can open (X server, GPU adapter);
//! - `window_memory` remembers the window's size and position between runs;
//! - `ambience` is the reacting world as plain data (sky for the hour and weather, particles);
//! - `progression` is the user's XP, level and unlocks as the pipeline sends them, and
//!   `progression::wardrobe` what they put on screen (pure);
//! - `scene` puts the game in a given state from a fixed feed and a fixed clock, for
//!   screenshots that are the same run after run; `clock` is the local time of day the view
//!   reads (fixed by a scene).

pub mod ambience;
pub mod anim;
mod assets;
pub mod clock;
pub mod font;
pub mod frame_trace;
pub mod logic;
mod probe;
pub mod progression;
pub mod scene;
pub mod sheet;
mod view;
mod window_memory;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use bevy::app::AppExit;
use bevy::prelude::*;
use bevy::window::{ExitCondition, WindowPlugin, WindowPosition, WindowResolution};
use bevy::winit::{WinitPlugin, WinitSettings};
use crossbeam_channel::Receiver;
use familiar_model::{Action, Event, ReplayControl};

pub use logic::GameLogicPlugin;
pub use probe::{Probed, Renderer, window_available};
pub use view::{
    BAR_EMPTY, CANVAS, Canvas, DEFAULT_WINDOW, FocusPlugin, Hit, Layout, MIN_WINDOW, PLATE_BG,
    PixelText, PointerAt, band_color, canvas_for, canvas_scale, canvas_size, canvas_to_window,
    cursor_to_canvas, layout, set_text, ui_text, window_to_canvas, world_text,
};
pub use window_memory::{WindowMemory, default_window_memory_path};

/// What the pipeline sends the game.
// Events are large, but each item moves through the channel once; boxing would only add an
// allocation per event and noise at every call site.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum GameFeed {
    /// An event of the session model: the only source of session state (mana, status, the
    /// project label from `cwd`, a `snapshot` for each session that existed at start).
    Event(Event),
    /// An action from the scripts: animations, speech, quests, XP, companions, log lines.
    Action(Action),
    /// The user's progression (XP, level, unlocks), owned by the pipeline: the window
    /// shows it and the familiar whose session reached a level celebrates.
    Progress(familiar_model::progression::ProgressUpdate),
    /// Close the window: the pipeline ended (Ctrl-C while watching live).
    Quit,
    /// No session yet, and where the pipeline looks for one: said while the scene is empty.
    Waiting(String),
    /// The replay or the demo is over, and what to do next: said until the window closes.
    Ended(String),
    /// The link to a remote host is up or down: its sessions' plates say so.
    Remote { host: String, connected: bool },
}

/// Take a screenshot from inside the game after some frames, save it, and quit.
#[derive(Debug, Clone)]
pub struct ScreenshotOptions {
    pub path: PathBuf,
    /// Frames to run before the capture (the familiar needs a few to settle).
    pub after_frames: u32,
}

/// How the window runs.
#[derive(Debug, Clone)]
pub struct GameOptions {
    /// Replay pause/speed, driven by space and `+`/`-` (absent for live sessions).
    pub replay: Option<ReplayControl>,
    pub screenshot: Option<ScreenshotOptions>,
    /// Always draw at full rate instead of only while something moves. Needed under Xvfb,
    /// where no window manager ever focuses the window.
    pub continuous: bool,
    /// Where the window's size and position are remembered; `None` remembers nothing.
    pub window_memory: Option<PathBuf>,
    /// The largest window that can open here (`Probed::largest_window`): a remembered size
    /// opens within it. `None`: within `window_memory::MAX_SIDE`.
    pub largest_window: Option<UVec2>,
    /// The screen's size (`Probed::screen`: every monitor's bounding box): a remembered position
    /// off it is left to the window manager. `None`: the remembered position as it is.
    pub screen: Option<UVec2>,
    pub title: String,
    /// Familiars on screen at once (one per session).
    pub max_familiars: usize,
    /// Counts frames (updates), for benchmarks.
    pub frame_counter: Option<Arc<AtomicU64>>,
    /// Write the frame trace here (`frame_trace`): when each frame that shows new feed input
    /// was drawn, and which input it shows. For benchmarks; `None` costs nothing.
    pub frame_trace: Option<PathBuf>,
    /// Play this scene (fixed feed, time step and local time) instead of only the feed, for a
    /// deterministic screenshot; the screenshot's `after_frames` then counts from the first
    /// frame.
    pub scene: Option<scene::Scene>,
}

impl Default for GameOptions {
    fn default() -> GameOptions {
        GameOptions {
            replay: None,
            screenshot: None,
            continuous: false,
            window_memory: default_window_memory_path(),
            largest_window: None,
            screen: None,
            title: "Familiar".to_string(),
            max_familiars: 10,
            frame_counter: None,
            frame_trace: None,
            scene: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GameError {
    #[error("no display: {0}")]
    NoDisplay(String),
    #[error(
        "no X server at DISPLAY={display}: {reason}; start your desktop session, or Xvfb \
         (Debian: apt install xvfb)"
    )]
    NoXServer { display: String, reason: String },
    #[error(
        "no GPU driver for the game window: install Vulkan drivers (Debian: apt install \
         mesa-vulkan-drivers, which includes the llvmpipe software renderer)"
    )]
    NoGpu,
    #[error("the game window stopped with an error (code {0})")]
    Failed(u8),
}

/// Whether a window can open here. Familiar's Bevy build speaks X11 only (Wayland desktops
/// provide it through XWayland, which sets `DISPLAY`).
pub fn display_available() -> Result<(), GameError> {
    display_available_in(|k| std::env::var_os(k))
}

fn display_available_in(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Result<(), GameError> {
    let set = |k: &str| var(k).is_some_and(|v| !v.is_empty());
    if set("DISPLAY") {
        Ok(())
    } else if set("WAYLAND_DISPLAY") {
        Err(GameError::NoDisplay(
            "WAYLAND_DISPLAY is set but DISPLAY is not; the game window needs X11 (XWayland)"
                .to_string(),
        ))
    } else {
        Err(GameError::NoDisplay(
            "neither DISPLAY nor WAYLAND_DISPLAY is set".to_string(),
        ))
    }
}

/// Everything the window adds on top of Bevy's default plugins: logic, view, keys, low-power
/// scheduling, window memory and the optional screenshot.
pub struct GamePlugin {
    pub feed: Option<Receiver<GameFeed>>,
    pub options: GameOptions,
}

impl Plugin for GamePlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(logic::GameConfig {
            max_familiars: self.options.max_familiars.max(1),
            ..logic::GameConfig::default()
        })
        .add_plugins(GameLogicPlugin)
        .add_plugins(view::ViewPlugin {
            options: self.options.clone(),
        })
        .add_plugins(window_memory::WindowMemoryPlugin {
            path: self.options.window_memory.clone(),
        })
        .insert_resource(clock::LocalClock {
            fixed: self.options.scene.as_ref().map(|s| s.local_time),
        })
        .insert_resource(clock::Seed::for_run(
            self.options.scene.as_ref().map(|s| s.seed),
        ));
        if let Some(scene) = &self.options.scene {
            app.add_plugins(scene::ScenePlugin {
                scene: scene.clone(),
            });
        }
        if let Some(feed) = &self.feed {
            view::add_feed_bridge(app, feed.clone());
        }
        if let Some(path) = &self.options.frame_trace {
            app.add_plugins(frame_trace::FrameTracePlugin { path: path.clone() });
        }
    }
}

/// Opens the window, plays the feed, and returns when the window closes (or `q`).
pub fn run_game(feed: Receiver<GameFeed>, options: GameOptions) -> Result<(), GameError> {
    display_available()?;
    let memory = options
        .window_memory
        .as_deref()
        .and_then(window_memory::load);
    let mut window = Window {
        title: options.title.clone(),
        resolution: WindowResolution::new(DEFAULT_WINDOW.x, DEFAULT_WINDOW.y),
        // Text at least 12 pixels high: the canvas at 2× at least.
        resize_constraints: bevy::window::WindowResizeConstraints {
            min_width: MIN_WINDOW.x as f32,
            min_height: MIN_WINDOW.y as f32,
            ..default()
        },
        ..default()
    };
    if let Some(m) = &memory {
        let size = m.opening_size(MIN_WINDOW, options.largest_window);
        window.resolution = WindowResolution::new(size.x, size.y);
        if let Some(at) = m.opening_position(size, options.screen) {
            window.position = WindowPosition::At(at);
        }
    }
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: Some(window),
                exit_condition: ExitCondition::OnPrimaryClosed,
                close_when_requested: true,
                ..default()
            })
            // Tests run the window on a test thread; the binary on its main thread.
            .set(WinitPlugin {
                run_on_any_thread: true,
            })
            .set(ImagePlugin::default_nearest())
            // A scene's capture must not miss what a shader still compiling would leave out.
            .set(bevy::render::RenderPlugin {
                render_creation: render_settings().into(),
                synchronous_pipeline_compilation: options.scene.is_some(),
                ..default()
            }),
    )
    .insert_resource(ClearColor(Color::srgb_u8(18, 14, 38)))
    .insert_resource(if options.continuous || options.scene.is_some() {
        WinitSettings::game()
    } else {
        view::idle_settings(Duration::from_millis(500))
    })
    .add_plugins(GamePlugin {
        feed: Some(feed),
        options,
    });
    match app.run() {
        AppExit::Success => Ok(()),
        AppExit::Error(code) => Err(GameError::Failed(code.get())),
    }
}

/// Bevy's wgpu settings, but for memory (issue 31; docs/performance.md): the GPU allocator's
/// small blocks (wgpu's `MemoryUsage`: 8–64 MiB instead of 128–256 MiB for device memory, 4–32
/// instead of 64–128 MiB for host memory; with software rendering every block is the process's
/// own memory), and no validation of indirect draws: nothing here draws indirectly, and Bevy
/// drops it in release builds already except where DX12 is among the backends (it is in
/// `Backends::all()`, though never built on Linux), where wgpu keeps its compute pipelines and
/// buffers for it.
fn render_settings() -> bevy::render::settings::WgpuSettings {
    use bevy::render::settings::{InstanceFlags, MemoryHints, WgpuSettings};
    let mut settings = WgpuSettings {
        memory_hints: MemoryHints::MemoryUsage,
        ..default()
    };
    settings
        .instance_flags
        .remove(InstanceFlags::VALIDATION_INDIRECT_CALL);
    settings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_detection() {
        let none = |_: &str| None;
        assert!(matches!(
            display_available_in(none),
            Err(GameError::NoDisplay(_))
        ));
        let x11 = |k: &str| (k == "DISPLAY").then(|| ":0".into());
        assert!(display_available_in(x11).is_ok());
        let wayland_only = |k: &str| (k == "WAYLAND_DISPLAY").then(|| "wayland-0".into());
        let err = display_available_in(wayland_only).map_err(|e| e.to_string());
        assert!(err.is_err_and(|e| e.contains("XWayland")));
        let empty = |k: &str| (k == "DISPLAY").then(|| "".into());
        assert!(display_available_in(empty).is_err());
    }
}
