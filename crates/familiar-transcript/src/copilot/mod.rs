//! GitHub Copilot CLI sessions (`~/.copilot/session-state/<session id>/events.jsonl`) in the
//! same event vocabulary as Claude Code transcripts. [`crate::Normalizer`] hands every record
//! of the Copilot shape ([`is_record`]) to a [`Session`], which keeps the session state of that
//! file and emits events tagged `agent_kind: copilot`.
//!
//! - this file: the [`Session`] state machine;
//! - `tools`: Copilot CLI's tool names in the event vocabulary;
//! - `known`: the event types of the CLI's schema (anything else is counted unknown);
//! - `usage`: tokens per request for `familiar stats` (read by [`crate::usage`]).
//!
//! Copilot CLI 1.0.102 appends one event per line, each `{type, data, id, timestamp,
//! parentId}` (the package ships their JSON schema, `schemas/session-events.schema.json`).
//! A subagent (the `task` tool) writes into the same file: its records carry `agentId`, and
//! its events carry it as `agent` (and `sidechain`); `subagent.started` and
//! `subagent.completed` (or `subagent.failed`), written as the parent's, are its start and end.
//! What each record becomes is in `docs/events.md`.

mod known;
mod tools;
pub mod usage;

use familiar_model::{AgentKind, ErrorKind, Event, EventKind, Status};
use serde::Deserialize;
use serde_json::Value;

use crate::metrics::Metrics;
use crate::normalize::cap_text;
use crate::scan::{take_string, trimmed, trimmed_end};

/// Is this record (its `type`, and its JSON text) an event of a Copilot CLI session file? Its
/// types are dotted (`session.start`, `tool.execution_start`: no other CLI's are), and every
/// record has `data` and `parentId`.
pub fn is_record(kind: Option<&str>, json: &str) -> bool {
    kind.is_some_and(|kind| kind.contains('.'))
        && json.contains("\"data\":")
        && json.contains("\"parentId\":")
}

/// Where the record being read came from.
pub(crate) type Meta = crate::agent::LineMeta;

#[derive(Deserialize)]
struct Record {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(rename = "agentId", default)]
    agent_id: Option<String>,
    /// Each string decoded once, at its length (a prompt can be tens of MB).
    #[serde(default, deserialize_with = "crate::scan::exact_value")]
    data: Value,
}

/// The session state of one Copilot CLI session file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Session {
    /// The main agent: what [`crate::agent::AgentState`] answers from.
    main: crate::agent::MainAgent,
    /// The calls started (for their results): id, name, target.
    calls: crate::agent::RecentCalls,
    /// Subagents started and not ended: the call's id and its `subagent_start`.
    running: Vec<(String, Event)>,
    /// Each subagent's context (`agentId`, its latest request's tokens).
    agent_context: crate::agent::SubagentContexts,
    /// The turn's `success` was told (at its last reply): `session.task_complete` adds none.
    success_told: bool,
}

impl crate::agent::Reader for Session {
    const KIND: AgentKind = AgentKind::Copilot;

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

/// What one `push` works with.
struct Cx<'m, 'o> {
    meta: &'m Meta,
    ts: Option<String>,
    /// The subagent that wrote the record (`agentId`), if one did.
    agent: Option<String>,
    metrics: &'o mut Metrics,
    out: &'o mut Vec<Event>,
}

fn str_of<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

impl Session {
    /// Read one record (`json`, its text).
    pub fn push(&mut self, json: &str, meta: &Meta, metrics: &mut Metrics, out: &mut Vec<Event>) {
        let Ok(record) = serde_json::from_str::<Record>(json) else {
            metrics.unread("copilot");
            return;
        };
        metrics.see_record(&record.kind, record.timestamp.as_deref());
        let mut cx = Cx {
            meta,
            ts: record.timestamp,
            agent: record.agent_id,
            metrics,
            out,
        };
        let mut data = record.data;
        let data = &mut data;
        match record.kind.as_str() {
            "session.start" | "session.resume" => self.start(data, &mut cx),
            "user.message" => self.user(data, &mut cx),
            "assistant.reasoning" => {
                if let Some(text) = take_string(data, "content").filter(|t| !t.trim().is_empty()) {
                    let mut event = self.event(EventKind::Thinking, &cx);
                    event.text = Some(trimmed(text));
                    event.model = self.main.model.clone();
                    cx.out.push(event);
                }
            }
            "assistant.message" => self.reply(data, &mut cx),
            "session.usage_record" => self.usage(data, &mut cx),
            "tool.execution_start" => self.tool_start(data, &mut cx),
            "tool.execution_complete" => self.tool_complete(data, &mut cx),
            "permission.requested" => self.set_status(Status::WaitingForApproval, &mut cx),
            "permission.completed" => self.set_status(Status::Working, &mut cx),
            "subagent.started" => self.subagent_started(data, &mut cx),
            "subagent.completed" | "subagent.failed" => self.subagent_ended(data, &mut cx),
            "session.error" => self.api_error(data, &mut cx),
            "session.task_complete" if cx.agent.is_none() => self.success(&mut cx),
            "session.compaction_complete" => self.compaction(data, &mut cx),
            kind => {
                if let Some(what) = known::unknown_type(kind) {
                    cx.metrics.count_unknown(what);
                }
            }
        }
    }

