//! opencode's tools in the event vocabulary: which kind each call is, what it works on, and
//! whether it failed. The names are those opencode 1.18.33 offers the model (its request's
//! `tools`, seen against the mock in `tests/real_opencode.rs`: `bash`, `edit`, `glob`,
//! `grep`, `read`, `skill`, `task`, `todowrite`, `webfetch`, `write`).

use familiar_model::{ErrorKind, EventKind};
use serde_json::Value;

/// The event kind of a call of `name`, and its target (file, pattern, command).
pub(super) fn kind_and_target(name: &str, input: &Value) -> (EventKind, Option<String>) {
    let arg = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_owned);
    match name {
        "read" | "list" => (EventKind::Reading, arg("filePath").or_else(|| arg("path"))),
        "grep" | "glob" => (EventKind::Reading, arg("pattern")),
        "write" | "edit" | "multiedit" => (EventKind::Writing, arg("filePath")),
        "patch" | "apply_patch" => (EventKind::Writing, None),
        "bash" => (EventKind::Bash, arg("command")),
        "task" => (EventKind::Tool, arg("subagent_type")),
        "webfetch" | "websearch" => (EventKind::Tool, arg("url").or_else(|| arg("query"))),
        "skill" => (EventKind::Thinking, arg("name")),
        _ => (EventKind::Tool, None),
    }
}

/// Is this a tool that writes a file (its target counted in `files_modified`)?
pub(super) fn writes(name: &str) -> bool {
    matches!(name, "write" | "edit" | "multiedit")
}

/// A finished call that failed, from its part's `state`: `status: error` with its `error`
/// text (a missing file, a search that could not run), or a shell command that exited
/// non-zero (seen: `exit 3` is written `status: completed` with `metadata.exit: 3`).
pub(super) fn failure(state: &Value) -> Option<(ErrorKind, String)> {
    let text = |key: &str| state.get(key).and_then(Value::as_str).map(str::trim);
    match state.get("status").and_then(Value::as_str) {
        Some("error") => {
            let said = text("error")
                .filter(|t| !t.is_empty())
                .unwrap_or("the tool failed");
            let kind = if said.contains("rejected permission") {
                ErrorKind::Denied
            } else {
                ErrorKind::Tool
            };
            Some((kind, said.to_owned()))
        }
        Some("completed") => {
            let code = state
                .get("metadata")
                .and_then(|metadata| metadata.get("exit"))
                .and_then(Value::as_i64)
                .filter(|&code| code != 0)?;
            let output =
                text("output").filter(|output| !output.is_empty() && *output != "(no output)");
            Some((
                ErrorKind::Tool,
                output.map_or_else(|| format!("exit code {code}"), str::to_owned),
            ))
        }
        _ => None,
    }
}
