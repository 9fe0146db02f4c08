//! Actions: what scripts ask the sinks to do.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Urgency {
    Low,
    #[default]
    Normal,
    Critical,
}

/// What to do. Serialized with `"action": "<name>"` beside the payload, e.g.
/// `{"action":"animate","name":"attack"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ActionKind {
    /// Play an animation on the familiar (cast, write, attack, think, hurt, rest, victory, ...).
    Animate { name: String },
    /// Speech bubble.
    Say { text: String },
    /// Quest banner (usually the user's prompt).
    Quest { text: String },
    /// Desktop notification.
    Notify {
        title: String,
        body: String,
        urgency: Urgency,
    },
    /// A named sound.
    Sound { name: String },
    /// Experience points.
    Xp { amount: i64 },
    /// Compaction: the familiar rests and its mana refills.
    Rest,
    /// A subagent companion appears.
    CompanionSpawn { id: String, kind: String },
    /// A subagent companion leaves.
    CompanionLeave { id: String },
    /// A custom action with free-form data.
    Emit {
        name: String,
        data: serde_json::Map<String, serde_json::Value>,
    },
    /// A log line for the user.
    Log { text: String },
    /// Run a program with arguments, no shell; carried out only when the user allowed it.
    Run { argv: Vec<String> },
}

impl ActionKind {
    pub fn name(&self) -> &'static str {
        match self {
            ActionKind::Animate { .. } => "animate",
            ActionKind::Say { .. } => "say",
            ActionKind::Quest { .. } => "quest",
            ActionKind::Notify { .. } => "notify",
            ActionKind::Sound { .. } => "sound",
            ActionKind::Xp { .. } => "xp",
            ActionKind::Rest => "rest",
            ActionKind::CompanionSpawn { .. } => "companion_spawn",
            ActionKind::CompanionLeave { .. } => "companion_leave",
            ActionKind::Emit { .. } => "emit",
            ActionKind::Log { .. } => "log",
            ActionKind::Run { .. } => "run",
        }
    }
}

/// An action with where it came from: the script that emitted it and the event that caused it.
/// It carries no session state: that is the session model's, told by events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Action {
    #[serde(flatten)]
    pub kind: ActionKind,
    /// File name of the script that emitted it (`default.rhai`).
    pub script: String,
    pub session: Option<String>,
    pub agent: Option<String>,
    /// Line of the source record of the event that caused it.
    pub line: u64,
    /// Kind of the event that caused it.
    pub event: crate::EventKind,
}
