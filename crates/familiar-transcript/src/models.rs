//! Context windows ("mana" limits) of Claude models, and the precedence between the sources
//! that can name one. Used by `familiar statusline` ([`context_window`]) and by the
//! normalizer's limit (`normalize::context`, the same order over what records say); the table
//! and the order are documented in `docs/events.md`: [`context_window`] is the one rule, the
//! normalizer's limit and the status line both ask it.
//!
//! Claude Code writes the bare model id in transcripts (`claude-opus-4-8`) even when the session
//! runs its 1M-token variant (`claude-opus-4-8[1m]`, the CLI's default model); the `[1m]` shows
//! only in the statusline JSON, `toolUseResult.resolvedModel`, the stream-json `init` record and
//! the user's configured model. So a window is chosen from, first to last:
//! 1. an explicit limit (`--context-limit`), or the CLI's own `context_window_size`;
//! 2. a model id with the `[1m]` suffix, from any of the places above;
//! 3. the user's configured model (settings.json `model`, `ANTHROPIC_MODEL`) when it names the
//!    same model as the transcript with `[1m]`;
//! 4. [`default_window`] of the model id;
//! 5. and whatever was chosen, a context already used past it proves a larger (1M) window.

use crate::{DEFAULT_CONTEXT_LIMIT, LARGE_CONTEXT_LIMIT};

/// Models whose every variant has a 1M-token window (matched by the longest contained key, as
/// prices are). Everything else defaults to 200k and reaches 1M only as `[1m]`.
const ONE_MILLION: &[&str] = &["fable", "mythos", "opus-5", "sonnet-5", "haiku-5"];

/// Google's models as Gemini CLI 0.61.0 counts their windows (its `tokenLimit`,
/// `packages/core/src/core/tokenLimits.ts`): Gemma 4 256,000 tokens, every other model
/// 1,048,576 (the Gemini API's input limit of Gemini 2.5 and 3).
const GEMINI_WINDOWS: &[(&str, u64)] = &[("gemma-4", 256_000), ("gemini-", 1_048_576)];

/// Qwen's models as Qwen Code 0.24.4 counts their windows (its `findTokenLimit`, the first
/// pattern that matches): Qwen3 Coder Plus and Flash, Qwen 3.x and the `qwen-plus-latest` and
/// `qwen-flash-latest` aliases 1,000,000 tokens, Qwen3 Max, the other Qwen3 Coders and every
/// other `qwen` model 262,144. Qwen Code also writes the window it used
/// beside each reply (`contextWindowSize`), which wins over this table.
const QWEN_WINDOWS: &[(&str, u64)] = &[
    ("qwen3-coder-plus", 1_000_000),
    ("qwen3-coder-flash", 1_000_000),
    ("qwen3.", 1_000_000),
    ("qwen-plus-latest", 1_000_000),
    ("qwen-flash-latest", 1_000_000),
    ("qwen", 262_144),
];

/// The window of a model id: Gemini CLI's figure for Google's models ([`GEMINI_WINDOWS`]),
/// Qwen Code's for Qwen's ([`QWEN_WINDOWS`]);
/// 1M for `[1m]` ids and for models that only come with 1M, else 200k (Claude Code's default
/// for Opus 4.x, Sonnet 4.x and Haiku 4.5 without `[1m]`).
pub fn default_window(model: &str) -> u64 {
    if let Some((_, window)) = GEMINI_WINDOWS
        .iter()
        .chain(QWEN_WINDOWS)
        .find(|(key, _)| model.starts_with(key))
    {
        return *window;
    }
    if is_one_million(model) {
        LARGE_CONTEXT_LIMIT
    } else {
        DEFAULT_CONTEXT_LIMIT
    }
}

/// `true` when `model` names a 1M-token window on its own.
pub fn is_one_million(model: &str) -> bool {
    model.ends_with("[1m]") || ONE_MILLION.iter().any(|key| model.contains(key))
}

/// Do a configured model (`opus[1m]`, `claude-opus-4-8[1m]`) and a model id the CLI wrote
/// (`claude-opus-4-8`) name the same model? One contains the other, `[1m]` aside.
pub fn names_same_model(configured: &str, model: &str) -> bool {
    let configured = configured.trim_end_matches("[1m]");
    let model = model.trim_end_matches("[1m]");
    !configured.is_empty() && (model.contains(configured) || configured.contains(model))
}