    fn start(&mut self, data: &Value, cx: &mut Cx<'_, '_>) {
        if let Some(version) = str_of(data, "copilotVersion") {
            cx.metrics.see_version(version);
        }
        if let Some(model) = str_of(data, "selectedModel") {
            self.main.model = Some(model.to_owned());
        }
        let Some(session) = str_of(data, "sessionId") else {
            return;
        };
        if self.main.session.as_deref() == Some(session) {
            return;
        }
        self.main.session = Some(session.to_owned());
        // Its `context.cwd` places the session (`crate::head`): the session model tells it.
        let mut event = self.event(EventKind::SessionStart, cx);
        event.model = self.main.model.clone();
        cx.out.push(event);
    }

    fn user(&mut self, data: &mut Value, cx: &mut Cx<'_, '_>) {
        self.main.status = Status::Working;
        // A subagent's task is no prompt (as Claude Code's: the main agent's only).
        if cx.agent.is_some() {
            return;
        }
        self.success_told = false;
        let text = take_string(data, "content").unwrap_or_default();
        if text.trim().is_empty() {
            return;
        }
        cx.metrics.prompts += 1;
        let mut event = self.event(EventKind::Prompt, cx);
        event.text = Some(trimmed_end(text));
        cx.out.push(event);
    }

    fn reply(&mut self, data: &mut Value, cx: &mut Cx<'_, '_>) {
        self.main.status = Status::Working;
        if let Some(model) = str_of(data, "model") {
            self.main.model = Some(model.to_owned());
        }
        if let Some(text) = take_string(data, "content").filter(|t| !t.trim().is_empty()) {
            let mut event = self.event(EventKind::Text, cx);
            event.text = Some(text);
            event.model = self.main.model.clone();
            cx.out.push(event);
        }
        let called = data
            .get("toolRequests")
            .and_then(Value::as_array)
            .is_some_and(|calls| !calls.is_empty());
        // A turn's end is the main agent's (a subagent's last reply is its report).
        if !called && cx.agent.is_none() {
            self.success(cx);
        }
    }

    fn success(&mut self, cx: &mut Cx<'_, '_>) {
        if self.success_told {
            return;
        }
        self.success_told = true;
        let mut success = self.event(EventKind::Success, cx);
        success.status = Status::WaitingForInput;
        success.model = self.main.model.clone();
        let after = success.status_after();
        self.main.status = Status::WaitingForInput;
        cx.out.push(success);
        cx.out.push(after);
    }

    /// One request's usage: the main agent's context (its prompt and answer) and window.
    fn usage(&mut self, data: &Value, cx: &mut Cx<'_, '_>) {
        let Some(usage) = data.get("usage") else {
            return;
        };
        let count = |key: &str| usage.get(key).and_then(Value::as_u64);
        if let Some(model) = str_of(usage, "model") {
            cx.metrics.see_model(model);
        }
        let used = count("inputTokens").map(|input| input + count("outputTokens").unwrap_or(0));
        if let Some(agent) = &cx.agent {
            // A subagent's context is its own (its companion's mana), not the session's.
            if let Some(used) = used {
                self.agent_context.set(agent, used);
            }
            return;
        }
        if used.is_some() {
            self.main.context_used = used;
        }
        if let Some(window) = count("maxPromptTokens").filter(|&window| window > 0) {
            self.main.window = Some(window);
        }
    }

    fn tool_start(&mut self, data: &Value, cx: &mut Cx<'_, '_>) {
        self.main.status = Status::Working;
        let name = str_of(data, "toolName").unwrap_or("");
        let args = data.get("arguments").unwrap_or(&Value::Null);
        let id = str_of(data, "toolCallId");
        let (kind, target) = tools::kind_and_target(name, args);
        let modified = target.as_deref().filter(|_| tools::writes(name));
        cx.metrics.count_call(name, modified);
        if let Some(id) = id {
            self.calls.remember(id, name, target.clone());
        }
        // A subagent's call: `subagent.started` is its event.
        if name == "task" {
            return;
        }
        let mut event = self.event(kind, cx);
        event.tool = Some(name.to_owned());
        event.target = target;
        event.tool_use_id = id.map(str::to_owned);
        event.model = self.main.model.clone();
        cx.out.push(event);
    }

