//! The wardrobe in the real window: a user at level 20 (the profile the pipeline sends) sees the familiar in the archmage's hat and cape, the hat on its head, and the
//! scene's decor (the bookshelf, the crystal ball) over the backdrop. Under Xvfb like
//! `tests/window.rs` (one test per file: winit allows one event loop per process); the PNG
//! stays at `<target dir>/screenshots/wardrobe.png` for a person to look at.

use std::path::{Path, PathBuf};

use bevy::math::Vec2;
use familiar_game::progression::{Profile, ProgressUpdate, xp_for_level};
use familiar_game::{GameFeed, GameOptions, ScreenshotOptions, layout, run_game};
use familiar_model::{Event, EventKind, Status};

type Px = [u8; 3];

fn close(a: Px, b: Px) -> bool {
    (0..3).all(|i| (i32::from(a[i]) - i32::from(b[i])).abs() <= 6)
}

// Colours of the art (`familiar-game-tools`'s `gen-sprites`): the archmage's hat, the cape, the bookshelf's
// wood and the crystal ball.
const HAT: [Px; 2] = [[62, 44, 150], [40, 28, 108]];
const CAPE: [Px; 2] = [[176, 40, 64], [124, 24, 50]];
const WOOD: Px = [118, 74, 46];
const CRYSTAL: Px = [150, 224, 255];

#[test]
fn a_level_20_familiar_wears_its_hat_and_cape_in_its_decor() {
    let _xvfb = familiar_testkit::xvfb::ensure_display();
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target"));
    assert!(std::fs::create_dir_all(target.join("screenshots")).is_ok());
    let shot = target.join("screenshots/wardrobe.png");
    let _ = std::fs::remove_file(&shot);
    let mut profile = Profile::default();
    profile.add(xp_for_level(20));

    let (tx, rx) = crossbeam_channel::unbounded();
    let update = ProgressUpdate {
        profile,
        ..ProgressUpdate::default()
    };
    assert!(tx.send(GameFeed::Progress(update)).is_ok());
    let mut start = Event::new(EventKind::SessionStart, 1);
    start.session = Some("demo".to_string());
    start.context_used = Some(50_000);
    start.context_limit = 200_000;
    start.status = Status::Working;
    assert!(tx.send(GameFeed::Event(start)).is_ok());
    let options = GameOptions {
        continuous: true,
        window_memory: None,
        screenshot: Some(ScreenshotOptions {
            path: shot.clone(),
            after_frames: 60,
        }),
        ..GameOptions::default()
    };
    let result = run_game(rx, options);
    assert!(result.is_ok(), "game failed: {result:?}");
    drop(tx);

    let img = image::open(&shot)
        .unwrap_or_else(|e| panic!("{}: {e}", shot.display()))
        .to_rgb8();
    let l = layout(Vec2::new(img.width() as f32, img.height() as f32), 1);
    let sprite = l.sprite_rect(0);
    let count = |colours: &[Px], inside: bool, top: f32, bottom: f32| {
        img.enumerate_pixels()
            .filter(|(x, y, p)| {
                let (x, y) = (*x as f32, *y as f32);
                let within = x >= sprite.min.x
                    && x < sprite.max.x
                    && y >= sprite.min.y + sprite.height() * top
                    && y < sprite.min.y + sprite.height() * bottom;
                within == inside && colours.iter().any(|c| close(p.0, *c))
            })
            .count()
    };
    // The hat sits in the top half of the sprite (on the head, not above the frame), and
    // none of its colour is in the bottom half.
    let hat_top = count(&HAT, true, 0.0, 0.5);
    assert!(hat_top > 150, "hat pixels on the head: {hat_top}");
    assert_eq!(count(&HAT, true, 0.55, 1.0), 0, "hat colour below the head");
    let cape = count(&CAPE, true, 0.5, 1.0);
    assert!(cape > 60, "cape pixels: {cape}");
    let wood = count(&[WOOD], false, 0.0, 1.0);
    assert!(wood > 200, "bookshelf pixels: {wood}");
    let crystal = count(&[CRYSTAL], false, 0.0, 1.0);
    assert!(crystal > 30, "crystal ball pixels: {crystal}");
}
