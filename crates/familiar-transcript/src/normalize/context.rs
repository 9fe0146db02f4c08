//! The context window: how many tokens a chain may hold before the CLI compacts. Part of
//! [`super::Normalizer`]: each chain gathers [`WindowEvidence`] from the records, and every limit
//! the normalizer reports comes from the one function [`Normalizer::limit_of`], whose precedence
//! is documented in `docs/events.md`.

use super::{Chain, Normalizer};
use crate::models::{default_window, names_same_model};

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
    /// [`default_window`] of the chain's latest model (`message.model`, `init`); 0 before one.
    pub model_window: u64,
    /// The user's configured model ends in `[1m]` and names the chain's latest model.
    pub configured_1m: bool,
    /// The largest context seen in a usage: above the default window, the window is larger.
    pub peak_used: u64,
}

impl WindowEvidence {
    /// A Task/Agent result's `resolvedModel`: the subagent's model, which may not be the
    /// chain's own; only its `[1m]` (the session's window) counts.
    pub fn see_resolved(&mut self, model: &str) {
        self.model_1m |= model.ends_with("[1m]");
    }

    /// The chain's own model (`message.model`, a stream-json `init`'s `model`), with the
    /// user's configured one.
    pub fn see_model(&mut self, model: &str, configured: Option<&str>) {
        if model.is_empty() {
            return;
        }
        self.model_1m |= model.ends_with("[1m]");
        self.model_window = default_window(model);
        self.configured_1m = configured.is_some_and(|configured| {
            configured_1m(configured) && names_same_model(configured, model)
        });
    }
}

fn configured_1m(configured: &str) -> bool {
    configured.ends_with("[1m]")
}

impl Normalizer {
    /// The context window of `chain`, first rule that applies (the order of
    /// [`crate::models::context_window`], over what the records say):
    /// 1. `--context-limit` (the config's `context_limit`);
    /// 2. a `[1m]` model id written by the CLI (see [`WindowEvidence::model_1m`]);
    /// 3. the user's configured model (`configured_model`) when it ends in `[1m]` and names
    ///    the chain's model (or the chain has named none yet);
    /// 4. the table of default windows ([`default_window`]) for the chain's model;
    /// 5. 200k;
    ///
    /// and whatever was chosen, a usage above it means the 1M window.
    pub(super) fn limit_of(&self, chain: &Chain) -> u64 {
        if let Some(limit) = self.config.context_limit {
            return limit;
        }
        let window = &chain.window;
        let configured_before_any_model = window.model_window == 0
            && self
                .config
                .configured_model
                .as_deref()
                .is_some_and(configured_1m);
        let chosen = if window.model_1m || window.configured_1m || configured_before_any_model {
            LARGE_CONTEXT_LIMIT
        } else if window.model_window > 0 {
            window.model_window
        } else {
            DEFAULT_CONTEXT_LIMIT
        };
        if window.peak_used > chosen {
            LARGE_CONTEXT_LIMIT.max(window.peak_used)
        } else {
            chosen
        }
    }
}
