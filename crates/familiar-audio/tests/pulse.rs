//! The sound sink against a real PulseAudio server with a null sink (`familiar_testkit::pulse`):
//! its monitor is recorded with `parec` and the recording must get loud in the right window
//! (cues, users' files, overlapping sounds, volume) or stay silent (quiet hours, a burst
//! beyond the first sound, a broken file). With no server, nothing fails and it is counted.

use familiar_testkit::pulse as support;

use std::path::Path;
use std::time::{Duration, Instant};

use familiar_audio::{AudioOptions, AudioSink, ScriptDirs, ServerError, pulse};
use familiar_model::sink::Sink as _;
use familiar_model::time::QuietHours;
use familiar_model::{Action, ActionKind, EventKind};
use support::{AUDIBLE, PulseServer, Recording};

fn sound(name: &str, script: &str) -> Action {
    Action {
        kind: ActionKind::Sound { name: name.into() },
        script: script.into(),
        session: None,
        agent: None,
        line: 1,
        event: EventKind::Error,
    }
}

fn sink_for(server: &PulseServer, options: AudioOptions) -> AudioSink {
    AudioSink::new(AudioOptions {
        socket: Some(server.socket()),
        ..options
    })
}

/// Record a quiet lead-in, run `play`, wait for the sink to finish, record a quiet tail.
fn around(
    _recording: &Recording,
    sink: &mut AudioSink,
    play: impl FnOnce(&mut AudioSink),
) -> (Instant, Instant) {
    std::thread::sleep(Duration::from_millis(300));
    let asked = Instant::now();
    play(sink);
    sink.flush();
    let finished = Instant::now();
    std::thread::sleep(Duration::from_millis(400));
    (asked, finished)
}

fn seconds_of(cue: &str) -> f32 {
    let index = familiar_audio::cues::find(cue).expect("cue");
    let samples = familiar_audio::cues::samples(index).expect("rendered");
    samples.len() as f32 / familiar_audio::synth::RATE as f32
}

#[test]
fn a_cue_sounds_on_the_null_sink_right_after_it_is_asked_and_only_then() {
    let server = PulseServer::start();
    let recording = server.record();
    let mut sink = sink_for(&server, AudioOptions::default());
    let start = Instant::now();
    let (asked, finished) = around(&recording, &mut sink, |sink| {
        sink.handle(&sound("error", "default.rhai"))
    });
    assert!(
        recording.rms_between(start, asked) < AUDIBLE,
        "sound before it was asked"
    );
    let first = recording
        .first_sound_after(asked)
        .expect("the cue was recorded");
    assert!(
        first.duration_since(asked) < Duration::from_millis(500),
        "started {:?} late",
        first.duration_since(asked)
    );
    let rms = recording.rms_between(asked, finished + Duration::from_millis(100));
    assert!(rms > 0.03, "rms {rms}");
    let heard = recording.audible_seconds();
    let length = seconds_of("error");
    assert!(
        (heard - length).abs() < 0.15,
        "heard {heard} s of a {length} s cue"
    );
    let last = recording.last_sound().expect("sound");
    assert!(
        last < finished + Duration::from_millis(200),
        "sound after the sink said it was done"
    );
    assert_eq!(sink.failures(), 0);
}

#[test]
fn overlapping_cues_mix_and_the_volume_scales_them() {
    let server = PulseServer::start();
    let recording = server.record();
    // No repeat gap: the same cue plays in each round.
    let mut sink = sink_for(
        &server,
        AudioOptions {
            volume: 0.8,
            repeat_gap: Duration::ZERO,
            ..AudioOptions::default()
        },
    );
    let (a0, a1) = around(&recording, &mut sink, |sink| {
        sink.handle(&sound("approval", "default.rhai"))
    });
    let alone = recording.rms_between(a0, a1);
    // Two different cues at once: both play, mixed by the server, not one after the other.
    let (b0, b1) = around(&recording, &mut sink, |sink| {
        sink.handle(&sound("approval", "default.rhai"));
        sink.handle(&sound("done", "default.rhai"));
    });
    let both = recording.rms_between(b0, b1);
    assert!(both > alone * 1.15, "mixed {both} vs alone {alone}");
    let took = b1.duration_since(b0).as_secs_f32();
    let longest = seconds_of("approval").max(seconds_of("done"));
    assert!(
        took < longest + 0.4,
        "took {took} s: played in turn, not mixed"
    );

    let mut quiet = sink_for(
        &server,
        AudioOptions {
            volume: 0.2,
            ..AudioOptions::default()
        },
    );
    let (c0, c1) = around(&recording, &mut quiet, |sink| {
        sink.handle(&sound("approval", "default.rhai"))
    });
    let softer = recording.rms_between(c0, c1);
    let ratio = softer / alone;
    assert!(
        (0.18..0.32).contains(&ratio),
        "volume 0.2 vs 0.8 gave a ratio of {ratio}"
    );
}

