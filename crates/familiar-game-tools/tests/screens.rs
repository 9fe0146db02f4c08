//! Screenshot tests: each scene of `familiar_game::scene` (every animation state, the approval
//! wait, a three-session party with a companion, a party in which one session fails (its own
//! rain), crowds of 5 and 10 sessions, a 1M-token
//! session, the rest after compaction) is played in a real window by
//! `game-demo --scene NAME --screenshot PATH` (one
//! process per scene: winit allows one event loop per process) and compared with its
//! reference image in `tests/screens/NAME.png`.
//!
//! A scene is deterministic (a fixed feed delivered at fixed frames, a fixed game-time step, a
//! fixed local time, pipelines compiled before the captured frame), so a capture is the same
//! run after run on one machine. The comparison tolerates what differs between machines and
//! Mesa versions (`compare::TOLERANCE`: a channel may be off by 40, and 0.2 % of the pixels may
//! differ more), not a changed sprite, label or layout. On a mismatch the capture and a diff
//! image (differing pixels in magenta) are left under `target/screens/` and the failure names
//! them.
//!
//! When the look changes on purpose, regenerate every reference, then look at each one:
//!
//! ```text
//! FAMILIAR_UPDATE_REFERENCES=1 cargo test -p familiar-game-tools --test screens
//! ```
//!
//! References are indexed PNGs of at most 256 colours (`compare::write_reference`).
//!
//! Needs a display: with `DISPLAY` unset each test starts its own `Xvfb` (package `xvfb`) and
//! fails, never skips, if it cannot; Mesa's Vulkan driver (`mesa-vulkan-drivers`) renders.

#[path = "screens/compare.rs"]
mod compare;

use std::path::{Path, PathBuf};
use std::process::Command;

use compare::{TOLERANCE, compare, write_reference};

/// Where the references live.
fn references() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/screens")
}

/// Where captures and diffs go: `<target>/screens/`.
fn out_dir() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target"));
    target.join("screens")
}

const REGENERATE: &str =
    "FAMILIAR_UPDATE_REFERENCES=1 cargo test -p familiar-game-tools --test screens";

/// The references total at most this many bytes.
const REFERENCES_MAX_BYTES: u64 = 400_000;

fn updating() -> bool {
    std::env::var_os("FAMILIAR_UPDATE_REFERENCES").is_some_and(|v| v == "1")
}

/// Plays `name` in a window and returns the capture.
fn capture(name: &str) -> (PathBuf, image::RgbImage) {
    let (display, _xvfb) = familiar_testkit::xvfb::display();
    let out = out_dir();
    assert!(std::fs::create_dir_all(&out).is_ok(), "{}", out.display());
    let shot = out.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&shot);
    let runtime = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let run = Command::new(env!("CARGO_BIN_EXE_game-demo"))
        .args(["--scene", name, "--screenshot"])
        .arg(&shot)
        .env("DISPLAY", &display)
        .env("XDG_RUNTIME_DIR", runtime.path())
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap_or_else(|e| panic!("game-demo did not start: {e}"));
    assert!(
        run.status.success() && shot.exists(),
        "game-demo --scene {name} on DISPLAY={display} failed ({}), no capture at {}:\n{}",
        run.status,
        shot.display(),
        String::from_utf8_lossy(&run.stderr)
    );
    let img = image::open(&shot)
        .unwrap_or_else(|e| panic!("{}: {e}", shot.display()))
        .to_rgb8();
    (shot, img)
}

fn check(name: &str) {
    let (shot, actual) = capture(name);
    let reference_path = references().join(format!("{name}.png"));
    if updating() {
        let bytes = write_reference(&reference_path, &actual).unwrap_or_else(|e| panic!("{e}"));
        eprintln!(
            "screens: wrote {} ({bytes} bytes)",
            reference_path.display()
        );
    }
    let reference = match image::open(&reference_path) {
        Ok(img) => img.to_rgb8(),
        Err(e) => panic!(
            "no reference for scene {name} ({}: {e}); the capture is {}. Create the references \
             with: {REGENERATE}",
            reference_path.display(),
            shot.display()
        ),
    };
    let diff_path = out_dir().join(format!("{name}.diff.png"));
    let _ = std::fs::remove_file(&diff_path);
    let result = compare(&reference, &actual, TOLERANCE.channel).unwrap_or_else(|e| {
        panic!(
            "scene {name}: the capture {} does not fit its reference {}: {e}. If the change is \
             meant, regenerate the references: {REGENERATE}",
            shot.display(),
            reference_path.display()
        )
    });
    if !result.matches(TOLERANCE) {
        let saved = match result.diff.save(&diff_path) {
            Ok(()) => String::new(),
            Err(e) => format!(" (not written: {e})"),
        };
        panic!(
            "scene {name}: {} of {} pixels differ from the reference by more than {} (worst {}; \
             {:.2} % allowed).\n  capture:   {}\n  reference: {}\n  diff:      {}{saved}\n\
             If the change is meant, regenerate the references and look at each: {REGENERATE}",
            result.differing,
            result.total,
            TOLERANCE.channel,
            result.worst,
            TOLERANCE.max_fraction * 100.0,
            shot.display(),
            reference_path.display(),
            diff_path.display(),
        );
    }
    eprintln!(
        "screens: {name} matches ({} pixels past {}, worst {})",
        result.differing, TOLERANCE.channel, result.worst
    );
}

macro_rules! scenes {
    ($($name:ident),* $(,)?) => {
        /// The scenes tested here, in `scene::NAMES` order.
        const TESTED: &[&str] = &[$(stringify!($name)),*];
        $(
            #[test]
            fn $name() {
                check(stringify!($name));
            }
        )*
    };
}

scenes!(
    enter,
    idle,
    reading,
    writing,
    bash,
    thinking,
    error,
    success,
    blocked,
    asleep,
    compaction,
    approval,
    party,
    storm,
    crowd5,
    crowd10,
    million,
    after_compaction,
);

#[test]
fn every_scene_has_a_test_and_a_reference() {
    assert_eq!(TESTED, familiar_game::scene::NAMES);
    let mut total = 0;
    for name in TESTED {
        let path = references().join(format!("{name}.png"));
        let bytes = std::fs::metadata(&path).map(|m| m.len());
        assert!(
            bytes.is_ok() || updating(),
            "{} is missing: {REGENERATE}",
            path.display()
        );
        total += bytes.unwrap_or(0);
    }
    // Every PNG there belongs to a scene (a renamed scene leaves no stale reference).
    let names = familiar_testkit::file_names(&references());
    for file in names.iter().filter(|f| f.ends_with(".png")) {
        let stem = file.trim_end_matches(".png");
        assert!(TESTED.contains(&stem), "stale reference {file}");
    }
    assert!(
        total <= REFERENCES_MAX_BYTES,
        "the references take {total} bytes (at most {REFERENCES_MAX_BYTES})"
    );
}
