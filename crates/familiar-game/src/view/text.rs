//! Text on screen, in Familiar's pixel font (`crate::font`): the one way the view draws text.
//!
//! Put a [`PixelText`] on an entity and it shows the text as a small image, drawn again only
//! when the text changes (its colour tints the image, so fades and colour changes cost
//! nothing):
//!
//! ```text
//! // In the UI (a child of a plate, a panel…): `ui_text` adds the image node; add your `Node`
//! // for the position. Its size is set to the text's, in canvas pixels.
//! commands.spawn((ui_text(PixelText::new("Lv 3", rgb(XP_FILL))), Node { left: px(3), ..default() }));
//! // In the world (over a familiar): a sprite, placed by its `Anchor` and `Transform`.
//! commands.spawn((world_text(PixelText::new("+5 XP", Color::WHITE)), Anchor::BOTTOM_CENTER));
//! // Later: `set_text(&mut label, "Lv 4")` changes it only when it differs.
//! ```
//!
//! `max_width` cuts a line with `…` between grapheme clusters (`font::fit`); with
//! `max_lines` > 1 the text wraps between words (`font::wrap`). Lines are
//! [`font::LINE_HEIGHT`] pixels tall; measure with [`font::width`], which is exact.

use bevy::asset::RenderAssetUsages;
use bevy::image::ImageSampler;
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};

use crate::font;

/// A text label in the pixel font. See the module's documentation.
#[derive(Component, Clone, Debug, PartialEq)]
pub struct PixelText {
    pub text: String,
    /// Tints the white glyphs (alpha fades the label).
    pub color: Color,
    /// A one-pixel dark shadow right of and under each glyph, for text on colour.
    pub shadow: bool,
    /// Cut (or, with `max_lines` > 1, wrap) to this many canvas pixels.
    pub max_width: Option<u32>,
    pub max_lines: usize,
}

impl PixelText {
    pub fn new(text: impl Into<String>, color: Color) -> PixelText {
        PixelText {
            text: text.into(),
            color,
            shadow: false,
            max_width: None,
            max_lines: 1,
        }
    }

    pub fn with_shadow(mut self) -> PixelText {
        self.shadow = true;
        self
    }

    pub fn with_max_width(mut self, width: u32) -> PixelText {
        self.max_width = Some(width);
        self
    }

    pub fn with_max_lines(mut self, lines: usize) -> PixelText {
        self.max_lines = lines.max(1);
        self
    }

    /// The lines as drawn: wrapped or cut to `max_width`.
    pub fn lines(&self) -> Vec<String> {
        match self.max_width {
            Some(w) if self.max_lines > 1 => font::wrap(&self.text, w, self.max_lines),
            Some(w) => self.text.split('\n').map(|l| font::fit(l, w)).collect(),
            None => self.text.split('\n').map(str::to_string).collect(),
        }
    }
}

/// Sets a label's text only when it differs, so an unchanged label is not marked changed (and
/// not drawn again).
pub fn set_text(label: &mut Mut<PixelText>, text: impl AsRef<str>) {
    if label.text != text.as_ref() {
        label.text = text.as_ref().to_string();
    }
}

/// A UI label: the text and its image node (add a `Node` to place it).
pub fn ui_text(text: PixelText) -> impl Bundle {
    (text, ImageNode::default())
}

/// A label in the world, as a sprite (add an `Anchor` and a `Transform` to place it).
pub fn world_text(text: PixelText) -> impl Bundle {
    (text, Sprite::default())
}

/// What a label's image shows, to draw it again only when that changes.
#[derive(Component, PartialEq)]
pub(crate) struct DrawnText {
    lines: Vec<String>,
    shadow: bool,
}

