//! The pixel-perfect canvas: the world and the HUD are drawn at a low resolution into an
//! offscreen image, which `blit` copies into the window scaled by a whole number, sampled
//! nearest: crisp at any window size. The scale is the largest at which [`CANVAS`] (480×320,
//! the least the layout is drawn for) fits; the canvas then grows to fill the window at that
//! scale ([`canvas_for`]), so a 1280×800 window holds a 640×400 canvas at 2×, the layout using
//! the room, and no more than a pixel or so of each side is left dark. The window is never
//! smaller than [`MIN_WINDOW`] (2×: text at least 12 pixels high). Everything else in `view`
//! works in canvas pixels (`layout` included); only this module knows the window (`blit` places
//! the canvas with its functions). Mouse positions come back through [`cursor_to_canvas`].

use std::sync::atomic::{AtomicU64, Ordering};

use bevy::camera::{ImageRenderTarget, RenderTarget};
use bevy::image::ImageSampler;
use bevy::prelude::*;
use bevy::render::extract_resource::ExtractResource;
use bevy::render::render_resource::{Extent3d, TextureFormat};
use bevy::ui::IsDefaultUiCamera;
use bevy::window::PrimaryWindow;

use super::blit::window_camera;

/// The least canvas, in pixels: what the art and the layout are drawn for at least.
pub const CANVAS: UVec2 = UVec2::new(480, 320);

/// The smallest window, in logical pixels: the least canvas at 2×, so the pixel font's
/// capitals (7 canvas pixels) are never under 12 pixels high.
pub const MIN_WINDOW: UVec2 = UVec2::new(CANVAS.x * 2, CANVAS.y * 2);

/// The window's size when nothing is remembered: the canvas at 2×, which fits a 1366×768
/// screen with its title bar and task bar.
pub const DEFAULT_WINDOW: UVec2 = UVec2::new(CANVAS.x * 2, CANVAS.y * 2);

// The default window fits a 1366×768 screen, title bar and task bar included.
const _: () = assert!(DEFAULT_WINDOW.x <= 1366 && DEFAULT_WINDOW.y + 80 <= 768);

/// The colour of the bars around the canvas.
pub(super) const BARS: [u8; 3] = [8, 6, 16];

/// The render layer of the window's camera, where nothing is drawn; the world stays on the
/// default layer 0, seen by the canvas camera only.
const WINDOW_LAYER: usize = 1;

/// The canvas image and the camera that draws into it.
#[derive(Resource, Clone, ExtractResource)]
pub struct Canvas {
    pub image: Handle<Image>,
    pub camera: Entity,
}

/// The canvas's size now, packed (width in the high half): set by [`fit_canvas`] from the
/// window, read by everything that lays the scene out.
static CURRENT: AtomicU64 = AtomicU64::new(((CANVAS.x as u64) << 32) | CANVAS.y as u64);

/// The canvas size as a `Vec2`, for the layout: the window's ([`canvas_for`]), or [`CANVAS`]
/// before there is one.
pub fn canvas_size() -> Vec2 {
    let packed = CURRENT.load(Ordering::Relaxed);
    Vec2::new((packed >> 32) as f32, (packed & 0xffff_ffff) as f32)
}

fn set_canvas_size(size: UVec2) {
    CURRENT.store(((size.x as u64) << 32) | size.y as u64, Ordering::Relaxed);
}

/// Whole-number scale of the canvas in a window of `window` physical pixels: the largest at
/// which [`CANVAS`] fits (at least 1: a window smaller than it shows its middle).
pub fn canvas_scale(window: Vec2) -> u32 {
    let fit = (window / CANVAS.as_vec2()).floor();
    (fit.x.min(fit.y) as u32).max(1)
}

/// The canvas for a window of `window` physical pixels: as much of the window as whole
/// canvas pixels at [`canvas_scale`] cover, never less than [`CANVAS`].
pub fn canvas_for(window: Vec2) -> UVec2 {
    let scale = canvas_scale(window) as f32;
    (window / scale).floor().as_uvec2().max(CANVAS)
}

/// The canvas's top-left corner in the window, in physical pixels (whole pixels, so the
/// scaled pixels stay square).
pub(super) fn canvas_origin(window: Vec2) -> Vec2 {
    let size = (canvas_for(window) * canvas_scale(window)).as_vec2();
    ((window - size) / 2.0).floor()
}

/// The canvas follows the window: when the window's size asks for another canvas, the
/// canvas image is resized (the layout reads [`canvas_size`] every frame).
pub(crate) fn fit_canvas(
    windows: Query<&Window, With<PrimaryWindow>>,
    canvas: Option<Res<Canvas>>,
    mut images: ResMut<Assets<Image>>,
) {
    let (Ok(window), Some(canvas)) = (windows.single(), canvas) else {
        return;
    };
    let physical = Vec2::new(
        window.resolution.physical_width() as f32,
        window.resolution.physical_height() as f32,
    );
    if physical.x < 1.0 || physical.y < 1.0 {
        return;
    }
    let want = canvas_for(physical);
    if canvas_size().as_uvec2() == want {
        return;
    }
    if let Some(mut image) = images.get_mut(&canvas.image) {
        image.resize(Extent3d {
            width: want.x,
            height: want.y,
            depth_or_array_layers: 1,
        });
    }
    set_canvas_size(want);
}