    fn tool_complete(&mut self, data: &Value, cx: &mut Cx<'_, '_>) {
        self.main.status = Status::Working;
        let id = str_of(data, "toolCallId");
        let called = id.and_then(|id| self.calls.find(id));
        let (name, target) = match called {
            Some((name, target)) => (Some(name.to_owned()), target.map(str::to_owned)),
            None => (None, None),
        };
        let Some((error, text)) = tools::failure(data) else {
            return;
        };
        let mut event = self.event(EventKind::Error, cx);
        event.error = Some(error);
        event.text = Some(cap_text(text.trim()));
        event.tool = name;
        event.target = target;
        event.tool_use_id = id.map(str::to_owned);
        cx.out.push(event);
    }

    /// A permission asked (`waiting_for_approval`) or answered (`working`): a `status` event.
    fn set_status(&mut self, status: Status, cx: &mut Cx<'_, '_>) {
        if self.main.status == status {
            return;
        }
        let previous = self.main.status;
        self.main.status = status;
        let mut event = self.event(EventKind::Status, cx);
        event.previous_status = Some(previous);
        cx.out.push(event);
    }

    fn subagent_started(&mut self, data: &Value, cx: &mut Cx<'_, '_>) {
        // The record names the subagent (`agentId`), but it is the parent's event.
        let agent = cx.agent.take();
        let mut event = self.event(EventKind::SubagentStart, cx);
        event.tool = Some("task".to_owned());
        event.tool_use_id = str_of(data, "toolCallId").map(str::to_owned);
        event.agent_type = str_of(data, "agentName").map(str::to_owned);
        event.target.clone_from(&event.agent_type);
        event.description = str_of(data, "agentDescription").map(str::to_owned);
        event.model = str_of(data, "model").map(str::to_owned);
        if let (Some(id), Some(_)) = (&event.tool_use_id, &agent) {
            if self.running.len() == MAX_CALLS {
                self.running.remove(0);
            }
            self.running.push((id.clone(), event.clone()));
        }
        cx.out.push(event);
    }

    fn subagent_ended(&mut self, data: &Value, cx: &mut Cx<'_, '_>) {
        cx.agent = None;
        let call = str_of(data, "toolCallId").unwrap_or("");
        let start = self
            .running
            .iter()
            .position(|(id, _)| id == call)
            .map(|at| self.running.remove(at).1);
        let mut end = self.event(EventKind::SubagentEnd, cx);
        end.tool = Some("task".to_owned());
        end.tool_use_id = Some(call.to_owned()).filter(|call| !call.is_empty());
        end.agent_type = str_of(data, "agentName").map(str::to_owned);
        end.target.clone_from(&end.agent_type);
        end.model = str_of(data, "model").map(str::to_owned);
        if let Some(start) = start {
            end.description = start.description;
        }
        end.text = str_of(data, "error").map(cap_text);
        cx.out.push(end);
    }

    /// `session.error`: the request failed after the CLI's retries (an API error), or another
    /// error of the session.
    fn api_error(&mut self, data: &Value, cx: &mut Cx<'_, '_>) {
        let said = str_of(data, "message").unwrap_or("the request failed");
        let status = data.get("statusCode").and_then(Value::as_u64);
        let mut event = self.event(EventKind::Error, cx);
        event.error = Some(ErrorKind::Api);
        event.error_code = str_of(data, "errorType").map(str::to_owned);
        event.text = Some(cap_text(said.trim()));
        event.message = Some(match status {
            Some(status) => format!("Copilot CLI: the API answered {status}"),
            None => "Copilot CLI: the request failed".to_owned(),
        });
        if cx.agent.is_none() {
            event.status = Status::WaitingForInput;
            self.main.status = Status::WaitingForInput;
            self.success_told = true;
        }
        let after = event.status_after();
        cx.out.push(event);
        if cx.agent.is_none() {
            cx.out.push(after);
        }
    }

    /// `session.compaction_complete` with `success` (seen written by the real CLI: a request
    /// at 94% of the prompt limit starts one in the background, `trigger: threshold`): its
    /// `preCompactionTokens` and `postCompactionTokens` are the CLI's own estimates, the
    /// context until the next request says.
    fn compaction(&mut self, data: &Value, cx: &mut Cx<'_, '_>) {
        if data.get("success").and_then(Value::as_bool) != Some(true) || cx.agent.is_some() {
            return;
        }
        let count = |key: &str| data.get(key).and_then(Value::as_u64);
        cx.metrics.compactions += 1;
        if let Some(post) = count("postCompactionTokens") {
            self.main.context_used = Some(post);
        }
        let mut event = self.event(EventKind::CompactBoundary, cx);
        event.trigger = match str_of(data, "trigger") {
            Some("threshold") => Some("auto".to_owned()),
            Some("manual") => Some("manual".to_owned()),
            _ => None,
        };
        event.pre_tokens = count("preCompactionTokens");
        event.post_tokens = count("postCompactionTokens");
        cx.out.push(event);
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
