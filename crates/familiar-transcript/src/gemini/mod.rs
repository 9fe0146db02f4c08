//! Google Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/session-*.jsonl`) in the same
//! event vocabulary as Claude Code transcripts. [`crate::Normalizer`] hands every line of the
//! Gemini shape ([`is_record`]) to a [`Chat`], which keeps the session state of that file and
//! emits events tagged `agent_kind: gemini`; everything downstream is unchanged.
//!
//! - this file: the [`Chat`] state machine;
//! - `shapes`: typed views of the lines (the four kinds of line are listed there);
//! - `tools`: tool names → event kinds and targets, and how a call failed;
//! - `known`: the message types, `$set` keys and statuses Familiar knows;
//! - `usage`: tokens per request for `familiar stats` (read by [`crate::usage`]).
//!
//! The file is append-only JSONL (0.39 on, checked with 0.61.0), but a message is appended
//! again, whole, each time it grows: a model's reply first with its text, thoughts and tokens, then again with its
//! `toolCalls` once they ran (results and status included). So each message's id is
//! remembered with what was already told of it, and only what is new is told. A reply without
//! tool calls may still get some: its `success` is held until another event comes, or the
//! input ends or pauses (as Claude Code's turn end waits for its `turn_duration`).
//!
//! Versions before 0.39 (checked with 0.28.2) wrote one JSON document per session
//! (`session-*.json`), rewritten whole on every change; [`Chat::document`] reads it as the
//! metadata line and then each of its messages, so each rewrite tells only what is new (the
//! messages of a document are all remembered, not the latest [`MAX_TOLD`]). Those versions
//! never take a failed prompt back out: a prompt followed by another prompt with no reply
//! between is read as a failed request.
//!
//! Gemini CLI 0.61.0 writes no record of an API error: a request that fails rolls the prompt
//! back out of the history, which it writes whole (`$set.messages`, without the prompt). That
//! rewrite is read as the turn's `error` (`api`); a failure after a tool's answer leaves
//! nothing in the file at all.

mod known;
mod shapes;
pub(crate) mod tools;
pub mod usage;

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};

use familiar_model::{AgentKind, ErrorKind, Event, EventKind, Status};
use serde_json::value::RawValue;

use crate::metrics::Metrics;
use crate::normalize::cap_text;
use shapes::{Line, Listed, content_text, is_tool_answer};

pub use shapes::MessageTokens;

/// Messages remembered with what was told of them (a message is only ever rewritten while it
/// is among the latest).
const MAX_TOLD: usize = 64;

/// Is this record (its `type`, and its JSON text) a line of a Gemini CLI session file? A
/// model's message (`type: gemini`), a `$set` or `$rewindTo`, or the metadata line
/// (`sessionId` and `projectHash`, no `type`). Once a file had one, all its lines are read so.
pub fn is_record(kind: Option<&str>, json: &str) -> bool {
    match kind {
        Some(kind) => kind == "gemini",
        None => {
            let start = json.trim_start();
            start.starts_with("{\"$set\"")
                || start.starts_with("{\"$rewindTo\"")
                || (start.starts_with("{\"sessionId\"") && json.contains("\"projectHash\""))
                // A whole session (before 0.39), pretty-printed.
                || (usage::is_document(start.as_bytes()) && json.contains("\"projectHash\""))
        }
    }
}

/// Where the record being read came from.
pub(crate) type Meta = crate::agent::LineMeta;

/// What was already told of one message.
#[derive(Debug, Clone, Default)]
struct Told {
    id: String,
    thoughts: usize,
    text: bool,
    tokens: bool,
    calls: Vec<String>,
    /// Its turn's `success` was made (held or let out): once per reply.
    ended: bool,
}

