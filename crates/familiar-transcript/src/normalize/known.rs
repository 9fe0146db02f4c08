//! What Familiar knows Claude Code writes: every record type, `system`/`result` subtype and
//! attachment type seen written by a real CLI (from 1.0.31 to 2.1.332: the real transcripts of
//! `shared/fixtures/real/` and the CLIs driven in `tests/real_claude.rs`), whether the
//! normalizer reads it or passes over it on purpose. Anything else is counted as unknown
//! ([`crate::Metrics::unknown`]) and reported once per file: a new CLI that writes something
//! new is noticed, never skipped in silence. Part of [`super::Normalizer`].

use crate::record::Record;

/// Record `type`s.
const RECORD_TYPES: &[&str] = &[
    // Read.
    "user",
    "assistant",
    "system",
    "result",
    "summary",
    "tool_use",
    "tool_result",
    "attachment",
    "api-request",
    "cost-state",
    "progress",
    // Passed over: bookkeeping of the CLI's own (snapshots of files it may restore, its
    // input queue, the last prompt for `--resume`, request bodies and their shapes, the tools
    // a session used, the input mode).
    "file-history-snapshot",
    "file-history-delta",
    "queue-operation",
    "last-prompt",
    "api-request-blob",
    "api-request-shape",
    "atis-latch",
    "tools-used",
    "mode",
    "permission-mode",
];

/// `system` subtypes.
const SYSTEM_SUBTYPES: &[&str] = &[
    "init",
    "compact_boundary",
    "turn_duration",
    "stop_hook_summary",
    "api_error",
    "api_retry",
    "local_command",
    "permission_denied",
    // Passed over: the stream's status lines and background tasks' progress (a subagent's
    // end is its parent's tool result or its `<task-notification>`).
    "status",
    "background_tasks_changed",
    "task_notification",
    "task_progress",
    "task_started",
    "task_updated",
    "thinking_tokens",
];

/// `result` subtypes.
const RESULT_SUBTYPES: &[&str] = &["success", "error_max_turns", "error_during_execution"];

/// `attachment.type`s (2.1.x): `model` is read (the window); the rest is context the CLI
/// gives the model.
const ATTACHMENT_TYPES: &[&str] = &[
    "model",
    "environment",
    "date",
    "file",
    "deferred_tools_delta",
    "agent_listing_delta",
    "skill_listing",
    "auto_mode",
    "session_context",
    "remote_session_change",
    "prompt_snapshot",
    "silent_turn_reminder",
    // A background agent's state as the CLI reminds the model of it; its end is read from
    // the `<task-notification>` turn.
    "task_status",
];

/// What in `record` Familiar does not know, named as `familiar stats --json` and `familiar
/// doctor` show it (`type`, `system/subtype`, `result/subtype`, `attachment/type`); `None`
/// when all of it is known. `attachment_type` is the record's `attachment.type`, if any.
pub(super) fn unknown(record: &Record<'_>, attachment_type: Option<&str>) -> Option<String> {
    let kind = record.kind.as_deref()?;
    if !RECORD_TYPES.contains(&kind) {
        return Some(kind.to_owned());
    }
    let (known, what) = match kind {
        "system" => (SYSTEM_SUBTYPES, record.subtype.as_deref()?),
        "result" => (RESULT_SUBTYPES, record.subtype.as_deref()?),
        "attachment" => (ATTACHMENT_TYPES, attachment_type?),
        _ => return None,
    };
    (!known.contains(&what)).then(|| format!("{kind}/{what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unknown_in(line: &str) -> Option<String> {
        let record: Record = serde_json::from_str(line).expect("record");
        let attachment = record
            .attachment
            .and_then(|raw| serde_json::from_str::<serde_json::Value>(raw.get()).ok())
            .and_then(|value| value["type"].as_str().map(str::to_owned));
        unknown(&record, attachment.as_deref())
    }

    #[test]
    fn what_was_never_seen_is_named_and_what_was_is_not() {
        assert_eq!(unknown_in(r#"{"type":"assistant"}"#), None);
        assert_eq!(unknown_in(r#"{"type":"atis-latch"}"#), None);
        assert_eq!(
            unknown_in(r#"{"type":"brand-new"}"#).as_deref(),
            Some("brand-new")
        );
        assert_eq!(
            unknown_in(r#"{"type":"system","subtype":"weather"}"#).as_deref(),
            Some("system/weather")
        );
        assert_eq!(
            unknown_in(r#"{"type":"attachment","attachment":{"type":"model"}}"#),
            None
        );
        assert_eq!(
            unknown_in(r#"{"type":"attachment","attachment":{"type":"hologram"}}"#).as_deref(),
            Some("attachment/hologram")
        );
        // A record with no type at all is not a new type of record.
        assert_eq!(unknown_in(r#"{"x":1}"#), None);
    }
}
