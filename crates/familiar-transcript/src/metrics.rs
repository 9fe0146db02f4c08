//! Session metrics (`familiar stats`): tool calls, tokens counted once per API message,
//! estimated cost, error and event counts. Fed by [`crate::Normalizer`]; holds bounded state
//! only, so a gigabyte transcript costs no more memory than a small one.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use familiar_model::{ErrorKind, EventKind};
use serde::{Deserialize, Serialize};

use crate::Normalizer;
use crate::record::Usage;

/// Token totals.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_creation: u64,
}

/// Prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Cache writes; defaults to 1.25 × input (the 5-minute cache).
    #[serde(default)]
    pub cache_write: Option<f64>,
    /// Cache reads; defaults to 0.1 × input.
    #[serde(default)]
    pub cache_read: Option<f64>,
}

impl Price {
    const fn new(input: f64, output: f64) -> Price {
        Price {
            input,
            output,
            cache_write: None,
            cache_read: None,
        }
    }

    fn cost(&self, tokens: &Tokens) -> f64 {
        let per_token = |price: f64| price / 1_000_000.0;
        tokens.input as f64 * per_token(self.input)
            + tokens.output as f64 * per_token(self.output)
            + tokens.cache_creation as f64
                * per_token(self.cache_write.unwrap_or(self.input * 1.25))
            + tokens.cache_read as f64 * per_token(self.cache_read.unwrap_or(self.input * 0.1))
    }
}

/// Per-model prices, matched by the longest key that the model id contains.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriceTable {
    pub models: BTreeMap<String, Price>,
}

impl Default for PriceTable {
    /// Public list prices (USD per MTok) at the time of writing; override with a price file.
    fn default() -> PriceTable {
        let models = [
            ("opus-4-5", Price::new(5.0, 25.0)),
            ("opus-4-6", Price::new(5.0, 25.0)),
            ("opus", Price::new(15.0, 75.0)),
            ("sonnet", Price::new(3.0, 15.0)),
            ("haiku-4", Price::new(1.0, 5.0)),
            ("haiku", Price::new(0.8, 4.0)),
        ];
        PriceTable {
            models: models
                .into_iter()
                .map(|(name, price)| (name.to_owned(), price))
                .collect(),
        }
    }
}

impl PriceTable {
    pub fn price_for(&self, model: &str) -> Option<&Price> {
        self.models
            .iter()
            .filter(|(key, _)| model.contains(key.as_str()))
            .max_by_key(|(key, _)| key.len())
            .map(|(_, price)| price)
    }

    /// Start from the defaults and replace or add the models of `overrides`.
    pub fn merged_with(mut self, overrides: PriceTable) -> PriceTable {
        self.models.extend(overrides.models);
        self
    }
}

/// Distinct API messages still open to updates (their records may still be coming).
const OPEN_MESSAGES: usize = 8;
/// Recently closed message ids, so a late repeat is not counted twice.
const CLOSED_MESSAGES: usize = 256;

#[derive(Debug, Clone)]
struct OpenMessage {
    id: String,
    model: String,
    usage: Usage,
}

/// What `familiar stats` reports for one input.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    pub events: BTreeMap<EventKind, u64>,
    pub errors: BTreeMap<ErrorKind, u64>,
    pub tool_calls: BTreeMap<String, u64>,
    pub prompts: u64,
    pub compactions: u64,
    pub files_modified: BTreeSet<String>,
    pub first_ts: Option<String>,
    pub last_ts: Option<String>,
    /// Records by `type` (and `type/subtype` for system records) that produced no event
    /// (snapshots, queue operations, progress, tool results, ...): explained, not lost.
    pub records: BTreeMap<String, u64>,
    /// Lines skipped with a diagnostic.
    pub skipped_lines: u64,
    /// Tokens and cost of messages already closed, by model.
    closed: BTreeMap<String, Tokens>,
    open: VecDeque<OpenMessage>,
    closed_ids: VecDeque<String>,
}

impl Metrics {
    pub(crate) fn count_event(&mut self, kind: EventKind) {
        *self.events.entry(kind).or_default() += 1;
    }