/// The session state of one Gemini CLI session file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Chat {
    /// The main agent: what [`crate::agent::AgentState`] answers from.
    main: crate::agent::MainAgent,
    told: VecDeque<Told>,
    /// The latest prompt, while no reply to it came (a rollback without it is a failure).
    pending_prompt: Option<String>,
    /// The `success` of a reply without tool calls, and that reply's id: held until another
    /// event, the end of the input or a pause lets it out, or its tool calls come.
    deferred: Option<(String, Event)>,
    /// The `session_start` of the metadata line, held until the file's first message: a
    /// resume writes a stray file for the session (metadata and history, no message) when it
    /// starts in another minute than the session did, and that file starts nothing.
    pending_start: Option<Event>,
    /// The file is one whole document (before 0.39): every message is remembered (each
    /// rewrite lists them all again).
    whole: bool,
    /// The whole document's summary as told.
    summary: Option<String>,
}

impl crate::agent::Reader for Chat {
    const KIND: AgentKind = AgentKind::Gemini;
    const FIRST_MODEL: Option<&'static str> = Some("gemini-");

    fn main(&self) -> &crate::agent::MainAgent {
        &self.main
    }
}

impl crate::agent::ReadsLines for Chat {
    fn read(&mut self, json: &str, meta: &Meta, metrics: &mut Metrics, out: &mut Vec<Event>) {
        self.push(json, meta, metrics, out);
    }
}

impl Chat {
    pub fn has_deferred(&self) -> bool {
        self.deferred.is_some()
    }

    /// Let the held `success` out (the input ended or paused).
    pub fn flush(&mut self, out: &mut Vec<Event>) {
        if let Some((_, success)) = self.deferred.take() {
            self.main.status = Status::WaitingForInput;
            push_event(out, success);
        }
    }

