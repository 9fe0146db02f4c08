//! What the calling CLI's status-line input says, in one shape whichever CLI sent it
//! ([`Said`]): Claude Code's, GitHub Copilot CLI's and Qwen Code's JSON (told apart by
//! [`familiar_hook::statusline_input::caller`]). Pure: no file is read here.
//!
//! GitHub Copilot CLI 1.0.102 (`fixtures/copilot-1.0.102/statusline/`) sends
//! `transcript_path` as the session's folder (`$COPILOT_HOME/session-state/<session id>`), whose
//! `events.jsonl` is the session file. Its `context_window` holds running totals
//! (`total_input_tokens`, ...) and the last request's (`last_call_input_tokens`,
//! `last_call_output_tokens`), the window (`context_window_size`, null in the very first input
//! of a session; `displayed_context_limit`) and `used_percentage`, which is the last request's
//! input and output of the window, rounded: the context is the last request's input and output
//! (what Familiar's reader takes from the session's last `session.usage_record`). Its
//! `current_usage`, unlike Claude Code's, is the session's running total (3,000 input tokens
//! after two requests of 1,500), so it is not read; nor is `current_context_tokens`, the CLI's
//! own local estimate for its model badge (12,478 before any request against the mock).
//!
//! Qwen Code 0.24.4 (`fixtures/qwen-0.24.4/statusline/`) sends no path: its session file is
//! `<Qwen dir>/projects/<workspace.current_dir, every other character than a letter or digit a
//! dash>/chats/<session_id>.jsonl`. Its `context_window.current_usage` is a number, the last
//! request's prompt tokens (0 before the first), of `context_window_size`.

use std::path::{Path, PathBuf};

use familiar_hook::statusline_input::{Caller, caller};
use serde::Deserialize;
use serde_json::Value;

/// Copilot CLI's session file in its session folder.
const COPILOT_EVENTS: &str = "events.jsonl";

/// What the CLI said, as `familiar statusline` uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    pub caller: Caller,
    /// The session file to read (for Copilot CLI, the folder's `events.jsonl`).
    pub transcript: Option<PathBuf>,
    /// For Copilot CLI without a `transcript_path`, and Qwen Code: the session id, a safe
    /// file name.
    pub session_id: Option<String>,
    /// Qwen Code: the project the session runs in (`workspace.current_dir`).
    pub project: Option<PathBuf>,
    pub model_id: Option<String>,
    /// The display name says "1M" (Claude Code's "Opus 4.8 (1M context)").
    pub display_1m: bool,
    /// The window, in tokens, as the CLI counts it.
    pub window: Option<u64>,
    /// The context used, as the CLI counts it (`None` before the first answer).
    pub used: Option<u64>,
    /// Of the window, as the CLI rounds it.
    pub used_percentage: Option<f64>,
}

impl Said {
    /// What `input` says (an empty input says nothing, as Claude Code's).
    pub fn from_json(input: &Value) -> Result<Said, serde_json::Error> {
        match caller(input) {
            Caller::ClaudeCode => Ok(claude(ClaudeInput::deserialize(input)?)),
            Caller::CopilotCli => Ok(copilot(CopilotInput::deserialize(input)?)),
            Caller::QwenCode => Ok(qwen(QwenInput::deserialize(input)?)),
        }
    }

    /// Nothing said: stdin was empty (`--transcript` names the file).
    pub fn nothing() -> Said {
        claude(ClaudeInput::default())
    }
}

