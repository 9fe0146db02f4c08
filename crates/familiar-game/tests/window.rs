//! The real window: opens the game under X11 (Xvfb with Mesa's llvmpipe in CI), feeds it a
//! known sequence, takes a screenshot from inside Bevy and checks pixels: the canvas at 2×
//! grown to fill a wider window (what whole canvas pixels leave is a dark bar), the mana bar's colour and fill at 50,000 of 200,000 tokens
//! used, the familiar drawn where the layout puts it, the plate's text, the quest banner. The PNG stays at `<target dir>/screenshots/game.png` for a person to look at.
//!
//! Needs a display. With `DISPLAY` unset the test starts its own `Xvfb` (Debian package
//! `xvfb`), so `cargo test` never passes without rendering; `xvfb-run -a cargo test` works too.
//! Mesa's Vulkan driver (`mesa-vulkan-drivers`, `libvulkan1`) must be installed.
//! This file holds a single test: winit allows one event loop per process.

use std::path::{Path, PathBuf};

use bevy::math::Vec2;
use familiar_game::logic::ManaBand;
use familiar_game::{
    GameFeed, GameOptions, ScreenshotOptions, WindowMemory, band_color, canvas_size,
    canvas_to_window, layout, run_game, window_to_canvas,
};
use familiar_model::{Action, ActionKind, Event, EventKind, Status};

fn event(kind: EventKind) -> Event {
    let mut ev = Event::new(kind, 1);
    ev.session = Some("demo".to_string());
    ev.context_used = Some(50_000);
    ev.context_limit = 200_000;
    ev.status = Status::Working;
    ev
}

fn action(kind: ActionKind) -> GameFeed {
    GameFeed::Action(Action {
        kind,
        script: "default.rhai".to_string(),
        session: Some("demo".to_string()),
        agent: None,
        line: 2,
        event: EventKind::Reading,
    })
}

type Px = [u8; 3];

fn close(a: Px, b: Px, tolerance: i32) -> bool {
    (0..3).all(|i| (i32::from(a[i]) - i32::from(b[i])).abs() <= tolerance)
}

