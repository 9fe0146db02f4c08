//! Events → actions through the shipped scripts, reported as events per second of wall time
//! and of this thread's CPU time. The CPU figure stays meaningful on a busy machine, where the
//! criterion benchmark (`benches/events_to_actions.rs`) measures wall time only.
//!
//! `cargo run --release -p familiar-script --example throughput [ROUNDS] [TRANSCRIPT]`: the
//! events of every real transcript, or of TRANSCRIPT alone (such as the event-dense one of
//! `bench/events-to-actions.sh`: the script side of that end-to-end figure).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use familiar_script::{EventClock, HostConfig, ScriptHost};
use familiar_transcript::{NormalizerConfig, normalize_bytes};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// CPU time of this thread in nanoseconds (Linux `schedstat`); `None` elsewhere.
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(50);
    let files = match std::env::args().nth(2) {
        Some(transcript) => vec![PathBuf::from(transcript)],
        None => familiar_testkit::real_fixtures(),
    };
    let mut events = Vec::new();
    for file in &files {
        if let Ok(bytes) = std::fs::read(file) {
            events.extend(normalize_bytes(&bytes, &NormalizerConfig::default()).0);
        }
    }
    if events.is_empty() {
        match std::env::args().nth(2) {
            Some(transcript) => eprintln!("no events in {transcript}"),
            None => eprintln!(
                "no events in the real transcripts of {}",
                familiar_testkit::real_fixtures_dir().display()
            ),
        }
        std::process::exit(1);
    }
    for scripts in [
        &["default.rhai"][..],
        &["default.rhai", "notify-errors.rhai"][..],
    ] {
        let mut host = ScriptHost::new(HostConfig {
            clock: Arc::new(EventClock::new()),
            ..HostConfig::default()
        });
        for script in scripts {
            if let Err(err) = host.load_file(&repo().join("scripts").join(script)) {
                eprintln!("{err}");
                std::process::exit(1);
            }
        }
        let mut actions = Vec::new();
        let mut diagnostics = Vec::new();
        let wall = Instant::now();
        let cpu = thread_cpu_ns();
        for _ in 0..rounds {
            actions.clear();
            for event in &events {
                host.handle(event, &mut actions, &mut diagnostics);
            }
        }
        let wall = wall.elapsed().as_secs_f64();
        let total = (events.len() * rounds) as f64;
        let cpu = cpu
            .zip(thread_cpu_ns())
            .map(|(start, end)| (end - start) as f64 / 1e9);
        println!(
            "{}: {} events × {rounds}: {:.0} events/s wall{}, {} actions per round, {} errors",
            scripts.join(" + "),
            events.len(),
            total / wall,
            cpu.map(|c| format!(", {:.0} events/s CPU", total / c))
                .unwrap_or_default(),
            actions.len(),
            diagnostics.len()
        );
    }
}
