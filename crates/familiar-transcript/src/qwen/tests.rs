//! The reader on short records of the shapes Qwen Code 0.24.4 wrote (`fixtures/qwen-0.24.4/`,
//! cut down): a mistake in a file is one clear diagnostic or one unknown, and the rest goes on.

use familiar_model::{AgentKind, ErrorKind, EventKind, Status};

use crate::{DiagnosticKind, NormalizerConfig, normalize_bytes};

fn record(uuid: &str, kind: &str, rest: &str) -> String {
    format!(
        r#"{{"uuid":"{uuid}","parentUuid":null,"sessionId":"6b8f0dbb-a458-4c86-b9f5-fd758f695f7e","timestamp":"2026-11-28T04:36:2{}.000Z","type":"{kind}","cwd":"/p","version":"0.24.4",{rest}}}"#,
        uuid.len() % 10
    )
}

fn prompt(uuid: &str, text: &str) -> String {
    record(
        uuid,
        "user",
        &format!(r#""message":{{"role":"user","parts":[{{"text":"{text}"}}]}}"#),
    )
}

fn reply(uuid: &str, text: &str, total: u64) -> String {
    record(
        uuid,
        "assistant",
        &format!(
            r#""model":"qwen3-coder-plus","message":{{"role":"model","parts":[{{"text":"{text}"}}]}},"usageMetadata":{{"promptTokenCount":{},"candidatesTokenCount":20,"thoughtsTokenCount":0,"totalTokenCount":{total},"cachedContentTokenCount":0}},"contextWindowSize":1000000"#,
            total - 20
        ),
    )
}

fn telemetry(uuid: &str, name: &str, status: u64) -> String {
    record(
        uuid,
        "system",
        &format!(
            r#""subtype":"ui_telemetry","systemPayload":{{"uiEvent":{{"event.name":"{name}","status_code":{status},"error_message":"{status} mock error"}}}}"#
        ),
    )
}

fn read(lines: &[String]) -> (Vec<familiar_model::Event>, Vec<crate::Diagnostic>) {
    let mut input = lines.join("\n");
    input.push('\n');
    normalize_bytes(input.as_bytes(), &NormalizerConfig::default())
}

#[test]
fn a_truncated_line_is_one_diagnostic_and_the_session_goes_on() {
    let whole = reply("r1", "first", 1_120);
    let cut = &whole[..whole.len() / 2];
    let (events, diagnostics) = read(&[
        prompt("u1", "hello"),
        cut.to_owned(),
        reply("r2", "second", 1_220),
    ]);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0].line, 2);
    assert!(matches!(diagnostics[0].kind, DiagnosticKind::Malformed(_)));
    assert!(events.iter().all(|e| e.agent_kind == AgentKind::Qwen));
    let texts: Vec<&str> = events
        .iter()
        .filter(|e| e.kind == EventKind::Text)
        .filter_map(|e| e.text.as_deref())
        .collect();
    assert_eq!(texts, ["second"]);
    let last = events.last().expect("events");
    assert_eq!(last.status, Status::WaitingForInput);
    assert_eq!(last.context_used, Some(1_220));
    assert_eq!(last.context_limit, 1_000_000);
}

#[test]
fn an_unknown_record_type_is_counted_once_and_the_rest_goes_on() {
    let mut normalizer = crate::Normalizer::new(NormalizerConfig::default());
    let mut events = Vec::new();
    let lines = [
        prompt("u1", "hello"),
        record("x1", "hologram", r#""payload":{}"#),
        record("x2", "hologram", r#""payload":{}"#),
        reply("r1", "still here", 1_120),
    ];
    for (at, line) in lines.iter().enumerate() {
        normalizer
            .push_line(line.as_bytes(), at as u64 + 1, &mut events)
            .expect("a JSON record");
    }
    assert_eq!(normalizer.agent_kind(), AgentKind::Qwen);
    assert_eq!(
        normalizer.metrics().unknown.get("qwen/type/hologram"),
        Some(2)
    );
    assert_eq!(normalizer.take_unknown_news(), ["qwen/type/hologram"]);
    assert!(
        events
            .iter()
            .any(|e| e.text.as_deref() == Some("still here"))
    );
}

#[test]
fn an_api_error_is_told_once_when_the_turn_is_over_and_not_when_a_retry_worked() {
    // Every attempt failed: one error, the turn over.
    let (events, _) = read(&[
        prompt("u1", "hello"),
        telemetry("t1", "qwen-code.api_error", 429),
        telemetry("t2", "qwen-code.api_error", 429),
    ]);
    let errors: Vec<_> = events
        .iter()
        .filter(|e| e.kind == EventKind::Error)
        .collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].error, Some(ErrorKind::Api));
    assert_eq!(errors[0].text.as_deref(), Some("429 mock error"));
    assert_eq!(errors[0].line, 2);
    assert_eq!(errors[0].status, Status::WaitingForInput);
    // A retry answered: no error.
    let (events, _) = read(&[
        prompt("u1", "hello"),
        telemetry("t1", "qwen-code.api_error", 503),
        telemetry("t2", "qwen-code.api_response", 200),
        reply("r1", "fine", 1_120),
    ]);
    assert!(events.iter().all(|e| e.kind != EventKind::Error));
    // The next prompt ends the failed turn too: its error comes before it.
    let (events, _) = read(&[
        prompt("u1", "hello"),
        telemetry("t1", "qwen-code.api_error", 500),
        prompt("u2", "again"),
    ]);
    let kinds: Vec<EventKind> = events
        .iter()
        .map(|e| e.kind)
        .filter(|kind| matches!(kind, EventKind::Prompt | EventKind::Error))
        .collect();
    assert_eq!(
        kinds,
        [EventKind::Prompt, EventKind::Error, EventKind::Prompt]
    );
}

#[test]
fn claude_code_records_are_not_read_as_qwen_codes() {
    let claude =
        r#"{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":"hi"}}"#;
    assert!(!super::is_record(Some("user"), claude));
    let system = r#"{"type":"system","subtype":"api_error","uuid":"u","error":{}}"#;
    assert!(!super::is_record(Some("system"), system));
    assert!(super::is_record(Some("user"), &prompt("u1", "hi")));
    assert!(super::is_record(
        Some("system"),
        &telemetry("t", "qwen-code.api_error", 500)
    ));
}
