//! What Familiar knows Qwen Code writes to its session files: the record types, the subtypes
//! of `user` and `system` records and the telemetry events of `system/ui_telemetry`, as its
//! `chatRecordingService` (0.24.4) writes them (those the real CLI wrote in the tests are in
//! `fixtures/qwen-0.24.4/`). Anything else is counted as unknown (`qwen/...` in
//! `Metrics::unknown`) and said once. Part of [`super::Session`].

const TYPES: &[&str] = &["user", "assistant", "tool_result", "system"];

/// `user` subtypes: none for a typed prompt; the others are the CLI's own messages.
const USER_SUBTYPES: &[&str] = &[
    "mid_turn_user_message",
    "notification",
    "cron",
    "goal_runtime",
    "realtime_message",
    "at_command",
    "slash_command",
];

/// `system` subtypes (none of them is an event but `ui_telemetry`'s API errors and
/// `custom_title`).
const SYSTEM_SUBTYPES: &[&str] = &[
    "ui_telemetry",
    "attribution_snapshot",
    "custom_title",
    "session_source",
    "session_sources_snapshot",
    "parent_session",
    "session_model",
    "branch_checkpoint",
    "goal_state",
    "goal_turn_end",
    "background_task_completed",
    "chat_compression",
    "file_history_snapshot",
    "omni_recall",
    "rewind",
    "session_artifact_event",
    "session_artifact_snapshot",
    "turn_result",
    "user_text_elements",
    "realtime_message",
    "slash_command",
    "at_command",
];

/// `ui_telemetry` events (`event.name`) the CLI records in a session file (its telemetry
/// loggers that call `recordUiTelemetryEventToChat`).
const TELEMETRY: &[&str] = &[
    "qwen-code.api_response",
    "qwen-code.api_error",
    "qwen-code.tool_call",
    "qwen-code.user_feedback",
];

/// A tool result's `status`.
const STATUSES: &[&str] = &["success", "error", "cancelled"];

pub(super) fn unknown_type(kind: &str) -> Option<String> {
    (!TYPES.contains(&kind)).then(|| format!("qwen/type/{kind}"))
}

pub(super) fn unknown_subtype(kind: &str, subtype: &str) -> Option<String> {
    let known = match kind {
        "user" => USER_SUBTYPES,
        "system" => SYSTEM_SUBTYPES,
        _ => &[],
    };
    (!known.contains(&subtype)).then(|| format!("qwen/{kind}/{subtype}"))
}

pub(super) fn unknown_telemetry(name: &str) -> Option<String> {
    (!TELEMETRY.contains(&name)).then(|| format!("qwen/ui_telemetry/{name}"))
}

pub(super) fn unknown_status(status: &str) -> Option<String> {
    (!STATUSES.contains(&status)).then(|| format!("qwen/toolCallResult.status/{status}"))
}
