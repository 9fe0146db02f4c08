//! Any chunking of a real transcript, with ticks interleaved anywhere, gives the events of the
//! offline read: the timers add `status` events, and a quiet pause lets out a `success` held
//! for its `turn_duration` without waiting for it (so without `duration_ms`); nothing else.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use familiar_model::{Event, EventKind, Status};
use familiar_session::{FileInfo, Input, ModelConfig, SessionModel, Timers};
use familiar_testkit::{own_fixture, real_fixture};
use familiar_transcript::{Line, LineSplitter, NormalizerConfig, normalize_bytes};
use proptest::prelude::*;

const FIXTURES: [&str; 4] = [
    "v2.1.38-spotter-local-command-tool-errors.jsonl",
    "v2.1.38-spotter-slash-command-queue.jsonl",
    "stream-json-v2.1.3-gleam-init-tool-success.jsonl",
    "v2.1.39-spotter-subagent-agent-acompact-fffbd0.jsonl",
];
/// An interactive 2.1.197 session: `end_turn`, `stop_hook_summary`, `turn_duration`.
const OWN_FIXTURES: [&str; 1] = ["claude-2.1.197/interactive.jsonl"];

fn fixture(index: usize) -> PathBuf {
    match FIXTURES.get(index) {
        Some(name) => real_fixture(name),
        None => own_fixture(OWN_FIXTURES[index - FIXTURES.len()]),
    }
}

/// What the model said, and the lines after which the file was quiet for the quiet-turn
/// time (a tick found no new line for that long).
struct Live {
    events: Vec<Event>,
    quiet_after_line: BTreeSet<u64>,
}

/// The model fed `bytes` in `chunks`, with a tick of `tick_gaps[i]` seconds after chunk i.
fn live(bytes: &[u8], chunks: &[usize], tick_gaps: &[u64]) -> Live {
    let path = std::path::Path::new("/live/session.jsonl");
    let mut model = SessionModel::new(ModelConfig::default());
    let mut now = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000_000);
    let mut events = model.events(Input::Tick(now));
    events.extend(model.events(Input::Opened {
        path,
        info: &FileInfo::unknown(),
    }));
    let mut splitter = LineSplitter::new(familiar_transcript::DEFAULT_MAX_LINE_BYTES);
    let mut rest = bytes;
    let mut index = 0;
    let mut last_line = 0;
    let mut quiet_for = Duration::ZERO;
    let mut quiet_after_line = BTreeSet::new();
    while !rest.is_empty() {
        let size = chunks[index % chunks.len()].clamp(1, rest.len());
        let (chunk, after) = rest.split_at(size);
        rest = after;
        let mut lines = Vec::new();
        splitter.push(chunk, |line| {
            if let Line::Complete { bytes, number } = line {
                lines.push((number, bytes.to_vec()));
            }
        });
        for (number, line) in &lines {
            events.extend(model.events(Input::Line {
                path,
                number: *number,
                bytes: line,
                backlog: false,
            }));
            last_line = *number;
            quiet_for = Duration::ZERO;
        }
        let gap = Duration::from_secs(tick_gaps[index % tick_gaps.len()]);
        now += gap;
        quiet_for += gap;
        if quiet_for >= Timers::default().quiet_after {
            quiet_after_line.insert(last_line);
        }
        events.extend(model.events(Input::Tick(now)));
        index += 1;
    }
    events.extend(model.events(Input::Removed { path }));
    Live {
        events,
        quiet_after_line,
    }
}

/// The same bytes in one go, no clock.
fn offline(bytes: &[u8]) -> Vec<Event> {
    live(bytes, &[bytes.len().max(1)], &[0]).events
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_chunking_with_ticks_gives_the_offline_events(
        fixture_index in 0..FIXTURES.len() + OWN_FIXTURES.len(),
        chunks in prop::collection::vec(1usize..4096, 1..16),
        tick_gaps in prop::collection::vec(0u64..400, 1..8),
    ) {
        let bytes = std::fs::read(fixture(fixture_index)).expect("fixture");
        let expected = offline(&bytes);
        let got = live(&bytes, &chunks, &tick_gaps);
        // The model's own `status` events say what they replace; the normalizer's do not.
        let (mut records, timers): (Vec<Event>, Vec<Event>) = got
            .events
            .into_iter()
            .partition(|event| event.kind != EventKind::Status || event.previous_status.is_none());
        prop_assert_eq!(records.len(), expected.len());
        for (at, (event, want)) in records.iter_mut().zip(&expected).enumerate() {
            if event.kind == EventKind::Success && event.duration_ms.is_none() && want.duration_ms.is_some() {
                // Let out by a quiet pause after its record, before the next record's event
                // (the `status` it leaves comes with it, from its own line).
                let next = expected[at + 1..]
                    .iter()
                    .find(|next| next.line > want.line)
                    .map_or(u64::MAX, |next| next.line);
                prop_assert!(
                    got.quiet_after_line.range(want.line..next).next().is_some(),
                    "a success lost its duration with no quiet pause: {:?}", want
                );
                event.duration_ms = want.duration_ms;
            }
        }
        prop_assert_eq!(&records, &expected);
        for event in &timers {
            prop_assert!(
                matches!(event.status, Status::Idle | Status::WaitingForInput),
                "timers only say idle or waiting: {:?}", event
            );
        }
    }
}

#[test]
fn the_model_tells_the_normalizers_events_tagged_with_their_session() {
    // `familiar events` prints the normalizer's events; the model's are the same events, with
    // the session filled in where a record left it out and the project told once.
    for index in 0..FIXTURES.len() + OWN_FIXTURES.len() {
        let path = fixture(index);
        let name = path.display();
        let bytes = std::fs::read(&path).expect("fixture");
        let (normalized, _) = normalize_bytes(&bytes, &NormalizerConfig::default());
        let modelled = offline(&bytes);
        assert_eq!(normalized.len(), modelled.len(), "{name}");
        for (mut plain, mut tagged) in normalized.into_iter().zip(modelled) {
            if plain.session.is_none() {
                plain.session = tagged.session.clone();
            }
            tagged.cwd = None;
            tagged.git_branch = None;
            // The model turns the normalizer's plan changes into the session's plan.
            if plain.plan_change.take().is_none() {
                assert!(tagged.plan.is_none(), "{name}: a plan on {tagged:?}");
            }
            tagged.plan = None;
            assert_eq!(plain, tagged, "{name}");
        }
    }
}
