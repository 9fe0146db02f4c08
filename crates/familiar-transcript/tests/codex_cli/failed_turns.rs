//! Issue 25 on the turns Codex 0.171.0 failed on an API error (`fixtures/codex-0.171.0/`, each
//! answered with the same error every time by the mock): the window comes from `task_started`,
//! which is all a turn that fails before its first `token_count` says of it; the `error_code`
//! follows docs/events.md (`server_error` for a 5xx, also when Codex names it with a bare
//! string); the `message` a notification shows is one clean line, never the API's JSON.

use super::*;

/// The rollout's events, and the normalizer's session state after it.
fn read_with(name: &str, config: NormalizerConfig) -> (Vec<Event>, Normalizer) {
    let mut normalizer = Normalizer::new(config);
    let mut events = Vec::new();
    for (number, line) in bytes_of(PINNED, name).split(|&b| b == b'\n').enumerate() {
        normalizer
            .push_line(line, number as u64 + 1, &mut events)
            .expect("every line parses");
    }
    (events, normalizer)
}

fn the_error(events: &[Event]) -> &Event {
    let errors = of_kind(events, EventKind::Error);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].error, Some(ErrorKind::Api));
    assert_eq!(errors[0].status, Status::WaitingForInput);
    errors[0]
}

#[test]
fn a_turn_that_fails_before_any_token_count_has_the_window_task_started_says() {
    // The default window of gpt-5.5 (258400), and the configured one: `-c
    // model_context_window=128000`, of which Codex says 95%.
    for (name, window) in [("ratelimit.jsonl", 258_400), ("servererror.jsonl", 121_600)] {
        let text = String::from_utf8(bytes_of(PINNED, name)).expect("UTF-8");
        assert!(!text.contains("\"type\":\"token_count\""), "{name}");
        let (events, normalizer) = read_with(name, NormalizerConfig::default());
        // The session starts on line 1, before `task_started` (line 2) said the window.
        assert_eq!(events[0].kind, EventKind::SessionStart);
        for event in &events[1..] {
            assert_eq!(event.context_limit, window, "{name}: {event:?}");
        }
        assert_eq!(the_error(&events).context_limit, window, "{name}");
        // What `sessions` and `stats` show.
        assert_eq!(normalizer.context_limit(), window, "{name}");
        assert_eq!(normalizer.context_used(), None, "{name}");
        // `--context-limit` still wins.
        let explicit = NormalizerConfig {
            context_limit: Some(50_000),
            ..NormalizerConfig::default()
        };
        let (events, normalizer) = read_with(name, explicit);
        assert!(events.iter().all(|e| e.context_limit == 50_000), "{name}");
        assert_eq!(normalizer.context_limit(), 50_000, "{name}");
    }
}

#[test]
fn the_window_is_known_from_the_first_turn_of_a_session_that_works() {
    let events = events_in(PINNED, "main.jsonl");
    // Before the first `token_count`: the prompt, the reasoning and the first command.
    let first_count = events
        .iter()
        .position(|e| e.context_used.is_some())
        .expect("a token_count");
    assert!(first_count > 2);
    for event in &events[1..first_count] {
        assert_eq!(event.context_limit, 258_400, "{event:?}");
    }
}

#[test]
fn a_5xx_written_as_a_bare_string_is_a_server_error_with_codexs_sentence() {
    let text = String::from_utf8(bytes_of(PINNED, "servererror.jsonl")).expect("UTF-8");
    assert!(text.contains(r#""codex_error_info":"internal_server_error""#));
    let events = events_in(PINNED, "servererror.jsonl");
    let error = the_error(&events);
    assert_eq!(error.error_code.as_deref(), Some("server_error"));
    // Codex puts its own sentence in place of the API's for a 500.
    let sentence = "We’re currently experiencing high demand, which may cause temporary errors.";
    assert_eq!(error.text.as_deref(), Some(sentence));
    assert_eq!(error.message.as_deref(), Some(sentence));
}

#[test]
fn every_api_error_has_its_code_and_one_readable_line() {
    let expected = [
        (
            "ratelimit.jsonl",
            "rate_limit",
            "Exceeded retry limit, last status: 429 Too Many Requests",
        ),
        (
            "servererror.jsonl",
            "server_error",
            "We’re currently experiencing high demand, which may cause temporary errors.",
        ),
        // Codex's message is the body's JSON: the API's own message is the readable part.
        (
            "badrequest.jsonl",
            "other",
            "Invalid value for 'input': expected a list.",
        ),
        // `unexpected status 503 Service Unavailable: …, url: http://127.0.0.1:…`.
        (
            "unavailable.jsonl",
            "server_error",
            "The engine is currently overloaded, please try again later (HTTP 503)",
        ),
    ];
    for (name, code, message) in expected {
        let events = events_in(PINNED, name);
        let error = the_error(&events);
        assert_eq!(error.error_code.as_deref(), Some(code), "{name}");
        let readable = error.message.as_deref().unwrap_or_default();
        assert_eq!(readable, message, "{name}");
        assert!(
            !readable.contains('{') && !readable.contains('\n') && !readable.contains("url:"),
            "{name}: {readable}"
        );
        // `text` stays as Codex wrote it.
        assert!(
            error.text.as_deref().is_some_and(|t| !t.is_empty()),
            "{name}"
        );
    }
    let badrequest = events_in(PINNED, "badrequest.jsonl");
    assert!(
        the_error(&badrequest)
            .text
            .as_deref()
            .is_some_and(|text| text.starts_with("{\"error\":")),
        "the raw body stays in text"
    );
}
