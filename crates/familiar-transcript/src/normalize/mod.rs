//! The normalizer: one record in, zero or more [`Event`]s out, with the session state (context,
//! status) and [`Metrics`] kept up to date. Pure: no files, no threads, no clock; the tailer and
//! the `familiar events` command feed it lines from [`crate::LineSplitter`].
//!
//! - this file: the [`Normalizer`] (records to the state of their format, [`AgentState`]),
//!   Claude Code's per-chain state and the record dispatch;
//! - `parse`: bytes → typed records ([`parse_line`]) and the small text helpers;
//! - `turn`: prompts, slash commands, assistant messages, `system` records, the end of a turn;
//! - `tool_calls`: tool uses and results, subagent links, tool errors;
//! - `api_errors`: API errors (`api_error` records, `isApiErrorMessage`, stream-json `result`);
//! - `context`: the context window (limit) and its precedence;
//! - `plan`: the planning tools' changes to the agent's plan (`Event::plan_change`);
//! - `known`: what Familiar knows Claude Code writes; the rest is counted as unknown;
//! - `moved`: a big prompt's text moved from its record into its event, not copied;
//! - `own`: which records another CLI's reader reads (Gemini CLI, Qwen Code, Copilot CLI,
//!   opencode), and handing them to it.

mod api_errors;
mod chain;
mod context;
mod known;
mod moved;
mod own;
mod parse;
mod plan;
mod tool_calls;
mod turn;

use chain::{Chain, ChainKey, PendingTool, id_hash};

pub use context::{DEFAULT_CONTEXT_LIMIT, LARGE_CONTEXT_LIMIT};
use parse::Records;
pub(crate) use parse::cap_text;
pub use parse::{ParsedLine, parse_line, think_level};

use std::borrow::Cow;
use std::sync::Arc;

use familiar_model::{Event, EventKind, Status};

use crate::Diagnostic;
use crate::agent::{AgentState, LineMeta};
use crate::metrics::Metrics;
use crate::record::{Record, TextOr};

/// Error texts longer than this are cut (tool output can be megabytes).
pub const MAX_ERROR_TEXT: usize = 2_000;
/// Tool uses awaiting a result, per chain, before the oldest is forgotten.
const MAX_PENDING_TOOLS: usize = 256;

#[derive(Debug, Clone)]
pub struct NormalizerConfig {
    /// Lines longer than this are skipped with a diagnostic.
    pub max_line_bytes: usize,
    /// Overrides the detected context window (command-line flag or config).
    pub context_limit: Option<u64>,
    /// The model the user configured (Claude Code's settings.json `model`, or
    /// `ANTHROPIC_MODEL`): a source of the context window when it ends in `[1m]` and names
    /// the model the transcript runs (see `context`).
    pub configured_model: Option<String>,
    /// Keep each record's JSON line on its events (`Event::raw`, scripts' `ev.raw`).
    pub keep_raw: bool,
    /// The input is a subagent's transcript, with this agent id: its place says so
    /// (`<session>/subagents/agent-<id>.jsonl`). Every record of it is that subagent's,
    /// whatever the record lacks (Claude Code 2.1.3xx writes `api-request` records there with
    /// `agentId` but no `isSidechain`).
    pub subagent: Option<String>,
}

impl Default for NormalizerConfig {
    fn default() -> NormalizerConfig {
        NormalizerConfig {
            max_line_bytes: crate::DEFAULT_MAX_LINE_BYTES,
            context_limit: None,
            configured_model: None,
            keep_raw: false,
            subagent: None,
        }
    }
}

/// Where the record being normalized came from.
struct Origin<'r> {
    line: u64,
    ts: Option<&'r str>,
    session: Option<&'r str>,
    agent: Option<&'r str>,
    sidechain: bool,
    raw: Option<Arc<str>>,
}

/// A Claude Code session as its records left it: one chain per agent (the main one and each
/// subagent's), the turn's `success` held for its duration, the plan's task ids.
#[derive(Debug, Clone, Default)]
struct Claude {
    chains: Vec<(ChainKey, Chain)>,
    /// The main chain's `success`, held from the record that ended the turn (`end_turn`,
    /// `stop_hook_summary`) until `turn_duration` gives its `duration_ms`. Any other event
    /// lets it out first; so does [`Normalizer::flush`] (end of input, or a quiet pause).
    /// Boxed: most files hold none, and an `Event` inline was half of every file's state.
    deferred_success: Option<Box<Event>>,
    /// Which `TaskCreate` made which task id (for `TaskUpdate`'s plan changes).
    tasks: plan::TaskIds,
    /// A big prompt's text, moved from the record being read into its event.
    moving: moved::Moving,
}

