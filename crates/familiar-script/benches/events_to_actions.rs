//! Events → actions through the shipped `default.rhai` (and with `notify-errors.rhai` too),
//! over the events of every real transcript in `shared/fixtures/real/`, repeated.
//!
//! Run: `cargo bench -p familiar-script --bench events_to_actions`. Target: ≥ 300,000
//! events/s. Normalizing is done once, outside the measurement: this measures the script
//! stage alone (compare with `familiar events` for the normalizer).

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use familiar_model::Event;
use familiar_script::{EventClock, HostConfig, ScriptHost};
use familiar_transcript::{NormalizerConfig, normalize_bytes};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The events, shared as the stage shares them with the scripts.
fn corpus() -> Vec<Arc<Event>> {
    let files = familiar_testkit::real_fixtures();
    let mut events = Vec::new();
    for file in files {
        if let Ok(bytes) = std::fs::read(&file) {
            let (read, _) = normalize_bytes(&bytes, &NormalizerConfig::default());
            events.extend(read.into_iter().map(Arc::new));
        }
    }
    events
}

fn host(scripts: &[&str]) -> ScriptHost {
    let mut host = ScriptHost::new(HostConfig {
        clock: Arc::new(EventClock::new()),
        ..HostConfig::default()
    });
    for script in scripts {
        if let Err(err) = host.load_file(&repo().join("scripts").join(script)) {
            panic!("{err}");
        }
    }
    host
}

fn bench(c: &mut Criterion) {
    let events = corpus();
    assert!(!events.is_empty(), "no real fixtures found");
    let mut group = c.benchmark_group("events_to_actions");
    group.throughput(Throughput::Elements(events.len() as u64));
    group.sample_size(20);
    for (name, scripts) in [
        ("default", &["default.rhai"][..]),
        (
            "default+notify",
            &["default.rhai", "notify-errors.rhai"][..],
        ),
    ] {
        let mut host = host(scripts);
        let mut actions = Vec::with_capacity(events.len() * 2);
        let mut diagnostics = Vec::new();
        group.bench_function(name, |b| {
            b.iter(|| {
                actions.clear();
                for event in &events {
                    host.handle_shared(black_box(event), &mut actions, &mut diagnostics);
                }
                black_box(actions.len())
            })
        });
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
