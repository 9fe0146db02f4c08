//! The JSON Claude Code pipes into its `statusLine` command (`familiar statusline` reads it):
//! which top-level keys are known. Recorded from 2.1.332 (`fixtures/statusline/`); 2.1.197
//! sent a subset. A key beyond these comes from a newer CLI: the real-CLI tests fail on it,
//! so the drift check (`tests/agents/drift.sh`) names it the day it appears.

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

/// The top-level keys of `input` Familiar does not know, in order.
pub fn unknown_keys(input: &Value) -> Vec<String> {
    input
        .as_object()
        .map(|object| {
            object
                .keys()
                .filter(|key| !KNOWN_KEYS.contains(&key.as_str()))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_recorded_input_is_known_and_a_new_key_is_named() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/statusline");
        let mut read = 0;
        for entry in std::fs::read_dir(dir)
            .expect("fixtures/statusline")
            .flatten()
        {
            let text = std::fs::read_to_string(entry.path()).expect("fixture");
            let input: Value = serde_json::from_str(&text).expect("JSON");
            assert!(unknown_keys(&input).is_empty(), "{:?}", entry.path());
            read += 1;
        }
        assert!(read >= 3);
        let newer = serde_json::json!({"session_id": "s", "weather": {"rain": true}});
        assert_eq!(unknown_keys(&newer), ["weather"]);
    }
}
