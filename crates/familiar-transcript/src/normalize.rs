//! The normalizer: one record in, zero or more [`Event`]s out, with the session state (context,
//! status) and [`Metrics`] kept up to date. Pure: no files, no threads, no clock; the tailer and
//! the `familiar events` command feed it lines from [`crate::LineSplitter`].

use std::borrow::Cow;
use std::sync::Arc;

use familiar_model::{ErrorKind, Event, EventKind, Status};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::metrics::Metrics;
use crate::record::{self, Block, Content, Record, TextOr};
use crate::tools::{self, ToolInput};
use crate::{Diagnostic, DiagnosticKind};

/// Context window of most models.
pub const DEFAULT_CONTEXT_LIMIT: u64 = 200_000;
/// Context window of `[1m]` models.
pub const LARGE_CONTEXT_LIMIT: u64 = 1_000_000;
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
    /// Keep each record's JSON line on its events (`Event::raw`, scripts' `ev.raw`).
    pub keep_raw: bool,
}

impl Default for NormalizerConfig {
    fn default() -> NormalizerConfig {
        NormalizerConfig {
            max_line_bytes: crate::DEFAULT_MAX_LINE_BYTES,
            context_limit: None,
            keep_raw: false,
        }
    }
}

/// Which conversation chain a record belongs to: the main agent, a subagent transcript
/// (`agentId`), or 1.0.x sidechain records inline in the main file (no `agentId`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct ChainKey {
    agent: Option<String>,
    sidechain: bool,
}

impl ChainKey {
    fn is_main(&self) -> bool {
        self.agent.is_none() && !self.sidechain
    }
}

#[derive(Debug, Clone)]
struct PendingTool {
    id: String,
    name: String,
    target: Option<String>,
    /// `(agent_type, description)` of a Task/Agent call.
    subagent: Option<(Option<String>, Option<String>)>,
}

#[derive(Debug, Clone, Default)]
struct Chain {
    session: Option<String>,
    context_used: Option<u64>,
    large_context: bool,
    status: Status,
    pending: Vec<PendingTool>,
    /// The current turn ended (well or badly): no further `success` until the next prompt.
    turn_over: bool,
}

impl Chain {
    fn awaiting_approval(&self) -> bool {
        self.pending.iter().any(|tool| tool.subagent.is_none())
    }