/// The fields of Claude Code's statusline input that are used; the rest is ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClaudeInput {
    transcript_path: Option<PathBuf>,
    model: Option<InputModel>,
    context_window: Option<ClaudeWindow>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct InputModel {
    id: Option<String>,
    display_name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClaudeWindow {
    context_window_size: Option<u64>,
    /// The last answer's usage (null before the first and after a compaction).
    current_usage: Option<ClaudeUsage>,
    /// Of the window, as the CLI rounds it (an integer in 2.1.332).
    used_percentage: Option<f64>,
}

/// `context_window.current_usage`: the latest API usage, the context is its input side.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClaudeUsage {
    input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

impl ClaudeUsage {
    /// Tokens in the context: input + cache writes + cache reads, as `context_used`.
    fn context(&self) -> Option<u64> {
        let parts = [
            self.input_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        ];
        parts
            .iter()
            .any(Option::is_some)
            .then(|| parts.iter().flatten().sum())
    }
}

fn claude(input: ClaudeInput) -> Said {
    let model = input.model.unwrap_or_default();
    let window = input.context_window.unwrap_or_default();
    Said {
        caller: Caller::ClaudeCode,
        transcript: input.transcript_path,
        session_id: None,
        project: None,
        display_1m: model
            .display_name
            .as_deref()
            .is_some_and(|name| name.contains("1M")),
        model_id: model.id,
        window: window.context_window_size,
        used: window.current_usage.as_ref().and_then(ClaudeUsage::context),
        used_percentage: window.used_percentage,
    }
}

/// The fields of GitHub Copilot CLI's statusline input that are used.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CopilotInput {
    session_id: Option<String>,
    transcript_path: Option<PathBuf>,
    model: Option<InputModel>,
    context_window: Option<CopilotWindow>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CopilotWindow {
    /// The session's running total (0 before the first answer).
    total_tokens: Option<u64>,
    context_window_size: Option<u64>,
    displayed_context_limit: Option<u64>,
    used_percentage: Option<f64>,
    last_call_input_tokens: Option<u64>,
    last_call_output_tokens: Option<u64>,
}

fn copilot(input: CopilotInput) -> Said {
    let model = input.model.unwrap_or_default();
    let window = input.context_window.unwrap_or_default();
    // Before the first answer every count is 0: no figure yet, as Claude Code's null.
    let answered = window.total_tokens.unwrap_or(0) > 0;
    let last_call = [
        window.last_call_input_tokens,
        window.last_call_output_tokens,
    ];
    let used = (answered && last_call.iter().any(Option::is_some))
        .then(|| last_call.iter().flatten().sum());
    Said {
        caller: Caller::CopilotCli,
        transcript: input.transcript_path.map(|path| copilot_events(&path)),
        session_id: input.session_id.filter(|id| safe_file_name(id)),
        project: None,
        display_1m: false,
        model_id: model.id,
        window: window
            .context_window_size
            .or(window.displayed_context_limit)
            .filter(|&size| size > 0),
        used,
        used_percentage: window.used_percentage.filter(|_| used.is_some()),
    }
}

/// The fields of Qwen Code's statusline input that are used.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct QwenInput {
    session_id: Option<String>,
    model: Option<InputModel>,
    context_window: Option<QwenWindow>,
    workspace: Option<QwenWorkspace>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct QwenWindow {
    context_window_size: Option<u64>,
    /// The last request's prompt tokens (0 before the first).
    current_usage: Option<u64>,
    used_percentage: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct QwenWorkspace {
    current_dir: Option<PathBuf>,
}

fn qwen(input: QwenInput) -> Said {
    let model = input.model.unwrap_or_default();
    let window = input.context_window.unwrap_or_default();
    // 0 before the first answer: no figure yet.
    let used = window.current_usage.filter(|&used| used > 0);
    Said {
        caller: Caller::QwenCode,
        transcript: None,
        session_id: input.session_id.filter(|id| safe_file_name(id)),
        project: input
            .workspace
            .and_then(|workspace| workspace.current_dir)
            .filter(|dir| dir.is_absolute()),
        display_1m: false,
        // Qwen Code names its model by its id.
        model_id: model.display_name,
        window: window.context_window_size.filter(|&size| size > 0),
        used,
        used_percentage: window.used_percentage.filter(|_| used.is_some()),
    }
}

/// Qwen Code's session file for a session of `project`, in its dir.
pub fn qwen_session_file(qwen_dir: &Path, project: &Path, session_id: &str) -> PathBuf {
    let encoded: String = project
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    qwen_dir
        .join("projects")
        .join(encoded)
        .join("chats")
        .join(format!("{session_id}.jsonl"))
}

/// The session file of a Copilot CLI `transcript_path`: the folder's `events.jsonl` (a path
/// that already names it is kept).
fn copilot_events(path: &Path) -> PathBuf {
    if path.file_name().is_some_and(|name| name == COPILOT_EVENTS) {
        path.to_owned()
    } else {
        path.join(COPILOT_EVENTS)
    }
}

/// `$COPILOT_HOME/session-state/<id>/events.jsonl`'s `<id>`: one plain path component.
fn safe_file_name(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Copilot CLI's session file for a session id, in its dir.
pub fn copilot_session_file(copilot_dir: &Path, session_id: &str) -> PathBuf {
    copilot_dir
        .join("session-state")
        .join(session_id)
        .join(COPILOT_EVENTS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let path = format!(
            "{}/fixtures/copilot-1.0.102/statusline/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON")
    }

    #[test]
    fn copilot_cli_says_its_session_folder_window_and_last_request() {
        let turn = Said::from_json(&fixture("turn")).expect("input");
        assert_eq!(turn.caller, Caller::CopilotCli);
        assert_eq!(
            turn.transcript.as_deref(),
            Some(Path::new(
                "/tmp/familiar-copilot/home/.copilot/session-state/\
                 424ea553-8b0e-4421-be0f-68af861b4a9b/events.jsonl"
            ))
        );
        assert_eq!(turn.model_id.as_deref(), Some("gpt-4.1"));
        assert_eq!(turn.window, Some(64_000));
        // The last request (1,500 in, 20 out), not the running total in `current_usage`.
        assert_eq!(turn.used, Some(1_520));
        assert_eq!(turn.used_percentage, Some(2.0));
        // Before the first answer: the window, no figure.
        let start = Said::from_json(&fixture("start")).expect("input");
        assert_eq!(
            (start.window, start.used, start.used_percentage),
            (Some(64_000), None, None)
        );
        let working = Said::from_json(&fixture("working")).expect("input");
        assert_eq!(working.used, None);
    }

    #[test]
    fn qwen_code_says_its_project_session_window_and_last_prompt() {
        let path = |name: &str| {
            format!(
                "{}/fixtures/qwen-0.24.4/statusline/{name}.json",
                env!("CARGO_MANIFEST_DIR")
            )
        };
        let read = |name: &str| -> Value {
            serde_json::from_str(&std::fs::read_to_string(path(name)).expect("fixture"))
                .expect("JSON")
        };
        let turn = Said::from_json(&read("turn")).expect("input");
        assert_eq!(turn.caller, Caller::QwenCode);
        assert_eq!(turn.transcript, None);
        assert_eq!(turn.model_id.as_deref(), Some("qwen3-coder-plus"));
        assert_eq!((turn.window, turn.used), (Some(1_000_000), Some(2_000)));
        let (project, id) = (
            turn.project.as_deref().expect("project"),
            turn.session_id.as_deref().expect("session id"),
        );
        assert_eq!(
            qwen_session_file(Path::new("/h/.qwen"), project, id),
            Path::new(
                "/h/.qwen/projects/-tmp-familiar-qwen-project/chats/\
                 276ec4d7-cc74-4ca4-8db5-622cbb1d6e72.jsonl"
            )
        );
        // Before the first request: the window, no figure.
        let start = Said::from_json(&read("start")).expect("input");
        assert_eq!((start.window, start.used), (Some(1_000_000), None));
        // A relative project names no file.
        let input = serde_json::json!({"session_id": "s", "metrics": {},
            "workspace": {"current_dir": "../x"}});
        assert_eq!(Said::from_json(&input).expect("input").project, None);
    }

    #[test]
    fn a_session_id_is_a_file_name_or_nothing() {
        let input = serde_json::json!({"session_id": "../../etc", "ai_used": {}});
        let said = Said::from_json(&input).expect("input");
        assert_eq!((said.transcript, said.session_id), (None, None));
        let input = serde_json::json!({"session_id": "abc-1_2", "ai_used": {}});
        assert_eq!(
            Said::from_json(&input)
                .expect("input")
                .session_id
                .as_deref(),
            Some("abc-1_2")
        );
        // A path that names the file already is kept.
        let input = serde_json::json!({"transcript_path": "/s/events.jsonl", "ai_used": {}});
        assert_eq!(
            Said::from_json(&input)
                .expect("input")
                .transcript
                .as_deref(),
            Some(Path::new("/s/events.jsonl"))
        );
    }

    #[test]
    fn claude_code_input_reads_as_before() {
        let input = serde_json::json!({
            "transcript_path": "/t.jsonl",
            "model": {"id": "claude-opus-4-8", "display_name": "Opus 4.8 (1M context)"},
            "context_window": {"context_window_size": 1_000_000, "used_percentage": 3,
                "current_usage": {"input_tokens": 10, "cache_read_input_tokens": 30_000}},
        });
        let said = Said::from_json(&input).expect("input");
        assert_eq!(said.caller, Caller::ClaudeCode);
        assert!(said.display_1m);
        assert_eq!(said.used, Some(30_010));
        assert_eq!(said.transcript.as_deref(), Some(Path::new("/t.jsonl")));
    }
}
