//! Tool calls: a `tool_use` block opens a pending tool (and a subagent link for Task/Agent),
//! its `tool_result` closes it, and an `is_error` result becomes an error event of the right
//! kind. Part of [`super::Normalizer`].

use familiar_model::{ErrorKind, Event, EventKind, Status};
use serde_json::value::RawValue;

use super::parse::cap_text;
use super::{MAX_PENDING_TOOLS, Normalizer, Origin, PendingTool, id_hash};
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
        if let Some(count) = self.metrics.tool_calls.get_mut(name) {
            *count += 1;
        } else {
            self.metrics.tool_calls.insert(name.to_owned(), 1);
        }
        let kind = tools::classify(name);
        let plan_change = super::plan::change(&self.tasks, name, id, input);
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
                state.pending.pop_front();
            }
            state.pending.push_back(PendingTool {
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

    pub(super) fn tool_result(
        &mut self,
        chain: usize,
        id: &str,
        content: Option<&RawValue>,
        is_error: Option<bool>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let state = &mut self.chains[chain].1;
        let hash = id_hash(id);
        let tool = state
            .pending
            .iter()
            .position(|tool| tool.id_hash == hash && tool.id == id)
            .and_then(|index| state.pending.remove(index));
        if let Some(tool) = &tool {
            self.tasks.result(&tool.name, id, content);
        }
        let state = &mut self.chains[chain].1;
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
        } else if is_permission_denial(trimmed) {
            ErrorKind::Denied
        } else {
            ErrorKind::Tool
        };
        if matches!(error, ErrorKind::Rejected | ErrorKind::Interrupted) {
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
}

/// The CLI refused the tool by its own permission rules, asking nobody (`-p` runs): the two
/// messages Claude Code 2.1.197 writes as the tool result.
fn is_permission_denial(text: &str) -> bool {
    (text.contains(" was blocked. For security, Claude Code may only "))
        || (text.starts_with("Claude requested permissions to ")
            && text.contains("but you haven't granted it yet"))
}
