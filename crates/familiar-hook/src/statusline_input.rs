//! The JSON an agent CLI pipes into its status-line command (`familiar statusline` reads it):
//! which CLI sent it, and which top-level keys are known. Claude Code's recorded from 2.1.332
//! (`fixtures/statusline/`; 2.1.197 sent a subset), GitHub Copilot CLI's from 1.0.102
//! (`fixtures/copilot-1.0.102/statusline/`), Qwen Code's from 0.24.4
//! (`fixtures/qwen-0.24.4/statusline/`). A key beyond these comes from a newer CLI: the
//! real-CLI tests fail on it, so the drift check (`tests/agents/drift.sh`) names it the day it
//! appears.

use serde_json::Value;

/// Every top-level key 2.1.332 sends (`rate_limits` only to subscription accounts, by its
/// documentation: never seen with an API key).
pub const KNOWN_KEYS: [&str; 16] = [
    "session_id",
    "transcript_path",
    "cwd",
    "prompt_id",
    "effort",
    "model",
    "workspace",
    "version",
    "output_style",
    "cost",
    "exceeds_200k_tokens",
    "fast_mode",
    "thinking",
    "prompt_cache",
    "context_window",
    "rate_limits",
];

/// Every top-level key GitHub Copilot CLI 1.0.102 sends (its `remote` is `{connected:
/// false}` unless the session runs remotely; its `transcript_path` is the session's folder,
/// `session-state/<session id>`, not a file).
pub const COPILOT_KNOWN_KEYS: [&str; 13] = [
    "cwd",
    "session_id",
    "session_name",
    "transcript_path",
    "model",
    "workspace",
    "username",
    "remote",
    "version",
    "cost",
    "context_window",
    "ai_used",
    "allow_all_enabled",
];

/// Every top-level key Qwen Code 0.24.4 sends (`git` inside a git repository, `worktree` in
/// one of its worktrees, `vim` with vim mode on: its source builds them so).
pub const QWEN_KNOWN_KEYS: [&str; 9] = [
    "session_id",
    "version",
    "model",
    "context_window",
    "workspace",
    "git",
    "worktree",
    "metrics",
    "vim",
];

/// Top-level keys only GitHub Copilot CLI sends (1.0.102; never in Claude Code's inputs).
const COPILOT_ONLY_KEYS: [&str; 5] = [
    "session_name",
    "username",
    "remote",
    "ai_used",
    "allow_all_enabled",
];

/// The CLI that ran the status-line command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    ClaudeCode,
    CopilotCli,
    QwenCode,
}

/// Which CLI sent `input`: GitHub Copilot CLI when it has a key only that CLI sends (1.0.102
/// sends all five, in every input; `context_window.last_call_input_tokens` too), Qwen Code
/// when it has its `metrics`, else Claude Code (whose input, an empty one included, is the
/// default).
pub fn caller(input: &Value) -> Caller {
    let Some(object) = input.as_object() else {
        return Caller::ClaudeCode;
    };
    let copilot = COPILOT_ONLY_KEYS
        .iter()
        .any(|key| object.contains_key(*key))
        || input
            .get("context_window")
            .and_then(|window| window.get("last_call_input_tokens"))
            .is_some();
    // Qwen Code's `metrics` (every input), and its `current_usage`, a number where Claude
    // Code's is an object.
    let qwen = object.contains_key("metrics")
        || input
            .get("context_window")
            .and_then(|window| window.get("current_usage"))
            .is_some_and(Value::is_number);
    if copilot {
        Caller::CopilotCli
    } else if qwen {
        Caller::QwenCode
    } else {
        Caller::ClaudeCode
    }
}

/// The top-level keys of `input` Familiar does not know for the CLI that sent it, in order.
pub fn unknown_keys(input: &Value) -> Vec<String> {
    let known: &[&str] = match caller(input) {
        Caller::ClaudeCode => &KNOWN_KEYS,
        Caller::CopilotCli => &COPILOT_KNOWN_KEYS,
        Caller::QwenCode => &QWEN_KNOWN_KEYS,
    };
    input
        .as_object()
        .map(|object| {
            object
                .keys()
                .filter(|key| !known.contains(&key.as_str()))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every recorded input in `dir` (under `fixtures/`), each said to come from `who`.
    fn recorded(dir: &str, who: Caller) -> usize {
        let dir = format!("{}/../../fixtures/{dir}", env!("CARGO_MANIFEST_DIR"));
        let mut read = 0;
        for entry in std::fs::read_dir(&dir).expect("fixtures dir").flatten() {
            let text = std::fs::read_to_string(entry.path()).expect("fixture");
            let input: Value = serde_json::from_str(&text).expect("JSON");
            assert_eq!(caller(&input), who, "{:?}", entry.path());
            assert!(unknown_keys(&input).is_empty(), "{:?}", entry.path());
            read += 1;
        }
        read
    }

    #[test]
    fn every_recorded_input_is_known_and_a_new_key_is_named() {
        assert!(recorded("statusline", Caller::ClaudeCode) >= 3);
        assert!(recorded("copilot-1.0.102/statusline", Caller::CopilotCli) >= 3);
        assert!(recorded("qwen-0.24.4/statusline", Caller::QwenCode) >= 2);
        let newer = serde_json::json!({"session_id": "s", "weather": {"rain": true}});
        assert_eq!(unknown_keys(&newer), ["weather"]);
        let copilot = serde_json::json!({"session_id": "s", "ai_used": {}, "weather": 1});
        assert_eq!(caller(&copilot), Caller::CopilotCli);
        assert_eq!(unknown_keys(&copilot), ["weather"]);
        // An empty or non-object input is Claude Code's (the default caller).
        assert_eq!(caller(&serde_json::json!({})), Caller::ClaudeCode);
        assert_eq!(caller(&serde_json::json!([1])), Caller::ClaudeCode);
    }
}
