//! Property tests: the normalizer never panics on arbitrary bytes, and cutting the same input
//! into chunks anywhere (mid-line, mid-UTF-8 character) gives exactly the same events.

mod common;

use familiar_transcript::{
    Line, LineSplitter, Normalizer, NormalizerConfig, normalize_bytes, normalize_read,
};
use proptest::prelude::*;

fn sample() -> Vec<u8> {
    let mut bytes = common::own_fixture("errors-each-kind.jsonl");
    bytes.extend(common::own_fixture("slash-command-and-think.jsonl"));
    bytes.extend(common::own_fixture("split-message-usage.jsonl"));
    bytes.extend("{\"type\":\"user\",\"message\":\"naïve café ☕ 日本\"}\n".as_bytes());
    bytes
}

/// Events from feeding `input` in the given chunk sizes through a splitter.
fn chunked_events(input: &[u8], sizes: &[usize]) -> Vec<familiar_transcript::Event> {
    let mut splitter = LineSplitter::default();
    let mut normalizer = Normalizer::default();
    let mut events = Vec::new();
    let mut rest = input;
    let mut sizes = sizes.iter().cycle();
    while !rest.is_empty() {
        let size = (*sizes.next().unwrap_or(&1)).clamp(1, rest.len());
        let (chunk, tail) = rest.split_at(size);
        rest = tail;
        splitter.push(chunk, |line| {
            if let Line::Complete { bytes, number } = line {
                let _ = normalizer.push_line(bytes, number, &mut events);
            }
        });
    }
    normalizer.flush(&mut events);
    events
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let _ = normalize_bytes(&bytes, &NormalizerConfig::default());
    }

    #[test]
    fn json_like_noise_never_panics(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("{\"type\":\"assistant\",\"message\":{\"content\":[".to_owned()),
                Just("{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"Read\",\"input\":{}}".to_owned()),
                Just("{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"is_error\":true,\"content\":[]}]}}".to_owned()),
                Just("{\"type\":\"system\",\"subtype\":\"compact_boundary\",\"compactMetadata\":{\"preTokens\":-1}}".to_owned()),
                Just("[".to_owned()), Just("]".to_owned()), Just("\n".to_owned()), Just(",".to_owned()),
                "[a-z\"{}\\[\\]:,0-9 ]{0,12}",
            ],
            0..40,
        )
    ) {
        let input = parts.concat();
        let _ = normalize_bytes(input.as_bytes(), &NormalizerConfig::default());
    }

    #[test]
    fn any_chunking_gives_the_same_events(sizes in proptest::collection::vec(1usize..200, 1..20)) {
        let input = sample();
        let (whole, diagnostics) = normalize_bytes(&input, &NormalizerConfig::default());
        prop_assert!(diagnostics.is_empty());
        prop_assert_eq!(chunked_events(&input, &sizes), whole);
    }
}

#[test]
fn streaming_read_equals_one_shot_on_every_real_transcript() {
    for path in common::real_fixtures() {
        let bytes = std::fs::read(&path).expect("read fixture");
        let (whole, _) = normalize_bytes(&bytes, &NormalizerConfig::default());
        let mut streamed = Vec::new();
        let mut normalizer = Normalizer::default();
        normalize_read(
            &bytes[..],
            &mut normalizer,
            |event| {
                streamed.push(event);
                Ok(())
            },
            |_| {},
        )
        .expect("in-memory read");
        assert_eq!(streamed, whole, "{}", path.display());
        assert_eq!(
            chunked_events(&bytes, &[4093, 17, 1, 65_537]),
            whole,
            "{}",
            path.display()
        );
    }
}

#[test]
fn bulk_reads_parsed_on_two_threads_keep_every_event_in_order() {
    // All real transcripts back to back: several 2 MiB batches, each split across two threads,
    // each next read made while the helper parses the batch before.
    let mut input = Vec::new();
    for path in common::real_fixtures() {
        input.extend(std::fs::read(&path).expect("read fixture"));
    }
    assert!(input.len() > 8 << 20, "want more than two batches");
    let (whole, whole_diagnostics) = normalize_bytes(&input, &NormalizerConfig::default());
    let mut streamed = Vec::new();
    let mut diagnostics = Vec::new();
    let mut normalizer = Normalizer::default();
    normalize_read(
        &input[..],
        &mut normalizer,
        |event| {
            streamed.push(event);
            Ok(())
        },
        |diagnostic| diagnostics.push(diagnostic),
    )
    .expect("in-memory read");
    assert_eq!(diagnostics, whole_diagnostics);
    assert_eq!(streamed.len(), whole.len());
    assert!(
        streamed == whole,
        "bulk read differs from the line-by-line read"
    );
}

