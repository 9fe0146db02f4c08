//! Throughput of the normalizer alone (no output), over the real fixtures repeated to ~32 MiB.
//! `cargo bench -p familiar-transcript`; the end-to-end command figures come from
//! `bench/run.sh`.

use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use familiar_transcript::{Normalizer, NormalizerConfig, normalize_read};

fn corpus() -> Vec<u8> {
    let dir = familiar_testkit::real_fixtures_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('v'))
        })
        .collect();
    files.sort();
    let mut corpus = Vec::new();
    while corpus.len() < 32 << 20 {
        for file in &files {
            corpus.extend(std::fs::read(file).expect("fixture"));
        }
    }
    corpus
}

fn bench(c: &mut Criterion) {
    let corpus = corpus();
    let mut group = c.benchmark_group("normalize");
    group.throughput(Throughput::Bytes(corpus.len() as u64));
    group.sample_size(10);
    group.bench_function("events", |b| {
        b.iter(|| {
            let mut normalizer = Normalizer::new(NormalizerConfig::default());
            let mut count = 0u64;
            normalize_read(
                &corpus[..],
                &mut normalizer,
                |_| {
                    count += 1;
                    Ok(())
                },
                |_| {},
            )
            .expect("in memory");
            count
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
