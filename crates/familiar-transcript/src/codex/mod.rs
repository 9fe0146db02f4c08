//! OpenAI Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) in the same
//! event vocabulary as Claude Code transcripts. [`crate::Normalizer`] hands every record of the
//! Codex shape (`{timestamp, type, payload}` with a Codex `type`, see [`is_record_type`]) to a
//! [`Rollout`], which keeps the session state of that file and emits events tagged
//! `agent_kind: codex`; everything downstream (scripts, the game, `stats`) is unchanged.
//!
//! - this file: the [`Rollout`] state machine, reading both generations of records;
//! - `shapes`: typed views of the payloads;
//! - `errors`: a failed turn's `error_code` and readable message;
//! - `known`: the record, item and event types Codex writes that Familiar knows;
//! - `commands`: shell commands (and the `reading` rule) and the files of a patch;
//! - `usage`: tokens per request for `familiar stats` (read by [`crate::usage`]).
//!
//! What the agent says comes from `event_msg` records, what it does from `response_item`
//! records: the compaction summary comes back as an assistant `message` item but never as an
//! agent message event, so it never shows as a reply. The generations: Codex 0.169 writes
//! `item_completed` events (UserMessage, AgentMessage, Reasoning, CommandExecution, FileChange);
//! older versions wrote `user_message`, `agent_message`, `agent_reasoning`, `exec_command_end`
//! and `patch_apply_end`, and offered a `shell` tool.

pub mod commands;
mod errors;
mod known;
mod shapes;
pub mod usage;

use std::sync::Arc;

use familiar_model::{AgentKind, ErrorKind, Event, EventKind, Status};
use serde_json::Value;

use crate::metrics::Metrics;
use crate::normalize::cap_text;
use shapes::{Item, Payload, raw_str};

/// Tool calls remembered (for their errors) before the oldest is forgotten.
const MAX_CALLS: usize = 256;

/// Record types Codex writes; a record of one of these types with a `payload` is Codex's.
pub fn is_record_type(kind: &str) -> bool {
    matches!(
        kind,
        "session_meta"
            | "turn_context"
            | "response_item"
            | "event_msg"
            | "compacted"
            | "world_state"
            | "token_usage_record"
    )
}

/// Where the record being read came from.
pub(crate) struct Meta<'r> {
    pub line: u64,
    pub ts: Option<&'r str>,
    pub raw: Option<Arc<str>>,
}

#[derive(Debug, Clone)]
struct Call {
    id: String,
    tool: String,
    target: Option<String>,
    /// An error was already reported for it (old and new records may both say it failed).
    failed: bool,
}

/// A `compacted` record waiting for the `token_count` that says the context after it.
#[derive(Debug, Clone)]
struct Compaction {
    line: u64,
    ts: Option<String>,
    raw: Option<Arc<str>>,
    pre_tokens: Option<u64>,
}

/// The session state of one rollout file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rollout {
    /// The main agent: what [`crate::agent::AgentState`] answers from.
    main: crate::agent::MainAgent,
    /// The turn ended: no second `success` or `error` for it.
    turn_over: bool,
    calls: Vec<Call>,
    compaction: Option<Compaction>,
    /// The context before an assistant message no agent message announced: the summary
    /// request of a compaction, whose own usage is not the conversation's.
    before_summary: Option<u64>,
    /// An agent message event came and its assistant item has not yet.
    announced: bool,
    /// A `compacted` record came and no agent message since.
    compacting: bool,
    /// The last prompt, text or thinking emitted: a transition version writing both the old
    /// and the new event for one message shows it once.
    last_said: Option<Said>,
}

/// What was said, as far as telling a repeat needs: its kind, length and hash, not the text
/// (a pasted prompt of 50 MB would be held until the next message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Said {
    kind: EventKind,
    len: usize,
    hash: u64,
}

impl Said {
    fn of(kind: EventKind, text: &str) -> Said {
        use std::hash::{Hash as _, Hasher as _};
        // Fixed keys: the same text hashes the same all through a run.
        let mut hasher = std::hash::DefaultHasher::new();
        text.hash(&mut hasher);
        Said {
            kind,
            len: text.len(),
            hash: hasher.finish(),
        }
    }
}

