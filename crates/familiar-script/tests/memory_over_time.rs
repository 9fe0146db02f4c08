//! Memory stays bounded over a whole run, not only per value (issue 28): what a call queues
//! (`say`, `notify`, `emit`, `print` of the longest string in a loop), what `replace` and
//! `to_json` build, and what scripts keep between calls (`once_per` keys, state variables,
//! `ev.state`) all have bounds with a clear error. Measured with a counting allocator, exact
//! and independent of timing; the cases run one after the other in one test (the counter is
//! process-wide).

mod support;

use familiar_model::EventKind;
use support::{ev, loaded, run};

#[global_allocator]
static ALLOCATOR: familiar_testkit::Counting = familiar_testkit::Counting;

const MIB: usize = 1024 * 1024;
const MB: usize = 1_000_000;

const HOSTILE: &str = r#"
let k0 = ""; let k1 = ""; let k2 = ""; let k3 = ""; let k4 = ""; let k5 = ""; let k6 = ""; let k7 = "";
fn on_prompt(ev) { let s = ev.text; loop { say(s); } }
fn on_text(ev) { let s = ev.text; loop { notify(s, s); } }
fn on_bash(ev) { let s = ev.text; loop { emit("big", #{ s: s }); } }
fn on_reading(ev) { let s = ev.text; for i in 0..100 { print(s); } }
fn on_writing(ev) { let s = ev.text; s.replace("a", "aaaaaaaaaa"); }
fn on_tool(ev) { let m = #{}; for i in 0..100 { m[`${i}`] = ev.text; } let j = m.to_json(); }
fn on_thinking(ev) { for i in 0..20000 { once_per(`${i}-${ev.text}`, 60); } }
fn on_error(ev) { once_per(ev.text, 60); }
fn on_success(ev) {
    // One value holds at most the longest string (Rhai counts the strings inside an array):
    // eight of them together pass the state's bound.
    switch ev.line % 8 {
        0 => k0 = ev.text, 1 => k1 = ev.text, 2 => k2 = ev.text, 3 => k3 = ev.text,
        4 => k4 = ev.text, 5 => k5 = ev.text, 6 => k6 = ev.text, _ => k7 = ev.text,
    }
}
fn on_subagent_start(ev) { ev.state.big = ev.text; }
"#;

/// Run one event of `kind` with `text`; the diagnostics, and the call's peak in bytes.
fn call(
    host: &mut familiar_script::ScriptHost,
    kind: EventKind,
    line: u64,
    text: String,
) -> (Vec<String>, usize) {
    let mut event = ev(kind, line);
    event.text = Some(text);
    let base = familiar_testkit::Counting::reset_peak();
    let (_, diags) = run(host, &event);
    (
        diags,
        familiar_testkit::Counting::peak().saturating_sub(base),
    )
}

#[test]
fn actions_string_results_and_kept_state_stay_bounded_over_a_run() {
    let limits = familiar_script::Limits::default();
    let longest = limits.max_string_size;
    let (mut host, _) = loaded(HOSTILE);
    // A 16 MiB text: scripts see its first `longest` bytes.
    let big = "a".repeat(16 * MIB);
    let start = familiar_testkit::Counting::current();
    let cases = [
        (
            EventKind::Prompt,
            format!("say: the actions of one call would hold more than {longest}"),
        ),
        (
            EventKind::Text,
            format!("notify: the actions of one call would hold more than {longest}"),
        ),
        (
            EventKind::Bash,
            format!("emit: the actions of one call would hold more than {longest}"),
        ),
        (
            EventKind::Reading,
            "print/debug line(s) dropped: the actions of one call may hold".to_owned(),
        ),
        (EventKind::Writing, "Length of string too large".to_owned()),
        (
            EventKind::Error,
            format!("once_per: a key of {longest} bytes, longer than the 1024"),
        ),
    ];
    for (line, (kind, expected)) in (1..).zip(cases) {
        let (diags, peak) = call(&mut host, kind, line, big.clone());
        assert!(
            diags.len() == 1 && diags[0].contains(&expected),
            "{kind:?}: {diags:?}"
        );
        // A text action that does not fit is refused before its text is copied: a call that
        // says the longest string holds that one copy and the event's, not one more for the
        // refused `say` or `notify`. (With strings of 16 MiB, these calls peaked at 50 MB.)
        assert!(peak < 4 * longest, "{kind:?}: peak {} MB", peak / MB);
    }

    // to_json of a map holding one 1 MiB string a hundred times: 100 MiB if built.
    let (diags, peak) = call(&mut host, EventKind::Tool, 7, "a".repeat(MIB));
    assert!(
        diags.len() == 1 && diags[0].contains("Length of string too large"),
        "{diags:?}"
    );
    assert!(peak < 4 * longest, "to_json: peak {} MB", peak / MB);

    // Keys of 1 KiB, as many as may be kept: a key is kept as a hash, whatever its length
    // (kept as strings, these were 10 MB).
    let before = familiar_testkit::Counting::current();
    let (diags, _) = call(&mut host, EventKind::Thinking, 8, "k".repeat(1000));
    assert!(
        diags.len() == 1
            && diags[0].contains("once_per: more than 10000 distinct keys kept by one script"),
        "{diags:?}"
    );
    let keys = familiar_testkit::Counting::current().saturating_sub(before);
    assert!(keys < MB, "10,000 once_per keys kept {} KB", keys / 1000);

    // A state variable kept growing by 1 MiB an event is reset past its bound, once said.
    let mut said = Vec::new();
    for line in 10..60 {
        let (diags, _) = call(&mut host, EventKind::Success, line, "b".repeat(MIB));
        said.extend(diags);
    }
    assert!(
        said.iter().any(|d| d.contains(&format!(
            "grew past the {} bytes a script's state may hold",
            limits.max_state_bytes
        ))),
        "{said:?}"
    );

    let (diags, _) = call(&mut host, EventKind::SubagentStart, 70, "c".repeat(2 * MIB));
    assert!(
        diags.len() == 1
            && diags[0].contains("state: more than the 1048576 bytes a session's state may hold"),
        "{diags:?}"
    );

    // What the run keeps: the state bound and the once_per keys, far from the gigabyte a
    // hostile script used to keep.
    let kept = familiar_testkit::Counting::current().saturating_sub(start);
    assert!(
        kept < limits.max_state_bytes + 2 * longest + MB,
        "kept {} MB",
        kept / MB
    );

    // After it, not beside it: the counter is process-wide.
    session_states_and_timers_stay_bounded_over_a_run();
}

/// What a script keeps across sessions and in timers has a bound over the whole run too: each
/// session's `ev.state` is bounded, and so are all of them together (sessions keep coming for as
/// long as the watcher runs), the number of timers pending and the length of their names.
fn session_states_and_timers_stay_bounded_over_a_run() {
    let limits = familiar_script::Limits::default();
    let (mut host, _) = loaded(
        r#"
fn on_prompt(ev) { ev.state.big = ev.text; }
fn on_text(ev) { for i in 0..100 { after(1e12, `${ev.line}-${i}-${ev.text}`); } }
fn on_bash(ev) { after(1e12, ev.text); }
fn on_reading(ev) { ev.state = #{}; }
"#,
    );
    let start = familiar_testkit::Counting::current();
    let session = |kind, line: u64, n: u64, text: String| {
        let mut event = ev(kind, line);
        event.session = Some(format!("session-{n}"));
        event.text = Some(text);
        event
    };

    // 100 sessions, each holding 900 KiB (under the one-session bound): 90 MB kept before.
    let mut said = Vec::new();
    for n in 0..100 {
        let (_, diags) = run(
            &mut host,
            &session(EventKind::Prompt, n, n, "s".repeat(900 * 1024)),
        );
        said.extend(diags);
    }
    // (A repeated error is said once; what is kept shows how many were refused.)
    assert!(
        said.len() == 1
            && said[0].contains(&format!(
                "state: the sessions' states of this script together would hold more than the \
                 {} bytes",
                limits.max_all_session_state_bytes
            )),
        "{said:?}"
    );
    let kept = familiar_testkit::Counting::current().saturating_sub(start);
    assert!(
        kept < limits.max_all_session_state_bytes + 2 * MB,
        "ev.state kept {} MB",
        kept / MB
    );

    // A session that empties its state makes room for another.
    let (_, diags) = run(
        &mut host,
        &session(EventKind::Reading, 200, 0, String::new()),
    );
    assert!(diags.is_empty(), "{diags:?}");
    let (_, diags) = run(
        &mut host,
        &session(EventKind::Prompt, 201, 500, "s".repeat(900 * 1024)),
    );
    assert!(diags.is_empty(), "{diags:?}");

    // Timers with new names event after event: 30 events of 100 timers, each name 1 KiB.
    let mut said = Vec::new();
    for line in 300..330 {
        let (_, diags) = run(
            &mut host,
            &session(EventKind::Text, line, 1, "t".repeat(900)),
        );
        said.extend(diags);
    }
    assert!(
        said.len() == 1
            && said[0].contains(
                "after: more than 1000 timers set by one script; `cancel` the ones not needed"
            ),
        "{said:?}"
    );
    let (_, diags) = run(
        &mut host,
        &session(EventKind::Bash, 400, 1, "n".repeat(2000)),
    );
    assert!(
        diags.len() == 1
            && diags[0].contains(
                "after: a name of 2000 bytes, longer than the 1024 a timer's name may have"
            ),
        "{diags:?}"
    );
    let kept = familiar_testkit::Counting::current().saturating_sub(start);
    assert!(
        kept < limits.max_all_session_state_bytes + 4 * MB,
        "ev.state and timers kept {} MB",
        kept / MB
    );
}
