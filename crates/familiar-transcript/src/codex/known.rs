//! What Familiar knows Codex writes: every `response_item`, `event_msg` and `item_completed`
//! type seen written by a real CLI (0.50 to 0.171: `fixtures/codex-*`), read or passed over on
//! purpose. Anything else is counted as unknown (`codex/...` in `Metrics::unknown`) and said
//! once, as Claude Code's are (`normalize::known`). Part of [`super::Rollout`].

use super::shapes::Payload;

/// `response_item` types Codex has been seen to write (0.50 to 0.171), read or passed over.
const RESPONSE_ITEMS: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
];

/// `event_msg` types: read, or (`thread_settings_applied`) passed over.
const EVENT_MSGS: &[&str] = &[
    "task_started",
    "user_message",
    "agent_message",
    "agent_reasoning",
    "item_completed",
    "exec_command_end",
    "patch_apply_end",
    "token_count",
    "task_complete",
    "thread_settings_applied",
];

/// `item_completed` item types: read, or (`ContextCompaction`: the `compacted` record says
/// it) passed over.
const ITEMS: &[&str] = &[
    "UserMessage",
    "AgentMessage",
    "Reasoning",
    "CommandExecution",
    "FileChange",
    "ContextCompaction",
];

/// What in a record Familiar does not know (`response_item/x`, `event_msg/x`, `item/x`), as
/// `Metrics::unknown` counts it (behind `codex/`); `None` when all of it is known.
pub(super) fn unknown(kind: &str, payload: &Payload<'_>) -> Option<String> {
    let known = match kind {
        "response_item" => RESPONSE_ITEMS,
        "event_msg" => {
            if payload.kind.as_deref() == Some("item_completed") {
                let item = payload.item.as_ref()?.kind.as_deref()?;
                return (!ITEMS.contains(&item)).then(|| format!("item/{item}"));
            }
            EVENT_MSGS
        }
        _ => return None,
    };
    let what = payload.kind.as_deref()?;
    (!known.contains(&what)).then(|| format!("{kind}/{what}"))
}