impl crate::agent::Reader for Rollout {
    const KIND: AgentKind = AgentKind::Codex;

    fn main(&self) -> &crate::agent::MainAgent {
        &self.main
    }
}

impl Rollout {
    /// Read one record: `kind` is its `type`, `payload` its payload's JSON.
    pub fn push(
        &mut self,
        kind: &str,
        payload: &str,
        meta: &Meta<'_>,
        explicit_limit: Option<u64>,
        metrics: &mut Metrics,
        out: &mut Vec<Event>,
    ) {
        // A payload of an unknown shape is counted as a record and produces nothing. Records
        // read for their type alone keep their payload undecoded: a world state and a
        // compaction's summary are a third of a rollout's bytes.
        let payload = if matches!(kind, "world_state" | "compacted")
            && payload.trim_start().starts_with('{')
        {
            Payload::default()
        } else {
            let Ok(payload) = serde_json::from_str::<Payload<'_>>(payload) else {
                return;
            };
            payload
        };
        if let Some(what) = known::unknown(kind, &payload) {
            metrics.count_unknown(format!("codex/{what}"));
        }
        let mut cx = Cx {
            meta,
            explicit_limit,
            metrics,
            out,
        };
        match kind {
            "session_meta" => {
                if let Some(version) = payload.cli_version.as_deref() {
                    cx.metrics.see_version(version);
                }
                if let Some(id) = payload.id.as_deref()
                    && self.main.session.as_deref() != Some(id)
                {
                    self.main.session = Some(id.to_owned());
                    self.emit(EventKind::SessionStart, &mut cx);
                }
            }
            "turn_context" => {
                if let Some(model) = payload.model {
                    self.main.model = Some(model.into_owned());
                }
            }
            "compacted" => {
                self.flush_compaction(None, &mut cx);
                self.compacting = true;
                cx.metrics.compactions += 1;
                self.compaction = Some(Compaction {
                    line: meta.line,
                    ts: meta.ts.map(str::to_owned),
                    raw: meta.raw.clone(),
                    pre_tokens: self.before_summary.take().or(self.main.context_used),
                });
                self.main.context_used = None;
            }
            "response_item" => self.response_item(&payload, &mut cx),
            "event_msg" => self.event_msg(&payload, &mut cx),
            "token_usage_record" => {
                if let Some(usage) = payload.usage {
                    // The request's usage, before the `token_count` that repeats it.
                    self.main.context_used = Some(usage.total_tokens);
                    cx.metrics
                        .see_model(self.main.model.as_deref().unwrap_or(""));
                }
            }
            _ => {}
        }
    }

    fn response_item(&mut self, payload: &Payload<'_>, cx: &mut Cx<'_, '_>) {
        let call_id = payload.call_id.as_deref();
        match payload.kind.as_deref() {
            Some("function_call") => {
                let arguments: Value = payload
                    .arguments
                    .as_deref()
                    .and_then(|text| serde_json::from_str(text).ok())
                    .unwrap_or(Value::Null);
                let patch = arguments["input"].as_str().map(str::to_owned);
                self.tool_call(payload.name.as_deref(), call_id, &arguments, patch, cx);
            }
            Some("custom_tool_call") => {
                let input = payload.input.and_then(raw_str).map(|s| s.into_owned());
                self.tool_call(payload.name.as_deref(), call_id, &Value::Null, input, cx);
            }
            // Codex 0.169 writes an agent message's event before its item; an item with no
            // event before it may be a compaction summary (taking the flag is the point).
            Some("message")
                if payload.role.as_deref() == Some("assistant")
                    && !std::mem::take(&mut self.announced) =>
            {
                self.before_summary = self.before_summary.or(self.main.context_used);
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                self.main.status = Status::Working;
                let output = payload.output.and_then(raw_str);
                let (Some(id), Some(output)) = (call_id, output.as_deref()) else {
                    return;
                };
                // A tool the CLI does not have: the model hears so, nothing else is written.
                if output.starts_with("unsupported call: ") {
                    self.tool_error(id, output, cx);
                } else if let Some((code, text)) = shell_output(output)
                    && code != 0
                {
                    // Older versions: `{"output": …, "metadata": {"exit_code": …}}`.
                    let text = failure_text(Some(&text), code);
                    self.tool_error(id, &text, cx);
                }
            }
            _ => {}
        }
    }

    fn event_msg(&mut self, payload: &Payload<'_>, cx: &mut Cx<'_, '_>) {
        let message = || payload.message.and_then(raw_str).map(|s| s.into_owned());
        match payload.kind.as_deref() {
            Some("task_started") => {
                self.turn_over = false;
                self.main.status = Status::Working;
                // A turn that fails before its first request still knows its window.
                if let Some(window) = payload.model_context_window {
                    self.main.window = Some(window);
                }
            }
            Some("user_message") => {
                if let Some(text) = message() {
                    self.prompt(text, cx);
                }
            }
            Some("agent_message") => {
                // Older versions announce a compaction as an agent message: not a reply.
                let notice = |text: &String| self.compacting && text == "Compact task completed";
                if let Some(text) = message().filter(|text| !notice(text)) {
                    self.said(EventKind::Text, text, cx);
                }
                self.compacting = false;
            }
            Some("agent_reasoning") => {
                if let Some(text) = payload.text.as_deref() {
                    self.said(EventKind::Thinking, text.to_owned(), cx);
                }
            }
            Some("item_completed") => {
                if let Some(item) = &payload.item {
                    self.item_completed(item, cx);
                }
            }
            Some("exec_command_end") => {
                if let (Some(id), Some(code)) = (payload.call_id.as_deref(), payload.exit_code)
                    && code != 0
                {
                    let output = payload.aggregated_output.and_then(raw_str);
                    let text = failure_text(output.as_deref(), code);
                    self.tool_error(id, &text, cx);
                }
            }
            Some("patch_apply_end") => {
                if let (Some(id), Some(false)) = (payload.call_id.as_deref(), payload.success) {
                    let stderr = payload.stderr.and_then(raw_str);
                    let text = stderr.as_deref().unwrap_or("patch failed");
                    self.tool_error(id, text, cx);
                }
            }
            Some("token_count") => {
                let Some(info) = &payload.info else {
                    return;
                };
                if let Some(window) = info.model_context_window {
                    self.main.window = Some(window);
                }
                if let Some(last) = info.last_token_usage {
                    // A request's usage: the model in use made it.
                    if last.total_tokens > 0 {
                        cx.metrics
                            .see_model(self.main.model.as_deref().unwrap_or(""));
                    }
                    self.main.context_used = Some(last.total_tokens);
                    // After a compaction Codex 0.169 writes its estimate of the new context
                    // (no request: zero input); older versions repeat the last request.
                    let estimate = (last.input_tokens == 0).then_some(last.total_tokens);
                    if self.compaction.is_some() && estimate.is_none() {
                        self.main.context_used = None;
                    }
                    self.flush_compaction(estimate, cx);
                }
            }
            Some("task_complete") => self.task_complete(payload, cx),
            _ => {}
        }
    }

    fn item_completed(&mut self, item: &Item<'_>, cx: &mut Cx<'_, '_>) {
        match item.kind.as_deref() {
            Some("UserMessage") => self.prompt(item.text(), cx),
            Some("AgentMessage") => self.said(EventKind::Text, item.text(), cx),
            Some("Reasoning") => self.said(EventKind::Thinking, item.summary_text.join("\n"), cx),
            Some("CommandExecution") => {
                if let (Some(id), Some(code)) = (item.id.as_deref(), item.exit_code)
                    && code != 0
                {
                    let output = item.aggregated_output.and_then(raw_str);
                    let text = failure_text(output.as_deref(), code);
                    self.tool_error(id, &text, cx);
                }
            }
            Some("FileChange") if item.status.as_deref() == Some("failed") => {
                if let Some(id) = item.id.as_deref() {
                    let stderr = item.stderr.and_then(raw_str);
                    let text = stderr.as_deref().unwrap_or("patch failed");
                    self.tool_error(id, text, cx);
                }
            }
            _ => {}
        }
    }

    fn prompt(&mut self, text: String, cx: &mut Cx<'_, '_>) {
        let said = Said::of(EventKind::Prompt, &text);
        if self.last_said == Some(said) {
            return;
        }
        cx.metrics.prompts += 1;
        self.before_summary = None;
        self.turn_over = false;
        self.main.status = Status::Working;
        let mut event = self.event(EventKind::Prompt, cx);
        // Trimmed in place: a big prompt's decoded text becomes the event's, not copied.
        event.text = Some(crate::scan::trimmed_end(text));
        self.last_said = Some(said);
        self.push_event(event, cx);
    }

    /// Agent text or thinking (blank text skipped, as for Claude Code).
    fn said(&mut self, kind: EventKind, text: String, cx: &mut Cx<'_, '_>) {
        let said = Said::of(kind, &text);
        if (kind == EventKind::Text && text.trim().is_empty()) || self.last_said == Some(said) {
            return;
        }
        self.main.status = Status::Working;
        let mut event = self.event(kind, cx);
        event.text = Some(text);
        event.model = self.main.model.clone();
        if kind == EventKind::Text {
            // Older versions write the item first: a message announced after its item is no
            // summary either.
            self.announced = true;
            self.before_summary = None;
        }
        self.last_said = Some(said);
        self.push_event(event, cx);
    }

    fn tool_call(
        &mut self,
        name: Option<&str>,
        call_id: Option<&str>,
        arguments: &Value,
        patch: Option<String>,
        cx: &mut Cx<'_, '_>,
    ) {
        let Some(name) = name else {
            return;
        };
        cx.metrics.count_call(name, None);
        self.before_summary = None;
        self.main.status = Status::Working;
        // One event per file a patch touches.
        let mut targets: Vec<(EventKind, Option<String>)> = match name {
            // Older versions ran patches through the shell tool: `["apply_patch", patch]`.
            "shell" if arguments["command"][0] == "apply_patch" => {
                let patch = arguments["command"][1].as_str().unwrap_or_default();
                patch_targets(patch, cx)
            }
            "exec_command" | "shell" | "shell_command" => {
                let command = commands::command_line(arguments);
                let kind = match &command {
                    Some(command) if commands::is_read_only(command) => EventKind::Reading,
                    _ => EventKind::Bash,
                };
                vec![(kind, command)]
            }
            "write_stdin" => vec![(EventKind::Bash, None)],
            "view_image" => vec![(
                EventKind::Reading,
                arguments["path"].as_str().map(Into::into),
            )],
            "apply_patch" => patch_targets(patch.as_deref().unwrap_or_default(), cx),
            _ => vec![(EventKind::Tool, None)],
        };
        if let Some(id) = call_id {
            if self.calls.len() == MAX_CALLS {
                self.calls.remove(0);
            }
            self.calls.push(Call {
                id: id.to_owned(),
                tool: name.to_owned(),
                target: targets.first().and_then(|(_, target)| target.clone()),
                failed: false,
            });
        }
        for (kind, target) in targets.drain(..) {
            let mut event = self.event(kind, cx);
            event.tool = Some(name.to_owned());
            event.target = target;
            event.tool_use_id = call_id.map(str::to_owned);
            event.model = self.main.model.clone();
            self.push_event(event, cx);
        }
    }

    /// A tool call failed (once per call, whichever record says it first).
    fn tool_error(&mut self, id: &str, text: &str, cx: &mut Cx<'_, '_>) {
        let call = self.calls.iter_mut().find(|call| call.id == id);
        let (tool, target) = match call {
            Some(call) if call.failed => return,
            Some(call) => {
                call.failed = true;
                (Some(call.tool.clone()), call.target.clone())
            }
            None => (None, None),
        };
        let mut event = self.event(EventKind::Error, cx);
        event.error = Some(ErrorKind::Tool);
        event.text = Some(cap_text(text.trim()));
        event.tool_use_id = Some(id.to_owned());
        event.tool = tool;
        event.target = target;
        self.push_event(event, cx);
    }

    fn task_complete(&mut self, payload: &Payload<'_>, cx: &mut Cx<'_, '_>) {
        if self.turn_over {
            return;
        }
        self.turn_over = true;
        self.main.status = Status::WaitingForInput;
        let mut event = match &payload.error {
            Some(error) => {
                let mut event = self.event(EventKind::Error, cx);
                event.error = Some(ErrorKind::Api);
                event.error_code = error.code();
                event.text = error.message.as_deref().map(cap_text);
                event.message = Some(error.readable());
                event
            }
            None => self.event(EventKind::Success, cx),
        };
        event.duration_ms = payload.duration_ms;
        self.push_event(event, cx);
    }

    /// Emit the pending `compact_boundary`, with the context after it when known.
    fn flush_compaction(&mut self, post_tokens: Option<u64>, cx: &mut Cx<'_, '_>) {
        let Some(compaction) = self.compaction.take() else {
            return;
        };
        let mut event = crate::agent::event(
            self,
            EventKind::CompactBoundary,
            compaction.line,
            cx.explicit_limit,
        );
        event.ts = compaction.ts;
        event.raw = compaction.raw;
        event.pre_tokens = compaction.pre_tokens;
        event.post_tokens = post_tokens;
        cx.out.push(event);
    }

    fn emit(&mut self, kind: EventKind, cx: &mut Cx<'_, '_>) {
        let event = self.event(kind, cx);
        self.push_event(event, cx);
    }

    /// Any other event first lets a pending compaction out, so events stay in file order.
    fn push_event(&mut self, event: Event, cx: &mut Cx<'_, '_>) {
        self.flush_compaction(None, cx);
        // A turn's end and the status it leaves, as Claude Code's (`Event::status_after`).
        let status = (event.kind == EventKind::Success).then(|| event.status_after());
        cx.out.push(event);
        cx.out.extend(status);
    }

    fn event(&self, kind: EventKind, cx: &Cx<'_, '_>) -> Event {
        let mut event = crate::agent::event(self, kind, cx.meta.line, cx.explicit_limit);
        event.ts = cx.meta.ts.map(str::to_owned);
        event.raw = cx.meta.raw.clone();
        event
    }
}