    fn settle_status(&mut self) {
        self.status = if self.awaiting_approval() {
            Status::WaitingForApproval
        } else {
            Status::Working
        };
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

/// Turns records into events. One per input stream (file): state carries across lines.
#[derive(Debug, Clone)]
pub struct Normalizer {
    config: NormalizerConfig,
    chains: Vec<(ChainKey, Chain)>,
    metrics: Metrics,
}

impl Normalizer {
    pub fn new(config: NormalizerConfig) -> Normalizer {
        Normalizer {
            config,
            chains: Vec::new(),
            metrics: Metrics::default(),
        }
    }

    pub fn config(&self) -> &NormalizerConfig {
        &self.config
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Context of the main chain (or the only chain, for a subagent transcript).
    pub fn context_used(&self) -> Option<u64> {
        self.primary_chain()
            .and_then(|(_, chain)| chain.context_used)
    }

    pub fn context_limit(&self) -> u64 {
        self.primary_chain()
            .map(|(_, chain)| self.limit_of(chain))
            .unwrap_or_else(|| self.config.context_limit.unwrap_or(DEFAULT_CONTEXT_LIMIT))
    }

    /// Session id of the main chain (or the only chain).
    pub fn session(&self) -> Option<&str> {
        self.primary_chain()
            .and_then(|(_, chain)| chain.session.as_deref())
    }

    pub fn status(&self) -> Status {
        self.primary_chain()
            .map(|(_, chain)| chain.status)
            .unwrap_or_default()
    }

    /// Tool uses of the main chain still waiting for their result (subagents included).
    pub fn open_tool_uses(&self) -> Vec<(String, String)> {
        self.primary_chain()
            .map(|(_, chain)| {
                chain
                    .pending
                    .iter()
                    .map(|tool| (tool.id.clone(), tool.name.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn primary_chain(&self) -> Option<&(ChainKey, Chain)> {
        self.chains
            .iter()
            .find(|(key, _)| key.is_main())
            .or_else(|| self.chains.iter().find(|(key, _)| key.agent.is_some()))
    }

    fn limit_of(&self, chain: &Chain) -> u64 {
        self.config.context_limit.unwrap_or(if chain.large_context {
            LARGE_CONTEXT_LIMIT
        } else {
            DEFAULT_CONTEXT_LIMIT
        })
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
            Ok(parsed) => {
                self.apply(parsed, line_no, out);
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

    /// Apply a line parsed by [`parse_line`] (possibly on another thread) to the session state.
    pub fn apply(&mut self, parsed: ParsedLine<'_>, line_no: u64, out: &mut Vec<Event>) {
        for (record, json) in parsed.records {
            let raw = self.config.keep_raw.then(|| Arc::<str>::from(json));
            self.push_record(&record, line_no, raw, out);
        }
    }

    fn push_record(
        &mut self,
        record: &Record<'_>,
        line: u64,
        raw: Option<Arc<str>>,
        out: &mut Vec<Event>,
    ) {
        let kind = record.kind.as_deref().unwrap_or("");
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
        let origin = Origin {
            line,
            ts: record.timestamp.as_deref(),
            session: record.session(),
            agent: record.agent_id.as_deref(),
            sidechain: record.is_sidechain.unwrap_or(false),
            raw,
        };
        let chain = self.chain_index(origin.agent, origin.sidechain);
        if kind == "system"
            && record.subtype.as_deref() == Some("init")
            && let Some(model) = record.model.as_deref()
        {
            // Before `session_start`, so that event already carries the right window.
            self.chains[chain].1.large_context |= model.ends_with("[1m]");
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
                    self.chains[chain].1.status = Status::Working;
                    self.tool_use(chain, name, id, record.input, &origin, out);
                }
            }
            "tool_result" => {
                if let Some(id) = record.tool_use_id.as_deref() {
                    self.tool_result(chain, id, record.content, record.is_error, &origin, out);
                }
            }
            _ => {}
        }
        for event in &out[first..] {
            self.metrics.count_event(event.kind);
            if let Some(error) = event.error {
                *self.metrics.errors.entry(error).or_default() += 1;
            }
        }
    }

    fn chain_index(&mut self, agent: Option<&str>, sidechain: bool) -> usize {
        if let Some(index) = self
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
        if let Some((_, main)) = self.chains.iter().find(|(key, _)| key.is_main()) {
            chain.large_context = main.large_context;
        }
        self.chains.push((key, chain));
        self.chains.len() - 1
    }

    fn event(&self, chain: usize, kind: EventKind, origin: &Origin<'_>) -> Event {
        let (_, state) = &self.chains[chain];
        let mut event = Event::new(kind, origin.line);
        event.session = origin
            .session
            .map(str::to_owned)
            .or_else(|| state.session.clone());
        event.agent = origin.agent.map(str::to_owned);
        event.sidechain = origin.sidechain;
        event.ts = origin.ts.map(str::to_owned);
        event.context_used = state.context_used;
        event.context_limit = self.limit_of(state);
        event.status = state.status;
        event.raw = origin.raw.clone();
        event
    }

    fn emit(&self, event: Event, out: &mut Vec<Event>) {
        out.push(event);
    }

    fn session_start(&mut self, chain: usize, origin: &Origin<'_>, out: &mut Vec<Event>) {
        let Some(session) = origin.session else {
            return;
        };
        let (key, state) = &mut self.chains[chain];
        if (key.sidechain && key.agent.is_none()) || state.session.as_deref() == Some(session) {
            return;
        }
        state.session = Some(session.to_owned());
        let event = self.event(chain, EventKind::SessionStart, origin);
        self.emit(event, out);
    }

    fn user(
        &mut self,
        chain: usize,
        record: &Record<'_>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        match &record.message {
            Some(TextOr::Value(message)) => match &message.content {
                Some(TextOr::Text(text)) => self.user_text(chain, record, text, origin, out),
                Some(TextOr::Value(blocks)) => {
                    let mut texts: Vec<&str> = Vec::new();
                    for block in blocks {
                        match block.kind.as_deref() {
                            Some("tool_result") => {
                                if let Some(id) = block.tool_use_id.as_deref() {
                                    self.tool_result(
                                        chain,
                                        id,
                                        block.content,
                                        block.is_error,
                                        origin,
                                        out,
                                    );
                                }
                            }
                            Some("text") => texts.extend(block.text.as_deref()),
                            _ => {}
                        }
                    }
                    if !texts.is_empty() {
                        let text = texts.join("\n");
                        self.user_text(chain, record, &text, origin, out);
                    }
                }
                None => {}
            },
            Some(TextOr::Text(text)) => self.user_text(chain, record, text, origin, out),
            None => {}
        }
    }

    fn user_text(
        &mut self,
        chain: usize,
        record: &Record<'_>,
        text: &str,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let trimmed = text.trim_start();
        if trimmed.starts_with("[Request interrupted by user") {
            let state = &mut self.chains[chain].1;
            state.pending.retain(|tool| tool.subagent.is_some());
            state.turn_over = true;
            state.status = Status::WaitingForInput;
            let mut event = self.event(chain, EventKind::Error, origin);
            event.error = Some(ErrorKind::Interrupted);
            event.text = Some(trimmed.trim_end().to_owned());
            self.emit(event, out);
            return;
        }
        let key = &self.chains[chain].0;
        if !key.is_main()
            || record.is_meta == Some(true)
            || record.is_compact_summary == Some(true)
            || is_injected_text(trimmed)
        {
            return;
        }
        let command = slash_command(trimmed);
        self.prompt(chain, trimmed, command, true, origin, out);
    }

    /// A prompt starts a turn. `starts_work` is false for local commands (`/model`), which
    /// the CLI answers itself.
    fn prompt(
        &mut self,
        chain: usize,
        text: &str,
        command: Option<SlashCommand<'_>>,
        starts_work: bool,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        self.metrics.prompts += 1;
        let state = &mut self.chains[chain].1;
        state.turn_over = false;
        state.pending.retain(|tool| tool.subagent.is_some());
        if starts_work {
            state.status = Status::Working;
        }
        let mut event = self.event(chain, EventKind::Prompt, origin);
        match command {
            Some(command) => {
                event.text = Some(match command.args {
                    Some(args) => format!("{} {args}", command.name),
                    None => command.name.clone(),
                });
                event.think = Some(think_level(command.args.unwrap_or("")));
                event.command = Some(command.name);
            }
            None => {
                event.text = Some(text.trim_end().to_owned());
                event.think = Some(think_level(text));
            }
        }
        self.emit(event, out);
    }

    fn assistant(
        &mut self,
        chain: usize,
        record: &Record<'_>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let message = match &record.message {
            Some(TextOr::Value(message)) => message,
            Some(TextOr::Text(text)) => {
                self.chains[chain].1.status = Status::Working;
                let mut event = self.event(chain, EventKind::Text, origin);
                event.text = Some(text.to_string());
                self.emit(event, out);
                return;
            }
            None => return,
        };
        let model = message.model.as_deref().unwrap_or("");
        let synthetic = model == "<synthetic>";
        if record.is_api_error_message == Some(true) {
            let state = &mut self.chains[chain].1;
            state.turn_over = true;
            state.status = Status::WaitingForInput;
            let mut event = self.event(chain, EventKind::Error, origin);
            event.error = Some(ErrorKind::Api);
            event.error_code = record.error.and_then(record::raw_str);
            event.text = first_text(message.content.as_ref()).map(|text| cap_text(text.trim()));
            self.emit(event, out);
            return;
        }
        let large_model = model.ends_with("[1m]");
        if !synthetic {
            let state = &mut self.chains[chain].1;
            state.large_context |= large_model;
            if let Some(usage) = &message.usage {
                let used = usage.context_tokens();
                state.context_used = Some(used);
                state.large_context |= used > DEFAULT_CONTEXT_LIMIT;
                self.metrics.see_usage(message.id.as_deref(), model, usage);
            }
        }
        let model_name = (!model.is_empty()).then(|| model.to_owned());
        match &message.content {
            Some(TextOr::Value(blocks)) => {
                for block in blocks {
                    self.assistant_block(chain, block, &model_name, origin, out);
                }
            }
            Some(TextOr::Text(text)) if !text.trim().is_empty() => {
                self.chains[chain].1.status = Status::Working;
                let mut event = self.event(chain, EventKind::Text, origin);
                event.text = Some(text.to_string());
                event.model = model_name.clone();
                self.emit(event, out);
            }
            _ => {}
        }
        if message.stop_reason.as_deref() == Some("end_turn") {
            self.success(chain, None, origin, out);
        }
    }

    fn assistant_block(
        &mut self,
        chain: usize,
        block: &Block<'_>,
        model: &Option<String>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        match block.kind.as_deref() {
            Some("thinking") => {
                self.chains[chain].1.status = Status::Working;
                let mut event = self.event(chain, EventKind::Thinking, origin);
                event.text = Some(block.thinking.as_deref().unwrap_or("").to_owned());
                event.model = model.clone();
                self.emit(event, out);
            }
            Some("text") => {
                let text = block.text.as_deref().unwrap_or("");
                if text.trim().is_empty() {
                    return;
                }
                self.chains[chain].1.status = Status::Working;
                let mut event = self.event(chain, EventKind::Text, origin);
                event.text = Some(text.to_owned());
                event.model = model.clone();
                self.emit(event, out);
            }
            Some("tool_use") => {
                if let Some(name) = block.name.as_deref() {
                    self.chains[chain].1.status = Status::Working;
                    self.tool_use(chain, name, block.id.as_deref(), block.input, origin, out);
                    if let Some(event) = out.last_mut() {
                        event.model = model.clone();
                    }
                }
            }
            _ => {}
        }
    }

    fn tool_use(
        &mut self,
        chain: usize,
        name: &str,
        id: Option<&str>,
        input: Option<&RawValue>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        if let Some(count) = self.metrics.tool_calls.get_mut(name) {
            *count += 1;
        } else {
            self.metrics.tool_calls.insert(name.to_owned(), 1);
        }
        let kind = tools::classify(name);
        let input = ToolInput::parse(input);
        if tools::modifies_files(name)
            && let Some(path) = input.modified_path()
            && !self.metrics.files_modified.contains(path)
        {
            self.metrics.files_modified.insert(path.to_owned());
        }
        let subagent = (kind == EventKind::SubagentStart).then(|| {
            (
                input.subagent_type.as_deref().map(str::to_owned),
                input.description.as_deref().map(str::to_owned),
            )
        });
        let target = match &subagent {
            Some((_, description)) => description.clone(),
            None => input.target().map(str::to_owned),
        };
        if let Some(id) = id {
            let state = &mut self.chains[chain].1;
            if state.pending.len() == MAX_PENDING_TOOLS {
                state.pending.remove(0);
            }
            state.pending.push(PendingTool {
                id: id.to_owned(),
                name: name.to_owned(),
                target: target.clone(),
                subagent: subagent.clone(),
            });
            state.settle_status();
        }
        let mut event = self.event(chain, kind, origin);
        event.tool = Some(name.to_owned());
        event.target = target;
        event.tool_use_id = id.map(str::to_owned);
        if let Some((agent_type, description)) = subagent {
            event.agent_type = agent_type;
            event.description = description;
        }
        self.emit(event, out);
    }

    fn tool_result(
        &mut self,
        chain: usize,
        id: &str,
        content: Option<&RawValue>,
        is_error: Option<bool>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let state = &mut self.chains[chain].1;
        let tool = state
            .pending
            .iter()
            .position(|tool| tool.id == id)
            .map(|index| state.pending.remove(index));
        if !state.turn_over {
            state.settle_status();
        }
        if let Some(PendingTool {
            name,
            target,
            subagent: Some((agent_type, description)),
            ..
        }) = &tool
        {
            let mut event = self.event(chain, EventKind::SubagentEnd, origin);
            event.tool = Some(name.clone());
            event.target = target.clone();
            event.tool_use_id = Some(id.to_owned());
            event.agent_type = agent_type.clone();
            event.description = description.clone();
            self.emit(event, out);
        }
        if is_error != Some(true) {
            return;
        }
        let text = content.and_then(record::raw_text).unwrap_or_default();
        let trimmed = text.trim();
        let error = if trimmed.starts_with("The user doesn't want to proceed with this tool use")
            || trimmed.starts_with("The user doesn't want to take this action")
        {
            ErrorKind::Rejected
        } else if trimmed.starts_with("[Request interrupted by user") {
            ErrorKind::Interrupted
        } else {
            ErrorKind::Tool
        };
        if error != ErrorKind::Tool {
            self.chains[chain].1.status = Status::WaitingForInput;
        }
        let mut event = self.event(chain, EventKind::Error, origin);
        event.error = Some(error);
        event.text = Some(cap_text(trimmed));
        event.tool_use_id = Some(id.to_owned());
        if let Some(tool) = tool {
            event.tool = Some(tool.name);
            event.target = tool.target;
        }
        self.emit(event, out);
    }

    fn system(
        &mut self,
        chain: usize,
        record: &Record<'_>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        match record.subtype.as_deref() {
            Some("compact_boundary") => {
                let meta = record.compact_metadata.as_ref();
                let post = meta.and_then(|meta| meta.post_tokens);
                self.metrics.compactions += 1;
                self.chains[chain].1.context_used = post;
                let mut event = self.event(chain, EventKind::CompactBoundary, origin);
                event.trigger = meta.and_then(|meta| meta.trigger.as_deref().map(str::to_owned));
                event.pre_tokens = meta.and_then(|meta| meta.pre_tokens);
                event.post_tokens = post;
                self.emit(event, out);
            }
            Some("turn_duration") => {
                let duration = record.duration_ms_camel.map(|ms| ms.max(0.0) as u64);
                self.success(chain, duration, origin, out);
            }
            Some("stop_hook_summary") => self.success(chain, None, origin, out),
            Some("api_error") => self.system_api_error(chain, record, origin, out),
            Some("local_command") => {
                let Some(content) = record.content.and_then(record::raw_str) else {
                    return;
                };
                if let Some(command) = slash_command(content.trim_start())
                    && self.chains[chain].0.is_main()
                {
                    self.prompt(chain, &content, Some(command), false, origin, out);
                }
            }
            _ => {}
        }
    }

    fn system_api_error(
        &mut self,
        chain: usize,
        record: &Record<'_>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Cause<'a> {
            #[serde(borrow)]
            code: Option<Cow<'a, str>>,
            #[serde(borrow)]
            message: Option<Cow<'a, str>>,
        }
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct ApiError<'a> {
            #[serde(borrow)]
            message: Option<Cow<'a, str>>,
            #[serde(borrow)]
            cause: Option<Cause<'a>>,
            status: Option<u64>,
        }
        let error: ApiError = record
            .error
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or_default();
        let cause: Cause = record
            .cause
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .or(error.cause)
            .unwrap_or_default();
        let code = cause.code.as_deref().map(str::to_owned);
        let mut text = error
            .message
            .or(cause.message)
            .map(|message| message.into_owned())
            .or_else(|| code.clone())
            .unwrap_or_else(|| "API error".to_owned());
        if let Some(status) = error.status {
            text = format!("{status} {text}");
        }
        let exhausted = matches!(
            (record.retry_attempt, record.max_retries),
            (Some(attempt), Some(max)) if attempt >= max
        );
        if exhausted {
            let state = &mut self.chains[chain].1;
            state.turn_over = true;
            state.status = Status::WaitingForInput;
        }
        let mut event = self.event(chain, EventKind::Error, origin);
        event.error = Some(ErrorKind::Api);
        event.cause = code;
        event.text = Some(cap_text(&text));
        event.retry_in_ms = record.retry_in_ms;
        event.retry_attempt = record.retry_attempt;
        event.max_retries = record.max_retries;
        self.emit(event, out);
    }

    fn result(
        &mut self,
        chain: usize,
        record: &Record<'_>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let duration = record.duration_ms.map(|ms| ms.max(0.0) as u64);
        let subtype = record.subtype.as_deref().unwrap_or("");
        if subtype == "success" && record.is_error != Some(true) {
            self.success(chain, duration, origin, out);
            return;
        }
        let state = &mut self.chains[chain].1;
        state.turn_over = true;
        state.status = Status::WaitingForInput;
        let text = record
            .result
            .and_then(record::raw_str)
            .or_else(|| record.errors.map(|raw| raw.get().to_owned()))
            .unwrap_or_else(|| subtype.to_owned());
        let mut event = self.event(chain, EventKind::Error, origin);
        event.error = Some(ErrorKind::Api);
        event.error_code = (!subtype.is_empty()).then(|| subtype.to_owned());
        event.text = Some(cap_text(&text));
        event.duration_ms = duration;
        self.emit(event, out);
    }

    /// A turn finished: at most one `success` per turn, on the main chain, and none after an
    /// API error or an interrupt ended it.
    fn success(
        &mut self,
        chain: usize,
        duration_ms: Option<u64>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let (key, state) = &mut self.chains[chain];
        if !key.is_main() || state.turn_over {
            return;
        }
        state.turn_over = true;
        state.status = Status::WaitingForInput;
        let mut event = self.event(chain, EventKind::Success, origin);
        event.duration_ms = duration_ms;
        self.emit(event, out);
    }
}

/// A line parsed into records but not yet applied. Parsing needs no session state, so bulk
/// readers parse on several threads and apply in order.
#[derive(Debug)]
pub struct ParsedLine<'a> {
    /// Each record with its own JSON text (a JSON-array line holds several).
    records: Vec<(Record<'a>, &'a str)>,
}

/// Parse one complete line: UTF-8 check, then the typed record envelope.
pub fn parse_line(line: &[u8], max_line_bytes: usize) -> Result<ParsedLine<'_>, DiagnosticKind> {
    if line.len() > max_line_bytes {
        return Err(DiagnosticKind::TooLong {
            len: line.len() as u64,
            cap: max_line_bytes as u64,
        });
    }
    let text = simdutf8::basic::from_utf8(line).map_err(|_| {
        let offset = std::str::from_utf8(line)
            .err()
            .map(|err| err.valid_up_to())
            .unwrap_or(0);
        DiagnosticKind::InvalidUtf8 { offset }
    })?;
    let trimmed = text.trim_start();
    let records = match trimmed.as_bytes().first() {
        None => Vec::new(),
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(trimmed)
                .map_err(|err| DiagnosticKind::Malformed(err.to_string()))?;
            items
                .into_iter()
                .map(|item| parse_record(item.get()).map(|record| (record, item.get())))
                .collect::<Result<_, _>>()?
        }
        Some(b'{') => vec![(parse_record(text)?, text)],
        Some(_) => return Err(DiagnosticKind::NotAnObject),
    };
    Ok(ParsedLine { records })
}

fn parse_record(json: &str) -> Result<Record<'_>, DiagnosticKind> {
    serde_json::from_str(json).map_err(|err| {
        if err.is_data() && !json.trim_start().starts_with('{') {
            DiagnosticKind::NotAnObject
        } else {
            DiagnosticKind::Malformed(err.to_string())
        }
    })
}

