//! End-to-end: the notifications the shipped `notify-errors.rhai` sends for API errors, as
//! `familiar run` prints them for real transcripts, read as a person reads them (issue 13: the
//! body was the API's raw JSON, `API Error: 500 {"type":"error",...}`).

mod common;

use std::path::Path;

use common::{Test, fixture, ndjson, real_fixture};

fn notifications(input: &Path) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/notify-errors.rhai");
    let output = Test::new()
        .arg("run")
        .arg(script)
        .arg("--input")
        .arg(input)
        .stderr("")
        .run();
    ndjson(&output)
        .iter()
        .filter(|a| a["action"] == "notify" && a["event"] == "error")
        .map(|a| {
            format!(
                "line {} [{}] {}\n    {}\n",
                a["line"],
                a["urgency"].as_str().unwrap_or("normal"),
                a["title"].as_str().unwrap_or_default(),
                a["body"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

#[test]
fn api_error_notification_is_a_sentence_not_raw_json() {
    let mut all = String::new();
    for (name, path) in [
        (
            "v2.1.56 (real): 500s with a JSON body",
            real_fixture("v2.1.56-erk-api-error-turn-duration.jsonl"),
        ),
        (
            "v2.0.65 (real): connection refused, retried",
            real_fixture("v2.0.65-slopometry-api-error-compact-summary.jsonl"),
        ),
        (
            "2.1.197: 529 overloaded",
            fixture("claude-2.1.197/overload.jsonl"),
        ),
        (
            "2.1.197: 429 rejected",
            fixture("claude-2.1.197/ratelimit.jsonl"),
        ),
    ] {
        all.push_str(&format!("== {name}\n{}", notifications(&path)));
    }
    assert!(!all.contains('{'), "raw JSON in a notification:\n{all}");
    insta::assert_snapshot!(all);
}

/// Issue 25: Codex 0.171's failed turns (`fixtures/codex-0.171.0/`, written by the real CLI
/// against the mock's 429, 500, 400 and 503) notify with one readable line: for the 400 Codex
/// wrote the body's JSON as the error's message, for the 503 the request's URL after it.
#[test]
fn codex_api_error_notifications_are_sentences_not_raw_json() {
    let mut all = String::new();
    for name in ["ratelimit", "servererror", "badrequest", "unavailable"] {
        let path = fixture(&format!("codex-0.171.0/{name}.jsonl"));
        all.push_str(&format!("== {name}\n{}", notifications(&path)));
    }
    assert_eq!(
        all.matches("\n    ").count(),
        4,
        "one notification each:\n{all}"
    );
    assert!(!all.contains('{'), "raw JSON in a notification:\n{all}");
    assert!(!all.contains("url:"), "a URL in a notification:\n{all}");
    insta::assert_snapshot!(all);
}
