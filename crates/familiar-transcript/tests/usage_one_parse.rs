//! `familiar stats` parses each line once ([`usage::push_line`]): the usage ledger takes its
//! entries from the records the normalizer parsed. These tests pin that this gives the same
//! tokens and cost as reading each line's text on its own ([`usage::scan_bytes`], what `stats`
//! did before, whose totals the real-transcript snapshots and the ccusage benchmark check), on
//! every transcript a real CLI wrote, and that the `"usage"` pre-check skips nothing that
//! holds usage.

mod common;

use std::path::{Path, PathBuf};

use common::real_fixtures;
use familiar_transcript::usage::{self, Ledger};
use familiar_transcript::{Normalizer, NormalizerConfig, PriceTable};

/// Every transcript written by a real CLI: `shared/fixtures/real`, and this repository's
/// `fixtures/` (edge cases, and what Claude Code 2.1.197 and Codex wrote).
fn every_transcript() -> Vec<PathBuf> {
    let mut files = real_fixtures();
    let own = familiar_testkit::workspace_root().join("fixtures");
    let mut dirs = vec![own.clone()];
    for entry in std::fs::read_dir(&own).expect("fixtures/") {
        let path = entry.expect("fixtures/ entry").path();
        if path.is_dir() {
            dirs.push(path);
        }
    }
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).expect("fixture dir") {
            let path = entry.expect("fixture entry").path();
            if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("jsonl" | "json")
            ) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The ledger and events of one input, one parse per line, as `familiar stats` reads it.
fn one_parse(bytes: &[u8], source: u32) -> (Ledger, Vec<familiar_transcript::Event>) {
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut ledger = Ledger::new();
    ledger.set_source(source);
    let mut events = Vec::new();
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let _ = usage::push_line(
            &mut normalizer,
            &mut ledger,
            line,
            index as u64 + 1,
            &mut events,
        );
    }
    (ledger, events)
}

fn name(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn one_parse_per_line_gives_the_tokens_and_cost_of_the_text_scan_on_every_transcript() {
    let prices = PriceTable::default();
    let files = every_transcript();
    let mut with_usage = 0;
    let (mut merged_scan, mut merged_one) = (Ledger::new(), Ledger::new());
    for (index, path) in files.iter().enumerate() {
        let bytes = std::fs::read(path).expect("read fixture");
        // What `stats` did before: each line's text scanned on its own.
        let mut scanned = Ledger::new();
        scanned.set_source(index as u32);
        for line in bytes.split(|&b| b == b'\n') {
            usage::scan_line(line, &mut scanned);
        }
        let (one, events) = one_parse(&bytes, index as u32);
        let name = name(path);
        assert_eq!(one.tokens(), scanned.tokens(), "{name}: tokens");
        assert_eq!(
            one.tokens_by_model(),
            scanned.tokens_by_model(),
            "{name}: tokens by model"
        );
        assert_eq!(
            one.cost_usd(&prices).to_bits(),
            scanned.cost_usd(&prices).to_bits(),
            "{name}: cost"
        );
        // The normalizer sees the same lines as on its own.
        let mut alone = Normalizer::new(NormalizerConfig::default());
        let mut alone_events = Vec::new();
        for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
            let _ = alone.push_line(line, index as u64 + 1, &mut alone_events);
        }
        assert_eq!(events, alone_events, "{name}: events");
        if one.tokens().total() > 0 {
            with_usage += 1;
        }
        merged_scan.merge(scanned);
        merged_one.merge(one);
    }
    assert!(with_usage >= 20, "only {with_usage} transcripts with usage");
    // Across files (copies of a message in several files count once): the same rows.
    let rows = |ledger: &Ledger| -> Vec<(familiar_transcript::Tokens, u64)> {
        ledger
            .by_source(files.len(), &prices)
            .into_iter()
            .map(|(tokens, cost)| (tokens, cost.to_bits()))
            .collect()
    };
    assert_eq!(rows(&merged_one), rows(&merged_scan));
    assert_eq!(merged_one.tokens(), merged_scan.tokens());
}