impl Default for Normalizer {
    fn default() -> Normalizer {
        Normalizer::new(NormalizerConfig::default())
    }
}

/// Text the CLI puts in user records that the user did not type.
fn is_injected_text(text: &str) -> bool {
    [
        "<local-command-stdout>",
        "<local-command-stderr>",
        "<local-command-caveat>",
        "<task-notification>",
        "<system-reminder>",
        "Caveat: The messages below were generated by the user while running local commands",
    ]
    .iter()
    .any(|prefix| text.starts_with(prefix))
}

#[derive(Debug, Clone)]
struct SlashCommand<'a> {
    /// Always with its leading `/`.
    name: String,
    args: Option<&'a str>,
}

/// `<command-name>/clear</command-name> ... <command-args>x</command-args>`.
fn slash_command(text: &str) -> Option<SlashCommand<'_>> {
    if !text.starts_with("<command-") {
        return None;
    }
    let tag = |name: &str| -> Option<&str> {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        let start = text.find(&open)? + open.len();
        let end = text[start..].find(&close)? + start;
        Some(text[start..end].trim())
    };
    let name = tag("command-name").filter(|name| !name.is_empty())?;
    let args = tag("command-args").filter(|args| !args.is_empty());
    let name = if name.starts_with('/') {
        name.to_owned()
    } else {
        format!("/{name}")
    };
    Some(SlashCommand { name, args })
}

/// 0 none, 1 "think", 2 "think hard" / "megathink", 3 "think harder" / "ultrathink".
pub fn think_level(text: &str) -> u8 {
    let lower = text.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect();
    let followed_by = |index: usize, next: &str| words.get(index + 1) == Some(&next);
    let mut level = 0;
    for (index, word) in words.iter().enumerate() {
        let this = match *word {
            "ultrathink" => 3,
            "megathink" => 2,
            "think" if followed_by(index, "harder") => 3,
            "think" if followed_by(index, "hard") => 2,
            "think" => 1,
            _ => 0,
        };
        level = level.max(this);
    }
    level
}

fn first_text<'a>(content: Option<&'a Content<'_>>) -> Option<&'a str> {
    match content? {
        TextOr::Text(text) => Some(text),
        TextOr::Value(blocks) => blocks
            .iter()
            .find(|block| block.kind.as_deref() == Some("text"))
            .and_then(|block| block.text.as_deref()),
    }
}

fn cap_text(text: &str) -> String {
    if text.len() <= MAX_ERROR_TEXT {
        return text.to_owned();
    }
    let mut end = MAX_ERROR_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
