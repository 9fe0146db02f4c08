//! Session metrics (`familiar stats`): tool calls, error and event counts, records, files
//! modified, the span of the timestamps. Fed by [`crate::Normalizer`]. Tokens and cost are not
//! here: they are counted once per API message across inputs by a [`crate::usage::Ledger`],
//! which the caller keeps (`familiar stats` reads it from the same parse of each line).

use std::collections::{BTreeMap, BTreeSet};

use familiar_model::time::parse_timestamp_ms;
use familiar_model::{ErrorKind, EventKind};
use serde::{Deserialize, Serialize};

use crate::Normalizer;
use crate::counts::Counts;
pub use crate::pricing::{Price, PriceTable, Tokens};

/// What `familiar stats` reports for one input.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    pub events: BTreeMap<EventKind, u64>,
    pub errors: BTreeMap<ErrorKind, u64>,
    pub tool_calls: Counts,
    pub prompts: u64,
    pub compactions: u64,
    pub files_modified: BTreeSet<String>,
    pub first_ts: Option<String>,
    pub last_ts: Option<String>,
    /// Records by `type` (and `type/subtype` for system records) that produced no event
    /// (snapshots, queue operations, progress, tool results, ...): explained, not lost.
    pub records: Counts,
    /// Lines skipped with a diagnostic.
    pub skipped_lines: u64,
    /// What the CLI wrote that Familiar does not know (a record type, `system/subtype`,
    /// `attachment/type`; Codex: `codex/...`), counted: reported once, never skipped in
    /// silence (`normalize::known`).
    pub unknown: Counts,
    /// The version of the CLI that wrote the input (its records' `version`; Codex:
    /// `session_meta.cli_version`), the latest seen.
    pub cli_version: Option<String>,
    /// The CLI's own running total of the session's cost (Claude Code 2.1.3xx `cost-state`
    /// records' `totalCostUSD`), the latest seen.
    pub cli_cost_usd: Option<f64>,
    /// Model of the last API message with usage.
    last_model: Option<String>,
    /// What [`Metrics::unknown`] met for the first time since the normalizer's caller last
    /// took them (`Normalizer::take_unknown_news`).
    pub(crate) unknown_news: Vec<String>,
}

impl Metrics {
    /// A line of `agent`'s files its reader cannot read (not of the shape it reads): counted,
    /// and told as unknown (`<agent>/(a line of another shape)`).
    pub fn unread(&mut self, agent: &str) {
        self.count_record(&format!("{agent}/(unread)"));
        self.count_unknown(format!("{agent}/(a line of another shape)"));
    }

    /// A record of type `kind` written at `timestamp`.
    pub fn see_record(&mut self, kind: &str, timestamp: Option<&str>) {
        self.count_record(kind);
        if let Some(ts) = timestamp {
            self.see_timestamp(ts);
        }
    }

    /// A call of the tool `name`, which wrote the file `modified` (every agent's calls).
    pub fn count_call(&mut self, name: &str, modified: Option<&str>) {
        self.tool_calls.add(name, 1);
        if let Some(path) = modified
            && !self.files_modified.contains(path)
        {
            self.files_modified.insert(path.to_owned());
        }
    }

    pub(crate) fn count_event(&mut self, kind: EventKind) {
        *self.events.entry(kind).or_default() += 1;
    }

    pub(crate) fn count_record(&mut self, kind: &str) {
        self.records.add(kind, 1);
    }

    /// Count something unknown; the first time it is met it is also news, to report.
    pub(crate) fn count_unknown(&mut self, what: String) {
        if self.unknown.add(&what, 1) {
            self.unknown_news.push(what);
        }
    }

    pub(crate) fn see_version(&mut self, version: &str) {
        if self.cli_version.as_deref() != Some(version) {
            self.cli_version = Some(version.to_owned());
        }
    }

    pub(crate) fn see_timestamp(&mut self, ts: &str) {
        if self.first_ts.is_none() {
            self.first_ts = Some(ts.to_owned());
        }
        match &mut self.last_ts {
            Some(last) if last.as_str() < ts => {
                last.clear();
                last.push_str(ts);
            }
            Some(_) => {}
            None => self.last_ts = Some(ts.to_owned()),
        }
    }

