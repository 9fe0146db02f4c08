//! Qwen Code sessions (`~/.qwen/projects/<project>/chats/<session id>.jsonl`) in the same event
//! vocabulary as Claude Code transcripts. [`crate::Normalizer`] hands every record of the Qwen
//! shape ([`is_record`]) to a [`Session`], which keeps the session state of that file and emits
//! events tagged `agent_kind: qwen`.
//!
//! - this file: the [`Session`] state machine;
//! - `shapes`: typed views of the records (their kinds are listed there);
//! - `tools`: Qwen Code's own tool names (the rest are Gemini CLI's, read by its table);
//! - `known`: the types, subtypes, telemetry events and statuses Familiar knows;
//! - `usage`: tokens per request for `familiar stats` (read by [`crate::usage`]).
//!
//! Qwen Code is a fork of Gemini CLI, but its session files are its own (0.24.4): one record
//! per line, appended once (Claude Code's envelope: `uuid`, `parentUuid`, `sessionId`, `cwd`),
//! holding Gemini API contents (`message.parts`, `usageMetadata`). A reply's tool calls are
//! `functionCall` parts; each answer is a `tool_result` record with the call's status.
//!
//! A subagent (the `agent` tool) runs in the background: the parent's call is its
//! `subagent_start`, the `notification` its parent is sent when it ends (`<tool-use-id>`) its
//! `subagent_end`; its own records are in a file of its own (`subagents/<session>/agent-<id>.
//! jsonl`, `agentId` and `isSidechain` on each), whose events carry `agent` and `sidechain`: its
//! task is no prompt, its last reply no `success`.
//!
//! An API error is recorded as a `system/ui_telemetry` record (`qwen-code.api_error`, with
//! the HTTP status and message), one per attempt: the first one after a request is held as
//! the turn's `error` (`api`) and let out when the turn is over (the next prompt, the end of
//! the input or a pause); an answer that comes after it (`qwen-code.api_response`: a retry
//! that worked) drops it.

mod known;
mod shapes;
mod tools;
pub mod usage;

use familiar_model::{AgentKind, ErrorKind, Event, EventKind, Status};
use serde_json::Value;

use crate::metrics::Metrics;
use crate::normalize::cap_text;
use shapes::{Part, Record};

pub use shapes::UsageMetadata;

/// Is this record (its `type`, and its JSON text) a record of a Qwen Code session file? Its
/// `type` names are Claude Code's but for `tool_result`; its messages are Gemini API contents
/// (`"message":{"role":…,"parts"`, never Claude's `content`), its system records carry a
/// `systemPayload`. Once a file had one, all its lines are read so.
///
/// Every Claude Code `user` and `assistant` record is asked too, and those lines are the big
/// ones (tool results, pastes): the needles are found with SIMD (`memchr::memmem`), built once;
/// `str::contains` was a sixth of `familiar stats`' time.
pub fn is_record(kind: Option<&str>, json: &str) -> bool {
    let json_bytes = json.as_bytes();
    match kind {
        Some("tool_result") => crate::contains!(json_bytes, "\"toolCallResult\""),
        Some("user") => crate::contains!(json_bytes, "\"message\":{\"role\":\"user\",\"parts\":"),
        Some("assistant") => {
            crate::contains!(json_bytes, "\"message\":{\"role\":\"model\",\"parts\":")
        }
        Some("system") => json.contains("\"systemPayload\":") && json.contains("\"uuid\":"),
        _ => false,
    }
}

/// Where the record being read came from.
pub(crate) type Meta = crate::agent::LineMeta;

/// The session state of one Qwen Code session file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Session {
    /// The main agent: what [`crate::agent::AgentState`] answers from.
    main: crate::agent::MainAgent,
    /// The names of the calls of the latest replies, by id (for their results).
    calls: crate::agent::RecentCalls,
    /// The turn's API error, held until the turn is over (see the module documentation).
    api_error: Option<Event>,
    /// Subagents started (the `agent` calls whose end is not told yet): call id, the
    /// `subagent_start` event (the end is the same, of another kind).
    running: Vec<(String, Event)>,
}

impl crate::agent::Reader for Session {
    const KIND: AgentKind = AgentKind::Qwen;

