//! The pixel-perfect canvas: the world and the HUD are drawn at one fixed low resolution,
//! [`CANVAS`], into an offscreen image, which `blit` copies into the window scaled by the
//! largest whole number that fits, centred, with dark bars around it, sampled nearest: crisp at
//! any window size. Everything else in `view` works in canvas pixels (`layout` included); only
//! this module knows the window (`blit` places the canvas with its functions). Mouse positions come back through [`cursor_to_canvas`].

use bevy::camera::{ImageRenderTarget, RenderTarget};
use bevy::image::ImageSampler;
use bevy::prelude::*;
use bevy::render::extract_resource::ExtractResource;
use bevy::render::render_resource::TextureFormat;
use bevy::ui::IsDefaultUiCamera;

use super::blit::window_camera;

/// The canvas, in pixels: what the art and the layout are drawn for.
pub const CANVAS: UVec2 = UVec2::new(480, 320);

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

/// The canvas size as a `Vec2`, for the layout.
pub fn canvas_size() -> Vec2 {
    CANVAS.as_vec2()
}

/// Whole-number scale of the canvas in a window of `window` physical pixels (at least 1: a
/// window smaller than the canvas shows its middle).
pub fn canvas_scale(window: Vec2) -> u32 {
    let fit = (window / CANVAS.as_vec2()).floor();
    (fit.x.min(fit.y) as u32).max(1)
}

/// The canvas's top-left corner in the window, in physical pixels (whole pixels, so the
/// scaled pixels stay square).
pub(super) fn canvas_origin(window: Vec2) -> Vec2 {
    let size = (CANVAS * canvas_scale(window)).as_vec2();
    ((window - size) / 2.0).floor()
}

/// Where a point of the window (physical pixels from its top-left corner) falls on the
/// canvas, in canvas pixels from its top-left corner (the layout's screen coordinates);
/// `None` on the bars.
pub fn window_to_canvas(window: Vec2, point: Vec2) -> Option<Vec2> {
    let p = (point - canvas_origin(window)) / canvas_scale(window) as f32;
    let inside = p.x >= 0.0 && p.y >= 0.0 && p.x < CANVAS.x as f32 && p.y < CANVAS.y as f32;
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
    let mut image =
        Image::new_target_texture(CANVAS.x, CANVAS.y, TextureFormat::Bgra8UnormSrgb, None);
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
        // 1000×700 holds 2× (960×640) with bars of 20 and 30 pixels.
        assert_eq!(
            canvas_origin(Vec2::new(1000.0, 700.0)),
            Vec2::new(20.0, 30.0)
        );
        // An odd margin is split on a whole pixel.
        assert_eq!(canvas_origin(Vec2::new(961.0, 640.0)), Vec2::new(0.0, 0.0));
    }

    #[test]
    fn window_points_map_back_to_canvas_pixels() {
        let window = Vec2::new(1000.0, 700.0);
        assert_eq!(
            window_to_canvas(window, Vec2::new(20.0, 30.0)),
            Some(Vec2::ZERO)
        );
        assert_eq!(
            window_to_canvas(window, Vec2::new(21.0, 31.0)),
            Some(Vec2::new(0.5, 0.5))
        );
        assert_eq!(
            window_to_canvas(window, Vec2::new(20.0 + 959.0, 30.0 + 639.0)),
            Some(Vec2::new(479.5, 319.5))
        );
        // The bars are not the canvas.
        assert_eq!(window_to_canvas(window, Vec2::new(10.0, 300.0)), None);
        assert_eq!(window_to_canvas(window, Vec2::new(500.0, 690.0)), None);
        assert_eq!(
            canvas_to_window(window, Vec2::new(479.0, 319.0)),
            Vec2::new(20.0 + 958.0, 30.0 + 638.0)
        );
        // At 1× the window is the canvas.
        let p = Vec2::new(123.0, 45.0);
        assert_eq!(window_to_canvas(CANVAS.as_vec2(), p), Some(p));
    }
}