    /// Read one line (`json`, the record's text).
    pub fn push(&mut self, json: &str, meta: &Meta, metrics: &mut Metrics, out: &mut Vec<Event>) {
        let Ok(line) = serde_json::from_str::<Line<'_>>(json) else {
            metrics.unread("gemini");
            return;
        };
        if let Some(ts) = line.timestamp.as_deref() {
            metrics.see_timestamp(ts);
        }
        let mut cx = Cx {
            meta,
            ts: line.timestamp.as_deref(),
            metrics,
            out,
        };
        if let Some(set) = line.set {
            cx.metrics.count_record("$set");
            self.set(set, &mut cx);
        } else if let Some(id) = line.rewind_to.as_deref() {
            cx.metrics.count_record("$rewindTo");
            self.rewind(id);
        } else if let (Some(id), Some(kind)) = (line.id.as_deref(), line.kind.as_deref()) {
            self.message(id, kind, &line, &mut cx);
        } else if let (Some(session), Some(_), Some(messages)) = (
            line.session_id.as_deref(),
            &line.project_hash,
            line.messages,
        ) {
            cx.metrics.count_record("session (whole)");
            self.whole = true;
            self.session_kind(line.session_kind.as_deref(), session, &mut cx);
            self.start(session, &mut cx);
            self.document(messages, line.summary.as_deref(), &mut cx);
        } else if let (Some(session), Some(_)) = (line.session_id.as_deref(), &line.project_hash) {
            cx.metrics.count_record("session");
            self.session_kind(line.session_kind.as_deref(), session, &mut cx);
            self.start(session, &mut cx);
        } else {
            cx.metrics.count_record("gemini/(other)");
            cx.metrics
                .count_unknown("gemini/(a line of another shape)".to_owned());
        }
    }

    fn session_kind(&mut self, kind: Option<&str>, session: &str, cx: &mut Cx<'_, '_>) {
        match kind {
            Some("subagent") => self.main.subagent = Some(session.to_owned()),
            Some("main") | None => {}
            Some(kind) => cx.metrics.count_unknown(format!("gemini/kind/{kind}")),
        }
    }

    /// One message, on a line of its own or in a whole document.
    fn message(&mut self, id: &str, kind: &str, line: &Line<'_>, cx: &mut Cx<'_, '_>) {
        cx.metrics.count_record(kind);
        match kind {
            "user" => self.user(id, line, cx),
            "gemini" => self.reply(id, line, cx),
            _ => {
                if let Some(what) = known::unknown_message_type(kind) {
                    cx.metrics.count_unknown(what);
                }
            }
        }
    }

    /// A whole session's messages (written whole again on every change: what was told of
    /// each is remembered) and its summary.
    fn document(&mut self, messages: &RawValue, summary: Option<&str>, cx: &mut Cx<'_, '_>) {
        let Ok(messages) = serde_json::from_str::<Vec<&RawValue>>(messages.get()) else {
            cx.metrics
                .count_unknown("gemini/messages (not a list)".to_owned());
            return;
        };
        for message in messages {
            let Ok(line) = serde_json::from_str::<Line<'_>>(message.get()) else {
                cx.metrics
                    .count_unknown("gemini/(a message of another shape)".to_owned());
                continue;
            };
            let (Some(id), Some(kind)) = (line.id.as_deref(), line.kind.as_deref()) else {
                cx.metrics
                    .count_unknown("gemini/(a message of another shape)".to_owned());
                continue;
            };
            if let Some(ts) = line.timestamp.as_deref() {
                cx.metrics.see_timestamp(ts);
            }
            let mut inner = Cx {
                meta: cx.meta,
                ts: line.timestamp.as_deref(),
                metrics: &mut *cx.metrics,
                out: &mut *cx.out,
            };
            self.message(id, kind, &line, &mut inner);
        }
        if let Some(summary) = summary
            && self.main.subagent.is_none()
            && self.summary.as_deref() != Some(summary)
        {
            self.summary = Some(summary.to_owned());
            let mut event = self.event(EventKind::Summary, cx);
            event.text = Some(summary.to_owned());
            self.emit(event, cx);
        }
    }

    fn start(&mut self, session: &str, cx: &mut Cx<'_, '_>) {
        if self.main.session.as_deref() == Some(session) {
            return;
        }
        self.main.session = Some(session.to_owned());
        self.pending_start = Some(self.event(EventKind::SessionStart, cx));
    }

    fn set(&mut self, set: &RawValue, cx: &mut Cx<'_, '_>) {
        let Ok(fields) = serde_json::from_str::<BTreeMap<Cow<'_, str>, &RawValue>>(set.get())
        else {
            cx.metrics
                .count_unknown("gemini/$set (not an object)".to_owned());
            return;
        };
        for (key, value) in &fields {
            if let Some(what) = known::unknown_set_key(key) {
                cx.metrics.count_unknown(what);
            }
            match key.as_ref() {
                "messages" => self.history(value.get(), cx),
                // A subagent's summary is its report's, not the session's title.
                "summary" if self.main.subagent.is_none() => {
                    if let Ok(summary) = serde_json::from_str::<String>(value.get()) {
                        let mut event = self.event(EventKind::Summary, cx);
                        event.text = Some(summary);
                        self.emit(event, cx);
                    }
                }
                "sessionId" => {
                    if let Ok(session) = serde_json::from_str::<Cow<'_, str>>(value.get()) {
                        self.start(&session, cx);
                    }
                }
                _ => {}
            }
        }
    }

    /// The whole history, rewritten: a prompt no longer in it, with no reply, was rolled back
    /// because its request failed (or was cancelled).
    fn history(&mut self, messages: &str, cx: &mut Cx<'_, '_>) {
        let Ok(listed) = serde_json::from_str::<Vec<Listed<'_>>>(messages) else {
            return;
        };
        let Some(prompt) = self.pending_prompt.take() else {
            return;
        };
        if listed
            .iter()
            .any(|message| message.id.as_deref() == Some(prompt.as_str()))
        {
            self.pending_prompt = Some(prompt);
            return;
        }
        self.failed(cx);
    }

    /// The turn's request failed (or was cancelled): the file says no more.
    fn failed(&mut self, cx: &mut Cx<'_, '_>) {
        self.main.status = Status::WaitingForInput;
        let mut event = self.event(EventKind::Error, cx);
        event.error = Some(ErrorKind::Api);
        event.text = Some(if self.whole {
            "the request failed: Gemini CLI got no reply to the prompt before the next one \
             (its session file records no reason)"
                .to_owned()
        } else {
            "the request failed: Gemini CLI took the prompt back out of the history \
             (its session file records no reason)"
                .to_owned()
        });
        event.message = Some("Gemini CLI: the request failed".to_owned());
        self.emit(event, cx);
    }

    fn rewind(&mut self, id: &str) {
        if let Some(at) = self.told.iter().position(|told| told.id == id) {
            self.told.truncate(at);
        }
        if self.pending_prompt.as_deref() == Some(id) {
            self.pending_prompt = None;
        }
    }

    fn told_index(&mut self, id: &str) -> (usize, bool) {
        if let Some(at) = self.told.iter().position(|told| told.id == id) {
            return (at, false);
        }
        if self.told.len() == MAX_TOLD && !self.whole {
            self.told.pop_front();
        }
        self.told.push_back(Told {
            id: id.to_owned(),
            ..Told::default()
        });
        (self.told.len() - 1, true)
    }

    fn user(&mut self, id: &str, line: &Line<'_>, cx: &mut Cx<'_, '_>) {
        if !self.told_index(id).1 {
            return;
        }
        self.main.status = Status::Working;
        let content = line.content();
        if is_tool_answer(content.as_ref()) {
            return;
        }
        let text = content_text(content);
        // A subagent's task is no prompt (as Claude Code's: the main chain's only).
        if text.trim().is_empty() || self.main.subagent.is_some() {
            return;
        }
        // A prompt after one that got no reply: that request failed (a whole session, before
        // 0.39, keeps a failed prompt in its history; 0.39 on takes it back out first).
        if self.pending_prompt.take().is_some() {
            self.failed(cx);
        }
        cx.metrics.prompts += 1;
        self.pending_prompt = Some(id.to_owned());
        let mut event = self.event(EventKind::Prompt, cx);
        // Trimmed in place: a pasted prompt's decoded text becomes the event's.
        event.text = Some(crate::scan::trimmed_end(text));
        self.emit(event, cx);
    }

    /// A model's message, new or written again with more in it.
    fn reply(&mut self, id: &str, line: &Line<'_>, cx: &mut Cx<'_, '_>) {
        let (at, new) = self.told_index(id);
        let told = &self.told[at];
        // Read only while its text is untold: a whole session rewritten is read again and
        // again, every message of it.
        let text = (!told.text)
            .then(|| content_text(line.content()))
            .filter(|text| !text.trim().is_empty());
        let more = new
            || line.thoughts.len() > told.thoughts
            || (line.tokens.is_some() && !told.tokens)
            || text.is_some()
            || line.tool_calls.iter().any(|call| {
                !told
                    .calls
                    .iter()
                    .any(|c| Some(c.as_str()) == call.id.as_deref())
            });
        // A message read again with nothing new in it (a whole session rewritten) changes
        // nothing.
        if !more {
            return;
        }
        self.pending_prompt = None;
        self.main.status = Status::Working;
        if let Some(model) = line.model.as_deref() {
            self.main.model = Some(model.to_owned());
        }
        if let Some(tokens) = line.tokens
            && !self.told[at].tokens
        {
            self.told[at].tokens = true;
            self.main.context_used = Some(tokens.total);
            cx.metrics
                .see_model(self.main.model.as_deref().unwrap_or(""));
        }
        // Its tool calls came: it did not end the turn.
        if !line.tool_calls.is_empty() && self.deferred.as_ref().is_some_and(|(held, _)| held == id)
        {
            self.deferred = None;
        }
        for thought in line.thoughts.iter().skip(self.told[at].thoughts) {
            let text = match thought.subject.trim() {
                "" => thought.description.clone(),
                subject => format!("{subject}\n{}", thought.description),
            };
            let mut event = self.event(EventKind::Thinking, cx);
            event.text = Some(text);
            event.model = self.main.model.clone();
            self.emit(event, cx);
        }
        self.told[at].thoughts = self.told[at].thoughts.max(line.thoughts.len());
        if let Some(text) = text {
            self.told[at].text = true;
            let mut event = self.event(EventKind::Text, cx);
            event.text = Some(text);
            event.model = self.main.model.clone();
            self.emit(event, cx);
        }
        for call in &line.tool_calls {
            let call_id = call.id.as_deref().unwrap_or("");
            if self.told[at].calls.iter().any(|told| told == call_id) {
                continue;
            }
            self.told[at].calls.push(call_id.to_owned());
            self.tool_call(call, cx);
        }
        // A turn's end is the main agent's (a subagent ends with its `complete_task` call).
        if line.tool_calls.is_empty()
            && self.deferred.is_none()
            && !self.told[at].ended
            && self.main.subagent.is_none()
        {
            self.told[at].ended = true;
            let mut success = self.event(EventKind::Success, cx);
            success.status = Status::WaitingForInput;
            self.deferred = Some((id.to_owned(), success));
        }
    }

    fn tool_call(&mut self, call: &shapes::ToolCall<'_>, cx: &mut Cx<'_, '_>) {
        let Some(name) = call.name.as_deref() else {
            return;
        };
        if let Some(what) = call.status.as_deref().and_then(known::unknown_status) {
            cx.metrics.count_unknown(what);
        }
        let (kind, target) = tools::kind_and_target(name, &call.args);
        let modified = target.as_deref().filter(|_| tools::writes(name));
        cx.metrics.count_call(name, modified);
        // A subagent's run is written once it ended: its start and end together.
        let subagent = (name == "invoke_agent").then(|| {
            let mut event = self.event(EventKind::SubagentStart, cx);
            event.tool = Some(name.to_owned());
            event.tool_use_id = call.id.as_deref().map(str::to_owned);
            event.agent_type = target.clone();
            event.description = tools::task_description(&call.args);
            event.target.clone_from(&event.description);
            event.model = self.main.model.clone();
            event
        });
        let mut event = match &subagent {
            Some(start) => start.clone(),
            None => {
                let mut event = self.event(kind, cx);
                event.tool = Some(name.to_owned());
                event.target.clone_from(&target);
                event.tool_use_id = call.id.as_deref().map(str::to_owned);
                event.model = self.main.model.clone();
                event
            }
        };
        if let Some(end) = &subagent {
            self.emit(event, cx);
            event = end.clone();
            event.kind = EventKind::SubagentEnd;
        }
        self.emit(event, cx);
        if let Some((error, text)) = tools::failure(call) {
            let mut event = self.event(EventKind::Error, cx);
            event.error = Some(error);
            event.text = Some(cap_text(text.trim()));
            event.tool = Some(name.to_owned());
            event.target = target;
            event.tool_use_id = call.id.as_deref().map(str::to_owned);
            self.emit(event, cx);
        }
    }

    /// Every event goes out here: a held `session_start` or `success` first (this event comes
    /// after it).
    fn emit(&mut self, event: Event, cx: &mut Cx<'_, '_>) {
        if let Some(start) = self.pending_start.take() {
            cx.out.push(start);
        }
        if let Some((_, success)) = self.deferred.take() {
            push_event(cx.out, success);
        }
        push_event(cx.out, event);
    }

    fn event(&self, kind: EventKind, cx: &Cx<'_, '_>) -> Event {
        let mut event = crate::agent::event(self, kind, cx.meta.line, cx.meta.explicit_limit);
        event.ts = cx.ts.map(str::to_owned);
        event.raw = cx.meta.raw.clone();
        event
    }
}

/// What one `push` works with.
struct Cx<'m, 'o> {
    meta: &'m Meta,
    ts: Option<&'o str>,
    metrics: &'o mut Metrics,
    out: &'o mut Vec<Event>,
}

/// A turn's end and the status it leaves, as Claude Code's (`Event::status_after`).
fn push_event(out: &mut Vec<Event>, event: Event) {
    let status = (event.kind == EventKind::Success).then(|| event.status_after());
    out.push(event);
    out.extend(status);
}
