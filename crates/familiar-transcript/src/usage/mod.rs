//! Token usage of API messages, counted once across a whole run: the numbers behind the tokens
//! and cost of `familiar stats` (priced by [`crate::pricing`]).
//!
//! Claude Code writes one record per content block of an API message, each repeating the
//! message's `usage`; a resumed or forked session copies earlier records into a new file, and a
//! subagent's messages appear both in its own file and as `progress` records of its parent.
//! Counting every record would count the same tokens several times. Like ccusage, a message is
//! identified by its `message.id` and the record's `requestId`; of the records of one message,
//! the one kept is the main-chain one, then the one with the most tokens, then the one of the
//! earliest input (by its number, [`Ledger::set_source`]), then the first seen in that input.
//! The rule is a maximum under a total order, so inputs can be read in any order and on any
//! number of threads, each into a ledger of its own, and the ledgers merged in any order, with
//! the same result as one sequential pass in input order.
//!
//! Two ways in: [`push_line`] takes the entries from the records the normalizer parsed for its
//! own use (one parse per line: what `familiar stats` does), and [`scan_line`] reads a line's
//! text on its own, borrowing only the few fields it needs and only from lines that mention
//! `"usage"` (also the fallback of `push_line` for lines that are not records). Both give the
//! same entries. The normalizer's per-file [`crate::Metrics`] use the same [`Ledger`].

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::pricing::Tokens;
use crate::record::{Record, TextOr, Usage};
use crate::{Diagnostic, Event, Normalizer, ParsedLine, parse_line};

/// One API message's usage as read from one record.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageEntry<'a> {
    pub message_id: Option<Cow<'a, str>>,
    pub request_id: Option<Cow<'a, str>>,
    pub model: Cow<'a, str>,
    pub tokens: Tokens,
    pub sidechain: bool,
}

#[derive(Deserialize)]
struct LineView<'a> {
    #[serde(rename = "requestId", borrow, default)]
    request_id: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<bool>,
    #[serde(borrow, default)]
    message: Option<TextOr<'a, MessageView<'a>>>,
    /// `progress` records of a running subagent carry its messages in `data.message`.
    #[serde(borrow, default)]
    data: Option<TextOr<'a, DataView<'a>>>,
}

#[derive(Deserialize)]
struct DataView<'a> {
    #[serde(borrow, default)]
    message: Option<TextOr<'a, NestedView<'a>>>,
}

#[derive(Deserialize)]
struct NestedView<'a> {
    #[serde(rename = "requestId", borrow, default)]
    request_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<TextOr<'a, MessageView<'a>>>,
}

#[derive(Deserialize)]
struct MessageView<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<Usage>,
}

fn entry<'a>(
    message: Option<TextOr<'a, MessageView<'a>>>,
    request_id: Option<Cow<'a, str>>,
    sidechain: bool,
) -> Option<UsageEntry<'a>> {
    let Some(TextOr::Value(message)) = message else {
        return None;
    };
    let usage = message.usage?;
    Some(UsageEntry {
        message_id: message.id,
        request_id,
        model: message.model.unwrap_or(Cow::Borrowed("")),
        tokens: Tokens::of_usage(&usage),
        sidechain,
    })
}

/// The usage entry of one JSON record (one object), if it has one.
pub fn record_usage(json: &str) -> Option<UsageEntry<'_>> {
    let view: LineView<'_> = serde_json::from_str(json).ok()?;
    let sidechain = view.is_sidechain == Some(true);
    if let Some(found) = entry(view.message, view.request_id, sidechain) {
        return Some(found);
    }
    let Some(TextOr::Value(data)) = view.data else {
        return None;
    };
    let Some(TextOr::Value(nested)) = data.message else {
        return None;
    };
    entry(nested.message, nested.request_id, sidechain)
}