/// Where a point of the window (physical pixels from its top-left corner) falls on the
/// canvas, in canvas pixels from its top-left corner (the layout's screen coordinates);
/// `None` on the bars.
pub fn window_to_canvas(window: Vec2, point: Vec2) -> Option<Vec2> {
    let p = (point - canvas_origin(window)) / canvas_scale(window) as f32;
    let size = canvas_for(window).as_vec2();
    let inside = p.x >= 0.0 && p.y >= 0.0 && p.x < size.x && p.y < size.y;
    inside.then_some(p)
}

/// Where a canvas point (canvas pixels from its top-left corner) shows in a window of `window`
/// physical pixels, in physical pixels from the window's top-left corner: the top-left
/// corner of the scaled canvas pixel.
pub fn canvas_to_window(window: Vec2, point: Vec2) -> Vec2 {
    canvas_origin(window) + point * canvas_scale(window) as f32
}

/// The mouse's position on the canvas (canvas pixels from the top-left corner, like the
/// layout's rectangles), or `None` when it is outside the window or on the bars.
pub fn cursor_to_canvas(window: &Window) -> Option<Vec2> {
    let size = Vec2::new(
        window.resolution.physical_width() as f32,
        window.resolution.physical_height() as f32,
    );
    window_to_canvas(size, window.physical_cursor_position()?)
}

/// Creates the canvas image, its camera (the default UI camera, so every UI node is drawn on
/// the canvas), and the window's camera, which only copies the canvas into the window (`blit`).
pub(crate) fn setup_canvas(mut commands: Commands, mut images: ResMut<Assets<Image>>) {
    let size = canvas_size().as_uvec2();
    let mut image = Image::new_target_texture(size.x, size.y, TextureFormat::Bgra8UnormSrgb, None);
    image.sampler = ImageSampler::nearest();
    let image = images.add(image);
    let camera = commands
        .spawn((
            Camera2d,
            Camera {
                order: -1,
                ..default()
            },
            RenderTarget::Image(ImageRenderTarget::from(image.clone())),
            Msaa::Off,
            IsDefaultUiCamera,
        ))
        .id();
    commands.spawn(window_camera(WINDOW_LAYER));
    commands.insert_resource(Canvas { image, camera });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canvas_scales_by_whole_numbers_and_centres() {
        assert_eq!(canvas_scale(Vec2::new(480.0, 320.0)), 1);
        assert_eq!(canvas_scale(Vec2::new(960.0, 640.0)), 2);
        assert_eq!(canvas_scale(Vec2::new(1366.0, 768.0)), 2);
        assert_eq!(canvas_scale(Vec2::new(1920.0, 1080.0)), 3);
        assert_eq!(canvas_scale(Vec2::new(200.0, 100.0)), 1);
        // 1000×700 holds a 500×350 canvas at 2×: it fills the window.
        assert_eq!(canvas_for(Vec2::new(1000.0, 700.0)), UVec2::new(500, 350));
        assert_eq!(canvas_origin(Vec2::new(1000.0, 700.0)), Vec2::ZERO);
        // 1280×800 (issue 27: the scene sat in wide black bars) holds 640×400 at 2×.
        assert_eq!(canvas_for(Vec2::new(1280.0, 800.0)), UVec2::new(640, 400));
        assert_eq!(canvas_for(Vec2::new(1920.0, 1080.0)), UVec2::new(640, 360));
        // What whole canvas pixels leave is split on a whole pixel.
        assert_eq!(canvas_origin(Vec2::new(961.0, 641.0)), Vec2::new(0.0, 0.0));
        assert_eq!(
            canvas_origin(Vec2::new(1921.0, 1082.0)),
            Vec2::new(0.0, 1.0)
        );
        // Never less than the least canvas: a small window shows its middle.
        assert_eq!(canvas_for(Vec2::new(200.0, 100.0)), CANVAS);
    }

    #[test]
    fn window_points_map_back_to_canvas_pixels() {
        // 1000×700: a 500×350 canvas at 2×, filling the window.
        let window = Vec2::new(1000.0, 700.0);
        assert_eq!(window_to_canvas(window, Vec2::ZERO), Some(Vec2::ZERO));
        assert_eq!(
            window_to_canvas(window, Vec2::new(1.0, 1.0)),
            Some(Vec2::new(0.5, 0.5))
        );
        assert_eq!(
            window_to_canvas(window, Vec2::new(999.0, 699.0)),
            Some(Vec2::new(499.5, 349.5))
        );
        assert_eq!(window_to_canvas(window, Vec2::new(1000.0, 10.0)), None);
        assert_eq!(
            canvas_to_window(window, Vec2::new(499.0, 349.0)),
            Vec2::new(998.0, 698.0)
        );
        // What whole canvas pixels leave is no canvas: 1921×1082 at 3× (a 640×360 canvas,
        // one row above and one below).
        let window = Vec2::new(1921.0, 1082.0);
        assert_eq!(window_to_canvas(window, Vec2::new(5.0, 0.5)), None);
        assert_eq!(
            window_to_canvas(window, Vec2::new(3.0, 1.0)),
            Some(Vec2::new(1.0, 0.0))
        );
        // At 1× the window is the canvas.
        let p = Vec2::new(123.0, 45.0);
        assert_eq!(window_to_canvas(CANVAS.as_vec2(), p), Some(p));
    }
}
