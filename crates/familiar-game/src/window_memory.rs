//! Remembers the window's size and position between runs, in a small JSON file under the
//! user's config directory (never under `~/.claude`). `run_game` reads it before opening the
//! window; [`WindowMemoryPlugin`] writes it a moment after the user moves or resizes the
//! window. Failing to write is a logged warning: the game goes on.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bevy::prelude::*;
use bevy::window::{PrimaryWindow, WindowCloseRequested, WindowMoved, WindowResized};
use serde::{Deserialize, Serialize};

/// The remembered geometry (logical size, physical position).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowMemory {
    pub width: u32,
    pub height: u32,
    pub x: Option<i32>,
    pub y: Option<i32>,
}

/// The largest side, in logical pixels, a remembered window opens at when the probe did not say
/// how large a window can be here. A surface larger than the GPU's largest texture makes wgpu
/// panic at the first frame (Mesa's llvmpipe: 16,384 pixels; some GPUs 8,192), and a logical
/// pixel is two physical ones on a HiDPI screen.
pub const MAX_SIDE: u32 = 4096;

impl WindowMemory {
    /// The size to open the window at: the remembered one, no smaller than `min` and no larger
    /// than `largest` (the screen, within the GPU's largest texture: a file edited by hand, or
    /// written on a larger desktop), else than [`MAX_SIDE`].
    pub fn opening_size(&self, min: UVec2, largest: Option<UVec2>) -> UVec2 {
        let largest = largest.unwrap_or(UVec2::splat(MAX_SIDE)).max(min);
        UVec2::new(self.width, self.height).clamp(min, largest)
    }
}

/// How much of a window, in pixels each way, must be on the screen for its remembered position
/// to be used: enough to see it and drag it back by its top-left corner.
pub const MIN_ON_SCREEN: i64 = 64;

impl WindowMemory {
    /// Where to open a window of `size`: the remembered position, when at least
    /// [`MIN_ON_SCREEN`] pixels of it each way would be on `screen` (the X screen: every
    /// monitor's bounding box, from the origin); else `None`, for the window manager to place
    /// it. A position remembered on a monitor since unplugged, or edited by hand, would open
    /// the window where nobody can see it. With no screen known, the remembered position.
    pub fn opening_position(&self, size: UVec2, screen: Option<UVec2>) -> Option<IVec2> {
        let (x, y) = (self.x?, self.y?);
        let Some(screen) = screen else {
            return Some(IVec2::new(x, y));
        };
        let on_screen = |at: i32, side: u32, screen_side: u32| {
            let (start, end) = (i64::from(at), i64::from(at) + i64::from(side));
            end.min(i64::from(screen_side)) - start.max(0) >= MIN_ON_SCREEN
        };
        (on_screen(x, size.x, screen.x) && on_screen(y, size.y, screen.y))
            .then_some(IVec2::new(x, y))
    }
}

/// `<config dir>/familiar/window.json` (e.g. `~/.config/familiar/window.json` on Linux).
pub fn default_window_memory_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "familiar")
        .map(|dirs| dirs.config_dir().join("window.json"))
}

/// Reads the remembered geometry; a missing or broken file means none.
pub fn load(path: &Path) -> Option<WindowMemory> {
    let text = std::fs::read_to_string(path).ok()?;
    match serde_json::from_str(&text) {
        Ok(m) => Some(m),
        Err(e) => {
            tracing::warn!(path = %path.display(), "ignoring unreadable window memory: {e}");
            None
        }
    }
}

/// Writes the geometry; errors are returned for the caller to log.
pub fn save(path: &Path, memory: &WindowMemory) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(memory).map_err(std::io::Error::other)?;
    // Write beside, then rename, so a crash never leaves half a file.
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

pub struct WindowMemoryPlugin {
    pub path: Option<PathBuf>,
}

#[derive(Resource)]
struct MemoryState {
    path: PathBuf,
    /// Time of the last change not yet saved.
    dirty_since: Option<Duration>,
    last_saved: Option<WindowMemory>,
}

impl Plugin for WindowMemoryPlugin {
    fn build(&self, app: &mut App) {
        if let Some(path) = &self.path {
            app.insert_resource(MemoryState {
                path: path.clone(),
                dirty_since: None,
                last_saved: load(path),
            })
            .add_systems(Update, remember_window);
        }
    }
}

fn current(window: &Window) -> WindowMemory {
    let (x, y) = match window.position {
        WindowPosition::At(p) => (Some(p.x), Some(p.y)),
        _ => (None, None),
    };
    WindowMemory {
        width: window.resolution.width().round().max(1.0) as u32,
        height: window.resolution.height().round().max(1.0) as u32,
        x,
        y,
    }
}