#[test]
fn every_transcript_spelt_with_spaces_counts_as_written() {
    // JSON allows spaces around a colon, and a transcript passed through another tool (or
    // Python's `json.dumps`) has them: the usage read must not depend on the spelling.
    let mut with_usage = 0;
    for path in every_transcript() {
        let bytes = std::fs::read(&path).expect("read fixture");
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        // JSONL only: a whole document's lines are not records.
        if !text.starts_with('{') || text.starts_with("{\n") {
            continue;
        }
        let respaced: String = text
            .split_inclusive('\n')
            .map(|line| match line.strip_suffix('\n') {
                Some(line) => common::spaced(line) + "\n",
                None => common::spaced(line),
            })
            .collect();
        let (as_written, _) = one_parse(&bytes, 0);
        let (with_spaces, _) = one_parse(respaced.as_bytes(), 0);
        let name = name(&path);
        assert_eq!(with_spaces.tokens(), as_written.tokens(), "{name}: tokens");
        assert_eq!(
            with_spaces.tokens_by_model(),
            as_written.tokens_by_model(),
            "{name}: tokens by model"
        );
        if as_written.tokens().total() > 0 {
            with_usage += 1;
        }
    }
    assert!(with_usage >= 20, "only {with_usage} transcripts with usage");
}

#[test]
fn subagent_usage_in_progress_records_is_read_from_the_parsed_record() {
    let bytes = std::fs::read(familiar_testkit::real_fixture(
        "v2.1.39-spotter-compact-queue-progress.jsonl",
    ))
    .expect("fixture");
    // Only the `progress` lines: their usage is in `data.message.message.usage`.
    let progress: Vec<&[u8]> = bytes
        .split(|&b| b == b'\n')
        .filter(|line| {
            serde_json::from_slice::<serde_json::Value>(line)
                .is_ok_and(|record| record["type"] == "progress")
        })
        .collect();
    let joined = progress.join(&b'\n');
    let (one, _) = one_parse(&joined, 0);
    assert!(
        one.tokens().total() > 0,
        "no usage read from progress records"
    );
    assert_eq!(one.tokens(), usage::scan_bytes(&joined).tokens());
}

/// Every object key `usage` anywhere in a JSON value.
fn has_usage_key(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Object(map) => {
            map.contains_key("usage") || map.values().any(has_usage_key)
        }
        serde_json::Value::Array(items) => items.iter().any(has_usage_key),
        _ => false,
    }
}

#[test]
fn the_usage_precheck_skips_only_lines_that_hold_no_usage_key() {
    // The pre-check skips a line (and a `progress` record's `data`) when its text has no
    // `"usage"`; JSON could spell the key with escapes, which no real CLI does: on every
    // transcript, every line with a `usage` key anywhere has it literally.
    let mut skipped = 0;
    for path in every_transcript() {
        let bytes = std::fs::read(&path).expect("read fixture");
        for line in bytes.split(|&b| b == b'\n') {
            if memchr::memmem::find(line, b"\"usage\"").is_some() {
                continue;
            }
            skipped += 1;
            if let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) {
                assert!(!has_usage_key(&value), "{}: {value}", name(&path));
            }
        }
    }
    assert!(skipped > 1000, "only {skipped} lines without usage");
    // And the check is not vacuous: an escaped key is a `usage` key the pre-check misses.
    let escaped: serde_json::Value =
        serde_json::from_str(r#"{"message":{"us\u0061ge":{"output_tokens":1}}}"#).expect("json");
    assert!(has_usage_key(&escaped));
}

#[test]
fn each_parsed_record_gives_the_entry_its_text_gives_ids_model_and_sidechain_included() {
    // Per record, not only in total: a parse that lost `requestId` or `data` (and so split or
    // merged messages differently) must fail here even where totals happen to agree.
    let mut entries = 0;
    for path in every_transcript() {
        let bytes = std::fs::read(&path).expect("read fixture");
        for line in bytes.split(|&b| b == b'\n') {
            let Ok(text) = std::str::from_utf8(line) else {
                continue;
            };
            if !text.trim_start().starts_with('{')
                || familiar_transcript::codex::usage::may_matter(line)
            {
                continue;
            }
            let Ok(parsed) = familiar_transcript::parse_line(line, usize::MAX) else {
                continue;
            };
            let records: Vec<_> = parsed.records().collect();
            assert_eq!(records.len(), 1);
            let from_record = usage::parsed_record_usage(records[0]);
            assert_eq!(
                from_record,
                usage::record_usage(text),
                "{}: {text}",
                name(&path)
            );
            entries += usize::from(from_record.is_some_and(|e| e.request_id.is_some()));
        }
    }
    assert!(entries > 1000, "only {entries} entries with a request id");
}
