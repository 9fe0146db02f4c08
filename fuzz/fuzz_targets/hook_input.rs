//! Fuzz target: arbitrary bytes as what reaches Familiar from Claude Code besides transcripts:
//! a hook's input (through the socket, `HookInput::parse`), a file of the CLI's `sessions/`
//! folder (`CliSession::parse`) and the status line's input (`statusline_input`).
//!
//! Besides "never panics" (the status event of any input, whatever its session, path, message
//! or time), the oracles: a hook input that parses says the same once written back as JSON and
//! parsed again (nothing read depends on how the JSON was spelled), so does its status event;
//! and a sessions file's event, if any, is a `status` event of that session.
#![no_main]

use familiar_hook::HookInput;
use familiar_hook::cli_sessions::CliSession;
use familiar_model::EventKind;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(input) = HookInput::parse(data) {
        let event = familiar_hook::hook_event(&input);
        let _ = familiar_hook::input::unknown_in(&input);
        let json = serde_json::to_vec(&input).expect("a parsed hook input writes as JSON");
        let again = HookInput::parse(&json).expect("written hook input parses");
        assert_eq!(again, input, "the hook input changed through JSON");
        assert_eq!(
            familiar_hook::hook_event(&again),
            event,
            "the status event changed through JSON"
        );
        if let Some(event) = event {
            assert_eq!(event.kind, EventKind::Status);
            assert_eq!(event.session, input.session_id);
        }
    }
    if let Some(session) = CliSession::parse(data) {
        if let Some(event) = session.status_event() {
            assert_eq!(event.kind, EventKind::Status);
            assert_eq!(event.session, session.session_id);
        }
    }
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = familiar_hook::statusline_input::unknown_keys(&value);
    }
});
