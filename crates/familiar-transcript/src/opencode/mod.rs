//! opencode sessions in the same event vocabulary as Claude Code transcripts. opencode
//! (1.18.33) keeps its sessions in SQLite (`~/.local/share/opencode/opencode.db`: tables
//! `session`, `message` and `part`, each row's `data` a JSON text); Familiar's source
//! (`familiar_tail::opencode`) hands each row it reads over as one line of its own shape, the
//! row's `data` as stored (the JSON object itself; a string of it from Familiar before
//! 2026-11-28, or for a row whose JSON is not one line: both read, [`row_json`]), and
//! [`crate::Normalizer`] hands every line of that shape
//! ([`is_record`]) to a [`Session`], which keeps the session state and emits events tagged
//! `agent_kind: opencode`.
//!
//! - this file: the [`Session`] state machine;
//! - `tools`: opencode's tool names in the event vocabulary;
//! - `known`: the part types and message roles it writes (anything else is counted unknown);
//! - `usage`: tokens per request for `familiar stats` (read by [`crate::usage`]).
//!
//! The lines (one per row, in the order the rows were created; a row written again, as the
//! live source sees a tool go from `running` to `completed`, comes again):
//!
//! - `{"type":"opencode.session","sessionId","agentId"?,"id","cwd","parentId"?,"version",
//!   "title","timestamp"}`: the session row, first;
//! - `{"type":"opencode.message","sessionId","agentId"?,"id","timestamp","data"}`;
//! - `{"type":"opencode.part","sessionId","agentId"?,"messageId","id","timestamp","data"}`.
//!
//! `sessionId` is the main session's id; a subagent's session (opencode's `task` tool runs
//! one, a row whose `parent_id` is the caller's) is read under its parent's id, with its own
//! id as `agentId`. A row written again tells only what it did not tell before (each part
//! id's call, result and text once), so a session read live gives the events of the same
//! session read at its end. What each row becomes is in `docs/events.md`.

mod known;
mod tools;
pub mod usage;

use std::collections::{HashMap, HashSet};

use familiar_model::{AgentKind, ErrorKind, Event, EventKind, Status};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::metrics::Metrics;
use crate::normalize::cap_text;

/// Is this record (its `type`) a line of Familiar's opencode source?
pub fn is_record(kind: Option<&str>) -> bool {
    kind.is_some_and(|kind| kind.starts_with("opencode."))
}

/// Where the record being read came from.
pub(crate) type Meta = crate::agent::LineMeta;

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(rename = "sessionId", default)]
    session_id: Option<String>,
    #[serde(rename = "agentId", default)]
    agent_id: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(rename = "messageId", default)]
    message_id: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    version: Option<String>,
    /// The row's JSON, as the line holds it ([`row_json`]); decoded once, by `scan`, at its
    /// length (a prompt can be tens of MB).
    #[serde(default, borrow)]
    data: Option<&'a RawValue>,
}

/// A row's JSON as a line holds it in `data`: the object itself, or a string of it (lines
/// written by Familiar before 2026-11-28, and rows whose JSON is not one line). Held as the
/// object, a prompt's text is decoded once, not twice, and its line holds it once.
pub(crate) fn row_json(data: &RawValue) -> Option<std::borrow::Cow<'_, str>> {
    let raw = data.get();
    if raw.starts_with('"') {
        crate::scan::string(raw)
    } else {
        Some(std::borrow::Cow::Borrowed(raw))
    }
}

/// Message ids and part ids remembered (for the roles of parts, and what was told of each).
const MAX_REMEMBERED: usize = 4096;

/// What was told of one part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Told {
    /// A tool's call (its start), a text's or reasoning's whole text.
    start: bool,
    /// A tool's result (its end).
    end: bool,
}

/// What is known of one message.
#[derive(Debug, Clone, Default)]
struct MessageInfo {
    user: bool,
    /// A compaction's summary (`summary: true`): its text is no reply.
    summary: bool,
    /// Its API error was told.
    error_told: bool,
}

/// The session state of one opencode session (and its subagents' sessions, read as its own).
#[derive(Debug, Clone, Default)]
pub(crate) struct Session {
    /// The main agent: what [`crate::agent::AgentState`] answers from.
    main: crate::agent::MainAgent,
    started: bool,
    messages: HashMap<String, MessageInfo>,
    message_order: Vec<String>,
    told: HashMap<String, Told>,
    told_order: Vec<String>,
    /// Subagents' contexts (their session id, their latest request's tokens).
    agent_context: crate::agent::SubagentContexts,
    /// Rows whose `data` could not be read, said once per row id.
    unreadable: HashSet<String>,
    /// A `task` call first seen already done: its `subagent_end`, held until the main agent's
    /// next row, so that the subagent's rows (created after the call's) come first, as they
    /// did while it ran.
    pending_end: Option<(String, Event)>,
}

