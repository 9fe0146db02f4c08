//! What a session looks like now: the rows of `familiar sessions` and the `snapshot` events
//! that open `familiar watch` (both come from here, so they always agree).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use familiar_model::time::to_unix_ms;
use familiar_model::{AgentKind, Event, EventKind, PlanItem, Status};
use serde::Serialize;

/// One session (its main transcript, with its live subagents).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSnapshot {
    pub session: String,
    /// The session's working directory (its project), when a record named it.
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    /// The CLI that wrote it: left out of the JSON for Claude Code, `"codex"` for Codex.
    #[serde(skip_serializing_if = "AgentKind::is_claude_code")]
    pub agent_kind: AgentKind,
    /// Model of the latest assistant message.
    pub model: Option<String>,
    pub status: Status,
    /// How long it has had that status (`None` when the clock or the records give no time).
    #[serde(rename = "status_for_ms", serialize_with = "millis")]
    pub status_for: Option<Duration>,
    pub context_used: Option<u64>,
    pub context_limit: u64,
    /// Timestamp of its latest record (RFC 3339, as written).
    pub last_record: Option<String>,
    /// Last activity as Unix milliseconds (the latest record, or the latest line read live).
    pub last_activity_ms: Option<i64>,
    /// Line number of the latest line of its main transcript.
    pub line: u64,
    /// Tool calls by name, in the part of the transcript read (all of it for a file followed
    /// from its start; the last few MiB of an existing one).
    pub tools: BTreeMap<String, u64>,
    pub transcript: Option<PathBuf>,
    pub subagents: Vec<SubagentSnapshot>,
    /// Its main agent's plan (`TodoWrite`, the task tools), in the agent's order; left out
    /// of the JSON when it has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plan: Vec<PlanItem>,
    /// The remote host it runs on (`familiar sessions --remote`); left out for this
    /// machine's sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// A subagent still at work.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubagentSnapshot {
    pub agent: String,
    pub agent_type: Option<String>,
    /// The Task/Agent tool_use that started it, when the parent's records tell.
    pub tool_use_id: Option<String>,
    pub status: Status,
    pub context_used: Option<u64>,
    pub context_limit: u64,
}

fn millis<S: serde::Serializer>(value: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(duration) => s.serialize_some(&(duration.as_millis() as u64)),
        None => s.serialize_none(),
    }
}

impl SessionSnapshot {
    /// The `snapshot` event that tells this state (see `docs/events.md`).
    pub fn to_event(&self) -> Event {
        let mut event = Event::new(EventKind::Snapshot, self.line);
        event.session = Some(self.session.clone());
        event.ts.clone_from(&self.last_record);
        event.status = self.status;
        event.duration_ms = self.status_for.map(|d| d.as_millis() as u64);
        event.context_used = self.context_used;
        event.context_limit = self.context_limit;
        event.agent_kind = self.agent_kind;
        event.model.clone_from(&self.model);
        event.cwd.clone_from(&self.cwd);
        event.git_branch.clone_from(&self.git_branch);
        event.plan = (!self.plan.is_empty()).then(|| self.plan.clone());
        event.host.clone_from(&self.host);
        event
    }

    pub(crate) fn last_activity(time: Option<SystemTime>) -> Option<i64> {
        time.map(to_unix_ms)
    }
}
