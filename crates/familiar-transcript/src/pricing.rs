//! Model prices and the cost of one API message: the table behind `familiar stats` and the
//! `--prices` file format. [`crate::usage`] decides which messages count; this module only
//! prices them.
//!
//! The built-in table is Anthropic's published list price (USD per million tokens, checked
//! against <https://platform.claude.com/docs/en/about-claude/pricing> and the per-model pages),
//! and equals what ccusage 20.0.24 charges for every model it knows. The OpenAI rows (Codex CLI
//! rollouts) are OpenAI's standard list price of June 2026 (<https://openai.com/api/pricing>):
//! input, cached input (`cache_read`) and output; OpenAI bills no cache writes, and its
//! long-context rate (a whole request past 272k input tokens) is not applied. The Google rows
//! (Gemini CLI sessions) are the Gemini API's standard list price for prompts up to 200k tokens
//! (<https://ai.google.dev/gemini-api/docs/pricing>): input, context cache reads and output
//! (thinking billed as output), and, for the models that have one, the rate of a request whose
//! prompt is over 200k tokens, applied to that whole request. Two rules follow ccusage so
//! the two tools agree to the cent:
//! - cache writes are split by lifetime: `usage.cache_creation.ephemeral_1h_input_tokens` at the
//!   1-hour rate (2 × input), the rest at the 5-minute rate (1.25 × input);
//! - Sonnet 4 and 4.5 charge their long-context rate for the tokens of each category past
//!   200,000 in one message. (Anthropic bills the *whole* request at that rate once its input
//!   passes 200k; only 1M-context requests ever get there.)

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Tokens of one category past this count, in one message, take the long-context rate.
pub const LONG_CONTEXT_THRESHOLD: u64 = 200_000;

/// Token counts of one API message (or a sum of them), cache writes split by lifetime.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    /// All cache writes (5-minute and 1-hour).
    pub cache_creation: u64,
    /// The part of `cache_creation` written to the 1-hour cache.
    #[serde(default)]
    pub cache_creation_1h: u64,
}

impl Tokens {
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_creation
    }

    pub fn add(&mut self, other: &Tokens) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_creation += other.cache_creation;
        self.cache_creation_1h += other.cache_creation_1h;
    }

    /// The counts of one `usage` object.
    pub fn of_usage(usage: &crate::record::Usage) -> Tokens {
        let cache_creation = usage.cache_creation_input_tokens.unwrap_or(0);
        let one_hour = usage
            .cache_creation
            .and_then(|split| split.ephemeral_1h_input_tokens)
            .unwrap_or(0)
            .min(cache_creation);
        Tokens {
            input: usage.input_tokens.unwrap_or(0),
            output: usage.output_tokens.unwrap_or(0),
            cache_read: usage.cache_read_input_tokens.unwrap_or(0),
            cache_creation,
            cache_creation_1h: one_hour,
        }
    }
}

/// Rates in US dollars per million tokens. In a `--prices` file every key is checked: a
/// misspelled one is an error, not a silently ignored line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// 5-minute cache writes; 1.25 × input when not given.
    #[serde(default)]
    pub cache_write: Option<f64>,
    /// 1-hour cache writes; 2 × input when not given.
    #[serde(default)]
    pub cache_write_1h: Option<f64>,
    /// Cache reads (hits and refreshes); 0.1 × input when not given.
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Rates for the tokens past [`LONG_CONTEXT_THRESHOLD`] in one message; none when the
    /// model has no long-context premium.
    #[serde(default)]
    pub long_context: Option<Box<Price>>,
    /// Rates for the *whole* message when its prompt (input, cache reads and writes) is over
    /// [`LONG_CONTEXT_THRESHOLD`] tokens (Google's rule for its models' longer prompts); none
    /// when the model has no such tier.
    #[serde(default)]
    pub long_prompt: Option<Box<Price>>,
}

impl Price {
    pub const fn new(input: f64, output: f64) -> Price {
        Price {
            input,
            output,
            cache_write: None,
            cache_write_1h: None,
            cache_read: None,
            long_context: None,
            long_prompt: None,
        }
    }

    /// The rates of a whole message whose prompt is over [`LONG_CONTEXT_THRESHOLD`].
    fn with_long_prompt(mut self, input: f64, output: f64, cache_read: f64) -> Price {
        self.long_prompt = Some(Box::new(
            Price::new(input, output).with_cache_read(cache_read),
        ));
        self
    }

