//! The context window: how many tokens a chain may hold before the CLI compacts. Part of
//! [`super::Normalizer`]: each chain gathers [`WindowEvidence`] from the records, and every limit
//! the normalizer reports comes from the one function [`limit_of`], whose precedence
//! is documented in `docs/events.md`.

use super::{Chain, NormalizerConfig};
use crate::models::{WindowSources, context_window, default_window};

/// Context window of most models.
pub const DEFAULT_CONTEXT_LIMIT: u64 = 200_000;
/// Context window of `[1m]` models.
pub const LARGE_CONTEXT_LIMIT: u64 = 1_000_000;

/// What the records said about a chain's context window.
#[derive(Debug, Clone, Default)]
pub(super) struct WindowEvidence {
    /// A model id the CLI wrote ends in `[1m]`: `message.model`, the stream-json `init`
    /// record's `model`, or `toolUseResult.resolvedModel` of a Task/Agent result (the
    /// transcript's own `message.model` drops the suffix).
    pub model_1m: bool,
    /// The chain's latest model (`message.model`, `init`, a `model` attachment, an
    /// `api-request`); none before one.
    pub model: Option<Box<str>>,
    /// [`default_window`] of `model`, worked out when it changes.
    pub model_window: Option<u64>,
    /// The largest context seen in a usage: above the default window, the window is larger.
    pub peak_used: u64,
}

impl WindowEvidence {
    /// A Task/Agent result's `resolvedModel`: the subagent's model, which may not be the
    /// chain's own; only its `[1m]` (the session's window) counts.
    pub fn see_resolved(&mut self, model: &str) {
        self.model_1m |= model.ends_with("[1m]");
    }

    /// The chain's own model (kept only when it changes: every reply names it).
    pub fn see_model(&mut self, model: &str) {
        if model.is_empty() || self.model.as_deref() == Some(model) {
            return;
        }
        self.model_1m |= model.ends_with("[1m]");
        self.model = Some(model.into());
        self.model_window = Some(default_window(model));
    }
}

/// The context window of `chain`: the one rule, [`context_window`], over what the records
/// say and `config` (its order is documented there and in `docs/events.md`).
pub(super) fn limit_of(config: &NormalizerConfig, chain: &Chain) -> u64 {
    context_window(&WindowSources {
        explicit: config.context_limit,
        configured_model: config.configured_model.as_deref(),
        ..sources_of(chain)
    })
}

/// What `chain`'s records say of its window.
pub(super) fn sources_of(chain: &Chain) -> WindowSources<'_> {
    let window = &chain.window;
    WindowSources {
        named_1m: window.model_1m,
        model: window.model.as_deref(),
        model_window: window.model_window,
        used: Some(window.peak_used).filter(|&used| used > 0),
        ..WindowSources::default()
    }
}
