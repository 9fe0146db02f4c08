//! Issue 25 on the turns Codex 0.171.0 failed on an API error (`fixtures/codex-0.171.0/`, each
//! answered with the same error every time by the mock): the window comes from `task_started`,
//! which is all a turn that fails before its first `token_count` says of it.

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