#[test]
fn a_burst_of_the_same_cue_plays_once() {
    let server = PulseServer::start();
    let recording = server.record();
    let mut sink = sink_for(&server, AudioOptions::default());
    around(&recording, &mut sink, |sink| {
        for _ in 0..6 {
            sink.handle(&sound("error", "default.rhai"));
        }
    });
    assert_eq!(sink.sent(), 1);
    let heard = recording.audible_seconds();
    assert!(
        (heard - seconds_of("error")).abs() < 0.15,
        "heard {heard} s"
    );
}

#[test]
fn quiet_hours_around_now_keep_it_silent() {
    let server = PulseServer::start();
    let recording = server.record();
    let now = familiar_audio::local_minute();
    let hours = QuietHours {
        start: (now + 1440 - 60) % 1440,
        end: (now + 60) % 1440,
    };
    let mut sink = sink_for(
        &server,
        AudioOptions {
            quiet_hours: Some(hours),
            ..AudioOptions::default()
        },
    );
    let (asked, _) = around(&recording, &mut sink, |sink| {
        sink.handle(&sound("done", "default.rhai"))
    });
    assert_eq!(sink.sent(), 0);
    assert!(
        recording.first_sound_after(asked).is_none(),
        "sound in quiet hours"
    );
}

/// A mono 16-bit wav with a 660 Hz sine at half scale.
fn sine_wav(path: &Path, seconds: f32) {
    let rate = 22_050u32;
    let samples: Vec<i16> = (0..(rate as f32 * seconds) as usize)
        .map(|i| ((i as f32 * 660.0 * std::f32::consts::TAU / rate as f32).sin() * 16_384.0) as i16)
        .collect();
    let data = samples.len() as u32 * 2;
    let mut out = Vec::new();
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    for value in [1u16, 1] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&(rate * 2).to_le_bytes());
    for value in [2u16, 16] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data.to_le_bytes());
    for sample in samples {
        out.extend_from_slice(&sample.to_le_bytes());
    }
    std::fs::write(path, out).expect("wav");
}

#[test]
fn a_user_s_file_beside_the_script_plays_and_a_broken_one_is_told_not_fatal() {
    let server = PulseServer::start();
    let recording = server.record();
    let scripts = tempfile::tempdir().expect("scripts");
    std::fs::create_dir(scripts.path().join("sounds")).expect("dir");
    sine_wav(&scripts.path().join("sounds/beep.wav"), 0.5);
    std::fs::write(
        scripts.path().join("sounds/broken.flac"),
        b"fLaC and then garbage",
    )
    .expect("broken");
    let dirs = ScriptDirs::from_paths([scripts.path().join("mine.rhai").as_path()]);
    let mut sink = sink_for(
        &server,
        AudioOptions {
            volume: 1.0,
            script_dirs: dirs,
            ..AudioOptions::default()
        },
    );

    let (b0, b1) = around(&recording, &mut sink, |sink| {
        sink.handle(&sound("sounds/broken.flac", "mine.rhai"))
    });
    assert!(
        recording.first_sound_after(b0).is_none(),
        "a broken file made a sound"
    );
    assert!(sink.failures() >= 1);
    assert!(b1 >= b0);

    let (asked, finished) = around(&recording, &mut sink, |sink| {
        sink.handle(&sound("sounds/beep.wav", "mine.rhai"))
    });
    let rms = recording.rms_between(asked, finished + Duration::from_millis(100));
    // A half-scale sine has an RMS of 0.35; some of the window is before and after it.
    assert!(rms > 0.2, "rms {rms}");
    let heard = recording.audible_seconds();
    assert!((heard - 0.5).abs() < 0.1, "heard {heard} s of a 0.5 s file");
    // Outside the script's directory: refused, silent.
    let (o0, _) = around(&recording, &mut sink, |sink| {
        sink.handle(&sound("../beep.wav", "mine.rhai"))
    });
    assert!(recording.first_sound_after(o0).is_none());
}