/// The image of some lines of text: white ink, a dark shadow, the rest transparent. Width
/// and height are rounded up to even numbers, so a centred label still lands on whole
/// canvas pixels.
pub(crate) fn text_image(lines: &[String], shadow: bool) -> Image {
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let bitmap = font::render(&refs, shadow);
    let (w, h) = (
        bitmap.width.max(1).next_multiple_of(2),
        bitmap.height.max(1).next_multiple_of(2),
    );
    let rgba = bitmap.to_rgba();
    let mut data = vec![0u8; (w * h * 4) as usize];
    for y in 0..bitmap.height {
        let from = (y * bitmap.width * 4) as usize;
        let to = (y * w * 4) as usize;
        let n = (bitmap.width * 4) as usize;
        data[to..to + n].copy_from_slice(&rgba[from..from + n]);
    }
    let mut image = Image::new(
        Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
        TextureDimension::D2,
        data,
        TextureFormat::Rgba8UnormSrgb,
        RenderAssetUsages::RENDER_WORLD,
    );
    image.sampler = ImageSampler::nearest();
    image
}

/// Draws the labels whose text changed, and passes colour changes on to the image.
#[allow(clippy::type_complexity)]
pub(crate) fn show_pixel_text(
    mut commands: Commands,
    mut images: ResMut<Assets<Image>>,
    mut labels: Query<
        (
            Entity,
            &PixelText,
            Option<&DrawnText>,
            Option<&mut ImageNode>,
            Option<&mut Sprite>,
            Option<&mut Node>,
        ),
        Changed<PixelText>,
    >,
) {
    for (e, text, drawn, image_node, sprite, node) in &mut labels {
        let want = DrawnText {
            lines: text.lines(),
            shadow: text.shadow,
        };
        let redraw = drawn != Some(&want);
        let image = redraw.then(|| text_image(&want.lines, want.shadow));
        let size = image.as_ref().map(|i| i.size());
        if let Some(mut n) = image_node {
            n.color = text.color;
            if let Some(image) = image {
                n.image = images.add(image);
            }
        } else if let Some(mut s) = sprite {
            s.color = text.color;
            if let Some(image) = image {
                s.image = images.add(image);
            }
        }
        if let (Some(mut node), Some(size)) = (node, size) {
            node.width = px(size.x);
            node.height = px(size.y);
        }
        if redraw {
            commands.entity(e).insert(want);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_is_cut_or_wrapped_to_its_width() {
        let cut = PixelText::new("Corrige le test «café» — 修正テスト 🚀", Color::WHITE)
            .with_max_width(80);
        let lines = cut.lines();
        assert_eq!(lines.len(), 1);
        assert!(font::width(&lines[0]) <= 80 && lines[0].ends_with('…'));
        let wrapped = cut.clone().with_max_lines(3).lines();
        assert!(wrapped.len() > 1 && wrapped.len() <= 3, "{wrapped:?}");
        assert!(wrapped.iter().all(|l| font::width(l) <= 80));
    }

    #[test]
    fn the_image_is_the_text_with_even_sides() {
        let image = text_image(&["Lv 3".to_string()], false);
        let w = font::width("Lv 3");
        assert_eq!(image.size(), UVec2::new(w.next_multiple_of(2), 16));
        let data = image.data.as_deref().unwrap_or_default();
        assert!(data.chunks(4).any(|p| p == [255, 255, 255, 255]));
        let empty = text_image(&[String::new()], false);
        assert_eq!(empty.size(), UVec2::new(2, 16));
    }

    #[test]
    fn changed_text_is_drawn_again_and_sized() {
        let mut app = App::new();
        app.add_plugins(MinimalPlugins)
            .init_resource::<Assets<Image>>()
            .add_systems(Update, show_pixel_text);
        let e = app
            .world_mut()
            .spawn((ui_text(PixelText::new("a", Color::WHITE)), Node::default()))
            .id();
        app.update();
        let first = app.world().get::<ImageNode>(e).map(|n| n.image.clone());
        let node = app.world().get::<Node>(e).cloned().unwrap_or_default();
        assert_eq!(node.width, px(font::width("a").next_multiple_of(2)));
        if let Some(mut t) = app.world_mut().get_mut::<PixelText>(e) {
            set_text(&mut t, "abc");
        }
        app.update();
        let second = app.world().get::<ImageNode>(e).map(|n| n.image.clone());
        assert_ne!(first, second, "a new image for a new text");
        let node = app.world().get::<Node>(e).cloned().unwrap_or_default();
        assert_eq!(node.width, px(font::width("abc").next_multiple_of(2)));
    }
}