impl Claude {
    /// The main chain, or the only chain of a subagent's transcript.
    fn primary_chain(&self) -> Option<&(ChainKey, Chain)> {
        self.chains
            .iter()
            .find(|(key, _)| key.is_main())
            .or_else(|| self.chains.iter().find(|(key, _)| key.agent.is_some()))
    }
}

impl AgentState for Claude {
    fn kind(&self) -> familiar_model::AgentKind {
        familiar_model::AgentKind::ClaudeCode
    }

    fn session(&self) -> Option<&str> {
        self.primary_chain()
            .and_then(|(_, chain)| chain.session.as_deref())
    }

    fn context_used(&self) -> Option<u64> {
        self.primary_chain()
            .and_then(|(_, chain)| chain.context_used)
    }

    fn window(&self) -> crate::models::WindowSources<'_> {
        self.primary_chain()
            .map(|(_, chain)| context::sources_of(chain))
            .unwrap_or_default()
    }

    /// The user's configured model counts too (Claude Code's own sessions), and a session
    /// with no chain yet has the default window.
    fn context_limit(&self, config: &NormalizerConfig) -> u64 {
        self.primary_chain()
            .map(|(_, chain)| context::limit_of(config, chain))
            .unwrap_or_else(|| config.context_limit.unwrap_or(DEFAULT_CONTEXT_LIMIT))
    }

    fn status(&self) -> Status {
        self.primary_chain()
            .map(|(_, chain)| chain.status)
            .unwrap_or_default()
    }
}

/// Turns records into events. One per input stream (file): state carries across lines. Each
/// record is read by its shape into the state of its agent's format ([`AgentState`]).
#[derive(Debug, Clone)]
pub struct Normalizer {
    config: NormalizerConfig,
    metrics: Metrics,
    claude: Claude,
    /// A Codex rollout's state, once a record of the Codex shape was read.
    codex: Option<Box<crate::codex::Rollout>>,
    /// A Gemini CLI session's state, once a line of the Gemini shape was read.
    gemini: Option<Box<crate::gemini::Chat>>,
    /// A Qwen Code session's state, once a record of the Qwen shape was read.
    qwen: Option<Box<crate::qwen::Session>>,
    /// A Copilot CLI session's state, once a record of the Copilot shape was read.
    copilot: Option<Box<crate::copilot::Session>>,
    /// An opencode session's state, once a line of Familiar's opencode source was read.
    opencode: Option<Box<crate::opencode::Session>>,
}

impl Normalizer {
    pub fn new(config: NormalizerConfig) -> Normalizer {
        Normalizer {
            config,
            metrics: Metrics::default(),
            claude: Claude::default(),
            codex: None,
            gemini: None,
            qwen: None,
            copilot: None,
            opencode: None,
        }
    }

    /// The state of the format the records are in: Codex's, Gemini CLI's or Qwen Code's once a
    /// record of its shape was read, else Claude Code's.
    pub fn agent(&self) -> &dyn AgentState {
        if let Some(rollout) = &self.codex {
            return rollout.as_ref();
        }
        if let Some(chat) = &self.gemini {
            return chat.as_ref();
        }
        if let Some(session) = &self.qwen {
            return session.as_ref();
        }
        if let Some(session) = &self.copilot {
            return session.as_ref();
        }
        if let Some(session) = &self.opencode {
            return session.as_ref();
        }
        &self.claude
    }

    pub fn config(&self) -> &NormalizerConfig {
        &self.config
    }