/// Feeds the usage entries of one line (a record, or a JSON array of records) to `ledger`.
/// Lines that cannot hold usage are skipped with one substring search; malformed lines are
/// skipped silently (the normalizer reports them).
pub fn scan_line(line: &[u8], ledger: &mut Ledger) {
    // Codex rollouts: their own records, read with a little state per input.
    if crate::codex::usage::may_matter(line) {
        if let Ok(text) = simdutf8::basic::from_utf8(line)
            && let Some(entry) = crate::codex::usage::scan(text, &mut ledger.codex)
        {
            ledger.add(&entry);
        }
        return;
    }
    // A whole Gemini CLI session (before 0.39): its messages, each with its `tokens`.
    if crate::gemini::usage::is_document(line) {
        if let Ok(text) = simdutf8::basic::from_utf8(line) {
            for entry in crate::gemini::usage::scan_document(text) {
                ledger.add(&entry);
            }
        }
        return;
    }
    // Gemini CLI sessions: a model's message carries `tokens`, not `usage`.
    if crate::gemini::usage::may_matter(line) {
        if let Ok(text) = simdutf8::basic::from_utf8(line)
            && let Some(entry) = crate::gemini::usage::scan(text)
        {
            ledger.add(&entry);
        }
        return;
    }
    // Qwen Code sessions: a reply carries `usageMetadata`.
    if crate::qwen::usage::may_matter(line) {
        if let Ok(text) = simdutf8::basic::from_utf8(line)
            && let Some(entry) = crate::qwen::usage::scan(text)
        {
            ledger.add(&entry);
        }
        return;
    }
    // Copilot CLI sessions: one `session.usage_record` per request.
    if crate::copilot::usage::may_matter(line) {
        if let Ok(text) = simdutf8::basic::from_utf8(line)
            && let Some(entry) = crate::copilot::usage::scan(text)
        {
            ledger.add(&entry);
        }
        return;
    }
    // opencode sessions: an assistant message row, once completed, is one request.
    if crate::opencode::usage::may_matter(line) {
        if let Ok(text) = simdutf8::basic::from_utf8(line)
            && let Some(entry) = crate::opencode::usage::scan(text)
        {
            ledger.add(&entry);
        }
        return;
    }
    if !crate::contains!(line, b"\"usage\"") {
        return;
    }
    let Ok(text) = simdutf8::basic::from_utf8(line) else {
        return;
    };
    let text = text.trim_start();
    if text.starts_with('[') {
        if let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(text) {
            for item in items {
                if let Some(entry) = record_usage(item.get()) {
                    ledger.add(&entry);
                }
            }
        }
    } else if let Some(entry) = record_usage(text) {
        ledger.add(&entry);
    }
}

/// The usage entry of a record the normalizer parsed: what [`record_usage`] reads from the
/// record's JSON text, without parsing it again. `progress` records keep their subagent's
/// message as raw JSON (`data`), decoded here only when it mentions `"usage"`.
pub fn parsed_record_usage<'r>(record: &'r Record<'_>) -> Option<UsageEntry<'r>> {
    let sidechain = record.is_sidechain == Some(true);
    if let Some(TextOr::Value(message)) = &record.message
        && let Some(usage) = &message.usage
    {
        return Some(UsageEntry {
            message_id: message.id.as_deref().map(Cow::Borrowed),
            request_id: record.request_id.as_deref().map(Cow::Borrowed),
            model: Cow::Borrowed(message.model.as_deref().unwrap_or("")),
            tokens: Tokens::of_usage(usage),
            sidechain,
        });
    }
    let data = record.data?.get();
    // A value without the key cannot hold usage: no need to decode it.
    if !crate::contains!(data.as_bytes(), b"\"usage\"") {
        return None;
    }
    let Ok(Some(TextOr::Value(DataView {
        message: Some(TextOr::Value(nested)),
    }))) = serde_json::from_str::<Option<TextOr<'_, DataView<'_>>>>(data)
    else {
        return None;
    };
    entry(nested.message, nested.request_id, sidechain)
}

