//! Gemini CLI's tools in the event vocabulary: which kind each call is, what it works on, and
//! whether it failed. The names are those the CLI 0.61.0 offers the model (its request's
//! `functionDeclarations`), with `search_file_content` (the older name of `grep_search`).

use familiar_model::{ErrorKind, EventKind};
use serde_json::Value;

use super::shapes::ToolCall;

/// The event kind of a call of `name`, and its target (file, pattern, command, query).
pub(crate) fn kind_and_target(name: &str, args: &Value) -> (EventKind, Option<String>) {
    let arg = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
    match name {
        "read_file" => (EventKind::Reading, arg("file_path")),
        "read_many_files" => (EventKind::Reading, first_path(args)),
        "list_directory" => (EventKind::Reading, arg("dir_path")),
        "glob" | "grep_search" | "search_file_content" => (EventKind::Reading, arg("pattern")),
        "google_web_search" => (EventKind::Reading, arg("query")),
        "web_fetch" => (EventKind::Reading, arg("prompt")),
        "replace" | "write_file" | "edit" => (EventKind::Writing, arg("file_path")),
        "run_shell_command" => (EventKind::Bash, arg("command")),
        "list_background_processes" | "read_background_output" => (EventKind::Bash, None),
        // Planning: as Claude Code's TodoWrite, EnterPlanMode, Skill.
        "write_todos" | "enter_plan_mode" | "exit_plan_mode" | "update_topic" => {
            (EventKind::Thinking, arg("title").or_else(|| arg("reason")))
        }
        "activate_skill" => (EventKind::Thinking, arg("name")),
        "invoke_agent" => (EventKind::Tool, arg("agent_name")),
        _ => (EventKind::Tool, None),
    }
}

/// What a subagent was asked (`invoke_agent`'s `prompt`): its first line, at most 200 bytes.
pub(crate) fn task_description(args: &Value) -> Option<String> {
    let prompt = args.get("prompt")?.as_str()?.trim();
    let line = prompt.lines().next()?;
    Some(match line.len() {
        0..=200 => line.to_owned(),
        _ => format!("{}…", &line[..line.floor_char_boundary(200)]),
    })
}

fn first_path(args: &Value) -> Option<String> {
    let paths = args.get("paths").or_else(|| args.get("include"))?;
    paths.as_array()?.first()?.as_str().map(str::to_owned)
}

/// Is this a tool that writes a file (its target counted in `files_modified`)?
pub(crate) fn writes(name: &str) -> bool {
    matches!(name, "replace" | "write_file" | "edit")
}

/// How a call that ran failed, if it did: the error kind and its text.
///
/// - `status: error`: the tool refused or failed (`response.error`, else what the CLI showed);
/// - `status: cancelled`: the user (or the CLI) stopped it;
/// - a `run_shell_command` whose command exited non-zero is a `success` for the CLI: its output
///   says `Exit Code: N` (the shell tool's own line), which the model reads as the failure.
pub(super) fn failure(call: &ToolCall<'_>) -> Option<(ErrorKind, String)> {
    // The result is read only where a failure can be: most calls succeed, some with tens of
    // MB of output.
    let said = |key: &str| match call.response()?.get_mut(key).map(Value::take)? {
        Value::String(text) => Some(text),
        _ => None,
    };
    match call.status.as_deref() {
        Some("error") => {
            let text = said("error")
                .or_else(|| call.display())
                .unwrap_or_else(|| "tool error".to_owned());
            Some((ErrorKind::Tool, text))
        }
        Some("cancelled") => Some((ErrorKind::Interrupted, "tool call cancelled".to_owned())),
        _ if call.name.as_deref() == Some("run_shell_command") => {
            shell_failure(&said("output")?).map(|text| (ErrorKind::Tool, text))
        }
        _ => None,
    }
}

/// A shell result `Output: …\nExit Code: N\n…` with N ≠ 0: its output, or `exit code N`
/// when it printed nothing (`Output: (empty)`).
pub(crate) fn shell_failure(output: &str) -> Option<String> {
    let at = output.rfind("\nExit Code: ")?;
    let code_text = &output[at + "\nExit Code: ".len()..];
    let code: i64 = code_text
        .split(|c: char| !(c.is_ascii_digit() || c == '-'))
        .next()?
        .parse()
        .ok()?;
    if code == 0 {
        return None;
    }
    let before = &output[..at];
    let printed = before
        .find("Output: ")
        .map(|start| before[start + "Output: ".len()..].trim())
        .filter(|printed| !printed.is_empty() && *printed != "(empty)");
    Some(match printed {
        Some(printed) => printed.to_owned(),
        None => format!("exit code {code}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_shell_result_says_its_exit_code() {
        let empty = "<untrusted_context>\nOutput: (empty)\nExit Code: 3\nProcess Group PGID: 1\n</untrusted_context>";
        assert_eq!(shell_failure(empty).as_deref(), Some("exit code 3"));
        let printed = "Output: ls: cannot access 'x'\nExit Code: 2\nProcess Group PGID: 9";
        assert_eq!(
            shell_failure(printed).as_deref(),
            Some("ls: cannot access 'x'")
        );
        assert_eq!(shell_failure("Output: hi\nProcess Group PGID: 9"), None);
        assert_eq!(shell_failure("Output: hi\nExit Code: 0"), None);
    }

    #[test]
    fn tools_map_to_kinds_and_targets() {
        let read = kind_and_target("read_file", &json!({"file_path": "a.txt"}));
        assert_eq!(read, (EventKind::Reading, Some("a.txt".into())));
        let grep = kind_and_target("grep_search", &json!({"pattern": "bye"}));
        assert_eq!(grep, (EventKind::Reading, Some("bye".into())));
        let edit = kind_and_target("replace", &json!({"file_path": "a.txt"}));
        assert_eq!(edit, (EventKind::Writing, Some("a.txt".into())));
        let shell = kind_and_target("run_shell_command", &json!({"command": "exit 3"}));
        assert_eq!(shell, (EventKind::Bash, Some("exit 3".into())));
        let other = kind_and_target("save_memory", &json!({}));
        assert_eq!(other, (EventKind::Tool, None));
    }
}
