//! Nothing lost, nothing doubled: a writer appends a real transcript in random chunks (cutting
//! lines and multi-byte UTF-8 characters anywhere, with random pauses) while the tailer
//! follows it through real inotify (or its poll loop); the lines equal the complete lines of
//! the whole file, numbered from 1, each once. Seeded and reproducible: proptest picks the fixture, the seed of the chunk
//! plan and the watch mode from a fixed RNG seed.

mod common;

use std::time::Duration;

use common::*;
use familiar_tail::{OpenReason, Selector, TailMessage};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

/// splitmix64: a tiny deterministic generator for the chunk plan.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Where the next chunk ends: inside the next multi-byte character, just around the next
/// newline, a few bytes on, or a big stride.
fn next_cut(bytes: &[u8], at: usize, rng: &mut Rng) -> usize {
    let rest = &bytes[at..];
    let cut = match rng.below(10) {
        0 | 1 => rest
            .iter()
            .position(|&b| b >= 0x80)
            .map(|i| i + 1 + rng.below(2) as usize) // after the lead byte: mid-character
            .unwrap_or(rest.len()),
        2 => rest
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| i + rng.below(3) as usize) // before, on or after the newline
            .unwrap_or(rest.len()),
        3..=5 => 1 + rng.below(16) as usize,
        _ => 1 + rng.below(64 * 1024) as usize,
    };
    at + cut.clamp(1, rest.len())
}

fn run_case(fixture: usize, seed: u64, poll: bool) -> Result<(), TestCaseError> {
    let fixtures = real_fixtures();
    let source = &fixtures[fixture % fixtures.len()];
    let bytes = std::fs::read(source).expect("read fixture");
    let env = Env::new();
    let project = std::path::Path::new("/work/some project");
    let dir = env.project_dir(project);
    let session = session_of(&bytes);
    let path = dir.join(format!("{session}.jsonl"));

    let mut config = env.tailer_config(vec![Selector::All]);
    if poll {
        config.mode = poll_mode();
    }
    let handle = start(config);
    let mut rng = Rng(seed);
    let mut at = 0;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .expect("create the transcript");
    while at < bytes.len() {
        let cut = next_cut(&bytes, at, &mut rng);
        std::io::Write::write_all(&mut file, &bytes[at..cut]).expect("append");
        at = cut;
        if rng.below(20) == 0 {
            std::thread::sleep(Duration::from_millis(rng.below(4)));
        }
    }
    let end = format!("end-{seed}");
    // The fixture may end without a newline: the marker must start on its own line.
    let mut tail = Vec::new();
    if !bytes.ends_with(b"\n") {
        tail.push(b'\n');
    }
    tail.extend(marker(&end));
    std::io::Write::write_all(&mut file, &tail).expect("append the marker");

    let stream = stream_of(&until_marker(&handle, &end), &path);
    let what = format!(
        "{} seed {seed} {}",
        source.display(),
        if poll { "poll" } else { "inotify" }
    );
    let mut whole = bytes.clone();
    whole.extend(&tail);
    let want = lines_of(&whole);
    prop_assert!(want.len() > 1, "{}: the fixture has lines", what);
    prop_assert_eq!(&stream.opened, &[(1, OpenReason::Appeared)]);
    let got: Vec<Vec<u8>> = stream.lines.iter().map(|l| l.bytes.clone()).collect();
    assert_same_lines(&got, &want, &what);
    prop_assert_eq!(stream.lines[0].number, 1);
    let stats = handle.stats();
    prop_assert_eq!(stats.channel_full, 0);
    prop_assert_eq!(stats.bytes, whole.len() as u64);
    Ok(())
}

proptest! {
    #![proptest_config(Config {
        cases: 24,
        rng_seed: RngSeed::Fixed(0x7a11_5eed),
        failure_persistence: None,
        max_shrink_iters: 0,
        ..Config::default()
    })]

    #[test]
    fn random_chunked_appends_give_the_lines_of_the_whole_file(
        fixture in 0usize..64,
        seed in any::<u64>(),
        poll in prop::bool::weighted(0.25),
    ) {
        run_case(fixture, seed, poll)?;
    }
}

/// Every real transcript at least once, in one-byte-to-64-KiB chunks through inotify.
#[test]
fn every_real_transcript_arrives_whole() {
    for fixture in 0..real_fixtures().len() {
        run_case(fixture, fixture as u64 * 7919, false).expect("case passes");
    }
}

/// The tailer tells which transcript it follows before the transcript's first lines.
#[test]
fn a_new_file_is_opened_before_its_lines() {
    let env = Env::new();
    let dir = env.project_dir(std::path::Path::new("/p"));
    let bytes = real("v2.1.38-spotter-local-command-tool-errors.jsonl");
    let path = dir.join(format!("{}.jsonl", session_of(&bytes)));
    let handle = start(env.tailer_config(vec![Selector::All]));
    append(&path, &bytes);
    let messages = until(&handle, |m| matches!(m, TailMessage::Lines { .. })).expect("some lines");
    let opened = messages.iter().position(|m| {
        matches!(m, TailMessage::Opened { path: p, info, generation: 1, reason: OpenReason::Appeared, .. }
            if **p == *path && info.session_id.as_deref() == Some(session_of(&bytes).as_str()))
    });
    assert!(
        opened.is_some_and(|at| at + 1 < messages.len()),
        "{messages:?}"
    );
}
