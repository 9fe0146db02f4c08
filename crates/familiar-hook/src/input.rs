//! Hook input: the JSON Claude Code writes to a hook's stdin (`session_id`,
//! `transcript_path`, `cwd`, `hook_event_name`, and for `Notification` hooks
//! `notification_type` and `message`), read leniently: unknown fields are ignored, missing
//! ones are `None`, because every Claude Code version adds some.

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
}

impl HookInput {
    pub fn parse(bytes: &[u8]) -> Result<HookInput, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}

/// The event a hook means, if any: a permission prompt is `waiting_for_approval`, an idle
/// prompt `waiting_for_input` (both `status` events with the hook's message as text). Other
/// hooks (`SessionStart`, `Stop`, ...) only point the tailer at `transcript_path`.
pub fn hook_event(input: &HookInput) -> Option<Event> {
    if input.hook_event_name.as_deref() != Some("Notification") {
        return None;
    }
    let status = match input.notification_type.as_deref()? {
        "permission_prompt" => Status::WaitingForApproval,
        "idle_prompt" => Status::WaitingForInput,
        _ => return None,
    };
    let mut event = Event::new(EventKind::Status, 0);
    event.session = input.session_id.clone();
    event.status = status;
    event.text = input.message.clone();
    Some(event)
}
