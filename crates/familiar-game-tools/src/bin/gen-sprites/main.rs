//! The sprite generator: draws the game's pixel art procedurally, in plain Rust, and writes it
//! to `assets/*.png`. The PNGs are committed and embedded into the game with `include_bytes!`
//! (`familiar_game`'s `assets`); a test here fails while they differ from what this code
//! draws, so the art can only change through here. The game needs only the sheets and their
//! layouts (`familiar_game::sheet`) at run time, none of this code.
//!
//! - `canvas`: the RGBA canvas, its primitives and the palette;
//! - `brushes`: sparkles, stars, Zs and smoke;
//! - `familiar`: the familiar's poses and animation frames;
//! - `props`: the companion, the icons and the backdrop;
//! - `wearables`: the familiar's hats and accessories, layers over its sheet;
//! - `decor`: the scene decor the scene unlocks add over the backdrop;
//! - `backdrop`: the campfire, the clouds and the backdrop of each phase of the day.
//!
//! Run `cargo run -p familiar-game-tools --bin gen-sprites` after changing the art, and commit the
//! PNGs. `--preview DIR` also writes 4× enlargements on a dark backdrop, to look at the art,
//! and `dressed.png`: the familiar in each of its wearables.

mod backdrop;
mod brushes;
mod canvas;
mod decor;
mod familiar;
mod props;
mod scenes_of_work;
mod wearables;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use canvas::Canvas;
use decor::decor_sheet;
use familiar::familiar_sheet;
use props::{background, companion_sheet, icons};
use wearables::{companion_hats_sheet, wearables_sheet};

/// Every asset file the generator writes, with its canvas.
pub fn all_assets() -> Vec<(&'static str, Canvas)> {
    vec![
        ("familiar.png", familiar_sheet()),
        ("companion.png", companion_sheet()),
        ("icons.png", icons()),
        ("background.png", background()),
        ("wearables.png", wearables_sheet()),
        ("decor.png", decor_sheet()),
        ("companion-hats.png", companion_hats_sheet()),
        ("world.png", backdrop::world_sheet()),
        ("sky.png", backdrop::sky_sheet()),
        ("scenes.png", scenes_of_work::scenes_sheet()),
    ]
}

/// Encodes a canvas as PNG bytes.
pub fn encode_png(c: &Canvas) -> Result<Vec<u8>, image::ImageError> {
    let mut out = Vec::new();
    let encoder = image::codecs::png::PngEncoder::new(&mut out);
    image::ImageEncoder::write_image(
        encoder,
        &c.to_rgba_bytes(),
        c.width,
        c.height,
        image::ExtendedColorType::Rgba8,
    )?;
    Ok(out)
}

fn enlarge(c: &Canvas, k: u32) -> Canvas {
    let mut out = Canvas::new(c.width * k, c.height * k);
    for y in 0..out.height as i32 {
        for x in 0..out.width as i32 {
            let checker = ((x / 16 + y / 16) % 2) as u8 * 10;
            out.set(x, y, [40 + checker, 32 + checker, 60 + checker, 255]);
            out.set(x, y, c.get(x / k as i32, y / k as i32));
        }
    }
    out
}

fn write(path: &Path, canvas: &Canvas) -> Result<(), String> {
    let bytes = encode_png(canvas).map_err(|e| e.to_string())?;
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

fn run() -> Result<(), String> {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../assets");
    let mut preview = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--preview" {
            preview = Some(PathBuf::from(
                args.next().ok_or("--preview needs a directory")?,
            ));
        } else {
            dir = PathBuf::from(arg);
        }
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if let Some(p) = &preview {
        std::fs::create_dir_all(p).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    for (name, canvas) in all_assets() {
        let path = dir.join(name);
        write(&path, &canvas)?;
        println!(
            "wrote {} ({}x{})",
            path.display(),
            canvas.width,
            canvas.height
        );
        if let Some(p) = &preview {
            write(&p.join(name), &enlarge(&canvas, 4))?;
        }
    }
    if let Some(p) = &preview {
        write(
            &p.join("dressed.png"),
            &enlarge(&wearables::dressed_preview(), 4),
        )?;
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen-sprites: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_assets_match_the_generator() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets");
        for (name, canvas) in all_assets() {
            let path = dir.join(name);
            let bytes = std::fs::read(&path).unwrap_or_else(|e| {
                panic!(
                    "{}: {e}; run `cargo run -p familiar-game-tools --bin gen-sprites`",
                    path.display()
                )
            });
            let decoded = image::load_from_memory(&bytes)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .to_rgba8();
            assert_eq!(
                (decoded.width(), decoded.height()),
                (canvas.width, canvas.height),
                "{name} size"
            );
            assert!(
                decoded.as_raw() == &canvas.to_rgba_bytes(),
                "{name} is stale: run `cargo run -p familiar-game-tools --bin gen-sprites`"
            );
        }
    }
}