    pub(crate) fn count_record(&mut self, kind: &str) {
        if let Some(count) = self.records.get_mut(kind) {
            *count += 1;
        } else {
            self.records.insert(kind.to_owned(), 1);
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

    /// One record of an API message. The records of a message repeat its usage, with the
    /// output count growing as it streamed: keep the largest, count the message once.
    pub(crate) fn see_usage(&mut self, message_id: Option<&str>, model: &str, usage: &Usage) {
        let Some(id) = message_id else {
            add_usage(self.closed.entry(model.to_owned()).or_default(), usage);
            return;
        };
        if let Some(open) = self.open.iter_mut().find(|open| open.id == id) {
            let output = open.usage.output_tokens.max(usage.output_tokens);
            open.usage = *usage;
            open.usage.output_tokens = output;
            return;
        }
        if self.closed_ids.iter().any(|closed| closed == id) {
            return;
        }
        if self.open.len() == OPEN_MESSAGES
            && let Some(oldest) = self.open.pop_front()
        {
            add_usage(self.closed.entry(oldest.model).or_default(), &oldest.usage);
            if self.closed_ids.len() == CLOSED_MESSAGES {
                self.closed_ids.pop_front();
            }
            self.closed_ids.push_back(oldest.id);
        }
        self.open.push_back(OpenMessage {
            id: id.to_owned(),
            model: model.to_owned(),
            usage: *usage,
        });
    }

    /// Tokens by model, open messages included.
    pub fn tokens_by_model(&self) -> BTreeMap<String, Tokens> {
        let mut by_model = self.closed.clone();
        for open in &self.open {
            add_usage(by_model.entry(open.model.clone()).or_default(), &open.usage);
        }
        by_model
    }

    pub fn tokens(&self) -> Tokens {
        self.tokens_by_model()
            .values()
            .fold(Tokens::default(), |mut total, tokens| {
                total.input += tokens.input;
                total.output += tokens.output;
                total.cache_read += tokens.cache_read;
                total.cache_creation += tokens.cache_creation;
                total
            })
    }

    /// Estimated cost; models with no price count as zero.
    pub fn cost_usd(&self, prices: &PriceTable) -> f64 {
        self.tokens_by_model()
            .iter()
            .filter_map(|(model, tokens)| prices.price_for(model).map(|price| price.cost(tokens)))
            .sum()
    }

    /// Milliseconds from the first to the last timestamp.
    pub fn duration_ms(&self) -> Option<u64> {
        let first = parse_rfc3339_ms(self.first_ts.as_deref()?)?;
        let last = parse_rfc3339_ms(self.last_ts.as_deref()?)?;
        Some(u64::try_from(last - first).unwrap_or(0))
    }
}

fn add_usage(tokens: &mut Tokens, usage: &Usage) {
    tokens.input += usage.input_tokens.unwrap_or(0);
    tokens.output += usage.output_tokens.unwrap_or(0);
    tokens.cache_read += usage.cache_read_input_tokens.unwrap_or(0);
    tokens.cache_creation += usage.cache_creation_input_tokens.unwrap_or(0);
}

/// Milliseconds since the epoch of an RFC 3339 UTC timestamp as Claude Code writes them
/// (`2025-12-12T13:35:17.472Z`); offsets other than `Z` are honoured too.
pub fn parse_rfc3339_ms(ts: &str) -> Option<i64> {
    let bytes = ts.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        std::str::from_utf8(bytes.get(range)?).ok()?.parse().ok()
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut rest = &ts[19..];
    let mut millis = 0i64;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        let padded = format!("{:0<3}", &fraction[..digits.min(3)]);
        millis = padded.parse().ok()?;
        rest = &fraction[digits..];
    }
    let offset_minutes = match rest {
        "Z" | "z" | "" => 0,
        _ => {
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            let hours: i64 = rest.get(1..3)?.parse().ok()?;
            let minutes: i64 = rest.get(4..6)?.parse().ok()?;
            sign * (hours * 60 + minutes)
        }
    };
    // Days from civil date (Howard Hinnant's algorithm).
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * m + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1000 + millis)
}

/// What `familiar stats --json` prints for one input. Field names are a public contract
/// (`docs/events.md`).
#[derive(Debug, Serialize)]
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
}

impl Summary {
    pub fn new(file: &str, normalizer: &Normalizer, prices: &PriceTable) -> Summary {
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
            tool_calls: metrics.tool_calls.clone(),
            prompts: metrics.prompts,
            compactions: metrics.compactions,
            context_used: normalizer.context_used(),
            context_limit: normalizer.context_limit(),
            duration_ms: metrics.duration_ms(),
            files_modified: metrics.files_modified.iter().cloned().collect(),
            tokens: metrics.tokens(),
            cost_usd: (metrics.cost_usd(prices) * 10_000.0).round() / 10_000.0,
            records: metrics.records.clone(),
            skipped_lines: metrics.skipped_lines,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_parse_to_epoch_milliseconds() {
        assert_eq!(parse_rfc3339_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339_ms("2025-12-12T13:35:17.472Z"),
            Some(1_765_546_517_472)
        );
        assert_eq!(
            parse_rfc3339_ms("2025-12-12T14:35:17.472+01:00"),
            Some(1_765_546_517_472)
        );
        assert_eq!(parse_rfc3339_ms("not a time"), None);
    }

    #[test]
    fn split_message_usage_counts_once_with_the_largest_output() {
        let mut metrics = Metrics::default();
        let usage = |output| Usage {
            input_tokens: Some(10),
            output_tokens: Some(output),
            cache_read_input_tokens: Some(100),
            cache_creation_input_tokens: Some(5),
            cache_creation: None,
        };
        metrics.see_usage(Some("msg_1"), "claude-sonnet-4", &usage(1));
        metrics.see_usage(Some("msg_1"), "claude-sonnet-4", &usage(40));
        metrics.see_usage(Some("msg_1"), "claude-sonnet-4", &usage(7));
        metrics.see_usage(Some("msg_2"), "claude-sonnet-4", &usage(3));
        let tokens = metrics.tokens();
        assert_eq!(tokens.input, 20);
        assert_eq!(tokens.output, 43);
        assert_eq!(tokens.cache_read, 200);
        // Closing many newer messages must not let an old id be counted again.
        for n in 0..20 {
            metrics.see_usage(Some(&format!("other_{n}")), "claude-sonnet-4", &usage(0));
        }
        metrics.see_usage(Some("msg_1"), "claude-sonnet-4", &usage(40));
        assert_eq!(metrics.tokens().input, 20 + 200);
    }

    #[test]
    fn prices_match_the_longest_contained_key() {
        let prices = PriceTable::default();
        let opus45 = prices
            .price_for("claude-opus-4-5-20251101")
            .map(|p| p.input);
        assert_eq!(opus45, Some(5.0));
        assert_eq!(
            prices.price_for("claude-opus-4-20250514").map(|p| p.input),
            Some(15.0)
        );
        assert_eq!(prices.price_for("<synthetic>"), None);
    }
}