    /// The model of a record of an API message with usage.
    pub(crate) fn see_model(&mut self, model: &str) {
        if !model.is_empty() && self.last_model.as_deref() != Some(model) {
            self.last_model = Some(model.to_owned());
        }
    }

    /// Model id of the last API message (as the transcript writes it: no `[1m]`).
    pub fn last_model(&self) -> Option<String> {
        self.last_model.clone()
    }

    /// Milliseconds from the first to the last timestamp.
    pub fn duration_ms(&self) -> Option<u64> {
        let first = parse_timestamp_ms(self.first_ts.as_deref()?)?;
        let last = parse_timestamp_ms(self.last_ts.as_deref()?)?;
        Some(u64::try_from(last - first).unwrap_or(0))
    }
}

/// What `familiar stats --json` prints for one input. Field names are a public contract
/// (`docs/events.md`). It reads back from that JSON exactly (`familiar stats` keeps each
/// input's as its JSON until every input is read).
#[derive(Debug, Serialize, Deserialize)]
pub struct Summary {
    pub file: String,
    pub session: Option<String>,
    pub events: BTreeMap<String, u64>,
    pub errors: BTreeMap<String, u64>,
    pub tool_calls: BTreeMap<String, u64>,
    pub prompts: u64,
    pub compactions: u64,
    pub context_used: Option<u64>,
    pub context_limit: u64,
    pub duration_ms: Option<u64>,
    pub files_modified: Vec<String>,
    pub tokens: Tokens,
    pub cost_usd: f64,
    pub records: BTreeMap<String, u64>,
    pub skipped_lines: u64,
    /// The CLI's own total cost of the session so far (Claude Code 2.1.3xx `cost-state`),
    /// when the input has one: it counts what the transcript does not show (a compaction's
    /// request), so `familiar stats` totals a session by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_cost_usd: Option<f64>,
    /// The CLI version that wrote the input, when its records say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_version: Option<String>,
    /// What the input holds that Familiar does not know, counted ([`Metrics::unknown`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown: BTreeMap<String, u64>,
}

impl Summary {
    /// The summary of one input read by `normalizer`, with the tokens and cost credited to it
    /// (by a [`crate::usage::Ledger`] that may span several inputs).
    pub fn new(file: &str, normalizer: &Normalizer, tokens: Tokens, cost_usd: f64) -> Summary {
        let metrics = normalizer.metrics();
        Summary {
            file: file.to_owned(),
            session: normalizer.session().map(str::to_owned),
            events: metrics
                .events
                .iter()
                .map(|(kind, count)| (kind.as_str().to_owned(), *count))
                .collect(),
            errors: metrics
                .errors
                .iter()
                .map(|(kind, count)| (kind.as_str().to_owned(), *count))
                .collect(),
            tool_calls: metrics.tool_calls.to_map(),
            prompts: metrics.prompts,
            compactions: metrics.compactions,
            context_used: normalizer.context_used(),
            context_limit: normalizer.context_limit(),
            duration_ms: metrics.duration_ms(),
            files_modified: metrics.files_modified.iter().cloned().collect(),
            tokens,
            cost_usd: round_cost(cost_usd),
            records: metrics.records.to_map(),
            skipped_lines: metrics.skipped_lines,
            cli_cost_usd: metrics.cli_cost_usd.map(round_cost),
            cli_version: metrics.cli_version.clone(),
            unknown: metrics.unknown.to_map(),
        }
    }

    /// Credit the input with `tokens` and their cost, once every input's ledger is known.
    pub fn credit(&mut self, tokens: Tokens, cost_usd: f64) {
        self.tokens = tokens;
        self.cost_usd = round_cost(cost_usd);
    }
}

/// A cost rounded to 1/100 of a cent, never `-0.0` (an empty sum of floats is `-0.0`, which
/// would print as `$-0.00`).
pub fn round_cost(cost: f64) -> f64 {
    let rounded = (cost * 10_000.0).round() / 10_000.0;
    if rounded == 0.0 { 0.0 } else { rounded }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_cost_is_never_negative_zero() {
        let empty: f64 = [0.0f64; 0].iter().sum();
        assert!(round_cost(empty).is_sign_positive());
        assert_eq!(round_cost(1.23456), 1.2346);
    }
}
