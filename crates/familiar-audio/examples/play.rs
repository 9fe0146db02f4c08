//! Play built-in cues (or a sound file) on the desktop's sound server, one after the other, to
//! hear what the scripts' `sound(...)` calls do:
//!
//! `cargo run -p familiar-audio --example play -- done error sounds/mine.ogg`
//!
//! With no arguments it plays every built-in cue. Files are looked up relative to the current
//! directory, as for a script there.

use std::path::Path;
use std::time::Duration;

use familiar_audio::{AudioOptions, AudioSink, ScriptDirs, cues};
use familiar_model::sink::Sink as _;
use familiar_model::{Action, ActionKind, EventKind};

fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let mut names: Vec<String> = std::env::args().skip(1).collect();
    if names.is_empty() {
        names = cues::names().into_iter().map(str::to_owned).collect();
    }
    let mut sink = AudioSink::new(AudioOptions {
        repeat_gap: Duration::ZERO,
        script_dirs: ScriptDirs::from_paths([Path::new("play.rhai")]),
        ..AudioOptions::default()
    });
    for name in names {
        println!("{name}");
        sink.handle(&Action {
            kind: ActionKind::Sound { name },
            script: "play.rhai".into(),
            session: None,
            agent: None,
            line: 0,
            event: EventKind::Status,
        });
        sink.flush();
        std::thread::sleep(Duration::from_millis(400));
    }
    if sink.failures() > 0 {
        eprintln!(
            "{} sound(s) could not play (see the warnings above)",
            sink.failures()
        );
        std::process::exit(1);
    }
}