    fn main(&self) -> &crate::agent::MainAgent {
        &self.main
    }
}

impl crate::agent::ReadsLines for Session {
    fn read(&mut self, json: &str, meta: &Meta, metrics: &mut Metrics, out: &mut Vec<Event>) {
        self.push(json, meta, metrics, out);
    }
}

/// Calls remembered for their results.
const MAX_CALLS: usize = 64;

impl Session {
    pub fn has_deferred(&self) -> bool {
        self.api_error.is_some()
    }

    /// Let the held API error out (the input ended or paused).
    pub fn flush(&mut self, out: &mut Vec<Event>) {
        if let Some(error) = self.api_error.take() {
            self.main.status = Status::WaitingForInput;
            out.push(error);
        }
    }

    /// Read one record (`json`, its text).
    pub fn push(&mut self, json: &str, meta: &Meta, metrics: &mut Metrics, out: &mut Vec<Event>) {
        let Ok(mut record) = serde_json::from_str::<Record<'_>>(json) else {
            metrics.unread("qwen");
            return;
        };
        let kind = record.kind.take().unwrap_or_default();
        let kind = kind.as_ref();
        match record.subtype.as_deref() {
            Some(subtype) => {
                metrics.count_record(&format!("{kind}/{subtype}"));
                if let Some(what) = known::unknown_subtype(kind, subtype) {
                    metrics.count_unknown(what);
                }
            }
            None => metrics.count_record(kind),
        }
        let timestamp = record.timestamp.take();
        if let Some(ts) = timestamp.as_deref() {
            metrics.see_timestamp(ts);
        }
        if let Some(version) = record.version.as_deref() {
            metrics.see_version(version);
        }
        let mut cx = Cx {
            meta,
            ts: timestamp.as_deref(),
            metrics,
            out,
        };
        if record.is_sidechain == Some(true)
            && let Some(agent) = &record.agent_id
        {
            self.main.subagent = Some(agent.clone());
        }
        if let Some(session) = record.session_id.as_deref()
            && self.main.session.as_deref() != Some(session)
        {
            self.main.session = Some(session.to_owned());
            let start = self.event(EventKind::SessionStart, &cx);
            cx.out.push(start);
        }
        match kind {
            "user" => self.user(&mut record, &mut cx),
            "assistant" => self.reply(&record, &mut cx),
            "tool_result" => self.tool_result(&record, &mut cx),
            "system" => self.system(&record, &mut cx),
            _ => {
                if let Some(what) = known::unknown_type(kind) {
                    cx.metrics.count_unknown(what);
                }
            }
        }
    }

    fn user(&mut self, record: &mut Record<'_>, cx: &mut Cx<'_, '_>) {
        self.flush(cx.out);
        if record.subtype.as_deref() == Some("notification") {
            self.subagent_ended(record, cx);
            return;
        }
        // A subagent's task is no prompt (as Claude Code's: the main chain's only).
        if self.main.subagent.is_some() {
            self.main.status = Status::Working;
            return;
        }
        // The CLI's own messages (a background task's notification, a cron prompt, …) are no
        // prompt of the user's; a message typed mid-turn is.
        if !matches!(
            record.subtype.as_deref(),
            None | Some("mid_turn_user_message")
        ) {
            return;
        }
        self.main.status = Status::Working;
        let text = take_text(record);
        if text.trim().is_empty() {
            return;
        }
        cx.metrics.prompts += 1;
        let mut event = self.event(EventKind::Prompt, cx);
        // Trimmed in place: a pasted prompt's decoded text becomes the event's.
        event.text = Some(crate::scan::trimmed_end(text));
        cx.out.push(event);
    }

    fn reply(&mut self, record: &Record<'_>, cx: &mut Cx<'_, '_>) {
        self.api_error = None;
        self.main.status = Status::Working;
        if let Some(model) = record.model.as_deref() {
            self.main.model = Some(model.to_owned());
        }
        if let Some(window) = record.context_window.filter(|&window| window > 0) {
            self.main.window = Some(window);
        }
        if let Some(usage) = record.usage {
            self.main.context_used = Some(usage.total);
            cx.metrics
                .see_model(self.main.model.as_deref().unwrap_or(""));
        }
        let mut called = false;
        for part in parts(record) {
            match shapes::part(part) {
                Part::Thought(text) if !text.trim().is_empty() => {
                    let mut event = self.event(EventKind::Thinking, cx);
                    event.text = Some(text.trim().to_owned());
                    event.model = self.main.model.clone();
                    cx.out.push(event);
                }
                Part::Text(text) if !text.trim().is_empty() => {
                    let mut event = self.event(EventKind::Text, cx);
                    event.text = Some(text.to_owned());
                    event.model = self.main.model.clone();
                    cx.out.push(event);
                }
                Part::Call { id, name, args } => {
                    called = true;
                    self.call(id, name, args, cx);
                }
                _ => {}
            }
        }
        // A turn's end is the main agent's (a subagent's last reply is its report).
        if !called && self.main.subagent.is_none() {
            let mut success = self.event(EventKind::Success, cx);
            success.status = Status::WaitingForInput;
            let after = success.status_after();
            self.main.status = Status::WaitingForInput;
            cx.out.push(success);
            cx.out.push(after);
        }
    }

    fn call(&mut self, id: Option<&str>, name: &str, args: &Value, cx: &mut Cx<'_, '_>) {
        let (kind, target) = tools::kind_and_target(name, args);
        let modified = target.as_deref().filter(|_| tools::writes(name));
        cx.metrics.count_call(name, modified);
        if let Some(id) = id {
            self.calls.remember(id, name, target.clone());
        }
        let mut event = self.event(kind, cx);
        event.tool = Some(name.to_owned());
        event.target = target;
        event.tool_use_id = id.map(str::to_owned);
        event.model = self.main.model.clone();
        if name == "agent"
            && let Some(id) = id
        {
            // A subagent: its start now, its end when its parent is told it ended.
            event.kind = EventKind::SubagentStart;
            event.agent_type.clone_from(&event.target);
            event.description = args
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if self.running.len() == MAX_CALLS {
                self.running.remove(0);
            }
            self.running.push((id.to_owned(), event.clone()));
        }
        cx.out.push(event);
    }

    /// A `notification` of a background task: a subagent's end, when its `<tool-use-id>` is
    /// one of the `agent` calls that started one.
    fn subagent_ended(&mut self, record: &Record<'_>, cx: &mut Cx<'_, '_>) {
        let text: String = parts(record)
            .filter_map(|part| match shapes::part(part) {
                Part::Text(text) => Some(text),
                _ => None,
            })
            .collect();
        let Some(call) = tag(&text, "tool-use-id") else {
            return;
        };
        let Some(at) = self.running.iter().position(|(id, _)| id == call) else {
            return;
        };
        let (_, start) = self.running.remove(at);
        let mut end = self.event(EventKind::SubagentEnd, cx);
        end.tool = start.tool;
        end.tool_use_id = start.tool_use_id;
        end.agent_type = start.agent_type;
        end.description = start.description;
        end.target = start.target;
        end.model = start.model;
        cx.out.push(end);
    }

    fn tool_result(&mut self, record: &Record<'_>, cx: &mut Cx<'_, '_>) {
        self.main.status = Status::Working;
        let Some(result) = &record.tool_call_result else {
            return;
        };
        let status = result.status.as_deref();
        if let Some(what) = status.and_then(known::unknown_status) {
            cx.metrics.count_unknown(what);
        }
        let id = result.call_id.as_deref();
        let called = id.and_then(|id| self.calls.find(id));
        let (name, target) = match called {
            Some((name, target)) => (name.to_owned(), target.map(str::to_owned)),
            None => (String::new(), None),
        };
        let response = parts(record).find_map(|part| match shapes::part(part) {
            Part::Response { response } => Some(response),
            _ => None,
        });
        let Some((error, text)) = tools::failure(status, response, result.result_display.as_ref())
        else {
            return;
        };
        let mut event = self.event(EventKind::Error, cx);
        event.error = Some(error);
        event.text = Some(cap_text(text.trim()));
        event.tool = Some(name).filter(|name| !name.is_empty());
        event.target = target;
        event.tool_use_id = id.map(str::to_owned);
        cx.out.push(event);
    }

    fn system(&mut self, record: &Record<'_>, cx: &mut Cx<'_, '_>) {
        let payload = record.system_payload.as_ref();
        match record.subtype.as_deref() {
            Some("ui_telemetry") => {
                let Some(ui) = payload.and_then(|payload| payload.get("uiEvent")) else {
                    return;
                };
                let name = ui.get("event.name").and_then(Value::as_str).unwrap_or("");
                if let Some(what) = known::unknown_telemetry(name) {
                    cx.metrics.count_unknown(what);
                }
                match name {
                    "qwen-code.api_error" if self.api_error.is_none() => {
                        self.api_error = Some(self.api_error_event(ui, cx));
                    }
                    "qwen-code.api_response" => self.api_error = None,
                    _ => {}
                }
            }
            Some("chat_compression") => self.compaction(payload, cx),
            Some("custom_title") => {
                let title = payload
                    .and_then(|payload| payload.get("customTitle"))
                    .and_then(Value::as_str);
                if let Some(title) = title.filter(|title| !title.trim().is_empty()) {
                    let mut event = self.event(EventKind::Summary, cx);
                    event.text = Some(title.to_owned());
                    cx.out.push(event);
                }
            }
            _ => {}
        }
    }

    /// A compaction (`chat_compression`, `info.compressionStatus` 1: the history was
    /// compressed): the context is the CLI's own count after it (`newTokenCount`, an estimate)
    /// until the next reply says.
    fn compaction(&mut self, payload: Option<&Value>, cx: &mut Cx<'_, '_>) {
        let Some(info) = payload.and_then(|payload| payload.get("info")) else {
            return;
        };
        if info.get("compressionStatus").and_then(Value::as_u64) != Some(1) {
            return;
        }
        let count = |key: &str| info.get(key).and_then(Value::as_u64);
        cx.metrics.compactions += 1;
        self.main.context_used = count("newTokenCount");
        let mut event = self.event(EventKind::CompactBoundary, cx);
        event.trigger = match info.get("triggerReason").and_then(Value::as_str) {
            Some("token_limit") => Some("auto".to_owned()),
            Some("manual") => Some("manual".to_owned()),
            _ => None,
        };
        event.pre_tokens = count("originalTokenCount");
        event.post_tokens = self.main.context_used;
        cx.out.push(event);
    }

    fn api_error_event(&self, ui: &Value, cx: &Cx<'_, '_>) -> Event {
        let said = ui
            .get("error_message")
            .and_then(Value::as_str)
            .unwrap_or("the request failed");
        let status = ui.get("status_code").and_then(Value::as_u64);
        let mut event = self.event(EventKind::Error, cx);
        event.status = Status::WaitingForInput;
        event.error = Some(ErrorKind::Api);
        event.text = Some(cap_text(said.trim()));
        event.message = Some(match status {
            Some(status) => format!("Qwen Code: the API answered {status}"),
            None => "Qwen Code: the request failed".to_owned(),
        });
        event
    }

    fn event(&self, kind: EventKind, cx: &Cx<'_, '_>) -> Event {
        let mut event = crate::agent::event(self, kind, cx.meta.line, cx.meta.explicit_limit);
        event.ts = cx.ts.map(str::to_owned);
        event.raw = cx.meta.raw.clone();
        event
    }
}

/// The text of `<name>…</name>` in a notification.
fn tag<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    let open = format!("<{name}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&format!("</{name}>"))? + start;
    Some(text[start..end].trim())
}

/// The text parts of a record's message, taken out of it and joined (one part is moved, not
/// copied: a pasted prompt can be tens of MB).
fn take_text(record: &mut Record<'_>) -> String {
    let parts = record
        .message
        .iter_mut()
        .flat_map(|message| &mut message.parts);
    crate::scan::take_texts(parts.filter(|part| matches!(shapes::part(part), Part::Text(_))))
}

/// The parts of a record's message.
fn parts<'r>(record: &'r Record<'_>) -> impl Iterator<Item = &'r Value> {
    record.message.iter().flat_map(|message| &message.parts)
}

/// What one `push` works with.
struct Cx<'m, 'o> {
    meta: &'m Meta,
    ts: Option<&'o str>,
    metrics: &'o mut Metrics,
    out: &'o mut Vec<Event>,
}

#[cfg(test)]
mod tests;