/// Its window: `--context-limit`, else its latest model's ([`crate::models`]): opencode's rows
/// name the model (`modelID`) but not its limit.
impl crate::agent::Reader for Session {
    const KIND: AgentKind = AgentKind::Opencode;

    fn main(&self) -> &crate::agent::MainAgent {
        &self.main
    }
}

impl crate::agent::ReadsLines for Session {
    fn read(&mut self, json: &str, meta: &Meta, metrics: &mut Metrics, out: &mut Vec<Event>) {
        self.push(json, meta, metrics, out);
    }
}

/// What one `push` works with.
struct Cx<'m, 'o> {
    meta: &'m Meta,
    ts: Option<String>,
    /// The subagent session that wrote the row, if one did.
    agent: Option<String>,
    metrics: &'o mut Metrics,
    out: &'o mut Vec<Event>,
}

fn str_of<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

impl Session {
    /// Read one line (`json`, its text).
    pub fn push(&mut self, json: &str, meta: &Meta, metrics: &mut Metrics, out: &mut Vec<Event>) {
        // `data` and the row's JSON in it are read by `scan`: each decoded once, at its own
        // length (serde's decoding of a 50 MB prompt, twice encoded, held it five times).
        let Ok(mut line) = serde_json::from_str::<Line>(json) else {
            metrics.unread("opencode");
            return;
        };
        metrics.see_record(&line.kind, line.timestamp.as_deref());
        if self.main.session.is_none() {
            self.main.session.clone_from(&line.session_id);
        }
        // (The row that held it, sent again, does not let it out.)
        if line.agent_id.is_none()
            && self
                .pending_end
                .as_ref()
                .is_some_and(|(part, _)| line.id.as_deref() != Some(part.as_str()))
            && let Some((_, end)) = self.pending_end.take()
        {
            out.push(end);
        }
        let mut cx = Cx {
            meta,
            ts: line.timestamp.clone(),
            agent: line.agent_id.clone(),
            metrics,
            out,
        };
        match line.kind.as_str() {
            "opencode.session" => self.start(&line, &mut cx),
            "opencode.message" | "opencode.part" => {
                let id = line.id.as_deref().unwrap_or("");
                // The row's own text is dropped once read; a row decoded out of a string (the
                // old shape) gives its buffer to its text.
                let read = |data: &RawValue| match row_json(data)? {
                    std::borrow::Cow::Owned(row) => crate::scan::value_in_place(row, "text"),
                    std::borrow::Cow::Borrowed(row) => crate::scan::value(row),
                };
                let data = match line.data.take().map(read) {
                    Some(Some(data)) if data.is_object() => data,
                    _ => {
                        // A row whose JSON cannot be read: counted, and said once.
                        if self.unreadable.insert(id.to_owned()) {
                            cx.metrics.count_unknown(format!(
                                "opencode/{} whose data is not a JSON object",
                                line.kind.trim_start_matches("opencode.")
                            ));
                        }
                        return;
                    }
                };
                if line.kind == "opencode.message" {
                    self.message(id, &data, &mut cx);
                } else {
                    let message = line.message_id.as_deref().unwrap_or("");
                    let mut data = data;
                    self.part(id, message, &mut data, &mut cx);
                }
            }
            other => cx.metrics.count_unknown(format!("opencode/line:{other}")),
        }
    }

    fn start(&mut self, line: &Line<'_>, cx: &mut Cx<'_, '_>) {
        if let Some(version) = line.version.as_deref() {
            cx.metrics.see_version(version);
        }
        // A subagent's session row: its start is the parent's `task` call.
        if self.started || cx.agent.is_some() {
            return;
        }
        self.started = true;
        // Its `cwd` places the session (`crate::head`): the session model tells it.
        let event = self.event(EventKind::SessionStart, cx);
        cx.out.push(event);
    }

    fn message(&mut self, id: &str, data: &Value, cx: &mut Cx<'_, '_>) {
        let role = str_of(data, "role").unwrap_or("");
        if let Some(what) = known::unknown_role(role) {
            cx.metrics.count_unknown(what);
        }
        if role == "assistant"
            && let Some(model) = str_of(data, "modelID")
        {
            cx.metrics.see_model(model);
            if cx.agent.is_none() {
                self.main.model = Some(model.to_owned());
            }
        }
        let summary = data.get("summary").and_then(Value::as_bool) == Some(true);
        let info = self.remember_message(id);
        info.user = role == "user";
        info.summary = summary;
        if role != "assistant" {
            return;
        }
        let error_told =
            data.get("error").is_some() && std::mem::replace(&mut info.error_told, true);
        if let Some(error) = data.get("error")
            && !error_told
        {
            self.api_error(error, cx);
        }
    }