    const fn with_cache_read(mut self, cache_read: f64) -> Price {
        self.cache_read = Some(cache_read);
        self
    }

    /// Rates per token: input, output, cache read, 5-minute write, 1-hour write.
    fn per_token(&self) -> [f64; 5] {
        [
            self.input,
            self.output,
            self.cache_read.unwrap_or(self.input * 0.1),
            self.cache_write.unwrap_or(self.input * 1.25),
            self.cache_write_1h.unwrap_or(self.input * 2.0),
        ]
        .map(|per_million| per_million / 1_000_000.0)
    }

    /// Cost of one message.
    pub fn cost(&self, tokens: &Tokens) -> f64 {
        if let Some(long) = &self.long_prompt
            && tokens.input + tokens.cache_read + tokens.cache_creation > LONG_CONTEXT_THRESHOLD
        {
            return long.cost(tokens);
        }
        let counts = [
            tokens.input,
            tokens.output,
            tokens.cache_read,
            tokens.cache_creation - tokens.cache_creation_1h.min(tokens.cache_creation),
            tokens.cache_creation_1h.min(tokens.cache_creation),
        ];
        let base = self.per_token();
        let long = self.long_context.as_deref().map(Price::per_token);
        let mut cost = 0.0;
        for (index, &count) in counts.iter().enumerate() {
            cost += match long {
                Some(long) if count > LONG_CONTEXT_THRESHOLD => {
                    LONG_CONTEXT_THRESHOLD as f64 * base[index]
                        + (count - LONG_CONTEXT_THRESHOLD) as f64 * long[index]
                }
                _ => count as f64 * base[index],
            };
        }
        cost
    }
}

/// Per-model prices, matched by the longest key the model id contains; keys from a price file
/// are tried before the built-in ones.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    builtin: Vec<(String, Price)>,
    overrides: Vec<(String, Price)>,
}

/// A `--prices` file: `[models."opus-4-5"]` tables of [`Price`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceFile {
    #[serde(default)]
    pub models: BTreeMap<String, Price>,
}

