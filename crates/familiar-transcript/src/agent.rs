//! What the normalizer asks of each agent CLI's record format: Claude Code's chains
//! (`normalize`) and the other CLIs' readers (`codex`, `gemini`, `qwen`, `copilot`) are peers
//! behind [`AgentState`]. A reader keeps its main agent in a [`MainAgent`] and is a
//! [`Reader`] by naming its CLI, which makes it an [`AgentState`]; [`event`] starts each of
//! its events from that state, and [`RecentCalls`] keeps the calls whose results name only an
//! id. The [`crate::Normalizer`] reads each record by
//! its shape into the state of its format, and answers every question about the session
//! (its id, context, window, status, which CLI wrote it) from that state, never by branching
//! per question.

use familiar_model::{AgentKind, Event, EventKind, Status};

use crate::NormalizerConfig;
use crate::models::{WindowSources, context_window};

/// The session as one agent CLI's records left it.
pub trait AgentState {
    /// The CLI that writes this format.
    fn kind(&self) -> AgentKind;
    /// The session id of the main agent (or the only one).
    fn session(&self) -> Option<&str>;
    /// Tokens in the main agent's context window, while known.
    fn context_used(&self) -> Option<u64>;
    /// What the records say of the main agent's context window (its model, the CLI's own
    /// figure), for [`AgentState::context_limit`].
    fn window(&self) -> WindowSources<'_>;
    /// The main agent's context window: the one rule ([`context_window`]) over what the
    /// records say ([`AgentState::window`]) and `--context-limit`.
    fn context_limit(&self, config: &NormalizerConfig) -> u64 {
        self.limit(config.context_limit)
    }
    /// [`AgentState::context_limit`] with `explicit` as `--context-limit` (a line's own).
    fn limit(&self, explicit: Option<u64>) -> u64 {
        context_window(&WindowSources {
            explicit,
            ..self.window()
        })
    }
    /// The main agent's status as the records leave it.
    fn status(&self) -> Status;
}

/// What a reader keeps of its session's main agent, from which it answers [`AgentState`]
/// ([`Reader`]): every CLI but Claude Code, whose chains are many, keeps one.
#[derive(Debug, Clone, Default)]
pub struct MainAgent {
    /// The session id, once a record says it.
    pub session: Option<String>,
    /// The latest model.
    pub model: Option<String>,
    /// Tokens in the context window, at the latest request.
    pub context_used: Option<u64>,
    /// The CLI's own figure of the window, where it writes one.
    pub window: Option<u64>,
    pub status: Status,
    /// A subagent's own file: its id, which its events carry as `agent`. Their session is
    /// the parent's, which only the path says (the session model tags them).
    pub subagent: Option<String>,
}

/// An agent CLI's reader that keeps a [`MainAgent`]: it is an [`AgentState`] by that alone.
pub trait Reader {
    const KIND: AgentKind;
    /// The model assumed before a record names one (its window is the CLI's default).
    const FIRST_MODEL: Option<&'static str> = None;
    fn main(&self) -> &MainAgent;
}

/// A [`Reader`] that reads a record from its line's text alone (all but Codex's, whose
/// rollout records are read from their payload).
pub trait ReadsLines: Reader {
    /// Read one record (`json`, its line's text).
    fn read(
        &mut self,
        json: &str,
        meta: &LineMeta,
        metrics: &mut crate::metrics::Metrics,
        out: &mut Vec<Event>,
    );
}

/// Where the record a [`Reader`] reads came from.
pub struct LineMeta {
    pub line: u64,
    /// The record, kept for the scripts' `ev.raw` when they read it.
    pub raw: Option<std::sync::Arc<str>>,
    /// `--context-limit`.
    pub explicit_limit: Option<u64>,
}

impl<R: Reader> AgentState for R {
    fn kind(&self) -> AgentKind {
        R::KIND
    }

    /// A subagent's file has no session of its own.
    fn session(&self) -> Option<&str> {
        let main = self.main();
        main.session.as_deref().filter(|_| main.subagent.is_none())
    }

    fn context_used(&self) -> Option<u64> {
        self.main().context_used
    }

    /// The CLI's own figure, else the window of its latest model ([`crate::models`]), and
    /// never less than what a request used.
    fn window(&self) -> WindowSources<'_> {
        let main = self.main();
        WindowSources {
            reported: main.window,
            model: main.model.as_deref().or(R::FIRST_MODEL),
            used: main.context_used,
            ..WindowSources::default()
        }
    }

    fn status(&self) -> Status {
        self.main().status
    }
}

/// An event of `kind` from line `line`, as `reader`'s main agent stands: its CLI, its session
/// (a subagent's file: its agent instead), context and status, and its window with `explicit`
/// (`--context-limit`) first.
pub fn event<R: Reader>(reader: &R, kind: EventKind, line: u64, explicit: Option<u64>) -> Event {
    let main = reader.main();
    let mut event = Event::new(kind, line);
    event.agent_kind = R::KIND;
    match &main.subagent {
        Some(agent) => {
            event.agent = Some(agent.clone());
            event.sidechain = true;
        }
        None => event.session.clone_from(&main.session),
    }
    event.context_used = main.context_used;
    event.context_limit = reader.limit(explicit);
    event.status = main.status;
    event
}

/// The latest tool calls a reader saw (id, name, target), kept for their results, which name
/// only the id; the oldest is forgotten past [`RecentCalls::MAX`].
#[derive(Debug, Clone, Default)]
pub struct RecentCalls(Vec<(String, String, Option<String>)>);

impl RecentCalls {
    pub const MAX: usize = 64;

    pub fn remember(&mut self, id: &str, name: &str, target: Option<String>) {
        if self.0.len() == Self::MAX {
            self.0.remove(0);
        }
        self.0.push((id.to_owned(), name.to_owned(), target));
    }

    /// The name and target of call `id`, if it is remembered.
    pub fn find(&self, id: &str) -> Option<(&str, Option<&str>)> {
        self.0
            .iter()
            .find(|(call, ..)| call == id)
            .map(|(_, name, target)| (name.as_str(), target.as_deref()))
    }
}

/// The contexts of a session's subagents whose records share its file (Copilot CLI's
/// `agentId`, opencode's child sessions): each its latest request's, the oldest forgotten past
/// [`SubagentContexts::MAX`].
#[derive(Debug, Clone, Default)]
pub struct SubagentContexts(Vec<(String, u64)>);

impl SubagentContexts {
    pub const MAX: usize = 64;

    /// `agent`'s latest request used `used` tokens.
    pub fn set(&mut self, agent: &str, used: u64) {
        self.0.retain(|(id, _)| id != agent);
        if self.0.len() == Self::MAX {
            self.0.remove(0);
        }
        self.0.push((agent.to_owned(), used));
    }

    /// Make `event` one of `agent`'s: a sidechain with `agent`'s own context.
    pub fn mark(&self, event: &mut Event, agent: &str) {
        event.agent = Some(agent.to_owned());
        event.sidechain = true;
        event.context_used = self
            .0
            .iter()
            .find(|(id, _)| id == agent)
            .map(|&(_, used)| used);
    }
}