/// The sources of a context window, as far as they are known.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WindowSources<'a> {
    /// `--context-limit` (or the config file's `context_limit`).
    pub explicit: Option<u64>,
    /// The CLI's own figure: `context_window.context_window_size` of the statusline JSON,
    /// Codex's `model_context_window`.
    pub reported: Option<u64>,
    /// A model id the CLI wrote ended in `[1m]` (statusline `model.id`, `resolvedModel`, a
    /// stream-json `init`, `message.model`).
    pub named_1m: bool,
    /// The model the window is for: the agent's latest.
    pub model: Option<&'a str>,
    /// [`default_window`] of `model` when the caller keeps it: the normalizer works it out
    /// once per model, not once per event (its substring searches were 3 % of `stats`).
    pub model_window: Option<u64>,
    /// settings.json `model` or `ANTHROPIC_MODEL`.
    pub configured_model: Option<&'a str>,
    /// The largest context used so far.
    pub used: Option<u64>,
}

/// The window the sources mean (see the module documentation for the order): the one rule,
/// for the normalizer's limit of every agent (`Normalizer::context_limit`, Codex's too) and
/// for `familiar statusline`.
pub fn context_window(sources: &WindowSources<'_>) -> u64 {
    if let Some(limit) = sources.explicit.or(sources.reported).filter(|&n| n > 0) {
        return limit;
    }
    let named_1m = sources.named_1m || sources.model.is_some_and(|m| m.ends_with("[1m]"));
    let configured_1m = sources.configured_model.is_some_and(|configured| {
        configured.ends_with("[1m]")
            && sources
                .model
                .is_none_or(|model| names_same_model(configured, model))
    });
    let chosen = if named_1m || configured_1m {
        LARGE_CONTEXT_LIMIT
    } else {
        sources
            .model_window
            .unwrap_or_else(|| default_window(sources.model.unwrap_or("")))
    };
    match sources.used {
        Some(used) if used > chosen => LARGE_CONTEXT_LIMIT.max(used),
        _ => chosen,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_claude_4_ids_default_to_200k_and_5_family_to_1m() {
        assert_eq!(default_window("claude-opus-4-8"), 200_000);
        assert_eq!(default_window("claude-opus-4-8[1m]"), 1_000_000);
        assert_eq!(default_window("claude-sonnet-4-5-20250929"), 200_000);
        assert_eq!(default_window("claude-opus-5-5"), 1_000_000);
        assert_eq!(default_window("claude-fable-5-1"), 1_000_000);
        assert_eq!(default_window("claude-haiku-4-5-20251001"), 200_000);
    }

    #[test]
    fn google_models_have_gemini_clis_windows() {
        assert_eq!(default_window("gemini-2.5-pro"), 1_048_576);
        assert_eq!(default_window("gemini-3.1-pro-preview"), 1_048_576);
        assert_eq!(default_window("gemma-4-31b-it"), 256_000);
    }

    #[test]
    fn qwen_models_have_qwen_codes_windows() {
        assert_eq!(default_window("qwen3-coder-plus"), 1_000_000);
        assert_eq!(default_window("qwen3-coder-flash-2025-07-28"), 1_000_000);
        assert_eq!(default_window("qwen3.5-plus"), 1_000_000);
        assert_eq!(default_window("qwen3-max"), 262_144);
        assert_eq!(default_window("qwen3-coder-30b-a3b-instruct"), 262_144);
    }

    #[test]
    fn sources_are_taken_in_order() {
        let transcript = WindowSources {
            model: Some("claude-opus-4-8"),
            ..WindowSources::default()
        };
        assert_eq!(context_window(&transcript), 200_000);
        let statusline = WindowSources {
            named_1m: true,
            ..transcript.clone()
        };
        assert_eq!(context_window(&statusline), 1_000_000);
        let configured = WindowSources {
            configured_model: Some("claude-opus-4-8[1m]"),
            ..transcript.clone()
        };
        assert_eq!(context_window(&configured), 1_000_000);
        // A configured model that is not the one running says nothing.
        let other = WindowSources {
            configured_model: Some("claude-sonnet-4-6[1m]"),
            ..transcript.clone()
        };
        assert_eq!(context_window(&other), 200_000);
        let used = WindowSources {
            used: Some(250_000),
            ..transcript.clone()
        };
        assert_eq!(context_window(&used), 1_000_000);
        let explicit = WindowSources {
            explicit: Some(500_000),
            reported: Some(1_000_000),
            ..statusline
        };
        assert_eq!(context_window(&explicit), 500_000);
        // The CLI's own figure (Codex's `model_context_window`), unless the flag says.
        let reported = WindowSources {
            reported: Some(258_400),
            ..transcript.clone()
        };
        assert_eq!(context_window(&reported), 258_400);
        // Nothing known: 200k, or the configured `[1m]` model before any other names one.
        assert_eq!(context_window(&WindowSources::default()), 200_000);
        let configured_alone = WindowSources {
            configured_model: Some("opus[1m]"),
            ..WindowSources::default()
        };
        assert_eq!(context_window(&configured_alone), 1_000_000);
    }
}
