//! The shipped scripts handle any event the schema allows without a runtime error: every
//! optional field present or absent, any text (empty, multi-line, non-ASCII, huge numbers).

use std::sync::Arc;

use familiar_model::{ErrorKind, Event, EventKind, Status};
use familiar_script::{HostConfig, Limits, ManualClock, ScriptHost};
use proptest::prelude::*;

fn scripts_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts")
}

fn host(clock: &ManualClock) -> ScriptHost {
    let mut host = ScriptHost::new(HostConfig {
        clock: Arc::new(clock.clone()),
        // These tests are about content, not speed: a debug build on a busy machine can take
        // a good part of the default 0.5 s copying 64 MiB texts around (a release build ~20 ms).
        limits: Limits {
            max_call_time: std::time::Duration::from_secs(10),
            ..Limits::default()
        },
        ..HostConfig::default()
    });
    for script in [
        "default.rhai",
        "notify-errors.rhai",
        "examples/git-push-sound.rhai",
        "examples/tool-counter.rhai",
        "examples/context-warning.rhai",
    ] {
        if let Err(err) = host.load_file(&scripts_dir().join(script)) {
            panic!("{err}");
        }
    }
    host
}

fn text() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some(String::new())),
        Just(Some("\n\n".to_owned())),
        Just(Some("git push origin main; echo $(id)".to_owned())),
        Just(Some(
            "You've hit your session limit · resets 11:30am".to_owned()
        )),
        ".{0,200}".prop_map(Some),
        "[\\PC\n]{0,300}".prop_map(Some),
    ]
}

fn number() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![
        Just(None),
        Just(Some(0)),
        Just(Some(u64::MAX)),
        any::<u64>().prop_map(Some)
    ]
}

prop_compose! {
    fn event()(
        kind in prop::sample::select(EventKind::ALL.to_vec()),
        error in prop::option::of(prop::sample::select(ErrorKind::ALL.to_vec())),
        status in prop::sample::select(vec![
            Status::Unknown, Status::Working, Status::WaitingForApproval,
            Status::WaitingForInput, Status::Idle,
        ]),
        agent in prop::option::of("[a-z0-9]{1,8}"),
        sidechain in any::<bool>(),
        ts in prop_oneof![
            Just(None),
            Just(Some("not a time".to_owned())),
            (0u64..4_000_000_000).prop_map(|s| Some(timestamp(s))),
        ],
        line in any::<u64>(),
        context_used in number(),
        context_limit in prop_oneof![Just(200_000u64), Just(1_000_000), Just(0), any::<u64>()],
        (tool, target, text_value, command) in (text(), text(), text(), text()),
        (error_code, cause, tool_use_id, agent_type) in (text(), text(), text(), text()),
        retry_in_ms in prop::option::of(any::<f64>()),
        (retry_attempt, max_retries, pre_tokens, post_tokens, duration_ms) in
            (number(), number(), number(), number(), number()),
        think in prop::option::of(0u8..=3),
    ) -> Event {
        let mut ev = Event::new(kind, line);
        ev.error = error;
        ev.status = status;
        ev.agent = agent;
        ev.sidechain = sidechain;
        ev.ts = ts;
        ev.context_used = context_used;
        ev.context_limit = context_limit;
        ev.tool = tool;
        ev.target = target;
        ev.text = text_value;
        ev.command = command;
        ev.error_code = error_code;
        ev.cause = cause;
        ev.tool_use_id = tool_use_id;
        ev.agent_type = agent_type;
        ev.description = ev.text.clone();
        ev.retry_in_ms = retry_in_ms;
        ev.retry_attempt = retry_attempt;
        ev.max_retries = max_retries;
        ev.pre_tokens = pre_tokens;
        ev.post_tokens = post_tokens;
        ev.duration_ms = duration_ms;
        ev.think = think;
        ev
    }
}

fn timestamp(secs: u64) -> String {
    familiar_model::time::format_timestamp(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn shipped_scripts_never_fail_on_any_event(events in prop::collection::vec(event(), 1..40)) {
        let clock = ManualClock::new();
        let mut host = host(&clock);
        for (i, event) in events.iter().enumerate() {
            clock.set_secs(i as f64 * 7.0);
            let (_, diagnostics) = host.handle_event(event);
            let rendered: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
            prop_assert!(rendered.is_empty(), "{event:?}\n{}", rendered.join("\n"));
        }
    }
}

/// Texts at the size limits: just past the string limit (one line, or nothing but line
/// breaks), a multi-byte character across the cut, and a 64 MiB line (the longest the
/// normalizer accepts) of short lines.
fn texts_at_the_limits() -> Vec<(&'static str, String)> {
    const MIB: usize = 1024 * 1024;
    let limit = Limits::default().max_string_size;
    vec![
        ("one line past the limit", "x".repeat(limit + 1)),
        ("line breaks past the limit", "\n".repeat(limit + 1)),
        (
            "a multi-byte char across the limit",
            "€".repeat(limit / 3 + 1),
        ),
        ("64 MiB of short lines", "git push\n".repeat(64 * MIB / 9)),
    ]
}

#[test]
fn shipped_scripts_never_fail_on_texts_at_the_size_limits() {
    // default.rhai failed on a prompt over the limit ("Length of string too large") and the whole
    // run exited 1.
    let clock = ManualClock::new();
    let mut host = host(&clock);
    let mut line = 0;
    for (name, text) in texts_at_the_limits() {
        for kind in EventKind::ALL {
            for error in [Some(ErrorKind::Tool), Some(ErrorKind::Api)] {
                line += 1;
                clock.set_secs(line as f64 * 100.0);
                let mut event = Event::new(kind, line);
                event.error = error;
                event.text = Some(text.clone());
                event.target = Some(text.clone());
                event.tool = Some("Bash".into());
                event.context_used = Some(150_000);
                let (_, diagnostics) = host.handle_event(&event);
                let rendered: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
                assert!(
                    rendered.is_empty(),
                    "{name}, {kind}:\n{}",
                    rendered.join("\n")
                );
            }
        }
    }
}