impl Default for PriceTable {
    fn default() -> PriceTable {
        let sonnet_4 = Price {
            long_context: Some(Box::new(Price::new(6.0, 22.5))),
            ..Price::new(3.0, 15.0)
        };
        let builtin = [
            // Cache hits at 0.025 × input: the pricing page's footnote for the 5.1 models.
            ("fable-5-1", Price::new(10.0, 50.0).with_cache_read(0.25)),
            ("mythos-5-1", Price::new(10.0, 50.0).with_cache_read(0.25)),
            ("fable", Price::new(10.0, 50.0)),
            ("mythos", Price::new(10.0, 50.0)),
            // Opus 5.5: cache hits at 0.05 × input.
            ("opus-5-5", Price::new(4.0, 20.0).with_cache_read(0.2)),
            ("opus-5", Price::new(5.0, 25.0)),
            ("opus-4-8", Price::new(5.0, 25.0)),
            ("opus-4-7", Price::new(5.0, 25.0)),
            ("opus-4-6", Price::new(5.0, 25.0)),
            ("opus-4-5", Price::new(5.0, 25.0)),
            // Opus 4, 4.1 and 3.
            ("opus", Price::new(15.0, 75.0)),
            ("sonnet-5", Price::new(2.0, 10.0)),
            ("sonnet-4-6", Price::new(3.0, 15.0)),
            ("sonnet-4-5", sonnet_4.clone()),
            ("sonnet-4-20", sonnet_4.clone()),
            ("sonnet-4-0", sonnet_4),
            // Sonnet 3.5 and 3.7.
            ("sonnet", Price::new(3.0, 15.0)),
            ("haiku-4", Price::new(1.0, 5.0)),
            ("3-5-haiku", Price::new(0.8, 4.0)),
            (
                "3-haiku",
                Price {
                    cache_write: Some(0.3),
                    ..Price::new(0.25, 1.25).with_cache_read(0.03)
                },
            ),
            // OpenAI (Codex CLI rollouts): cached input at its own rate, no cache writes.
            ("gpt-5.5-pro", Price::new(30.0, 180.0).with_cache_read(30.0)),
            ("gpt-5.5", Price::new(5.0, 30.0).with_cache_read(0.5)),
            ("gpt-5.4-pro", Price::new(30.0, 180.0).with_cache_read(30.0)),
            ("gpt-5.4-mini", Price::new(0.75, 4.5).with_cache_read(0.075)),
            ("gpt-5.4-nano", Price::new(0.2, 1.25).with_cache_read(0.02)),
            ("gpt-5.4", Price::new(2.5, 15.0).with_cache_read(0.25)),
            ("gpt-5-mini", Price::new(0.25, 2.0).with_cache_read(0.025)),
            ("gpt-5-nano", Price::new(0.05, 0.4).with_cache_read(0.005)),
            // GPT-5, 5.1 and their -codex variants.
            ("gpt-5", Price::new(1.25, 10.0).with_cache_read(0.125)),
            // Google (Gemini CLI sessions): the Gemini API's paid tier, standard list price
            // for prompts up to 200k tokens, input / output (thinking included) / context
            // cache reads, from <https://ai.google.dev/gemini-api/docs/pricing> as known on
            // 2026-11-28 (not fetched again that day: no copy of the page was reachable).
            // The Pro models' rate for a request whose prompt is over 200k tokens (the whole
            // request at it), from the same page: 2.5 Pro $2.50 / $15 / $0.25, 3 and 3.1
            // Pro $4 / $18 / $0.40 (the same figures as the page's copies of 2026 at
            // deploybase.ai/articles/gemini-api-pricing-2026 and morphllm.com/gemini-api-
            // pricing; Flash and Flash-Lite have one rate). The cache's storage is not
            // applied; models not listed cost nothing.
            (
                "gemini-3.1-pro",
                Price::new(2.0, 12.0)
                    .with_cache_read(0.2)
                    .with_long_prompt(4.0, 18.0, 0.4),
            ),
            (
                "gemini-3-pro",
                Price::new(2.0, 12.0)
                    .with_cache_read(0.2)
                    .with_long_prompt(4.0, 18.0, 0.4),
            ),
            ("gemini-3-flash", Price::new(0.5, 3.0).with_cache_read(0.05)),
            (
                "gemini-2.5-pro",
                Price::new(1.25, 10.0)
                    .with_cache_read(0.125)
                    .with_long_prompt(2.5, 15.0, 0.25),
            ),
            (
                "gemini-2.5-flash",
                Price::new(0.3, 2.5).with_cache_read(0.03),
            ),
            (
                "gemini-2.5-flash-lite",
                Price::new(0.1, 0.4).with_cache_read(0.01),
            ),
            // Qwen (Qwen Code sessions): none. Alibaba Cloud Model Studio prices Qwen3 Coder
            // by tiers of the prompt's length and by region, and no price list could be
            // checked when Qwen Code was added (2026-11-28): its sessions cost nothing here
            // until one is (a price file, `familiar stats --prices FILE`, counts them).
        ];
        PriceTable {
            builtin: builtin
                .into_iter()
                .map(|(name, price)| (name.to_owned(), price))
                .collect(),
            overrides: Vec::new(),
        }
    }
}

