//! Action → sound latency: a real PulseAudio server with a null sink (`familiar_testkit::pulse`),
//! its monitor recorded by `parec` (5 ms latency); each round hands a `sound("subagent_in")`
//! action to the sink and waits for the first audible chunk of the recording. The figure is an
//! upper bound: it includes the null sink's and parec's own buffering, and a chunk arrives
//! after the sound inside it began. Needs `pulseaudio` and `pulseaudio-utils`.
//!
//! `cargo bench -p familiar-audio --bench sound_latency [-- ROUNDS]` (default 50)

use familiar_testkit::pulse as support;

use std::time::{Duration, Instant};

use familiar_audio::{AudioOptions, AudioSink};
use familiar_model::sink::Sink as _;
use familiar_model::{Action, ActionKind, EventKind};

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(50);
    let server = support::PulseServer::start();
    let recording = server.record();
    let mut sink = AudioSink::new(AudioOptions {
        socket: Some(server.socket()),
        repeat_gap: Duration::ZERO,
        ..AudioOptions::default()
    });
    let action = Action {
        kind: ActionKind::Sound {
            name: "subagent_in".into(),
        },
        script: "default.rhai".into(),
        session: None,
        agent: None,
        line: 1,
        event: EventKind::SubagentStart,
    };
    // Let the worker connect and render the cues before the first round.
    std::thread::sleep(Duration::from_millis(500));
    let mut latencies = Vec::with_capacity(rounds);
    for round in 0..rounds {
        std::thread::sleep(Duration::from_millis(150));
        let asked = Instant::now();
        sink.handle(&action);
        let deadline = asked + Duration::from_secs(2);
        let heard = loop {
            if let Some(at) = recording.first_sound_after(asked) {
                break at;
            }
            if Instant::now() > deadline {
                eprintln!("round {round}: no sound within 2 s");
                std::process::exit(1);
            }
            std::thread::sleep(Duration::from_micros(500));
        };
        latencies.push(heard.duration_since(asked).as_secs_f64() * 1000.0);
        sink.flush();
    }
    latencies.sort_by(f64::total_cmp);
    let pick = |q: f64| latencies[((q * latencies.len() as f64) as usize).min(latencies.len() - 1)];
    println!(
        "action -> sound on the null sink's monitor over {rounds} sounds: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        pick(0.5),
        pick(0.99),
        latencies[latencies.len() - 1]
    );
}
