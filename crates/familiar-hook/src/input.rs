//! Hook input: the JSON Claude Code writes to a hook's stdin (`session_id`,
//! `transcript_path`, `cwd`, `hook_event_name`; `notification_type` and `message` on
//! `Notification`; `tool_name` on tool hooks; `agent_id` on a subagent's hooks; `error` on
//! `PostToolUseFailure` and `StopFailure`, `is_interrupt` on `PostToolUseFailure`, `trigger` on
//! `PreCompact`/`PostCompact`, `reason` on `SessionEnd` and `PermissionDenied`), read
//! leniently: unknown fields are ignored, missing ones are `None`, and so is a field of another
//! type than expected, because every Claude Code version adds or changes some. Samples of every
//! hook Claude Code 2.1.197 and 2.1.332 fired in an interactive session are in
//! `fixtures/hooks/`. [`hook_event`] turns the ones that tell a status into `status` events.

use std::path::PathBuf;

use familiar_model::{Event, EventKind, Status};
use serde::{Deserialize, Deserializer, Serialize};

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
    /// What failed: the tool's error on `PostToolUseFailure` (`Exit code 3`), the API error's
    /// kind on `StopFailure` (`rate_limit`).
    #[serde(deserialize_with = "lenient")]
    pub error: Option<String>,
    /// `PostToolUseFailure`: the user interrupted the tool (the turn is over).
    #[serde(deserialize_with = "lenient")]
    pub is_interrupt: Option<bool>,
    /// `manual` (`/compact`) or `auto` on `PreCompact` and `PostCompact`.
    #[serde(deserialize_with = "lenient")]
    pub trigger: Option<String>,
    /// Why: `SessionEnd`'s reason (`prompt_input_exit`), `PermissionDenied`'s (auto mode's
    /// verdict).
    #[serde(deserialize_with = "lenient")]
    pub reason: Option<String>,
}

/// A field of the expected type, else `None`: a CLI that changed a field's shape must not make
/// the whole hook unreadable.
fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).ok())
}

impl HookInput {
    pub fn parse(bytes: &[u8]) -> Result<HookInput, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}

/// The status a hook means, if any. Hooks tell some things no transcript can: a tool use is
/// written only after it was approved, so `PermissionRequest` (fired as the prompt opens) and
/// the `permission_prompt` notification (fired when the prompt has been up 6 s) are the only
/// sign of `waiting_for_approval`.
/// - `PermissionRequest`, `Notification`/`permission_prompt`, `Notification`/`agent_needs_input`
///   (auto mode cannot check the tool call and asks the user to choose): `waiting_for_approval`;
/// - `UserPromptSubmit`, `PreToolUse`, `PreCompact`, `SubagentStart` (the parent's Agent tool
///   is running), `PermissionDenied` (auto mode refused a tool call and told the model, which
///   goes on: nobody is asked), `PostToolUseFailure` (a tool failed, the model goes on),
///   `PostCompact` after an automatic compaction (mid-turn): `working`;
/// - `Stop`, `StopFailure` (fired instead of `Stop` when an API error ended the turn),
///   `Notification`/`idle_prompt`, `PostToolUseFailure` with `is_interrupt` (the user stopped
///   the turn), `PostCompact` after `/compact` (`trigger: manual`, back at the prompt):
///   `waiting_for_input`;
/// - `SessionEnd`: `idle`.
///
/// Others (`SessionStart`, `PostToolUse`, `SubagentStop`, notifications of other types, ...)
/// only point the tailer at `transcript_path`: a subagent's end is its parent's Task/Agent
/// result, a moment later, and must not move its session's status. A subagent's hooks carry
/// its `agent_id` as the event's `agent`. The event's `text` is the notification's `message`,
/// else the `error` or `reason` the hook gives.
/// Every hook event Claude Code 2.1.332 has (its own list, in its code): those above tell a
/// status or point at a transcript, the rest are known and tell nothing Familiar reads. A hook
/// named otherwise comes from a newer CLI: [`is_known_event`] says so, and `familiar watch`
/// reports it once (`docs/events.md`).
pub const KNOWN_EVENTS: [&str; 34] = [
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "SessionStart",
    "SessionEnd",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "PreModelSwitch",
    "PostModelSwitch",
    "PermissionRequest",
    "PermissionDenied",
    "Setup",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "Elicitation",
    "ElicitationResult",
    "ConfigChange",
    "WorktreeCreate",
    "WorktreeRemove",
    "InstructionsLoaded",
    "CwdChanged",
    "FileChanged",
    "DirectoryAdded",
    "MessageDisplay",
    "PreSkillShellCommand",
];

/// The `Notification` types 2.1.332 has (its own list): `permission_prompt`, `idle_prompt`
/// and `agent_needs_input` tell a status; the others are known and tell none.
pub const KNOWN_NOTIFICATIONS: [&str; 17] = [
    "permission_prompt",
    "idle_prompt",
    "auth_success",
    "elicitation_dialog",
    "agent_needs_input",
    "agent_completed",
    "elicitation_url_dialog",
    "worker_permission_prompt",
    "push_notification",
    "computer_use_enter",
    "computer_use_exit",
    "quota_auto_resume_fired",
    "quota_auto_resume_stale",
    "quota_auto_resume_disabled",
    "model_refusal_fallback",
    "auth_storage_failure",
    "plugin_notification",
];

/// What a hook input names that Familiar does not know: its event (`hook/<name>`), or a
/// notification's type (`hook/Notification/<type>`); `None` when all of it is known.
pub fn unknown_in(input: &HookInput) -> Option<String> {
    let name = input.hook_event_name.as_deref()?;
    if !KNOWN_EVENTS.contains(&name) {
        return Some(format!("hook/{name}"));
    }
    let kind = input
        .notification_type
        .as_deref()
        .filter(|_| name == "Notification")?;
    (!KNOWN_NOTIFICATIONS.contains(&kind)).then(|| format!("hook/Notification/{kind}"))
}

pub fn hook_event(input: &HookInput) -> Option<Event> {
    let status = match input.hook_event_name.as_deref()? {
        "Notification" => match input.notification_type.as_deref()? {
            // 2.1.332 in auto mode: "Auto mode can't check actions in this session and needs
            // your choice", a choice about the tool call at hand.
            "permission_prompt" | "agent_needs_input" => Status::WaitingForApproval,
            "idle_prompt" => Status::WaitingForInput,
            _ => return None,
        },
        "PermissionRequest" => Status::WaitingForApproval,
        "UserPromptSubmit" | "PreToolUse" | "PreCompact" | "SubagentStart" | "PermissionDenied" => {
            Status::Working
        }
        "PostToolUseFailure" if input.is_interrupt == Some(true) => Status::WaitingForInput,
        "PostToolUseFailure" => Status::Working,
        "PostCompact" => match input.trigger.as_deref()? {
            "manual" => Status::WaitingForInput,
            "auto" => Status::Working,
            _ => return None,
        },
        "Stop" | "StopFailure" => Status::WaitingForInput,
        "SessionEnd" => Status::Idle,
        _ => return None,
    };
    let mut event = Event::new(EventKind::Status, 0);
    event.session = input.session_id.clone();
    event.status = status;
    event.text = input
        .message
        .clone()
        .or_else(|| input.error.clone())
        .or_else(|| input.reason.clone());
    event.tool = input.tool_name.clone();
    event.agent = input.agent_id.clone();
    event.sidechain = input.agent_id.is_some();
    Some(event)
}