impl PriceTable {
    /// The price of `model`: the longest matching key of the price file, else of the
    /// built-in table; `None` for unknown models (they cost nothing).
    pub fn price_for(&self, model: &str) -> Option<&Price> {
        fn longest<'t>(table: &'t [(String, Price)], model: &str) -> Option<&'t Price> {
            table
                .iter()
                .filter(|(key, _)| model.contains(key.as_str()))
                .max_by_key(|(key, _)| key.len())
                .map(|(_, price)| price)
        }
        longest(&self.overrides, model).or_else(|| longest(&self.builtin, model))
    }

    /// The built-in table with the models of a price file in front.
    pub fn merged_with(mut self, file: PriceFile) -> PriceTable {
        self.overrides.extend(file.models);
        self
    }

    /// Cost of one message of `model`; unknown models cost nothing.
    pub fn cost(&self, model: &str, tokens: &Tokens) -> f64 {
        self.price_for(model)
            .map_or(0.0, |price| price.cost(tokens))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: u64, output: u64, read: u64, write: u64, write_1h: u64) -> Tokens {
        Tokens {
            input,
            output,
            cache_read: read,
            cache_creation: write,
            cache_creation_1h: write_1h,
        }
    }

    #[test]
    fn one_hour_cache_writes_cost_twice_the_input_rate() {
        let prices = PriceTable::default();
        let cost = prices.cost("claude-opus-4-6", &tokens(0, 0, 0, 3_000_000, 1_000_000));
        // 2M five-minute writes at $6.25 plus 1M one-hour writes at $10.
        assert!((cost - (12.5 + 10.0)).abs() < 1e-9, "{cost}");
    }

    #[test]
    fn gemini_pro_charges_a_request_over_200k_prompt_tokens_its_higher_rate_whole() {
        let table = PriceTable::default();
        let price = table.price_for("gemini-2.5-pro").expect("priced");
        // 150k prompt tokens (50k of them cached), 1k output: the base rate.
        let under = Tokens {
            input: 100_000,
            cache_read: 50_000,
            output: 1_000,
            ..Tokens::default()
        };
        let want = (100_000.0 * 1.25 + 50_000.0 * 0.125 + 1_000.0 * 10.0) / 1e6;
        assert!((price.cost(&under) - want).abs() < 1e-12);
        // 250k prompt tokens: every token of the request at the higher rate.
        let over = Tokens {
            input: 200_000,
            cache_read: 50_000,
            output: 1_000,
            ..Tokens::default()
        };
        let want = (200_000.0 * 2.5 + 50_000.0 * 0.25 + 1_000.0 * 15.0) / 1e6;
        assert!((price.cost(&over) - want).abs() < 1e-12);
        // Exactly 200k is not over; Flash has one rate.
        let at = Tokens {
            input: 200_000,
            ..Tokens::default()
        };
        assert!((price.cost(&at) - 0.25).abs() < 1e-12);
        let flash = table.price_for("gemini-2.5-flash").expect("priced");
        assert!(
            (flash.cost(&over) - (200_000.0 * 0.3 + 50_000.0 * 0.03 + 2_500.0) / 1e6).abs() < 1e-12
        );
    }

    #[test]
    fn sonnet_4_5_charges_the_long_context_rate_past_200k_per_category() {
        let prices = PriceTable::default();
        let cost = prices.cost("claude-sonnet-4-5-20250929", &tokens(0, 0, 1_000_000, 0, 0));
        // 200k reads at $0.30, 800k at $0.60 (what ccusage 20.0.24 charges).
        assert!((cost - 0.54).abs() < 1e-9, "{cost}");
        let sonnet_46 = prices.cost("claude-sonnet-4-6", &tokens(0, 0, 1_000_000, 0, 0));
        assert!((sonnet_46 - 0.3).abs() < 1e-9, "{sonnet_46}");
    }

    #[test]
    fn prices_match_the_longest_contained_key_and_file_keys_first() {
        let prices = PriceTable::default();
        let input = |model: &str| prices.price_for(model).map(|p| p.input);
        assert_eq!(input("claude-opus-4-5-20251101"), Some(5.0));
        assert_eq!(input("claude-opus-4-20250514"), Some(15.0));
        assert_eq!(input("claude-opus-4-1-20250805"), Some(15.0));
        assert_eq!(input("claude-opus-5-5"), Some(4.0));
        assert_eq!(input("claude-opus-4-8[1m]"), Some(5.0));
        assert_eq!(input("claude-sonnet-4-20250514"), Some(3.0));
        assert_eq!(input("claude-3-5-haiku-20241022"), Some(0.8));
        assert_eq!(input("<synthetic>"), None);
        assert_eq!(input("gpt-5.5"), Some(5.0));
        assert_eq!(input("gpt-5.5-pro"), Some(30.0));
        assert_eq!(input("gpt-5.4-mini"), Some(0.75));
        assert_eq!(input("gpt-5-codex"), Some(1.25));
        assert_eq!(input("gpt-5.1-codex-max"), Some(1.25));
        assert_eq!(input("gemini-2.5-pro"), Some(1.25));
        assert_eq!(input("gemini-2.5-flash-lite"), Some(0.1));
        assert_eq!(input("gemini-3.1-pro-preview"), Some(2.0));
        assert_eq!(input("gpt-5-mini"), Some(0.25));
        let file: PriceFile = toml::from_str("[models.sonnet]\ninput = 1.0\noutput = 2.0\n")
            .expect("valid price file");
        let merged = PriceTable::default().merged_with(file);
        assert_eq!(
            merged
                .price_for("claude-sonnet-4-5-20250929")
                .map(|p| p.input),
            Some(1.0)
        );
    }

    #[test]
    fn a_misspelled_price_key_is_an_error_naming_it() {
        let err = toml::from_str::<PriceFile>(
            "[models.sonnet]\ninput = 1.0\noutput = 2.0\ncache_red = 0.1\n",
        )
        .expect_err("unknown key");
        assert!(err.to_string().contains("cache_red"), "{err}");
    }
}
