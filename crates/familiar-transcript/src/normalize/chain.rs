//! A conversation chain's state (the main agent's, a subagent's, or 1.0.x inline
//! sidechain records'): its session, context, status and the tool calls still waiting for
//! their results. Part of `normalize`.

use familiar_model::Status;

use super::context;

/// Which conversation chain a record belongs to: the main agent, a subagent transcript
/// (`agentId`), or 1.0.x sidechain records inline in the main file (no `agentId`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ChainKey {
    pub(super) agent: Option<String>,
    pub(super) sidechain: bool,
}

impl ChainKey {
    pub(super) fn is_main(&self) -> bool {
        self.agent.is_none() && !self.sidechain
    }
}

#[derive(Debug, Clone)]
pub(super) struct PendingTool {
    /// [`id_hash`] of `id`: a result is matched against up to [`super::MAX_PENDING_TOOLS`] calls, and
    /// comparing ids byte by byte (they share their `toolu_01` prefix) was a tenth of
    /// `familiar events`' time on a transcript of short tool calls.
    pub(super) id_hash: u64,
    pub(super) id: String,
    pub(super) name: String,
    pub(super) target: Option<String>,
    /// `(agent_type, description)` of a Task/Agent call.
    pub(super) subagent: Option<(Option<String>, Option<String>)>,
}

/// A cheap hash of a tool-use id (FNV-1a), for [`PendingTool::id_hash`].
pub(super) fn id_hash(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[derive(Debug, Clone, Default)]
pub(super) struct Chain {
    pub(super) session: Option<String>,
    pub(super) context_used: Option<u64>,
    pub(super) window: context::WindowEvidence,
    pub(super) status: Status,
    /// Oldest first; the oldest is dropped at [`super::MAX_PENDING_TOOLS`].
    pub(super) pending: std::collections::VecDeque<PendingTool>,
    /// The current turn ended (well or badly): no further `success` until the next prompt.
    pub(super) turn_over: bool,
    /// An API error ended the current turn (a stream-json `result` repeating it adds nothing).
    pub(super) api_error_ended_turn: bool,
    /// The current turn began with a slash command that does work (`/compact`): the CLI's
    /// `<local-command-stdout>` answer ends it.
    pub(super) command_turn: bool,
    /// Tool uses the CLI's own rules refused (stream-json `permission_denied`), until their
    /// result; a few at most.
    pub(super) denied: Vec<String>,
}

impl Chain {
    /// A tool call or its result: the agent is at work. A tool waiting for its result may be
    /// running or may wait on a permission dialog, and no record tells which (in auto mode,
    /// Claude Code's default since 2.1.3xx, nobody is asked): `waiting_for_approval` comes
    /// only from what sees the dialog open (a hook, the CLI's sessions file).
    pub(super) fn settle_status(&mut self) {
        self.status = Status::Working;
    }

    /// The Task/Agent call `id`, still waiting for its subagent to finish.
    pub(super) fn take_subagent(&mut self, id: &str) -> Option<PendingTool> {
        self.take_pending(id, |tool| tool.subagent.is_some())
    }

    /// The tool use `id` waiting for its result (and `also` true of it), no longer pending.
    pub(super) fn take_pending(
        &mut self,
        id: &str,
        also: impl Fn(&PendingTool) -> bool,
    ) -> Option<PendingTool> {
        let hash = id_hash(id);
        let index = self
            .pending
            .iter()
            .position(|tool| tool.id_hash == hash && tool.id == id && also(tool))?;
        let tool = self.pending.remove(index);
        self.release_pending();
        tool
    }

    /// A tool use waiting for its result; past [`super::MAX_PENDING_TOOLS`] the oldest is
    /// forgotten.
    pub(super) fn push_pending(&mut self, tool: PendingTool) {
        if self.pending.len() == super::MAX_PENDING_TOOLS {
            self.pending.pop_front();
        }
        if self.pending.capacity() == 0 {
            // One tool at a time is the common case: room for one, not the four a first
            // push makes (a watcher keeps this for every session it follows).
            self.pending.reserve_exact(1);
        }
        self.pending.push_back(tool);
    }

    /// A turn ended: only subagents still run.
    pub(super) fn keep_pending_subagents(&mut self) {
        self.pending.retain(|tool| tool.subagent.is_some());
        self.release_pending();
    }

    /// Nothing pending: its room goes back (most files spend most of their time so, and a
    /// queue that once held several kept room for them: 400 bytes a session, at thousands).
    fn release_pending(&mut self) {
        if self.pending.is_empty() && self.pending.capacity() > 0 {
            self.pending = std::collections::VecDeque::new();
        }
    }
}
