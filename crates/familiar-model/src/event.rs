//! Normalized events: one per meaning, in file order, each carrying the session state.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// What happened. The serde names are the `kind` strings of the NDJSON schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// First record of a session (or of a subagent transcript) seen.
    SessionStart,
    /// Something the user typed (or a slash command, with `command` set).
    Prompt,
    /// A thinking block, or a planning tool (`tool` set).
    Thinking,
    /// Assistant text.
    Text,
    /// Read, Glob, Grep, LS, WebFetch, WebSearch, NotebookRead.
    Reading,
    /// Edit, Write, MultiEdit, NotebookEdit.
    Writing,
    /// Bash, BashOutput, KillShell.
    Bash,
    /// Any other tool, MCP tools included.
    Tool,
    /// A Task / Agent tool_use.
    SubagentStart,
    /// The result of a Task / Agent tool_use arrived.
    SubagentEnd,
    /// A tool error, an API error, a rejection or an interrupt (see [`ErrorKind`]).
    Error,
    /// The conversation was compacted.
    CompactBoundary,
    /// A turn finished well.
    Success,
    /// A `summary` record (a session title).
    Summary,
    /// The status changed without a record (idle, quiet after a text-only turn, or a hook's
    /// permission or idle prompt): emitted by the session model's timers and hook input, never
    /// by the normalizer. `previous_status` and `duration_ms` say what it replaces and for how
    /// long that lasted.
    Status,
    /// The state of a session that existed when watching began (one per session, before any
    /// other event of it): status and for how long (`duration_ms`), context, model, `cwd`.
    /// Emitted by the session model, never by the normalizer.
    Snapshot,
}

impl EventKind {
    pub const ALL: [EventKind; 16] = [
        EventKind::SessionStart,
        EventKind::Prompt,
        EventKind::Thinking,
        EventKind::Text,
        EventKind::Reading,
        EventKind::Writing,
        EventKind::Bash,
        EventKind::Tool,
        EventKind::SubagentStart,
        EventKind::SubagentEnd,
        EventKind::Error,
        EventKind::CompactBoundary,
        EventKind::Success,
        EventKind::Summary,
        EventKind::Status,
        EventKind::Snapshot,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::SessionStart => "session_start",
            EventKind::Prompt => "prompt",
            EventKind::Thinking => "thinking",
            EventKind::Text => "text",
            EventKind::Reading => "reading",
            EventKind::Writing => "writing",
            EventKind::Bash => "bash",
            EventKind::Tool => "tool",
            EventKind::SubagentStart => "subagent_start",
            EventKind::SubagentEnd => "subagent_end",
            EventKind::Error => "error",
            EventKind::CompactBoundary => "compact_boundary",
            EventKind::Success => "success",
            EventKind::Summary => "summary",
            EventKind::Status => "status",
            EventKind::Snapshot => "snapshot",
        }
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which of the five error kinds. They stay apart because users want a notification for
/// `tool` and `api` errors but not for their own rejections and interrupts; `denied` is the CLI
/// refusing a tool by its own permission rules, which nobody was asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Tool,
    Api,
    Rejected,
    Interrupted,
    /// The CLI's own permission rules refused a tool use without asking anyone (`-p` runs:
    /// "... was blocked. For security, Claude Code may only ...", "Claude requested
    /// permissions to ..., but you haven't granted it yet.").
    Denied,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 5] = [
        ErrorKind::Tool,
        ErrorKind::Api,
        ErrorKind::Rejected,
        ErrorKind::Interrupted,
        ErrorKind::Denied,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Tool => "tool",
            ErrorKind::Api => "api",
            ErrorKind::Rejected => "rejected",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::Denied => "denied",
        }
    }
}

/// Which coding agent CLI wrote the records an event comes from.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub enum AgentKind {
    /// Anthropic's Claude Code (transcripts under `~/.claude/projects`).
    #[default]
    #[serde(rename = "claude-code")]
    ClaudeCode,
    /// OpenAI's Codex CLI (rollouts under `~/.codex/sessions`).
    #[serde(rename = "codex")]
    Codex,
    /// Google's Gemini CLI (sessions under `~/.gemini/tmp/<project>/chats`).
    #[serde(rename = "gemini")]
    Gemini,
    /// Alibaba's Qwen Code (sessions under `~/.qwen/projects/<project>/chats`).
    #[serde(rename = "qwen")]
    Qwen,
    /// GitHub Copilot CLI (sessions under `~/.copilot/session-state/<session>/events.jsonl`).
    #[serde(rename = "copilot")]
    Copilot,
    /// opencode (sessions in SQLite, `~/.local/share/opencode/opencode.db`).
    #[serde(rename = "opencode")]
    Opencode,
}

impl AgentKind {
    pub const ALL: [AgentKind; 6] = [
        AgentKind::ClaudeCode,
        AgentKind::Codex,
        AgentKind::Gemini,
        AgentKind::Qwen,
        AgentKind::Copilot,
        AgentKind::Opencode,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AgentKind::ClaudeCode => "claude-code",
            AgentKind::Codex => "codex",
            AgentKind::Gemini => "gemini",
            AgentKind::Qwen => "qwen",
            AgentKind::Copilot => "copilot",
            AgentKind::Opencode => "opencode",
        }
    }

    /// `true` for Claude Code, the default, left out of the JSON form.
    pub fn is_claude_code(&self) -> bool {
        *self == AgentKind::ClaudeCode
    }
}

