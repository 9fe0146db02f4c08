//! Facts read off `familiar events` output, shared by the real-CLI suites (`real_codex.rs`,
//! `real_gemini.rs`): the events of a file as JSON, those of one kind, and the tool uses and
//! tool errors as `(kind, tool, target)` and `(error, tool)` rows to compare with a script.

use std::path::Path;

use serde_json::Value;

/// `familiar events FILE`, each line parsed.
pub fn events(path: &Path) -> Vec<Value> {
    super::watch::familiar_events(path)
        .iter()
        .map(|line| serde_json::from_str(line).expect("event JSON"))
        .collect()
}

pub fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["kind"] == kind).collect()
}

fn text<'a>(event: &'a Value, field: &str) -> &'a str {
    event[field].as_str().unwrap_or("")
}

/// Every event naming a tool but an error's: `(kind, tool, target)`.
pub fn tool_uses(events: &[Value]) -> Vec<(&str, &str, &str)> {
    events
        .iter()
        .filter(|e| e["tool"].is_string() && e["kind"] != "error")
        .map(|e| (text(e, "kind"), text(e, "tool"), text(e, "target")))
        .collect()
}

/// Every error: `(error, tool)`.
pub fn errors(events: &[Value]) -> Vec<(&str, &str)> {
    of_kind(events, "error")
        .iter()
        .map(|e| (text(e, "error"), text(e, "tool")))
        .collect()
}