#[test]
fn with_no_server_nothing_fails_and_the_error_names_what_is_missing() {
    let dir = tempfile::tempdir().expect("dir");
    let missing = dir.path().join("pulse/native");
    let err = pulse::connect(&missing).expect_err("no server");
    assert!(matches!(err, ServerError::NoServer(_)), "{err}");
    let text = err.to_string();
    assert!(
        text.starts_with("no sound server: cannot connect to "),
        "{text}"
    );
    assert!(text.contains("pulse/native"), "{text}");

    let mut sink = AudioSink::new(AudioOptions {
        socket: Some(missing),
        ..AudioOptions::default()
    });
    sink.handle(&sound("error", "default.rhai"));
    sink.handle(&sound("done", "default.rhai"));
    sink.flush();
    assert_eq!(sink.sent(), 2);
    assert!(sink.failures() >= 2, "failures {}", sink.failures());
}

#[test]
fn a_server_without_an_output_device_is_told_as_such() {
    let server = PulseServer::start();
    let index = server
        .pactl(&["list", "short", "modules"])
        .and_then(|list| {
            list.lines()
                .find(|line| line.contains("module-null-sink"))
                .and_then(|line| line.split_whitespace().next().map(str::to_owned))
        })
        .expect("the null sink module");
    assert!(server.pactl(&["unload-module", &index]).is_some());
    let mut sink = sink_for(&server, AudioOptions::default());
    sink.handle(&sound("error", "default.rhai"));
    sink.flush();
    assert!(sink.failures() >= 1);
    let err = futures_probe(&server);
    assert!(matches!(err, ServerError::NoDevice(_)), "{err}");
    assert!(err.to_string().contains("no audio output device"), "{err}");
}

/// `probe` on this server: the doctor's view.
fn futures_probe(server: &PulseServer) -> ServerError {
    pulse::probe_at(&server.socket()).expect_err("no device")
}

#[test]
fn the_probe_names_the_server_and_its_output() {
    let server = PulseServer::start();
    let info = pulse::probe_at(&server.socket()).expect("probe");
    assert!(
        info.server.to_lowercase().contains("pulseaudio"),
        "{info:?}"
    );
    assert_eq!(info.default_sink.as_deref(), Some("t"));
}

/// Issue 14: the window's animation cues are heard, through the scripts' sink, and a cue
/// right after a script's sound for the same session stays quiet (no double sound).
#[test]
fn a_window_cue_sounds_on_the_null_sink_unless_a_script_just_rang_for_its_session() {
    use familiar_audio::{CueOutcome, SharedAudio};
    let server = PulseServer::start();
    let recording = server.record();
    let mut audio = SharedAudio::new(AudioOptions {
        socket: Some(server.socket()),
        ..AudioOptions::default()
    });
    std::thread::sleep(Duration::from_millis(300));
    let asked = Instant::now();
    assert_eq!(audio.cue("s1", "enter"), CueOutcome::Played("subagent_in"));
    audio.flush();
    let finished = Instant::now();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        recording.first_sound_after(asked).is_some(),
        "the cue was not recorded"
    );
    let rms = recording.rms_between(asked, finished + Duration::from_millis(100));
    assert!(rms > 0.01, "rms {rms}");
    // A script rings for s1: s1's victory stays quiet, s2's is heard; silent animations
    // and errors play nothing.
    let mut done = sound("done", "default.rhai");
    done.session = Some("s1".into());
    audio.handle(&done);
    assert_eq!(audio.cue("s1", "victory"), CueOutcome::AfterScript);
    assert_eq!(audio.cue("s2", "ask"), CueOutcome::Played("approval"));
    assert_eq!(audio.cue("s2", "hurt"), CueOutcome::Silent);
    assert_eq!(audio.cue("s2", "cast"), CueOutcome::Silent);
    assert_eq!(audio.sent(), 3);
    audio.flush();
    assert_eq!(audio.failures(), 0);
}