/// What one `push` works with.
struct Cx<'m, 'o> {
    meta: &'m Meta<'m>,
    explicit_limit: Option<u64>,
    metrics: &'o mut Metrics,
    out: &'o mut Vec<Event>,
}

/// One `writing` per file a patch touches (one without a target when none is named).
fn patch_targets(patch: &str, cx: &mut Cx<'_, '_>) -> Vec<(EventKind, Option<String>)> {
    let files = commands::patch_files(patch);
    cx.metrics.files_modified.extend(files.iter().cloned());
    if files.is_empty() {
        return vec![(EventKind::Writing, None)];
    }
    files
        .into_iter()
        .map(|file| (EventKind::Writing, Some(file)))
        .collect()
}

/// The exit code and output of an older version's shell tool output, a JSON string
/// `{"output": "…", "metadata": {"exit_code": 3, …}}`.
fn shell_output(output: &str) -> Option<(i64, String)> {
    if !output.starts_with('{') {
        return None;
    }
    let value: Value = serde_json::from_str(output).ok()?;
    let code = value["metadata"]["exit_code"].as_i64()?;
    Some((
        code,
        value["output"].as_str().unwrap_or_default().to_owned(),
    ))
}

/// A failed command's output, or its exit code when it printed nothing.
fn failure_text(output: Option<&str>, code: i64) -> String {
    match output.map(str::trim).filter(|output| !output.is_empty()) {
        Some(output) => output.to_owned(),
        None => format!("exit code {code}"),
    }
}
