//! Sound end to end: `familiar replay --headless --sound` on a transcript with errors, against
//! a real PulseAudio server with a null sink whose monitor `parec` records
//! (`familiar_testkit::pulse`). The recording gets loud while the replay
//! runs and is silent before; `--mute`, or headless without `--sound`, keeps it silent. With
//! no server: one clear line on stderr, the actions still come out, exit 0.

mod common;

use familiar_testkit::pulse;

use std::time::{Duration, Instant};

use common::{Test, fixture};
use pulse::{AUDIBLE, PulseServer};

/// A headless replay of the errors fixture against `runtime_dir`'s sound server.
fn replay(runtime_dir: &std::path::Path, flags: &[&str]) -> Test {
    Test::new()
        .args([
            "replay",
            "--headless",
            "--no-notify",
            "--speed",
            "50",
            "--max-gap",
            "0.2",
        ])
        .args(flags)
        .arg(fixture("errors-each-kind.jsonl"))
        .env("XDG_RUNTIME_DIR", runtime_dir)
        .env_remove("PULSE_SERVER")
        .env_remove("PULSE_RUNTIME_PATH")
        .env_remove("FAMILIAR_CONFIG")
}

#[test]
fn replay_headless_with_sound_plays_the_error_cue_while_it_runs() {
    let server = PulseServer::start();
    let recording = server.record();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let out = replay(server.runtime_dir(), &["--sound"]).run();
    let ended = Instant::now();
    std::thread::sleep(Duration::from_millis(300));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(r#""action":"sound","name":"error""#),
        "{stdout}"
    );
    assert!(recording.rms_between(Instant::now() - Duration::from_secs(60), started) < AUDIBLE);
    let first = recording
        .first_sound_after(started)
        .expect("a sound was recorded");
    assert!(first < ended, "the sound came after the replay ended");
    let rms = recording.rms_between(started, ended);
    assert!(rms > 0.01, "rms {rms} while replaying");
    assert!(
        recording
            .last_sound()
            .is_some_and(|last| last < ended + Duration::from_millis(200))
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("sound"), "{stderr}");
}

#[test]
fn muted_or_headless_without_sound_stays_silent() {
    let server = PulseServer::start();
    let recording = server.record();
    let started = Instant::now();
    for flags in [&["--sound", "--mute"][..], &[][..]] {
        let out = replay(server.runtime_dir(), flags).run();
        assert!(String::from_utf8_lossy(&out.stdout).contains(r#""action":"sound""#));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        recording.first_sound_after(started).is_none(),
        "a muted run made a sound"
    );
}

#[test]
fn no_sound_server_is_one_clear_line_and_the_replay_goes_on() {
    let empty = tempfile::tempdir().expect("runtime dir");
    let out = replay(empty.path(), &["--sound"])
        .stderr_contains("no sound server: ")
        .stderr_contains("pulse/native does not exist")
        .run();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("no sound server").count(), 1, "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains(r#""action":"sound","name":"error""#));
}

#[test]
fn doctor_names_the_sound_server_and_its_output() {
    let server = PulseServer::start();
    let out = Test::new()
        .arg("doctor")
        .env("XDG_RUNTIME_DIR", server.runtime_dir())
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/familiar-test-bus",
        )
        .env_remove("PULSE_SERVER")
        .env_remove("PULSE_RUNTIME_PATH")
        .env_remove("FAMILIAR_CONFIG")
        .run();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|line| line.contains("] sound: "))
        .unwrap_or_else(|| panic!("no sound line: {stdout}"));
    assert!(line.starts_with("[ok] sound: pulseaudio "), "{line}");
    assert!(line.ends_with("pulse/native, playing to t"), "{line}");
}

/// A replay of a compaction, with the window under Xvfb, against `runtime_dir`'s sound
/// server: the scripts play no sound for it, so whatever is heard is the game's sounds (the
/// familiar entering, then resting after the compaction).
fn replay_in_a_window(
    runtime_dir: &std::path::Path,
    display: &str,
    shot: &std::path::Path,
    flags: &[&str],
) -> Test {
    Test::new()
        .args(["replay", "--no-notify", "--max-gap", "0.05", "--screenshot"])
        .arg(shot)
        .args(flags)
        .arg(fixture("compaction-with-post-tokens.jsonl"))
        .env("DISPLAY", display)
        .env("XDG_RUNTIME_DIR", runtime_dir)
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/familiar-test-bus",
        )
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("PULSE_SERVER")
        .env_remove("PULSE_RUNTIME_PATH")
        .env_remove("FAMILIAR_CONFIG")
}

/// Issue 14, then issue 26: the game's sounds (the familiar entering, resting after the
/// compaction) are chosen by the pipeline from the events, not by a round trip through the
/// window: they are heard with the window and without it (`--headless --sound`), and
/// `--mute` silences them.
#[test]
fn the_game_s_sounds_are_heard_with_or_without_the_window_unless_muted() {
    let xvfb = familiar_testkit::xvfb::start();
    let server = PulseServer::start();
    let recording = server.record();
    let shots = tempfile::tempdir().expect("temp dir");
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let muted_shot = shots.path().join("muted.png");
    replay_in_a_window(
        server.runtime_dir(),
        &xvfb.display,
        &muted_shot,
        &["--mute"],
    )
    .run();
    assert!(muted_shot.exists(), "the muted window did not run");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        recording.first_sound_after(started).is_none(),
        "a sound while muted"
    );
    let headless_started = Instant::now();
    let headless = Test::new()
        .args([
            "replay",
            "--headless",
            "--sound",
            "--no-notify",
            "--max-gap",
            "0.05",
        ])
        .arg(fixture("compaction-with-post-tokens.jsonl"))
        .env("XDG_RUNTIME_DIR", server.runtime_dir())
        .env_remove("PULSE_SERVER")
        .env_remove("PULSE_RUNTIME_PATH")
        .env_remove("FAMILIAR_CONFIG")
        .run();
    // The scripts ask for no sound: what is heard is the game's.
    assert!(!String::from_utf8_lossy(&headless.stdout).contains(r#""action":"sound""#));
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        recording.first_sound_after(headless_started).is_some(),
        "the game's sounds were not heard without the window"
    );
    let windowed = Instant::now();
    let shot = shots.path().join("cues.png");
    replay_in_a_window(server.runtime_dir(), &xvfb.display, &shot, &[]).run();
    assert!(shot.exists(), "the window did not run");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        recording.first_sound_after(windowed).is_some(),
        "the game's sounds were not heard with the window"
    );
    let rms = recording.rms_between(windowed, Instant::now());
    assert!(rms > 0.002, "rms {rms}");
}
