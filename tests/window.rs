//! The binary with a real window: `familiar demo` under X11 (an Xvfb the test starts, with
//! Mesa's software renderer) plays the bundled session and saves a screenshot from inside the
//! game. This covers the glue the game crate's own tests cannot: the pipeline thread feeding
//! the window, and the window closing the pipeline down.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::Test;

/// An Xvfb started by the test, stopped when dropped.
struct Xvfb {
    child: Child,
    display: String,
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_xvfb() -> Xvfb {
    let n = (400..700)
        .find(|n| {
            !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
                && !Path::new(&format!("/tmp/.X{n}-lock")).exists()
        })
        .expect("a free X display number");
    let child = Command::new("Xvfb")
        .args([
            &format!(":{n}"),
            "-screen",
            "0",
            "1024x768x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|err| panic!("Xvfb could not start ({err}): install the `xvfb` package"));
    let server = Xvfb {
        child,
        display: format!(":{n}"),
    };
    let socket = PathBuf::from(format!("/tmp/.X11-unix/X{n}"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "Xvfb :{n} never came up");
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

#[test]
fn demo_in_a_window_renders_the_familiar_and_its_mana_bar() {
    let xvfb = start_xvfb();
    let out_dir = tempfile::tempdir().expect("temp dir");
    let shot = out_dir.path().join("demo.png");
    Test::new()
        .args(["demo", "--max-gap", "0.05", "--screenshot"])
        .arg(&shot)
        .env("DISPLAY", &xvfb.display)
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/familiar-test-bus",
        )
        .env_remove("WAYLAND_DISPLAY")
        // Nothing on stdout: with a window, actions go to the window, not to the terminal.
        .stdout("")
        .run();
    let image = image::open(&shot)
        .expect("the screenshot is a PNG")
        .to_rgb8();
    assert_eq!((image.width(), image.height()), (480, 320));
    // The mana bar's fill is the game's "plenty" band colour (the demo ends at 14,603 of
    // 200,000 tokens used) somewhere in the upper half of the window.
    let target = familiar_game::band_color(familiar_game::logic::ManaBand::Plenty).map(i32::from);
    let bar_pixels = image
        .enumerate_pixels()
        .filter(|(_, y, _)| *y < 160)
        .filter(|(_, _, p)| {
            p.0.iter()
                .zip(target)
                .all(|(a, b)| (i32::from(*a) - b).abs() <= 8)
        })
        .count();
    assert!(
        bar_pixels > 200,
        "mana bar colour {target:?} found on {bar_pixels} pixels"
    );
    let _ = std::fs::copy(
        &shot,
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("demo-window.png"),
    );
}
