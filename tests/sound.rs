//! Sound end to end: `familiar replay --headless --sound` on a transcript with errors, against
//! a real PulseAudio server with a null sink whose monitor `parec` records
//! (crates/familiar-audio/tests/support/pulse.rs). The recording gets loud while the replay
//! runs and is silent before; `--mute`, or headless without `--sound`, keeps it silent. With
//! no server: one clear line on stderr, the actions still come out, exit 0.

mod common;

#[path = "../crates/familiar-audio/tests/support/pulse.rs"]
mod pulse;

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
