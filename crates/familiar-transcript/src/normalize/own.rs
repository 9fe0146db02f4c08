//! The CLIs whose records a reader of their own reads from the line's text (Gemini CLI, Qwen
//! Code, Copilot CLI, opencode; `crate::agent::ReadsLines`): which one a record is for, and
//! handing it over. Their `type` names may be Claude Code's, so this is asked first.

use familiar_model::Event;

use super::Normalizer;
use crate::agent::{LineMeta, ReadsLines};
use crate::metrics::Metrics;

/// The readers with a state machine of their own.
#[derive(Debug, Clone, Copy)]
pub(super) enum Own {
    Gemini,
    Qwen,
    Copilot,
    Opencode,
}

impl Normalizer {
    /// Whose record this is, if another CLI's reader reads it: the one already reading this
    /// input, or the one whose shape it has. `claude_message`: the record's `message` has
    /// Claude's `content`, which a Qwen Code message never has (its messages are Gemini API
    /// contents, `parts`), so its line is not searched for Qwen Code's shape: the search went
    /// through every big line (tool results, pastes), a thirtieth of `familiar stats`.
    pub(super) fn own_reader(
        &self,
        kind: Option<&str>,
        json: &str,
        claude_message: bool,
    ) -> Option<Own> {
        if self.gemini.is_some() || crate::gemini::is_record(kind, json) {
            Some(Own::Gemini)
        } else if self.qwen.is_some() || (!claude_message && crate::qwen::is_record(kind, json)) {
            Some(Own::Qwen)
        } else if self.copilot.is_some() || crate::copilot::is_record(kind, json) {
            Some(Own::Copilot)
        } else if self.opencode.is_some() || crate::opencode::is_record(kind) {
            Some(Own::Opencode)
        } else {
            None
        }
    }

    /// The record through `own`'s reader.
    pub(super) fn read_own(&mut self, own: Own, json: &str, meta: &LineMeta, out: &mut Vec<Event>) {
        let metrics = &mut self.metrics;
        match own {
            Own::Gemini => read_with(&mut self.gemini, json, meta, metrics, out),
            Own::Qwen => read_with(&mut self.qwen, json, meta, metrics, out),
            Own::Copilot => read_with(&mut self.copilot, json, meta, metrics, out),
            Own::Opencode => read_with(&mut self.opencode, json, meta, metrics, out),
        }
    }
}

/// `json` through the reader in `slot`, made at its first record.
fn read_with<R: ReadsLines + Default>(
    slot: &mut Option<Box<R>>,
    json: &str,
    meta: &LineMeta,
    metrics: &mut Metrics,
    out: &mut Vec<Event>,
) {
    slot.get_or_insert_with(Default::default)
        .read(json, meta, metrics, out);
}
