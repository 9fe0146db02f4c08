//! Tool calls: a `tool_use` block opens a pending tool (and a subagent link for Task/Agent),
//! its `tool_result` closes it, and an `is_error` result becomes an error event of the right
//! kind. Part of [`super::Normalizer`].

use familiar_model::{ErrorKind, Event, EventKind, Status};
use serde_json::value::RawValue;

use super::parse::cap_text;
use super::{Normalizer, Origin, PendingTool, id_hash};
use crate::record;
use crate::tools::{self, ToolInput};

impl Normalizer {
    pub(super) fn tool_use(
        &mut self,
        chain: usize,
        name: &str,
        id: Option<&str>,
        input: Option<&RawValue>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let kind = tools::classify(name);
        let plan_change = super::plan::change(&self.claude.tasks, name, id, input);
        let input = ToolInput::parse(input);
        let modified = input
            .modified_path()
            .filter(|_| tools::modifies_files(name));
        self.metrics.count_call(name, modified);
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
            let state = &mut self.claude.chains[chain].1;
            state.push_pending(PendingTool {
                id_hash: id_hash(id),
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
        event.plan_change = plan_change;
        if let Some((agent_type, description)) = subagent {
            event.agent_type = agent_type;
            event.description = description;
        }
        self.emit(event, out);
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn tool_result(
        &mut self,
        chain: usize,
        id: &str,
        content: Option<&RawValue>,
        is_error: Option<bool>,
        result: ResultOf,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let state = &mut self.claude.chains[chain].1;
        let tool = state.take_pending(id, |_| true);
        let denied_by_rules = match state.denied.iter().position(|denied| denied == id) {
            Some(index) => {
                state.denied.swap_remove(index);
                true
            }
            None => result.denied_by_rules,
        };
        if let Some(tool) = &tool {
            self.claude.tasks.result(&tool.name, id, content);
        }
        let state = &mut self.claude.chains[chain].1;
        if !state.turn_over {
            state.settle_status();
        }
        let (name, target) = match tool {
            // A background agent (2.1.3xx): the result only says it was launched; it ends at
            // its `<task-notification>`.
            Some(tool) if tool.subagent.is_some() && result.async_launch => {
                state.push_pending(tool);
                return;
            }
            Some(tool) if tool.subagent.is_some() => {
                let named = (Some(tool.name.clone()), tool.target.clone());
                self.subagent_end(chain, tool, origin, out);
                named
            }
            Some(tool) => (Some(tool.name), tool.target),
            None => (None, None),
        };
        if is_error != Some(true) {
            return;
        }
        let text = content.and_then(record::raw_text).unwrap_or_default();
        let trimmed = without_cli_markup(text.trim());
        let error = if denied_by_rules {
            ErrorKind::Denied
        } else if trimmed.starts_with("The user doesn't want to proceed with this tool use")
            || trimmed.starts_with("The user doesn't want to take this action")
        {
            ErrorKind::Rejected
        } else if trimmed.starts_with("[Request interrupted by user") {
            ErrorKind::Interrupted
        } else if is_permission_denial(trimmed) {
            ErrorKind::Denied
        } else {
            ErrorKind::Tool
        };
        if matches!(error, ErrorKind::Rejected | ErrorKind::Interrupted) {
            self.claude.chains[chain].1.status = Status::WaitingForInput;
        }
        let mut event = self.event(chain, EventKind::Error, origin);
        event.error = Some(error);
        event.text = Some(cap_text(trimmed));
        event.tool_use_id = Some(id.to_owned());
        event.tool = name;
        event.target = target;
        self.emit(event, out);
    }

    /// A Task/Agent call's subagent is done: its result, or (a background agent) its
    /// `<task-notification>`.
    pub(super) fn subagent_end(
        &mut self,
        chain: usize,
        tool: PendingTool,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let mut event = self.event(chain, EventKind::SubagentEnd, origin);
        event.tool = Some(tool.name);
        event.target = tool.target;
        event.tool_use_id = Some(tool.id);
        if let Some((agent_type, description)) = tool.subagent {
            event.agent_type = agent_type;
            event.description = description;
        }
        self.emit(event, out);
    }

    /// stream-json `permission_denied`: the CLI's rules refused this tool use; its result
    /// follows.
    pub(super) fn permission_denied(&mut self, chain: usize, id: &str) {
        let denied = &mut self.claude.chains[chain].1.denied;
        if denied.len() == 16 {
            denied.remove(0);
        }
        denied.push(id.to_owned());
    }

    /// `<task-notification>` (2.1.3xx): a background agent stopped; the Task/Agent call it
    /// names (`<tool-use-id>`) is over.
    pub(super) fn task_notification(
        &mut self,
        chain: usize,
        text: &str,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let Some(id) = tag(text, "tool-use-id") else {
            return;
        };
        if let Some(tool) = self.claude.chains[chain].1.take_subagent(id) {
            self.subagent_end(chain, tool, origin, out);
        }
    }
}

/// What a tool result's record says beside the result itself.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ResultOf {
    /// The CLI's own rules refused the tool, asking nobody: `permissionDecision` with
    /// `decision: reject` and a `source` other than the user (2.1.3xx).
    pub(super) denied_by_rules: bool,
    /// A Task/Agent call that launched a background agent (`toolUseResult.status:
    /// async_launched`, 2.1.3xx): the subagent goes on.
    pub(super) async_launch: bool,
}

impl ResultOf {
    pub(super) fn of(record: &record::Record<'_>) -> ResultOf {
        #[derive(serde::Deserialize, Default)]
        #[serde(default)]
        struct Decision<'a> {
            #[serde(borrow)]
            decision: Option<std::borrow::Cow<'a, str>>,
            #[serde(borrow)]
            source: Option<std::borrow::Cow<'a, str>>,
        }
        let denied_by_rules = record
            .permission_decision
            .and_then(|raw| serde_json::from_str::<Decision>(raw.get()).ok())
            .is_some_and(|decision| {
                decision.decision.as_deref() == Some("reject")
                    && decision.source.as_deref() != Some("user")
            });
        // Most results are tool outputs: look for the marker before parsing anything.
        let async_launch = record.tool_use_result.is_some_and(|raw| {
            let text = raw.get();
            crate::contains!(text.as_bytes(), b"\"async_launched\"")
                && serde_json::from_str::<serde_json::Value>(text)
                    .is_ok_and(|value| value["status"] == "async_launched")
        });
        ResultOf {
            denied_by_rules,
            async_launch,
        }
    }
}

/// A tool error as the CLI wrote it, without the tags it wraps its own refusals in
/// (`<tool_use_error>File does not exist.</tool_use_error>`): markup for the model, not words
/// for a person (the window's log, a notification).
fn without_cli_markup(text: &str) -> &str {
    text.strip_prefix("<tool_use_error>")
        .map(|inner| inner.strip_suffix("</tool_use_error>").unwrap_or(inner))
        .map_or(text, str::trim)
}

/// The text between `<name>` and `</name>` in `text`.
fn tag<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    let open = format!("<{name}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&format!("</{name}>"))? + start;
    Some(text[start..end].trim())
}

/// The CLI refused the tool by its own permission rules, asking nobody (`-p` runs): the two
/// messages Claude Code 2.1.197 writes as the tool result.
fn is_permission_denial(text: &str) -> bool {
    (text.contains(" was blocked. For security, Claude Code may only "))
        || (text.starts_with("Claude requested permissions to ")
            && text.contains("but you haven't granted it yet"))
}
