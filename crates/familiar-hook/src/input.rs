//! Hook input: the JSON Claude Code writes to a hook's stdin (`session_id`,
//! `transcript_path`, `cwd`, `hook_event_name`; `notification_type` and `message` on
//! `Notification`; `tool_name` on tool hooks; `agent_id` on a subagent's hooks), read
//! leniently: unknown fields are ignored, missing ones are `None`, because every Claude Code
//! version adds some. Samples of every hook Claude Code 2.1.197 fires are in
//! `fixtures/hooks/`. [`hook_event`] turns the ones that tell a status into `status` events.

use std::path::PathBuf;

use familiar_model::{Event, EventKind, Status};
use serde::{Deserialize, Serialize};

/// What a hook tells.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HookInput {
    pub session_id: Option<String>,
    pub transcript_path: Option<PathBuf>,
    pub cwd: Option<PathBuf>,
    pub hook_event_name: Option<String>,
    /// `permission_prompt`, `idle_prompt`, ... on `Notification` hooks.
    pub notification_type: Option<String>,
    pub message: Option<String>,
    /// The tool of `PreToolUse`, `PermissionRequest`, `PostToolUse`, ...
    pub tool_name: Option<String>,
    /// Set when a subagent fired the hook: its `agentId`.
    pub agent_id: Option<String>,
}

impl HookInput {
    pub fn parse(bytes: &[u8]) -> Result<HookInput, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}

/// The status a hook means, if any. Hooks tell some things no transcript can: a tool use is
/// written only after it was approved, so `PermissionRequest` (fired as the prompt opens) and
/// the `permission_prompt` notification are the only sign of `waiting_for_approval`.
/// - `PermissionRequest`, `Notification`/`permission_prompt`: `waiting_for_approval`;
/// - `UserPromptSubmit`, `PreToolUse`, `PreCompact`: `working`;
/// - `Stop`, `StopFailure` (fired instead of `Stop` when an API error ended the turn),
///   `Notification`/`idle_prompt`: `waiting_for_input`;
/// - `SessionEnd`: `idle`.
///
/// Others (`SessionStart`, `PostToolUse`, `SubagentStart`, `SubagentStop`, ...) only point the
/// tailer at `transcript_path`: a subagent's end is its parent's Task/Agent result, a moment
/// later, and must not move its session's status. A subagent's hooks carry its `agent_id` as
/// the event's `agent`.
pub fn hook_event(input: &HookInput) -> Option<Event> {
    let status = match input.hook_event_name.as_deref()? {
        "Notification" => match input.notification_type.as_deref()? {
            "permission_prompt" => Status::WaitingForApproval,
            "idle_prompt" => Status::WaitingForInput,
            _ => return None,
        },
        "PermissionRequest" => Status::WaitingForApproval,
        "UserPromptSubmit" | "PreToolUse" | "PreCompact" => Status::Working,
        "Stop" | "StopFailure" => Status::WaitingForInput,
        "SessionEnd" => Status::Idle,
        _ => return None,
    };
    let mut event = Event::new(EventKind::Status, 0);
    event.session = input.session_id.clone();
    event.status = status;
    event.text = input.message.clone();
    event.tool = input.tool_name.clone();
    event.agent = input.agent_id.clone();
    event.sidechain = input.agent_id.is_some();
    Some(event)
}
