//! Copilot CLI's tools in the event vocabulary: which kind each call is, what it works on, and
//! whether it failed. The names are those the CLI 1.0.102 offers the model (its request's
//! `tools`, seen against the mock in `tests/real_copilot.rs`).

use familiar_model::{ErrorKind, EventKind};
use serde_json::Value;

/// The event kind of a call of `name`, and its target (file, pattern, command).
pub(super) fn kind_and_target(name: &str, args: &Value) -> (EventKind, Option<String>) {
    let arg = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
    match name {
        "view" => (EventKind::Reading, arg("path")),
        "grep" | "glob" => (EventKind::Reading, arg("pattern")),
        "create" | "edit" => (EventKind::Writing, arg("path")),
        "bash" | "powershell" => (EventKind::Bash, arg("command")),
        "read_bash" | "stop_bash" | "list_bash" | "read_powershell" | "stop_powershell" => {
            (EventKind::Bash, None)
        }
        "task" => (EventKind::Tool, arg("agent_type")),
        "skill" => (EventKind::Thinking, arg("skill")),
        _ => (EventKind::Tool, None),
    }
}

/// Is this a tool that writes a file (its target counted in `files_modified`)?
pub(super) fn writes(name: &str) -> bool {
    matches!(name, "create" | "edit")
}

/// A failed call, as `tool.execution_complete` tells it: `success: false` with its `error`
/// (`code: denied` when a permission was refused), or a shell command that exited non-zero
/// (`shellExecution.exitCode`: the CLI counts that a success).
pub(super) fn failure(data: &Value) -> Option<(ErrorKind, String)> {
    if data.get("success").and_then(Value::as_bool) == Some(false) {
        let error = data.get("error");
        let said = error
            .and_then(|error| error.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("the tool failed");
        let kind = match error
            .and_then(|error| error.get("code"))
            .and_then(Value::as_str)
        {
            Some("denied") => ErrorKind::Denied,
            _ => ErrorKind::Tool,
        };
        return Some((kind, said.to_owned()));
    }
    let code = data
        .get("shellExecution")
        .and_then(|shell| shell.get("exitCode"))
        .and_then(Value::as_i64)
        .filter(|&code| code != 0)?;
    let output = data
        .get("result")
        .and_then(|result| result.get("content"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|output| !output.is_empty());
    Some((
        ErrorKind::Tool,
        output.map_or_else(|| format!("exit code {code}"), str::to_owned),
    ))
}