fn remember_window(
    time: Res<Time<Real>>,
    mut moved: MessageReader<WindowMoved>,
    mut resized: MessageReader<WindowResized>,
    mut closing: MessageReader<WindowCloseRequested>,
    mut exiting: MessageReader<AppExit>,
    window: Query<&Window, With<PrimaryWindow>>,
    mut state: ResMut<MemoryState>,
) {
    let changed = moved.read().count() + resized.read().count() > 0;
    let leaving = closing.read().count() + exiting.read().count() > 0;
    let now = time.elapsed();
    if changed {
        state.dirty_since = Some(now);
    }
    // Save half a second after the last change (a drag sends many moves), or now when the
    // window is about to go.
    let Some(since) = state.dirty_since else {
        return;
    };
    if !leaving && now.saturating_sub(since) < Duration::from_millis(500) {
        return;
    }
    state.dirty_since = None;
    let Ok(window) = window.single() else {
        return;
    };
    let memory = current(window);
    if state.last_saved == Some(memory) {
        return;
    }
    match save(&state.path, &memory) {
        Ok(()) => state.last_saved = Some(memory),
        Err(e) => {
            tracing::warn!(path = %state.path.display(), "could not remember the window: {e}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_an_error_and_the_remembered_geometry_survives() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("tempdir");
        };
        let path = dir.path().join("window.json");
        let before = WindowMemory {
            width: 640,
            height: 400,
            x: Some(1),
            y: Some(2),
        };
        assert!(save(&path, &before).is_ok());
        // Every write to /dev/full fails with ENOSPC, as on a full disk.
        let tmp = path.with_extension("json.tmp");
        assert!(std::os::unix::fs::symlink("/dev/full", &tmp).is_ok());
        let after = WindowMemory {
            width: 800,
            ..before
        };
        let err = save(&path, &after).err();
        assert_eq!(err.map(|e| e.kind()), Some(std::io::ErrorKind::StorageFull));
        assert_eq!(load(&path), Some(before));
    }

    #[test]
    fn a_remembered_position_off_the_screen_is_left_to_the_window_manager() {
        let at = |x, y| WindowMemory {
            width: 800,
            height: 600,
            x: Some(x),
            y: Some(y),
        };
        let size = UVec2::new(800, 600);
        let screen = Some(UVec2::new(1280, 900));
        // On the screen, or partly off it with a corner to grab: where it was.
        assert_eq!(
            at(100, 50).opening_position(size, screen),
            Some(IVec2::new(100, 50))
        );
        assert_eq!(
            at(1280 - 64, -536).opening_position(size, screen),
            Some(IVec2::new(1216, -536))
        );
        // On a monitor since unplugged (right of the screen, or below it), or all but a sliver
        // off the screen's left: the window manager places it.
        assert_eq!(at(2000, 100).opening_position(size, screen), None);
        assert_eq!(at(100, 900).opening_position(size, screen), None);
        assert_eq!(at(-800 + 63, 100).opening_position(size, screen), None);
        assert_eq!(at(i32::MIN, i32::MAX).opening_position(size, screen), None);
        // No screen probed: where it was; no position remembered: none.
        assert_eq!(
            at(5000, 5000).opening_position(size, None),
            Some(IVec2::new(5000, 5000))
        );
        let nowhere = WindowMemory {
            x: None,
            ..at(0, 0)
        };
        assert_eq!(nowhere.opening_position(size, screen), None);
    }

    #[test]
    fn a_remembered_size_opens_within_the_minimum_and_the_largest_window() {
        let min = UVec2::new(640, 400);
        let remembered = |width, height| WindowMemory {
            width,
            height,
            x: None,
            y: None,
        };
        let screen = Some(UVec2::new(1280, 900));
        // What the window last was, when it fits.
        assert_eq!(
            remembered(1200, 800).opening_size(min, screen),
            UVec2::new(1200, 800)
        );
        // Past the screen (and past what any texture holds: wgpu panicked on the first frame).
        assert_eq!(
            remembered(60_000, 60_000).opening_size(min, screen),
            UVec2::new(1280, 900)
        );
        assert_eq!(
            remembered(0, u32::MAX).opening_size(min, screen),
            UVec2::new(640, 900)
        );
        // Nothing probed: the largest side.
        assert_eq!(
            remembered(60_000, 60_000).opening_size(min, None),
            UVec2::splat(MAX_SIDE)
        );
        // A screen smaller than the minimum: the minimum.
        assert_eq!(
            remembered(60_000, 60_000).opening_size(min, Some(UVec2::new(320, 200))),
            min
        );
    }

    #[test]
    fn save_then_load_round_trips() {
        let dir = tempfile::tempdir().map_err(|e| e.to_string());
        let Ok(dir) = dir else {
            panic!("tempdir: {dir:?}");
        };
        let path = dir.path().join("nested/window.json");
        let m = WindowMemory {
            width: 640,
            height: 400,
            x: Some(-20),
            y: Some(35),
        };
        assert!(save(&path, &m).is_ok());
        assert_eq!(load(&path), Some(m));
    }

    #[test]
    fn broken_or_missing_files_mean_no_memory() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("tempdir");
        };
        let path = dir.path().join("window.json");
        assert_eq!(load(&path), None);
        assert!(std::fs::write(&path, "{not json").is_ok());
        assert_eq!(load(&path), None);
    }

    #[test]
    fn an_unwritable_place_is_an_error_not_a_panic() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("tempdir");
        };
        // A file where the directory should be.
        let blocker = dir.path().join("blocker");
        assert!(std::fs::write(&blocker, "x").is_ok());
        let m = WindowMemory {
            width: 1,
            height: 1,
            x: None,
            y: None,
        };
        assert!(save(&blocker.join("window.json"), &m).is_err());
    }

    #[test]
    fn the_default_path_is_not_under_dot_claude() {
        if let Some(p) = default_window_memory_path() {
            assert!(!p.components().any(|c| c.as_os_str() == ".claude"));
            assert!(p.ends_with("window.json"));
        }
    }
}