    /// Read a new generation of the same file (rewritten whole, or replaced) knowing what was
    /// told of the earlier one: Gemini CLI rewrites a session file whole (a temporary file
    /// renamed over it) with the messages it already held, whose ids were told. The other
    /// formats are only ever appended to: their next generation starts over.
    pub fn continue_from(&mut self, earlier: &Normalizer) {
        self.gemini.clone_from(&earlier.gemini);
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Context of the main agent (or the only one, for a subagent transcript).
    pub fn context_used(&self) -> Option<u64> {
        self.agent().context_used()
    }

    pub fn context_limit(&self) -> u64 {
        self.agent().context_limit(&self.config)
    }

    /// The CLI that wrote the input: Codex once a record of its shape was read.
    pub fn agent_kind(&self) -> familiar_model::AgentKind {
        self.agent().kind()
    }

    /// Session id of the main agent (or the only one).
    pub fn session(&self) -> Option<&str> {
        self.agent().session()
    }

    pub fn status(&self) -> Status {
        self.agent().status()
    }

    /// Tool uses of the main chain still waiting for their result (subagents included).
    pub fn open_tool_uses(&self) -> Vec<(String, String)> {
        self.claude
            .primary_chain()
            .map(|(_, chain)| {
                chain
                    .pending
                    .iter()
                    .map(|tool| (tool.id.clone(), tool.name.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Is an event held back, waiting for a record that may not come (a `success` waiting
    /// for its `turn_duration`)? [`Normalizer::flush`] lets it out.
    pub fn has_deferred(&self) -> bool {
        self.claude.deferred_success.is_some()
            || self.gemini.as_ref().is_some_and(|chat| chat.has_deferred())
            || self
                .qwen
                .as_ref()
                .is_some_and(|session| session.has_deferred())
    }

    /// The input ended, or paused long enough that no record is coming soon: events held
    /// back for a later record go out now, as they are (a `success` without `duration_ms`).
    pub fn flush(&mut self, out: &mut Vec<Event>) {
        let first = out.len();
        if let Some(success) = self.claude.deferred_success.take() {
            push_event(out, *success);
        }
        if let Some(chat) = &mut self.gemini {
            chat.flush(out);
        }
        if let Some(session) = &mut self.qwen {
            session.flush(out);
        }
        for event in &out[first..] {
            self.metrics.count_event(event.kind);
        }
    }

    /// Is something met unknown for the first time waiting to be reported?
    pub fn has_unknown_news(&self) -> bool {
        !self.metrics.unknown_news.is_empty()
    }

    /// What was met unknown for the first time (a record type, `system/subtype`,
    /// `attachment/type`, ...) since the last call: each is reported once per input.
    pub fn take_unknown_news(&mut self) -> Vec<String> {
        std::mem::take(&mut self.metrics.unknown_news)
    }

    /// Note a line skipped before it reached [`Normalizer::push_line`] (over the cap).
    pub fn skipped_line(&mut self) {
        self.metrics.skipped_lines += 1;
    }

    /// Normalize one complete line (without its newline). Blank lines are ignored. A JSON
    /// array (the `--output-format json` form) is read as a sequence of records.
    pub fn push_line(
        &mut self,
        line: &[u8],
        line_no: u64,
        out: &mut Vec<Event>,
    ) -> Result<(), Diagnostic> {
        match parse_line(line, self.config.max_line_bytes) {
            Ok(mut parsed) => {
                self.apply(&mut parsed, line_no, out);
                Ok(())
            }
            Err(kind) => {
                self.metrics.skipped_lines += 1;
                Err(Diagnostic {
                    line: line_no,
                    kind,
                })
            }
        }
    }

    /// Keep (or stop keeping) each event's original record from the next line on (the
    /// scripts loaded now read `ev.raw`, or no longer do).
    pub fn set_keep_raw(&mut self, keep: bool) {
        self.config.keep_raw = keep;
    }

    /// Apply a line parsed by [`parse_line`] (possibly on another thread) to the session state.
    /// Takes the line mutably: a big prompt's text moves from its record into its event.
    pub fn apply(&mut self, parsed: &mut ParsedLine<'_>, line_no: u64, out: &mut Vec<Event>) {
        let mut push = |record: &mut Record<'_>, json: &str| {
            let raw = self.config.keep_raw.then(|| Arc::<str>::from(json));
            self.push_record(record, json, line_no, raw, out);
            self.claude.moving.finish(record, out);
        };
        match &mut parsed.records {
            Records::None => {}
            Records::One(record, json) => push(record, json),
            Records::Many(records) => {
                for (record, json) in records {
                    push(record, json);
                }
            }
        }
    }

    fn push_record(
        &mut self,
        record: &Record<'_>,
        json: &str,
        line: u64,
        raw: Option<Arc<str>>,
        out: &mut Vec<Event>,
    ) {
        let kind = record.kind.as_deref().unwrap_or("");
        // Gemini CLI's, Qwen Code's, Copilot CLI's and opencode's sessions (`own`).
        let claude_message =
            matches!(&record.message, Some(TextOr::Value(m)) if m.content.is_some());
        if let Some(own) = self.own_reader(record.kind.as_deref(), json, claude_message) {
            let meta = LineMeta {
                line,
                raw,
                explicit_limit: self.config.context_limit,
            };
            let first = out.len();
            self.read_own(own, json, &meta, out);
            self.count_events(first, out);
            return;
        }
        match record.subtype.as_deref() {
            Some(subtype) if kind == "system" || kind == "result" => {
                self.metrics.count_record(&format!("{kind}/{subtype}"))
            }
            _ if kind.is_empty() => self.metrics.count_record("(no type)"),
            _ => self.metrics.count_record(kind),
        }
        if let Some(ts) = record.timestamp.as_deref() {
            self.metrics.see_timestamp(ts);
        }
        // Codex rollouts: a state machine of their own (`crate::codex`).
        if let Some(payload) = record
            .payload
            .filter(|_| crate::codex::is_record_type(kind))
        {
            let first = out.len();
            let meta = crate::codex::Meta {
                line,
                ts: record.timestamp.as_deref(),
                raw,
            };
            let limit = self.config.context_limit;
            let rollout = self.codex.get_or_insert_with(Default::default);
            rollout.push(kind, payload.get(), &meta, limit, &mut self.metrics, out);
            self.count_events(first, out);
            return;
        }
        // stream-json names no agent on a subagent's messages, only the Task/Agent tool use
        // they answer (`parent_tool_use_id`): that id keys their chain. A record that names an
        // agent, or any record of a file that is a subagent's, is on that subagent's chain:
        // identity comes from what the file is, never from a field one record lacks.
        let named = record
            .agent_id
            .as_deref()
            .or(record.parent_tool_use_id.as_deref());
        // Cloned only for a subagent's record that names no agent (rare).
        let file_agent = match named {
            None => self.config.subagent.clone(),
            Some(_) => None,
        };
        let agent = named.or(file_agent.as_deref());
        let origin = Origin {
            line,
            ts: record.timestamp.as_deref(),
            session: record.session(),
            agent,
            sidechain: record.is_sidechain.unwrap_or(false) || agent.is_some(),
            raw,
        };
        let chain = self.chain_index(origin.agent, origin.sidechain);
        if let Some(version) = record.version.as_deref() {
            self.metrics.see_version(version);
        }
        if kind == "cost-state"
            && let Some(total) = record
                .total_cost_usd_camel
                .filter(|total| total.is_finite())
        {
            self.metrics.cli_cost_usd = Some(total.max(0.0));
        }
        let attachment = match record.attachment {
            Some(raw) if kind == "attachment" => parse::attachment(raw),
            _ => parse::Attachment::default(),
        };
        if let Some(what) = known::unknown(record, attachment.kind.as_deref()) {
            self.metrics.count_unknown(what);
        }
        // The model, named before any reply: the stream-json `init` record, a `model`
        // attachment (2.1.x), every `api-request` (2.1.3xx). Before `session_start`, so that
        // event already carries the right window.
        let named_model = match kind {
            "system" if record.subtype.as_deref() == Some("init") => {
                record.model.as_deref().map(Cow::Borrowed)
            }
            "attachment" => attachment.model,
            "api-request" => record.params.and_then(parse::params_model),
            _ => None,
        };
        if let Some(model) = named_model {
            self.claude.chains[chain].1.window.see_model(&model);
        }
        let first = out.len();
        self.session_start(chain, &origin, out);
        match kind {
            "user" => self.user(chain, record, &origin, out),
            "assistant" => self.assistant(chain, record, &origin, out),
            "system" => self.system(chain, record, &origin, out),
            "result" => self.result(chain, record, &origin, out),
            "summary" => {
                let mut event = self.event(chain, EventKind::Summary, &origin);
                event.text = record.summary.as_deref().map(str::to_owned);
                self.emit(event, out);
            }
            "tool_use" => {
                let id = record.tool_use_id.as_deref().or(record.id.as_deref());
                if let Some(name) = record.name.as_deref() {
                    self.claude.chains[chain].1.status = Status::Working;
                    self.tool_use(chain, name, id, record.input, &origin, out);
                }
            }
            "tool_result" => {
                if let Some(id) = record.tool_use_id.as_deref() {
                    let result = tool_calls::ResultOf::default();
                    self.tool_result(
                        chain,
                        id,
                        record.content,
                        record.is_error,
                        result,
                        &origin,
                        out,
                    );
                }
            }
            _ => {}
        }
        self.count_events(first, out);
    }

    fn count_events(&mut self, first: usize, out: &[Event]) {
        for event in &out[first..] {
            self.metrics.count_event(event.kind);
            if let Some(error) = event.error {
                *self.metrics.errors.entry(error).or_default() += 1;
            }
        }
    }

    fn chain_index(&mut self, agent: Option<&str>, sidechain: bool) -> usize {
        if let Some(index) = self
            .claude
            .chains
            .iter()
            .position(|(key, _)| key.sidechain == sidechain && key.agent.as_deref() == agent)
        {
            return index;
        }
        let key = ChainKey {
            agent: agent.map(str::to_owned),
            sidechain,
        };
        let mut chain = Chain::default();
        // Inline sidechains run inside the main session: they start out knowing its model.
        if let Some((_, main)) = self.claude.chains.iter().find(|(key, _)| key.is_main()) {
            chain.window = main.window.clone();
        }
        // Most files are one chain: room for one, not the four a first push makes (a chain is
        // 168 bytes, and thousands of files are followed at once).
        self.claude.chains.reserve_exact(1);
        self.claude.chains.push((key, chain));
        self.claude.chains.len() - 1
    }

    fn event(&self, chain: usize, kind: EventKind, origin: &Origin<'_>) -> Event {
        let (_, state) = &self.claude.chains[chain];
        let mut event = Event::new(kind, origin.line);
        event.session = origin
            .session
            .map(str::to_owned)
            .or_else(|| state.session.clone());
        event.agent = origin.agent.map(str::to_owned);
        event.sidechain = origin.sidechain;
        event.ts = origin.ts.map(str::to_owned);
        event.context_used = state.context_used;
        event.context_limit = context::limit_of(&self.config, state);
        event.status = state.status;
        event.raw = origin.raw.clone();
        event
    }

    /// Every event goes out here: a deferred `success` goes first, since this event comes
    /// from a later record.
    fn emit(&mut self, event: Event, out: &mut Vec<Event>) {
        if let Some(success) = self.claude.deferred_success.take() {
            push_event(out, *success);
        }
        push_event(out, event);
    }

    fn session_start(&mut self, chain: usize, origin: &Origin<'_>, out: &mut Vec<Event>) {
        let Some(session) = origin.session else {
            return;
        };
        let (key, state) = &mut self.claude.chains[chain];
        if (key.sidechain && key.agent.is_none()) || state.session.as_deref() == Some(session) {
            return;
        }
        state.session = Some(session.to_owned());
        let event = self.event(chain, EventKind::SessionStart, origin);
        self.emit(event, out);
    }
}

/// Every event goes into `out` here: a turn's end (`success`) with the `status` it leaves
/// right after it ([`Event::status_after`]).
fn push_event(out: &mut Vec<Event>, event: Event) {
    let status = (event.kind == EventKind::Success).then(|| event.status_after());
    out.push(event);
    out.extend(status);
}

impl Default for Normalizer {
    fn default() -> Normalizer {
        Normalizer::new(NormalizerConfig::default())
    }
}

#[cfg(test)]
mod size {
    /// A watcher keeps one normalizer per followed file, thousands at once (issue 28's 5,000
    /// sessions): what every file holds stays small, and what few hold is boxed.
    #[test]
    fn a_normalizer_holds_no_event_inline() {
        let size = std::mem::size_of::<super::Normalizer>();
        assert!(
            size < std::mem::size_of::<familiar_model::Event>(),
            "{size} bytes"
        );
    }
}