#[test]
fn the_window_shows_the_familiar_and_its_mana() {
    let _xvfb = familiar_testkit::xvfb::ensure_display();
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target"));
    let shot = target.join("screenshots/game.png");
    let _ = std::fs::remove_file(&shot);

    let (tx, rx) = crossbeam_channel::unbounded();
    let mut reading = event(EventKind::Reading);
    reading.target = Some("/src/familiar/src/main.rs".to_string());
    let mut data = serde_json::Map::new();
    data.insert("branch".into(), serde_json::Value::String("main".into()));
    let feed = vec![
        GameFeed::Event({
            let mut start = event(EventKind::SessionStart);
            start.cwd = Some("/home/user/familiar".into());
            start
        }),
        action(ActionKind::Quest {
            text: "Make the flaky test pass".into(),
        }),
        action(ActionKind::Say {
            text: "Let me read the test first.".into(),
        }),
        GameFeed::Event(reading),
        action(ActionKind::Animate {
            name: "cast".into(),
        }),
        action(ActionKind::Xp { amount: 40 }),
        action(ActionKind::CompanionSpawn {
            id: "toolu_1".into(),
            kind: "Explore".into(),
        }),
        action(ActionKind::Emit {
            name: "git_push".into(),
            data,
        }),
        action(ActionKind::Log {
            text: "default.rhai loaded".into(),
        }),
    ];
    for item in feed {
        assert!(tx.send(item).is_ok());
    }
    // A remembered window size the game must use (the default is 960x640): a 512x330 canvas
    // at 2x fills 1024x660 of it, the last column and row are bars.
    let memory = target.join("screenshots/window-memory.json");
    assert!(std::fs::create_dir_all(target.join("screenshots")).is_ok());
    let remembered = WindowMemory {
        width: 1025,
        height: 661,
        x: Some(10),
        y: Some(20),
    };
    let written = serde_json::to_string(&remembered).map(|json| std::fs::write(&memory, json));
    assert!(matches!(written, Ok(Ok(()))), "{written:?}");
    let options = GameOptions {
        continuous: true,
        window_memory: Some(memory.clone()),
        screenshot: Some(ScreenshotOptions {
            path: shot.clone(),
            after_frames: 30,
        }),
        ..GameOptions::default()
    };
    let result = run_game(rx, options);
    assert!(result.is_ok(), "game failed: {result:?}");
    drop(tx);

    let img = image::open(&shot)
        .unwrap_or_else(|e| panic!("{}: {e}", shot.display()))
        .to_rgb8();
    assert_eq!(
        (img.width(), img.height()),
        (1025, 661),
        "the remembered window size"
    );
    let kept: Option<WindowMemory> = std::fs::read_to_string(&memory)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    assert_eq!(kept.map(|m| (m.width, m.height)), Some((1025, 661)));
    let window = Vec2::new(1025.0, 661.0);
    assert_eq!(
        canvas_size(),
        Vec2::new(512.0, 330.0),
        "the canvas fills the window"
    );
    // A canvas pixel's colour.
    let px = |x: f32, y: f32| -> Px {
        let w = canvas_to_window(window, Vec2::new(x, y));
        img.get_pixel(w.x as u32, w.y as u32).0
    };
    for (x, y) in [(1024, 160), (500, 660), (1024, 660)] {
        assert!(
            close(img.get_pixel(x, y).0, [8, 6, 16], 3),
            "the bar at {x},{y}: {:?}",
            img.get_pixel(x, y).0
        );
    }

    let l = layout(canvas_size(), 1);
    // The mana bar: 1-pixel border, then 75 % blue (plenty) and 25 % empty; its label
    // ("150k left of 200k") is centred, so the samples stay near the ends.
    let bar = l.mana_bar_rect(0);
    let (left, right) = (bar.min.x + 1.0, bar.max.x - 1.0);
    let y = (bar.min.y + bar.max.y) / 2.0;
    let at = |f: f32| px(left + (right - left) * f, y);
    let blue = band_color(ManaBand::Plenty);
    for f in [0.03, 0.1, 0.2] {
        assert!(
            close(at(f), blue, 10),
            "mana at {f}: {:?}, want {blue:?}",
            at(f)
        );
    }
    for f in [0.8, 0.9, 0.97] {
        assert!(
            close(at(f), familiar_game::BAR_EMPTY, 10),
            "mana at {f}: {:?}, want empty",
            at(f)
        );
    }

    // The familiar: its violet fur inside its sprite rectangle, and nowhere far from it.
    let violet = [[128, 100, 220], [88, 62, 170], [172, 150, 245]];
    let is_fur = |p: Px| violet.iter().any(|v| close(p, *v, 8));
    let sprite = l.sprite_rect(0);
    let mut inside = 0;
    let mut outside = 0;
    for (x, y, p) in img.enumerate_pixels() {
        if !is_fur(p.0) {
            continue;
        }
        let Some(Vec2 { x, y }) = window_to_canvas(window, Vec2::new(x as f32, y as f32)) else {
            outside += 1;
            continue;
        };
        if x >= sprite.min.x && x < sprite.max.x && y >= sprite.min.y && y < sprite.max.y {
            inside += 1;
        } else if !(84.0..=396.0).contains(&x) {
            outside += 1;
        }
    }
    assert!(
        inside > 1500,
        "familiar fur pixels in its rectangle: {inside}"
    );
    assert_eq!(outside, 0, "fur far from the familiar");

    // The session's plate: opaque where its text is not, so no star shows through
    // (issue 14: background stars were drawn over "Lv 1").
    let plate = l.plate_rect(0);
    let (mut filled, mut all) = (0, 0);
    for y in plate.min.y as u32 + 2..plate.max.y as u32 - 2 {
        for x in plate.min.x as u32 + 2..plate.max.x as u32 - 2 {
            all += 1;
            if close(px(x as f32, y as f32), familiar_game::PLATE_BG, 6) {
                filled += 1;
            }
        }
    }
    assert!(
        filled * 10 > all * 4,
        "plate background on {filled} of {all} pixels of {plate:?}"
    );
    let sky_star = |p: Px| p[0] > 230 && p[1] > 230 && p[2] > 230;
    let stars_in_plate_corner = (plate.min.y as u32 + 2..plate.min.y as u32 + 14)
        .flat_map(|y| (plate.max.x as u32 - 40..plate.max.x as u32 - 2).map(move |x| (x, y)))
        .filter(|&(x, y)| sky_star(px(x as f32, y as f32)))
        .count();
    assert_eq!(stars_in_plate_corner, 0, "sky showing through the plate");
    // The plate's first line is text in the pixel font: light ink on its dark ground, on the
    // capitals' rows (a line is 16 pixels, capitals on its rows 7 to 13).
    let ink = (plate.min.y as u32 + 8..plate.min.y as u32 + 15)
        .flat_map(|y| (plate.min.x as u32 + 4..plate.max.x as u32 - 4).map(move |x| (x, y)))
        .filter(|&(x, y)| close(px(x as f32, y as f32), [235, 228, 255], 10))
        .count();
    assert!(ink > 30, "the plate's name: {ink} pixels of text");

    // The quest banner's parchment at the top.
    let parchment = img
        .enumerate_pixels()
        .filter(|(_, y, p)| *y < 40 && close(p.0, [246, 226, 176], 4))
        .count();
    assert!(parchment > 500, "quest banner pixels: {parchment}");
}
