//! Turns: prompts and slash commands, assistant messages (text, thinking, tool calls), `system`
//! records, and the end of a turn (`success`). Part of [`super::Normalizer`].

use std::borrow::Cow;

use familiar_model::{ErrorKind, Event, EventKind, Status};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::moved::Moving;
use super::parse::{
    SlashCommand, cap_text, first_text, is_injected_text, slash_command, think_level,
};
use super::tool_calls::ResultOf;
use super::{Normalizer, Origin};
use crate::record::{self, Block, Record, TextOr};

impl Normalizer {
    pub(super) fn user(
        &mut self,
        chain: usize,
        record: &Record<'_>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        if let Some(model) = record.tool_use_result.and_then(resolved_model) {
            self.claude.chains[chain].1.window.see_resolved(&model);
        }
        match &record.message {
            Some(TextOr::Value(message)) => match &message.content {
                Some(TextOr::Text(text)) => {
                    self.claude.moving = Moving::offer(text);
                    self.user_text(chain, record, text, origin, out);
                }
                Some(TextOr::Value(blocks)) => {
                    let mut texts: Vec<&Cow<'_, str>> = Vec::new();
                    for block in blocks {
                        match block.kind.as_deref() {
                            Some("tool_result") => {
                                if let Some(id) = block.tool_use_id.as_deref() {
                                    self.tool_result(
                                        chain,
                                        id,
                                        block.content,
                                        block.is_error,
                                        ResultOf::of(record),
                                        origin,
                                        out,
                                    );
                                }
                            }
                            Some("text") => texts.extend(block.text.as_ref()),
                            _ => {}
                        }
                    }
                    match texts.as_slice() {
                        [] => {}
                        // One text block (beside images, say): moved like a string's text.
                        [text] => {
                            self.claude.moving = Moving::offer(text);
                            self.user_text(chain, record, text, origin, out);
                        }
                        texts => {
                            let text = texts
                                .iter()
                                .map(|text| text.as_ref())
                                .collect::<Vec<&str>>()
                                .join("\n");
                            self.user_text(chain, record, &text, origin, out);
                        }
                    }
                }
                None => {}
            },
            Some(TextOr::Text(text)) => {
                self.claude.moving = Moving::offer(text);
                self.user_text(chain, record, text, origin, out);
            }
            None => {}
        }
    }

    pub(super) fn user_text(
        &mut self,
        chain: usize,
        record: &Record<'_>,
        text: &str,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let trimmed = text.trim_start();
        if trimmed.starts_with("[Request interrupted by user") {
            let state = &mut self.claude.chains[chain].1;
            state.keep_pending_subagents();
            state.turn_over = true;
            state.status = Status::WaitingForInput;
            let mut event = self.event(chain, EventKind::Error, origin);
            event.error = Some(ErrorKind::Interrupted);
            event.text = Some(trimmed.trim_end().to_owned());
            self.emit(event, out);
            return;
        }
        let (key, state) = &self.claude.chains[chain];
        if key.is_main()
            && state.command_turn
            && record.is_meta != Some(true)
            && trimmed.starts_with("<local-command-stdout>")
        {
            // A slash command the CLI answered itself (`/compact`, `/exit`): its output ends
            // the turn, and nothing else will. Not a `success` (no agent work finished): a
            // `status` event, so live and offline readers both see the turn end.
            let state = &mut self.claude.chains[chain].1;
            state.turn_over = true;
            state.command_turn = false;
            state.status = Status::WaitingForInput;
            let event = self.event(chain, EventKind::Status, origin);
            self.emit(event, out);
            return;
        }
        if key.is_main() && trimmed.starts_with("<task-notification>") {
            // A background agent stopped (2.1.3xx): the CLI tells the main agent in a turn
            // of its own, which is not the user's prompt.
            self.task_notification(chain, trimmed, origin, out);
            return;
        }
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
    pub(super) fn prompt(
        &mut self,
        chain: usize,
        text: &str,
        command: Option<SlashCommand<'_>>,
        starts_work: bool,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        self.metrics.prompts += 1;
        let state = &mut self.claude.chains[chain].1;
        state.turn_over = false;
        state.api_error_ended_turn = false;
        state.command_turn = command.is_some() && starts_work;
        state.keep_pending_subagents();
        if starts_work {
            state.status = Status::Working;
        }
        let mut event = self.event(chain, EventKind::Prompt, origin);
        let shown = text.trim_end();
        match command {
            Some(command) => {
                event.text = Some(match command.args {
                    Some(args) => format!("{} {args}", command.name),
                    None => command.name.clone(),
                });
                event.think = Some(think_level(command.args.unwrap_or("")));
                event.command = Some(command.name);
                self.emit(event, out);
            }
            None => {
                // A big pasted prompt's text is moved in after the record, not copied.
                event.text = Some(self.claude.moving.text_for(shown));
                event.think = Some(think_level(text));
                self.emit(event, out);
                self.claude.moving.claim(shown, out.len() - 1);
            }
        }
    }

    pub(super) fn assistant(
        &mut self,
        chain: usize,
        record: &Record<'_>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let message = match &record.message {
            Some(TextOr::Value(message)) => message,
            Some(TextOr::Text(text)) => {
                self.claude.chains[chain].1.status = Status::Working;
                let mut event = self.event(chain, EventKind::Text, origin);
                event.text = Some(text.to_string());
                self.emit(event, out);
                return;
            }
            None => return,
        };
        let model = message.model.as_deref().unwrap_or("");
        let synthetic = model == "<synthetic>";
        // Transcripts mark API errors with `isApiErrorMessage`; stream-json's copy of the same
        // record has only its `error` code (`"error":"rate_limit"`).
        let error_code = record.error.and_then(record::raw_str);
        if record.is_api_error_message == Some(true) || error_code.is_some() {
            let state = &mut self.claude.chains[chain].1;
            state.turn_over = true;
            state.api_error_ended_turn = true;
            state.status = Status::WaitingForInput;
            let mut event = self.event(chain, EventKind::Error, origin);
            event.error = Some(ErrorKind::Api);
            event.error_code = error_code;
            event.text = first_text(message.content.as_ref()).map(|text| cap_text(text.trim()));
            event.message = Some(crate::error_message::api_error(&event));
            self.emit(event, out);
            return;
        }
        if synthetic && first_text(message.content.as_ref()) == Some("No response requested.") {
            // The CLI's own filler, not the model's words: `--resume` writes it after a
            // session that ended on a user record.
            return;
        }
        if !synthetic {
            let state = &mut self.claude.chains[chain].1;
            state.window.see_model(model);
            if let Some(usage) = &message.usage {
                let used = usage.context_tokens();
                state.context_used = Some(used);
                state.window.peak_used = state.window.peak_used.max(used);
                self.metrics.see_model(model);
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
                self.claude.chains[chain].1.status = Status::Working;
                let mut event = self.event(chain, EventKind::Text, origin);
                event.text = Some(text.to_string());
                event.model = model_name.clone();
                self.emit(event, out);
            }
            _ => {}
        }
        if message.stop_reason.as_deref() == Some("end_turn") {
            // An interactive CLI writes `stop_hook_summary` and `turn_duration` after
            // `end_turn`: the success waits for the duration. SDK and `-p` runs
            // (`entrypoint: sdk-*`) and CLIs that name no entrypoint write neither.
            let later = record
                .entrypoint
                .as_deref()
                .is_some_and(|entry| !entry.starts_with("sdk"));
            self.success(chain, None, later, origin, out);
        }
    }

    pub(super) fn assistant_block(
        &mut self,
        chain: usize,
        block: &Block<'_>,
        model: &Option<String>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        match block.kind.as_deref() {
            Some("thinking") => {
                self.claude.chains[chain].1.status = Status::Working;
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
                self.claude.chains[chain].1.status = Status::Working;
                let mut event = self.event(chain, EventKind::Text, origin);
                event.text = Some(text.to_owned());
                event.model = model.clone();
                self.emit(event, out);
            }
            Some("tool_use") => {
                if let Some(name) = block.name.as_deref() {
                    self.claude.chains[chain].1.status = Status::Working;
                    self.tool_use(chain, name, block.id.as_deref(), block.input, origin, out);
                    if let Some(event) = out.last_mut() {
                        event.model = model.clone();
                    }
                }
            }
            _ => {}
        }
    }

    pub(super) fn system(
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
                self.claude.chains[chain].1.context_used = post;
                let mut event = self.event(chain, EventKind::CompactBoundary, origin);
                event.trigger = meta.and_then(|meta| meta.trigger.as_deref().map(str::to_owned));
                event.pre_tokens = meta.and_then(|meta| meta.pre_tokens);
                event.post_tokens = post;
                self.emit(event, out);
            }
            Some("turn_duration") => {
                let duration = record.duration_ms_camel.map(|ms| ms.max(0.0) as u64);
                match self.claude.deferred_success.take() {
                    Some(mut success) if self.claude.chains[chain].0.is_main() => {
                        success.duration_ms = duration;
                        self.emit(*success, out);
                    }
                    deferred => {
                        self.claude.deferred_success = deferred;
                        self.success(chain, duration, false, origin, out);
                    }
                }
            }
            // `turn_duration`, when the CLI writes one, comes right after.
            Some("stop_hook_summary") => self.success(chain, None, true, origin, out),
            Some("api_error") => self.system_api_error(chain, record, origin, out),
            Some("api_retry") => self.stream_api_retry(chain, record, origin, out),
            Some("permission_denied") => {
                if let Some(id) = record.tool_use_id.as_deref() {
                    self.permission_denied(chain, id);
                }
            }
            Some("local_command") => {
                let Some(content) = record.content.and_then(record::raw_str) else {
                    return;
                };
                if let Some(command) = slash_command(content.trim_start())
                    && self.claude.chains[chain].0.is_main()
                {
                    self.prompt(chain, &content, Some(command), false, origin, out);
                }
            }
            _ => {}
        }
    }

    /// A turn finished: at most one `success` per turn, on the main chain, and none after an
    /// API error or an interrupt ended it. `defer`: a `turn_duration` record may follow, to
    /// give it its `duration_ms`; it waits for it (see `Normalizer::deferred_success`).
    pub(super) fn success(
        &mut self,
        chain: usize,
        duration_ms: Option<u64>,
        defer: bool,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let (key, state) = &mut self.claude.chains[chain];
        if !key.is_main() {
            return;
        }
        if state.turn_over {
            // A turn the user did not start ended (a background agent's `<task-notification>`
            // turn, 2.1.3xx): no second `success`, but the agent waits for its user again.
            if state.status != Status::WaitingForInput && !state.api_error_ended_turn {
                state.status = Status::WaitingForInput;
                let event = self.event(chain, EventKind::Status, origin);
                self.emit(event, out);
            }
            return;
        }
        state.turn_over = true;
        state.status = Status::WaitingForInput;
        let mut event = self.event(chain, EventKind::Success, origin);
        event.duration_ms = duration_ms;
        if defer {
            if let Some(earlier) = self.claude.deferred_success.replace(Box::new(event)) {
                super::push_event(out, *earlier);
            }
        } else {
            self.emit(event, out);
        }
    }
}

/// `toolUseResult.resolvedModel` of a Task/Agent result: the only place a transcript names the
/// `[1m]` model (its `message.model` drops the suffix).
fn resolved_model(raw: &RawValue) -> Option<String> {
    #[derive(Deserialize)]
    struct AgentResult<'a> {
        #[serde(rename = "resolvedModel", borrow, default)]
        resolved_model: Option<Cow<'a, str>>,
    }
    // Most results are tool outputs (file contents): skip them without a parse.
    if !crate::contains!(raw.get().as_bytes(), b"\"resolvedModel\"") {
        return None;
    }
    let result: AgentResult = serde_json::from_str(raw.get()).ok()?;
    result.resolved_model.map(Cow::into_owned)
}
