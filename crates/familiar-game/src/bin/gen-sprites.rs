//! Writes the game's pixel art (drawn by `familiar_game::art`) to `assets/*.png`.
//! Run `cargo run -p familiar-game --bin gen-sprites` after changing `art.rs`, and commit the
//! PNGs; a test fails while they are stale. `--preview DIR` also writes 4× enlargements on a
//! dark backdrop, to look at the art.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use familiar_game::art::{self, Canvas};

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
    let bytes = art::encode_png(canvas).map_err(|e| e.to_string())?;
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
    for (name, canvas) in art::all_assets() {
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