/// Feeds the usage entries of a line the normalizer parsed to `ledger`: from its records
/// (`parsed`), each read as its agent writes usage, chosen by the record's parsed `type`
/// rather than by the type's spelling in the text (JSON allows spaces around a colon); or,
/// for a line that did not parse as records (`None`) and for an older Gemini CLI's whole
/// document, from its text as [`scan_line`] does.
pub fn scan_parsed_line(line: &[u8], parsed: Option<&ParsedLine<'_>>, ledger: &mut Ledger) {
    let Some(parsed) = parsed.filter(|_| !crate::gemini::usage::is_document(line)) else {
        scan_line(line, ledger);
        return;
    };
    for (record, text) in parsed.records_with_text() {
        let kind = record.kind.as_deref();
        // A Codex record: read from its payload, with the file's Codex state (a rollout's
        // line was decoded whole again here, a sixth of `familiar stats` on Codex rollouts).
        if let Some(kind) = kind.filter(|&kind| crate::codex::usage::matters(Some(kind))) {
            if let Some(payload) = record.payload
                && let Some(entry) =
                    crate::codex::usage::scan_record(kind, payload.get(), &mut ledger.codex)
            {
                ledger.add(&entry);
            }
            continue;
        }
        // The other agents' records: their own scan, of the record's text.
        let scan: Option<fn(&str) -> Option<UsageEntry<'static>>> = match kind {
            Some("gemini") => Some(crate::gemini::usage::scan),
            Some("session.usage_record" | "session.compaction_complete") => {
                Some(crate::copilot::usage::scan)
            }
            Some("opencode.message") => Some(crate::opencode::usage::scan),
            _ if record.usage_metadata.is_some() => Some(crate::qwen::usage::scan),
            _ => None,
        };
        let entry = match scan {
            Some(scan) => scan(text),
            None => parsed_record_usage(record),
        };
        if let Some(entry) = entry {
            ledger.add(&entry);
        }
    }
}

/// [`Normalizer::push_line`] that also feeds the line's usage to `ledger`, from the same parse.
pub fn push_line(
    normalizer: &mut Normalizer,
    ledger: &mut Ledger,
    line: &[u8],
    line_no: u64,
    out: &mut Vec<Event>,
) -> Result<(), Diagnostic> {
    match parse_line(line, normalizer.config().max_line_bytes) {
        Ok(mut parsed) => {
            scan_parsed_line(line, Some(&parsed), ledger);
            normalizer.apply(&mut parsed, line_no, out);
            Ok(())
        }
        Err(kind) => {
            scan_parsed_line(line, None, ledger);
            normalizer.skipped_line();
            Err(Diagnostic {
                line: line_no,
                kind,
            })
        }
    }
}

/// The ledger of a whole in-memory input, line by line.
pub fn scan_bytes(bytes: &[u8]) -> Ledger {
    let mut ledger = Ledger::new();
    if let Some(document) = crate::multiline_array(bytes) {
        scan_line(document, &mut ledger);
        return ledger;
    }
    for line in bytes.split(|&b| b == b'\n') {
        scan_line(line, &mut ledger);
    }
    ledger
}

mod ledger;

