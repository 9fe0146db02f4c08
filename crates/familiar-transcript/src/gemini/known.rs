//! What Familiar knows Gemini CLI writes to its session files: the message types, `$set`
//! keys and tool call statuses seen written by the real CLI 0.61.0 (`fixtures/gemini-0.61.0/`)
//! or written so by its `chatRecordingService`. Anything else is counted as unknown
//! (`gemini/...` in `Metrics::unknown`) and said once, as Claude Code's and Codex's are.
//! Part of [`super::Chat`].

/// Message `type`s: `user` and `gemini` (read), `info` (a synthetic message the CLI records
/// for binary parts: passed over). 0.61.0 records no `error` or `warning` message, though its
/// types name them: met, they are counted as unknown until seen.
const MESSAGE_TYPES: &[&str] = &["user", "gemini", "info"];

/// `$set` keys: `lastUpdated` (after every message), `messages` (the whole history),
/// `summary`, `directories`, `memoryScratchpad`, `sessionId` (on resume).
const SET_KEYS: &[&str] = &[
    "lastUpdated",
    "messages",
    "summary",
    "directories",
    "memoryScratchpad",
    "sessionId",
];

/// A tool call's `status` once it ran.
const STATUSES: &[&str] = &["success", "error", "cancelled"];

pub(super) fn unknown_message_type(kind: &str) -> Option<String> {
    (!MESSAGE_TYPES.contains(&kind)).then(|| format!("gemini/type/{kind}"))
}

pub(super) fn unknown_set_key(key: &str) -> Option<String> {
    (!SET_KEYS.contains(&key)).then(|| format!("gemini/$set/{key}"))
}

pub(super) fn unknown_status(status: &str) -> Option<String> {
    (!STATUSES.contains(&status)).then(|| format!("gemini/toolCall.status/{status}"))
}
