//! Image comparison for the screenshot tests (`tests/screens.rs`): a tolerant comparison of a
//! capture with its reference, a diff image for a person to look at, and the reduction that
//! keeps references small (a palette of at most 256 colours, indexed PNG).

use std::path::Path;

use image::{Rgb, RgbImage};

/// How far a capture may stray from its reference and still match.
#[derive(Debug, Clone, Copy)]
pub struct Tolerance {
    /// A pixel differs when one of its channels is further than this from the reference's.
    /// Covers the reference's palette reduction (at most 8) and renderers rounding
    /// differently at edges (Mesa versions).
    pub channel: u8,
    /// The fraction of differing pixels a match allows (antialiased text edges).
    pub max_fraction: f64,
}

pub const TOLERANCE: Tolerance = Tolerance {
    channel: 40,
    max_fraction: 0.002,
};

/// What a comparison found.
pub struct Comparison {
    pub differing: u64,
    pub total: u64,
    pub worst: u8,
    /// The reference dimmed, with differing pixels in magenta.
    pub diff: RgbImage,
}

impl Comparison {
    pub fn matches(&self, tolerance: Tolerance) -> bool {
        (self.differing as f64) <= tolerance.max_fraction * self.total as f64
    }
}

/// Compares `actual` with `reference` pixel by pixel; sizes must agree.
pub fn compare(reference: &RgbImage, actual: &RgbImage, channel: u8) -> Result<Comparison, String> {
    if reference.dimensions() != actual.dimensions() {
        return Err(format!(
            "size {:?} differs from the reference's {:?}",
            actual.dimensions(),
            reference.dimensions()
        ));
    }
    let mut diff = RgbImage::new(reference.width(), reference.height());
    let (mut differing, mut worst) = (0u64, 0u8);
    for (x, y, r) in reference.enumerate_pixels() {
        let a = actual.get_pixel(x, y);
        let delta = (0..3).map(|i| r[i].abs_diff(a[i])).max().unwrap_or(0);
        worst = worst.max(delta);
        let out = if delta > channel {
            differing += 1;
            Rgb([255, 0, 255])
        } else {
            Rgb([r[0] / 3, r[1] / 3, r[2] / 3])
        };
        diff.put_pixel(x, y, out);
    }
    Ok(Comparison {
        differing,
        total: u64::from(reference.width()) * u64::from(reference.height()),
        worst,
        diff,
    })
}

/// The image with its channels rounded to as few bits as it takes to need at most 256 colours
/// (none dropped if it already has so few; at most 4 dropped, an error of 8), and its palette.
pub fn reduce(img: &RgbImage) -> (RgbImage, Vec<[u8; 3]>) {
    let mut out = img.clone();
    for bits in 0..=4u8 {
        out = img.clone();
        if bits > 0 {
            let half = 1u8 << (bits - 1);
            for p in out.pixels_mut() {
                for c in &mut p.0 {
                    *c = ((*c >> bits) << bits) | half;
                }
            }
        }
        let palette = palette(&out);
        if palette.len() <= 256 || bits == 4 {
            return (out, palette);
        }
    }
    let palette = palette(&out);
    (out, palette)
}

fn palette(img: &RgbImage) -> Vec<[u8; 3]> {
    let mut colours: Vec<[u8; 3]> = img.pixels().map(|p| p.0).collect();
    colours.sort_unstable();
    colours.dedup();
    colours
}

/// Writes `img` reduced as a reference: an indexed PNG (RGB if 4 dropped bits still leave more
/// than 256 colours). Returns the bytes written.
pub fn write_reference(path: &Path, img: &RgbImage) -> Result<u64, String> {
    let (reduced, palette) = reduce(img);
    let mut bytes = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut bytes, reduced.width(), reduced.height());
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::High);
        let data: Vec<u8> = if palette.len() <= 256 {
            encoder.set_color(png::ColorType::Indexed);
            encoder.set_palette(palette.concat());
            reduced
                .pixels()
                .map(|p| palette.binary_search(&p.0).map_or(0, |i| i as u8))
                .collect()
        } else {
            encoder.set_color(png::ColorType::Rgb);
            reduced.into_raw()
        };
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(&data).map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())?;
    }
    std::fs::write(path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(bytes.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_patch_is_found_and_noise_is_not() {
        let reference = RgbImage::from_fn(40, 30, |x, y| Rgb([x as u8 * 6, y as u8 * 8, 90]));
        let mut noisy = reference.clone();
        for p in noisy.pixels_mut() {
            p.0[0] = p.0[0].saturating_add(12);
        }
        let c = compare(&reference, &noisy, TOLERANCE.channel).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((c.differing, c.worst), (0, 12));
        assert!(c.matches(TOLERANCE));
        let mut changed = reference.clone();
        for y in 10..14 {
            for x in 10..14 {
                changed.put_pixel(x, y, Rgb([250, 250, 250]));
            }
        }
        let c = compare(&reference, &changed, TOLERANCE.channel).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.differing, 16);
        assert!(!c.matches(TOLERANCE));
        assert_eq!(c.diff.get_pixel(11, 11).0, [255, 0, 255]);
        assert!(compare(&reference, &RgbImage::new(4, 4), 40).is_err());
    }

    #[test]
    fn a_reduced_reference_stays_within_the_tolerance() {
        // More than 256 colours: the reduction must drop bits, and stay within 8.
        let img = RgbImage::from_fn(64, 64, |x, y| Rgb([(x * 4) as u8, (y * 4) as u8, 200]));
        let (reduced, palette) = reduce(&img);
        assert!(palette.len() <= 256, "{} colours", palette.len());
        let c = compare(&img, &reduced, 8).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.differing, 0, "worst {}", c.worst);
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("r.png");
        let written = write_reference(&path, &img).unwrap_or_else(|e| panic!("{e}"));
        assert!(written > 0);
        let back = image::open(&path)
            .unwrap_or_else(|e| panic!("{e}"))
            .to_rgb8();
        assert_eq!(back, reduced);
        // Few colours: kept exactly.
        let flat = RgbImage::from_fn(8, 8, |x, _| Rgb([x as u8, 0, 0]));
        assert_eq!(reduce(&flat).0, flat);
    }
}