pub use ledger::{DecodeError, Ledger, random_hash_key, use_hash_key};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pricing::PriceTable;

    fn line(id: &str, request: &str, output: u64, sidechain: bool) -> String {
        format!(
            r#"{{"type":"assistant","isSidechain":{sidechain},"requestId":"{request}","message":{{"id":"{id}","model":"claude-haiku-4-5-20251001","usage":{{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":0,"cache_creation":{{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":10}},"output_tokens":{output}}}}}}}"#
        )
    }

    #[test]
    fn a_message_counts_once_keeping_the_main_chain_then_the_largest() {
        let mut ledger = Ledger::new();
        scan_line(line("m1", "r1", 5, false).as_bytes(), &mut ledger);
        scan_line(line("m1", "r1", 50, false).as_bytes(), &mut ledger);
        scan_line(line("m1", "r1", 7, false).as_bytes(), &mut ledger);
        assert_eq!(ledger.tokens().output, 50);
        // A sidechain copy never replaces the main-chain record, however large.
        scan_line(line("m1", "r1", 500, true).as_bytes(), &mut ledger);
        assert_eq!(ledger.tokens().output, 50);
        // Another request id is another message.
        scan_line(line("m1", "r2", 1, false).as_bytes(), &mut ledger);
        assert_eq!(ledger.tokens().output, 51);
        assert_eq!(ledger.tokens().cache_creation_1h, 20);
    }

    #[test]
    fn merging_files_in_order_equals_one_pass() {
        let lines = [
            line("a", "r", 1, true),
            line("a", "r", 9, true),
            line("b", "r", 4, false),
            line("a", "r", 2, false),
            line("b", "r", 4, false),
        ];
        let mut whole = Ledger::new();
        for l in &lines {
            scan_line(l.as_bytes(), &mut whole);
        }
        let mut first = Ledger::new();
        let mut second = Ledger::new();
        second.set_source(1);
        for l in &lines[..2] {
            scan_line(l.as_bytes(), &mut first);
        }
        for l in &lines[2..] {
            scan_line(l.as_bytes(), &mut second);
        }
        first.merge(second);
        assert_eq!(first.tokens(), whole.tokens());
        let prices = PriceTable::default();
        let rows = first.by_source(2, &prices);
        // Both messages were kept from the second file.
        assert_eq!(rows[0].0, Tokens::default());
        assert_eq!(rows[1].0, whole.tokens());
    }

    proptest::proptest! {
        /// Inputs sharing messages (ties, sidechain copies, larger copies later) count the
        /// same however they are read and merged: each into a ledger of its own merged in any
        /// order, or several read into one ledger in any order (as `familiar stats` does), as
        /// merging them one after the other in input order: the same tokens per model and the
        /// same rows per input.
        #[test]
        fn reading_and_merging_in_any_order_equals_merging_in_turn(
            inputs in proptest::collection::vec(
                proptest::collection::vec((0u8..6, 0u64..4, proptest::bool::ANY, 0u8..2), 0..8),
                0..12,
            ),
            order in proptest::collection::vec(0usize..1000, 12),
            shared in proptest::bool::ANY,
        ) {
            let read = |source: usize, ledger: &mut Ledger| {
                ledger.set_source(source as u32);
                for &(id, output, sidechain, model) in &inputs[source] {
                    let mut text = line(&format!("m{id}"), "r", output, sidechain);
                    if model == 1 {
                        text = text.replace("claude-haiku-4-5-20251001", "claude-opus-4-5");
                    }
                    scan_line(text.as_bytes(), ledger);
                }
            };
            let in_turn = (0..inputs.len()).fold(Ledger::new(), |mut merged, source| {
                let mut ledger = Ledger::new();
                read(source, &mut ledger);
                merged.merge(ledger);
                merged
            });
            // Another order of the inputs.
            let mut shuffled: Vec<usize> = (0..inputs.len()).collect();
            shuffled.sort_by_key(|&source| (order[source], source));
            let mut any_order = Ledger::new();
            for source in shuffled {
                if shared {
                    read(source, &mut any_order);
                } else {
                    let mut ledger = Ledger::new();
                    read(source, &mut ledger);
                    any_order.merge(ledger);
                }
            }
            let by_model = |ledger: &Ledger| {
                let mut rows: Vec<(String, Tokens)> = ledger
                    .tokens_by_model()
                    .into_iter()
                    .map(|(model, tokens)| (model.to_owned(), tokens))
                    .collect();
                rows.sort_by(|a, b| a.0.cmp(&b.0));
                rows
            };
            proptest::prop_assert_eq!(by_model(&any_order), by_model(&in_turn));
            let prices = PriceTable::default();
            let (got, want) = (
                any_order.by_source(inputs.len(), &prices),
                in_turn.by_source(inputs.len(), &prices),
            );
            for ((got_tokens, got_cost), (want_tokens, want_cost)) in got.iter().zip(&want) {
                proptest::prop_assert_eq!(got_tokens, want_tokens);
                // The same messages, summed in another order.
                proptest::prop_assert!((got_cost - want_cost).abs() <= 1e-9 * want_cost.abs().max(1.0));
            }
        }
    }

    #[test]
    fn subagent_progress_records_carry_usage_in_data_message() {
        let json = r#"{"type":"progress","isSidechain":false,"data":{"message":{"type":"assistant","message":{"model":"claude-haiku-4-5-20251001","id":"msg_1","usage":{"input_tokens":3,"output_tokens":4}},"requestId":"req_1"},"type":"agent_progress"}}"#;
        let entry = record_usage(json).expect("usage in data.message");
        assert_eq!(entry.message_id.as_deref(), Some("msg_1"));
        assert_eq!(entry.request_id.as_deref(), Some("req_1"));
        assert_eq!(entry.tokens.output, 4);
        // Flat records with a string message, and progress without a message, have none.
        assert!(record_usage(r#"{"type":"user","message":"hi","usage":1}"#).is_none());
        assert!(record_usage(r#"{"type":"progress","data":{"type":"hook_progress"}}"#).is_none());
    }
}