    fn remember_message(&mut self, id: &str) -> &mut MessageInfo {
        if !self.messages.contains_key(id) {
            if self.message_order.len() == MAX_REMEMBERED {
                let oldest = self.message_order.remove(0);
                self.messages.remove(&oldest);
            }
            self.message_order.push(id.to_owned());
        }
        self.messages.entry(id.to_owned()).or_default()
    }

    fn told(&mut self, id: &str) -> Told {
        self.told.get(id).copied().unwrap_or_default()
    }

    fn set_told(&mut self, id: &str, told: Told) {
        if !self.told.contains_key(id) {
            if self.told_order.len() == MAX_REMEMBERED {
                let oldest = self.told_order.remove(0);
                self.told.remove(&oldest);
            }
            self.told_order.push(id.to_owned());
        }
        self.told.insert(id.to_owned(), told);
    }

    fn part(&mut self, id: &str, message: &str, data: &mut Value, cx: &mut Cx<'_, '_>) {
        let kind = str_of(data, "type").unwrap_or("");
        let (user, summary) = self
            .messages
            .get(message)
            .map_or((false, false), |info| (info.user, info.summary));
        match kind {
            "text" => {
                let synthetic = data.get("synthetic").and_then(Value::as_bool) == Some(true);
                if user {
                    let empty = str_of(data, "text").unwrap_or("").trim().is_empty();
                    // A subagent's task, or opencode's own words after a compaction, are no
                    // prompt.
                    if cx.agent.is_some() || synthetic || empty {
                        return;
                    }
                    if self.told(id).start {
                        return;
                    }
                    self.set_told(
                        id,
                        Told {
                            start: true,
                            end: true,
                        },
                    );
                    self.main.status = Status::Working;
                    cx.metrics.prompts += 1;
                    let mut event = self.event(EventKind::Prompt, cx);
                    event.text = crate::scan::take_string(data, "text").map(crate::scan::trimmed);
                    cx.out.push(event);
                    return;
                }
                let text = str_of(data, "text").unwrap_or("").trim();
                if !summary {
                    self.whole_text(id, EventKind::Text, text, data, cx);
                }
            }
            "reasoning" => {
                let text = str_of(data, "text").unwrap_or("").trim();
                self.whole_text(id, EventKind::Thinking, text, data, cx);
            }
            "tool" => self.tool(id, data, cx),
            "step-start" => {
                self.main.status = Status::Working;
            }
            "step-finish" => {
                // The step's tokens (written once, after the step's other parts): the context
                // of the agent that made it; a compaction's summary request is not.
                let used = data
                    .get("tokens")
                    .and_then(|t| serde_json::from_value::<usage::MessageTokens>(t.clone()).ok())
                    .map(|tokens| tokens.context())
                    .filter(|&used| used > 0 && !summary);
                if let Some(used) = used {
                    match &cx.agent {
                        Some(agent) => {
                            self.agent_context.set(agent, used);
                        }
                        None => self.main.context_used = Some(used),
                    }
                }
                // The main agent's turn ends with a step that stopped (no more calls).
                if str_of(data, "reason") == Some("stop")
                    && cx.agent.is_none()
                    && !summary
                    && !self.told(id).end
                {
                    self.set_told(
                        id,
                        Told {
                            start: true,
                            end: true,
                        },
                    );
                    self.success(cx);
                }
            }
            "compaction" => {
                if cx.agent.is_some() || self.told(id).start {
                    return;
                }
                self.set_told(
                    id,
                    Told {
                        start: true,
                        end: true,
                    },
                );
                cx.metrics.compactions += 1;
                let mut event = self.event(EventKind::CompactBoundary, cx);
                event.trigger = match data.get("auto").and_then(Value::as_bool) {
                    Some(true) => Some("auto".to_owned()),
                    Some(false) => Some("manual".to_owned()),
                    None => None,
                };
                cx.out.push(event);
            }
            other => {
                if let Some(what) = known::unknown_part(other) {
                    cx.metrics.count_unknown(what);
                }
            }
        }
    }