#[test]
fn lines_straddling_reads_of_any_size_are_parsed_like_the_others() {
    // Lines are parsed where they lie in the read buffer; one that began in the previous read
    // is carried. Reads of odd sizes above and below the two-thread threshold (256 KiB).
    let mut input = Vec::new();
    for path in common::real_fixtures() {
        input.extend(std::fs::read(&path).expect("read fixture"));
    }
    let (whole, whole_diagnostics) = normalize_bytes(&input, &NormalizerConfig::default());
    for step in [300_007, 65_521, 4093] {
        let mut streamed = Vec::new();
        let mut diagnostics = Vec::new();
        normalize_read(
            Trickle {
                bytes: &input,
                step,
            },
            &mut Normalizer::default(),
            |event| {
                streamed.push(event);
                Ok(())
            },
            |diagnostic| diagnostics.push(diagnostic),
        )
        .expect("in-memory read");
        assert_eq!(diagnostics, whole_diagnostics, "reads of {step} bytes");
        assert!(streamed == whole, "reads of {step} bytes differ");
    }
}

/// A reader that fills every read until `fail_at` bytes, then fails.
struct FailingAfter<'a> {
    bytes: &'a [u8],
    fail_at: usize,
}

impl std::io::Read for FailingAfter<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.fail_at == 0 {
            return Err(std::io::Error::other("the disk went away"));
        }
        let n = buf.len().min(self.bytes.len()).min(self.fail_at);
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        self.fail_at -= n;
        Ok(n)
    }
}

#[test]
fn a_read_failing_after_full_reads_is_reported_after_the_events_before_it() {
    // The read after a full one is made ahead, while the batch is parsed: its failure must
    // still come after every event of the batches read before it, in order.
    let mut input = Vec::new();
    for path in common::real_fixtures() {
        input.extend(std::fs::read(&path).expect("read fixture"));
    }
    let (whole, _) = normalize_bytes(&input, &NormalizerConfig::default());
    let mut streamed = Vec::new();
    let result = normalize_read(
        FailingAfter {
            bytes: &input,
            fail_at: 3 * (2 << 20),
        },
        &mut Normalizer::default(),
        |event| {
            streamed.push(event);
            Ok(())
        },
        |_| {},
    );
    let err = result.expect_err("the read fails");
    assert_eq!(err.to_string(), "the disk went away");
    assert!(streamed.len() > 1_000, "only {} events", streamed.len());
    assert!(
        streamed[..] == whole[..streamed.len()],
        "the events before the failure differ from the whole read's"
    );
}

/// A pipe that hands out a few bytes per read.
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

#[test]
fn regression_short_reads_of_a_pretty_printed_array_are_not_read_as_lines() {
    for name in [
        "json-mode-array-pretty.json",
        "json-mode-array.json",
        "errors-each-kind.jsonl",
    ] {
        let bytes = common::own_fixture(name);
        let (whole, _) = normalize_bytes(&bytes, &NormalizerConfig::default());
        for step in [1, 2, 7, 64] {
            let mut streamed = Vec::new();
            let mut normalizer = Normalizer::default();
            normalize_read(
                Trickle {
                    bytes: &bytes,
                    step,
                },
                &mut normalizer,
                |event| {
                    streamed.push(event);
                    Ok(())
                },
                |diagnostic| panic!("{name}: {diagnostic}"),
            )
            .expect("in-memory read");
            assert_eq!(streamed, whole, "{name} read {step} bytes at a time");
        }
    }
    // One record per line inside `[ ... ]`: the first line has `]`s of its own, and a read
    // that stops right after one must not look like a complete one-line array.
    let records: Vec<serde_json::Value> =
        serde_json::from_slice(&common::own_fixture("json-mode-array.json")).expect("array");
    let lines: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    let bytes = format!("[{}]\n", lines.join(",\n")).into_bytes();
    let (whole, diagnostics) = normalize_bytes(&bytes, &NormalizerConfig::default());
    assert!(
        diagnostics.is_empty() && whole.len() == 5,
        "{diagnostics:?} {whole:?}"
    );
    let first_bracket = bytes
        .iter()
        .position(|&b| b == b']')
        .expect("a ] on line 1")
        + 1;
    let mut streamed = Vec::new();
    normalize_read(
        Trickle {
            bytes: &bytes,
            step: first_bracket,
        },
        &mut Normalizer::default(),
        |event| {
            streamed.push(event);
            Ok(())
        },
        |diagnostic| panic!("{diagnostic}"),
    )
    .expect("in-memory read");
    assert_eq!(streamed, whole);
}

/// The lines of the rollouts the real Codex CLIs wrote (0.169 and 0.50).
fn codex_lines() -> Vec<String> {
    let mut lines = Vec::new();
    for name in ["codex-0.169.0/main.jsonl", "codex-0.50.0/main.jsonl"] {
        let text = String::from_utf8(common::own_fixture(name)).expect("UTF-8");
        lines.extend(text.lines().map(str::to_owned));
    }
    lines
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Any records of a rollout, in any order (a file picked up mid-way, a compaction without
    /// its token count, a call output without its call) never panic, and what comes out is
    /// Codex's.
    #[test]
    fn any_rollout_records_in_any_order_are_codex_events(
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..80)
    ) {
        let lines = codex_lines();
        let mut input = String::new();
        for pick in picks {
            input.push_str(&lines[pick.index(lines.len())]);
            input.push('\n');
        }
        let (events, diagnostics) = normalize_bytes(input.as_bytes(), &NormalizerConfig::default());
        prop_assert!(diagnostics.is_empty(), "{diagnostics:?}");
        prop_assert!(events.iter().all(|e| e.agent_kind == familiar_transcript::AgentKind::Codex));
    }
}
