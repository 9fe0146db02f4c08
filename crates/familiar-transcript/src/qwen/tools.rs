//! Qwen Code's tools in the event vocabulary. Qwen Code is a fork of Gemini CLI and keeps most
//! of its tool names and arguments (`read_file`, `edit`, `write_file`, `grep_search`, `glob`,
//! `run_shell_command`, …: the one table is Gemini's, [`crate::gemini::tools`]); the names of
//! its own (those its 0.24.4 offers the model in a request's `tools`, or lists in `ToolNames`)
//! are read here.

use familiar_model::{ErrorKind, EventKind};
use serde_json::Value;

use crate::gemini::tools as gemini;

/// The event kind of a call of `name`, and its target.
pub(super) fn kind_and_target(name: &str, args: &Value) -> (EventKind, Option<String>) {
    let arg = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
    match name {
        // Its `list_directory` takes `path` (Gemini CLI's `dir_path`).
        "list_directory" => (EventKind::Reading, arg("path").or_else(|| arg("dir_path"))),
        "web_search" => (EventKind::Reading, arg("query")),
        "notebook_edit" => (EventKind::Writing, arg("notebook_path")),
        "todo_write" | "task_create" | "task_update" | "task_list" => (EventKind::Thinking, None),
        "skill" => (EventKind::Thinking, arg("skill")),
        // A subagent's start (`super::Session::call`).
        "agent" => (EventKind::Tool, arg("subagent_type")),
        _ => gemini::kind_and_target(name, args),
    }
}

/// Is this a tool that writes a file (its target counted in `files_modified`)?
pub(super) fn writes(name: &str) -> bool {
    gemini::writes(name) || name == "notebook_edit"
}

/// How a call that ran failed, from its result's `status` and its `functionResponse`:
/// `error` (the text the model was sent, `response.error`; a shell command that exited
/// non-zero is one, its text `exit code N` or what it printed), `cancelled`.
pub(super) fn failure(
    status: Option<&str>,
    response: Option<&Value>,
    display: Option<&Value>,
) -> Option<(ErrorKind, String)> {
    match status {
        Some("error") => {
            let said = response
                .and_then(|response| response.get("error"))
                .and_then(Value::as_str)
                .or_else(|| display.and_then(Value::as_str))
                .unwrap_or("tool error");
            let text = match display.and_then(shell_result) {
                Some(shell) => shell,
                None => said.to_owned(),
            };
            Some((ErrorKind::Tool, text))
        }
        Some("cancelled") => Some((ErrorKind::Interrupted, "tool call cancelled".to_owned())),
        _ => None,
    }
}

/// A shell command's failure as its `resultDisplay` tells it (`{type: shell_result,
/// exitCode, output, …}`): what it printed, or `exit code N` when it printed nothing.
fn shell_result(display: &Value) -> Option<String> {
    if display.get("type").and_then(Value::as_str) != Some("shell_result") {
        return None;
    }
    let output = display
        .get("output")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or("");
    if !output.is_empty() {
        return Some(output.to_owned());
    }
    let code = display.get("exitCode").and_then(Value::as_i64)?;
    Some(format!("exit code {code}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn qwen_tools_and_failures() {
        let edit = kind_and_target("edit", &json!({"file_path": "/p/a.txt"}));
        assert_eq!(edit, (EventKind::Writing, Some("/p/a.txt".into())));
        let ls = kind_and_target("list_directory", &json!({"path": "/p"}));
        assert_eq!(ls, (EventKind::Reading, Some("/p".into())));
        let glob = kind_and_target("glob", &json!({"pattern": "*.txt"}));
        assert_eq!(glob, (EventKind::Reading, Some("*.txt".into())));
        let shell = json!({"error": "Command: exit 3\nOutput: (empty)\nExit Code: 3"});
        let display = json!({"type": "shell_result", "exitCode": 3, "output": ""});
        assert_eq!(
            failure(Some("error"), Some(&shell), Some(&display)),
            Some((ErrorKind::Tool, "exit code 3".to_owned()))
        );
        let printed =
            json!({"type": "shell_result", "exitCode": 2, "output": "ls: x: No such file\n"});
        assert_eq!(
            failure(Some("error"), None, Some(&printed)),
            Some((ErrorKind::Tool, "ls: x: No such file".to_owned()))
        );
        let missing = json!({"error": "File not found: /p/missing.txt"});
        assert_eq!(
            failure(Some("error"), Some(&missing), None),
            Some((ErrorKind::Tool, "File not found: /p/missing.txt".to_owned()))
        );
        assert_eq!(failure(Some("success"), None, None), None);
    }
}
