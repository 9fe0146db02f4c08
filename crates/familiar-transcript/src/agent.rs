//! What the normalizer asks of each agent CLI's record format: Claude Code's chains
//! (`normalize`) and Codex's rollout (`codex`) are peers behind [`AgentState`], and the next
//! agent's reader is one more implementation. The [`crate::Normalizer`] reads each record by
//! its shape into the state of its format, and answers every question about the session
//! (its id, context, window, status, which CLI wrote it) from that state, never by branching
//! per question.

use familiar_model::{AgentKind, Status};

use crate::NormalizerConfig;

/// The session as one agent CLI's records left it.
pub trait AgentState {
    /// The CLI that writes this format.
    fn kind(&self) -> AgentKind;
    /// The session id of the main agent (or the only one).
    fn session(&self) -> Option<&str>;
    /// Tokens in the main agent's context window, while known.
    fn context_used(&self) -> Option<u64>;
    /// The main agent's context window, by the one rule
    /// ([`crate::models::context_window`]) over what the records say and `config`.
    fn context_limit(&self, config: &NormalizerConfig) -> u64;
    /// The main agent's status as the records leave it.
    fn status(&self) -> Status;
}