impl std::fmt::Display for AgentKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the agent is doing, as a person watching it would say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Nothing seen yet.
    #[default]
    Unknown,
    Working,
    WaitingForApproval,
    WaitingForInput,
    Idle,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Unknown => "unknown",
            Status::Working => "working",
            Status::WaitingForApproval => "waiting_for_approval",
            Status::WaitingForInput => "waiting_for_input",
            Status::Idle => "idle",
        }
    }
}

/// One normalized event. Common fields first; the kind's own fields are optional and omitted
/// from the JSON form when absent (see `docs/events.md` for which kind sets which).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub kind: EventKind,
    /// `sessionId` (or stream-json `session_id`) of the record.
    pub session: Option<String>,
    /// `agentId` for subagent records, `None` for the main agent.
    pub agent: Option<String>,
    pub sidechain: bool,
    /// The record's own timestamp (RFC 3339), when it has one.
    pub ts: Option<String>,
    /// 1-based line in the source.
    pub line: u64,
    /// Tokens in the context window of this agent's chain; `None` = unknown (e.g. just compacted).
    pub context_used: Option<u64>,
    pub context_limit: u64,
    pub status: Status,
    /// The CLI that wrote the records: left out of the JSON form for Claude Code (so existing
    /// consumers see no change), `"agent_kind":"codex"` for Codex, `"gemini"` for Gemini CLI.
    #[serde(default, skip_serializing_if = "AgentKind::is_claude_code")]
    pub agent_kind: AgentKind,

    /// Tool name, for tool events and planning-tool `thinking`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// File path, command, pattern, query or URL the tool works on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The tool_use id, linking `subagent_start`/`subagent_end` and tool errors to their call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// Subagent type (`subagent_type` of a Task/Agent call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// Subagent task description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Error kind, on `error` events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorKind>,
    /// The CLI's own error code (`error` of an API error record, e.g. `rate_limit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Human-readable text: prompt, assistant text, error message, summary, thinking text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// On `api` errors, a one-line sentence for a person (`text` is the CLI's own, which may be
    /// raw JSON): "Internal server error (HTTP 500): a server-side issue, usually temporary".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `cause.code` of a system `api_error` (e.g. `ConnectionRefused`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_in_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_attempt: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u64>,
    /// Compaction trigger: `auto` or `manual`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_tokens: Option<u64>,
    /// Slash command of a prompt (`/clear`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Thinking budget asked for in a prompt: 1 think, 2 think hard, 3 think harder/ultrathink.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<u8>,
    /// Model id of the assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Turn or run duration, on `success`; on `status`, how long the previous status lasted;
    /// on `snapshot`, how long the session has had its current status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The status a `status` event replaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_status: Option<Status>,
    /// The session's working directory (its project): on `snapshot`, and on the first event of
    /// a session after the session model learnt it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The git branch of `cwd` when the session recorded one (same events as `cwd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    /// The host the session runs on, for a session followed over SSH (`watch --remote`):
    /// the remote as the user named it. Absent for this machine's sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The session's whole plan after this event changed it (a `TodoWrite`, `TaskCreate` or
    /// `TaskUpdate` of its main agent; see [`crate::plan`]), and on `snapshot`. Set by the
    /// session model only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Vec<crate::PlanItem>>,
    /// What this planning tool call does to the plan: from the normalizer to the session
    /// model, which turns it into [`Event::plan`]. Never serialized.
    #[serde(skip)]
    pub plan_change: Option<crate::PlanChange>,
    /// The original JSON line, kept only when the consumer asks for it (scripts' `ev.raw`).
    #[serde(skip)]
    pub raw: Option<Arc<str>>,
}

impl Event {
    /// An event with every optional field empty.
    /// The `status` event that follows a turn's end (`success`): the state it leaves, with the
    /// same session, agent, time, line and context. Readers and scripts see every status
    /// change as a `status` event, the end of a turn included (`docs/scripting.md`'s timer
    /// example waits for it).
    pub fn status_after(&self) -> Event {
        let mut status = Event::new(EventKind::Status, self.line);
        status.session.clone_from(&self.session);
        status.agent.clone_from(&self.agent);
        status.sidechain = self.sidechain;
        status.ts.clone_from(&self.ts);
        status.context_used = self.context_used;
        status.context_limit = self.context_limit;
        status.status = self.status;
        status.agent_kind = self.agent_kind;
        status.raw.clone_from(&self.raw);
        status
    }

    pub fn new(kind: EventKind, line: u64) -> Event {
        Event {
            kind,
            session: None,
            agent: None,
            sidechain: false,
            ts: None,
            line,
            context_used: None,
            context_limit: 200_000,
            status: Status::Unknown,
            agent_kind: AgentKind::ClaudeCode,
            host: None,
            tool: None,
            target: None,
            tool_use_id: None,
            agent_type: None,
            description: None,
            error: None,
            error_code: None,
            text: None,
            message: None,
            cause: None,
            retry_in_ms: None,
            retry_attempt: None,
            max_retries: None,
            trigger: None,
            pre_tokens: None,
            post_tokens: None,
            command: None,
            think: None,
            model: None,
            duration_ms: None,
            previous_status: None,
            cwd: None,
            git_branch: None,
            plan: None,
            plan_change: None,
            raw: None,
        }
    }

    /// Context tokens left, the game's mana; `None` while the use is unknown.
    pub fn context_remaining(&self) -> Option<u64> {
        self.context_used
            .map(|used| self.context_limit.saturating_sub(used))
    }
}