    /// A tool part: its call told when first seen (pending, running, or already done), its
    /// result (an error, a subagent's end) once it is done.
    fn tool(&mut self, id: &str, data: &Value, cx: &mut Cx<'_, '_>) {
        let name = str_of(data, "tool").unwrap_or("");
        let call = str_of(data, "callID");
        let state = data.get("state").unwrap_or(&Value::Null);
        let input = state.get("input").unwrap_or(&Value::Null);
        let status = str_of(state, "status").unwrap_or("");
        let mut told = self.told(id);
        let (kind, target) = tools::kind_and_target(name, input);
        // A pending call's input may not be whole yet (it streams): told once it runs.
        let first_sight_done = !told.start && (status == "completed" || status == "error");
        if !told.start && status != "pending" {
            told.start = true;
            self.main.status = Status::Working;
            let modified = target.as_deref().filter(|_| tools::writes(name));
            cx.metrics.count_call(name, modified);
            let mut event = if name == "task" {
                let mut event = self.event(EventKind::SubagentStart, cx);
                event.agent_type = str_of(input, "subagent_type").map(str::to_owned);
                event.description = str_of(input, "description").map(str::to_owned);
                event
            } else {
                self.event(kind, cx)
            };
            event.tool = Some(name.to_owned());
            event.target.clone_from(&target);
            event.tool_use_id = call.map(str::to_owned);
            event.model.clone_from(&self.main.model);
            cx.out.push(event);
        }
        if !told.end && (status == "completed" || status == "error") {
            told.end = true;
            if name == "task" {
                let mut end = self.event(EventKind::SubagentEnd, cx);
                end.tool = Some(name.to_owned());
                end.target.clone_from(&target);
                end.tool_use_id = call.map(str::to_owned);
                end.agent_type = str_of(input, "subagent_type").map(str::to_owned);
                end.description = str_of(input, "description").map(str::to_owned);
                end.text = str_of(state, "error").map(|error| cap_text(error.trim()));
                if first_sight_done && cx.agent.is_none() {
                    self.pending_end = Some((id.to_owned(), end));
                } else {
                    cx.out.push(end);
                }
            } else if let Some((error, text)) = tools::failure(state) {
                let mut event = self.event(EventKind::Error, cx);
                event.error = Some(error);
                event.text = Some(cap_text(text.trim()));
                event.tool = Some(name.to_owned());
                event.target = target;
                event.tool_use_id = call.map(str::to_owned);
                cx.out.push(event);
            }
        }
        self.set_told(id, told);
    }

    fn success(&mut self, cx: &mut Cx<'_, '_>) {
        let mut success = self.event(EventKind::Success, cx);
        success.status = Status::WaitingForInput;
        success.model.clone_from(&self.main.model);
        let after = success.status_after();
        self.main.status = Status::WaitingForInput;
        cx.out.push(success);
        cx.out.push(after);
    }

    /// An assistant message's `error` (seen: `{name: "APIError", data: {message, statusCode,
    /// isRetryable}}`, written after opencode's own retries): an API error, the turn over.
    /// An answer's text or reasoning, told once it is whole (`time.end`; streamed before).
    fn whole_text(
        &mut self,
        id: &str,
        kind: EventKind,
        text: &str,
        data: &Value,
        cx: &mut Cx<'_, '_>,
    ) {
        let whole = data.get("time").and_then(|time| time.get("end")).is_some();
        if !whole || text.is_empty() || self.told(id).start {
            return;
        }
        self.set_told(
            id,
            Told {
                start: true,
                end: true,
            },
        );
        let mut event = self.event(kind, cx);
        event.text = Some(text.to_owned());
        event.model.clone_from(&self.main.model);
        cx.out.push(event);
    }

    fn api_error(&mut self, error: &Value, cx: &mut Cx<'_, '_>) {
        let name = str_of(error, "name");
        let data = error.get("data").unwrap_or(&Value::Null);
        let said = str_of(data, "message").unwrap_or("the request failed");
        let status = data.get("statusCode").and_then(Value::as_u64);
        let mut event = self.event(EventKind::Error, cx);
        event.error = Some(match name {
            Some("MessageAbortedError") => ErrorKind::Interrupted,
            _ => ErrorKind::Api,
        });
        event.error_code = name.map(str::to_owned);
        // The model whose request failed (the failed message names it).
        event.model.clone_from(&self.main.model);
        event.text = Some(cap_text(said.trim()));
        event.message = Some(match status {
            Some(status) => format!("opencode: the API answered {status}"),
            None => format!("opencode: {}", name.unwrap_or("the request failed")),
        });
        if cx.agent.is_none() {
            event.status = Status::WaitingForInput;
            self.main.status = Status::WaitingForInput;
        }
        let after = event.status_after();
        cx.out.push(event);
        if cx.agent.is_none() {
            cx.out.push(after);
        }
    }

    fn event(&self, kind: EventKind, cx: &Cx<'_, '_>) -> Event {
        let mut event = crate::agent::event(self, kind, cx.meta.line, cx.meta.explicit_limit);
        if let Some(agent) = &cx.agent {
            self.agent_context.mark(&mut event, agent);
        }
        event.ts.clone_from(&cx.ts);
        event.raw = cx.meta.raw.clone();
        event
    }
}

#[cfg(test)]
mod tests;
