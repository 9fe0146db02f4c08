//! The context window: how many tokens a chain may hold before the CLI compacts. Part of
//! [`super::Normalizer`]: each chain gathers [`WindowEvidence`] from the records, and every limit
//! the normalizer reports comes from the one function [`Normalizer::limit_of`], whose precedence
//! is documented in `docs/events.md`.

use super::{Chain, Normalizer};

/// Context window of most models.
pub const DEFAULT_CONTEXT_LIMIT: u64 = 200_000;
/// Context window of `[1m]` models.
pub const LARGE_CONTEXT_LIMIT: u64 = 1_000_000;

/// What the records said about a chain's context window.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct WindowEvidence {
    /// A model id the CLI wrote ends in `[1m]`: `message.model`, the stream-json `init`
    /// record's `model`, or `toolUseResult.resolvedModel` of a Task/Agent result (the
    /// transcript's own `message.model` drops the suffix).
    pub model_1m: bool,
    /// The largest context seen in a usage: above the default window, the window is larger.
    pub peak_used: u64,
}

impl WindowEvidence {
    /// Note a model id the CLI wrote.
    pub fn see_model(&mut self, model: &str) {
        self.model_1m |= model.ends_with("[1m]");
    }
}

impl Normalizer {
    /// The context window of `chain`, first rule that applies:
    /// 1. `--context-limit` (the config's `context_limit`);
    /// 2. a `[1m]` model id written by the CLI (see [`WindowEvidence::model_1m`]);
    /// 3. a usage above 200k;
    /// 4. 200k.
    pub(super) fn limit_of(&self, chain: &Chain) -> u64 {
        if let Some(limit) = self.config.context_limit {
            return limit;
        }
        let window = &chain.window;
        if window.model_1m || window.peak_used > DEFAULT_CONTEXT_LIMIT {
            return LARGE_CONTEXT_LIMIT;
        }
        DEFAULT_CONTEXT_LIMIT
    }
}
