//! Golden tests of the rendered diagnostics script authors read: compile errors, strict
//! variables, load-time warnings, runtime errors inside helpers and modules.

mod support;

use std::fs;

use familiar_model::EventKind;
use support::{ev, host};

/// Load `source` as `name`; the rendered error, or the rendered warnings.
fn load_rendered(name: &str, source: &str) -> String {
    let (mut host, _) = host();
    match host.load_source(name, source, None) {
        Ok(report) => report
            .warnings
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn syntax_error() {
    insta::assert_snapshot!(load_rendered(
        "syntax.rhai",
        "fn on_bash(ev) {\n    if ev.target.contains(\"git push\") {\n        sound(\"fanfare\")\n    \n}\n"
    ));
}

#[test]
fn unclosed_string() {
    insta::assert_snapshot!(load_rendered(
        "string.rhai",
        "fn on_prompt(ev) {\n    quest(\"unterminated);\n}\n"
    ));
}

#[test]
fn misspelled_variable_is_a_compile_error() {
    insta::assert_snapshot!(load_rendered(
        "strict.rhai",
        "let count = 0;\n\nfn on_event(ev) {\n\tcuont += 1;\n}\n"
    ));
}

#[test]
fn unknown_function_is_a_runtime_error_with_the_event() {
    let (mut host, _) = host();
    host.load_source(
        "typo.rhai",
        "fn on_error(ev) {\n    animat(\"hurt\");\n}\n",
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (_, diags) = host.handle_event(&ev(EventKind::Error, 77));
    insta::assert_snapshot!(
        diags
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn handler_name_and_arity_warnings() {
    insta::assert_snapshot!(load_rendered(
        "handlers.rhai",
        "fn on_eror(ev) { animate(\"hurt\"); }\n\
         fn onbash(ev) { animate(\"attack\"); }\n\
         fn on_prompt() { quest(\"?\"); }\n\
         fn init(x) { }\n\
         fn on_deploy(ev) { }\n\
         fn helper(x) { x }\n\
         fn on_text(ev) { }\n"
    ));
}

#[test]
fn error_inside_an_imported_module() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let write = |name: &str, text: &str| {
        fs::write(dir.path().join(name), text).unwrap_or_else(|e| panic!("{e}"))
    };
    write(
        "util.rhai",
        "fn percent(part, whole) {\n    part * 100 / whole\n}\n",
    );
    write(
        "main.rhai",
        "fn on_event(ev) {\n    import \"util\" as util;\n    let p = util::percent(1, 0);\n    say(`${p}%`);\n}\n",
    );
    let (mut host, _) = host();
    host.load_file(&dir.path().join("main.rhai"))
        .unwrap_or_else(|e| panic!("{e}"));
    let (_, diags) = host.handle_event(&ev(EventKind::Text, 3));
    insta::assert_snapshot!(
        diags
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn transcript_text_in_an_error_cannot_drive_the_terminal() {
    // A thrown tool output with an OSC title, a bell, a clear-screen and a forged line.
    let (mut host, _) = support::loaded("fn on_error(ev) {\n    throw ev.text;\n}");
    let mut event = ev(EventKind::Error, 3);
    event.text = Some("\u{1b}]0;pwned\u{7}\u{1b}[2J\nfamiliar: all good\r".into());
    let (_, diags) = support::run(&mut host, &event);
    assert_eq!(
        diags,
        vec![
            "test.rhai:2:5: error in on_error (event error from line 3): Runtime error: \\e]0;pwned\\x07\\e[2J\\n\
             familiar: all good\\r\n  |\n2 |     throw ev.text;\n  |     ^"
        ]
    );
}

#[test]
fn a_helper_touching_state_loads_then_fails_with_a_note_and_the_documented_pattern_works() {
    // What `familiar check` does is load the script: this loads (docs/scripting.md says so).
    let (mut host, _) = support::loaded(
        "let total = 0;\nfn add(points) { total += points; }\nfn on_success(ev) { add(5); }",
    );
    let (_, diags) = support::run(&mut host, &ev(EventKind::Success, 2));
    assert_eq!(
        diags,
        vec![
            "test.rhai:2:18: error in on_success (event success from line 2): Variable not \
             found: total\n  |\n2 | fn add(points) { total += points; }\n  |                  \
             ^\n  = note: in function 'add', called at test.rhai:3:21\n  = note: 'total' is a \
             script-level variable: only handlers see state; pass it to the function as an \
             argument and return the new value"
        ]
    );
    // The pattern of docs/scripting.md: pass the state in, return the new value.
    let (mut host, _) = support::loaded(
        "let total = 0;\nfn add(total, points) { total + points }\n\
         fn on_success(ev) { total = add(total, 5); log(`${total}`); }",
    );
    for line in 1..=2 {
        support::run(&mut host, &ev(EventKind::Success, line));
    }
    let (actions, diags) = support::run(&mut host, &ev(EventKind::Success, 3));
    assert_eq!(diags, Vec::<String>::new());
    assert_eq!(support::logs(&actions), vec!["15"]);
}

#[test]
fn check_warns_about_a_helper_that_uses_state() {
    // The helper's text holds braces in strings, an interpolation and comments; the next
    // helper, which takes the state as a parameter, is fine.
    let source = "let total = 0;\nconst BONUS = 5;\n\
                  fn add(points) {\n    let s = \"}{\"; // }\n    log(`${#{a: 1}.a} }`);\n    \
                  total += points; /* } */\n}\n\
                  fn bonus(total) { total + 1 }\n\
                  fn with_bonus(x) { x + BONUS }\n\
                  fn on_success(ev) { add(bonus(total)); }";
    insta::assert_snapshot!(load_rendered("helper.rhai", source), @r"
    helper.rhai:6:5: warning: helper `add` uses the script-level variable `total`, which functions cannot see: it fails when `add` runs; pass `total` as an argument and return the new value
      |
    6 |     total += points; /* } */
      |     ^
    helper.rhai:9:24: warning: helper `with_bonus` uses the script-level variable `BONUS`, which functions cannot see: it fails when `with_bonus` runs; pass `BONUS` as an argument and return the new value
      |
    9 | fn with_bonus(x) { x + BONUS }
      |                        ^
    ");
}

#[test]
fn a_helper_using_a_constant_fails_when_it_runs_as_the_warning_says() {
    let (mut host, _) = support::loaded(
        "const BONUS = 5;\nfn with_bonus(x) { x + BONUS }\nfn on_text(ev) { log(`${with_bonus(1)}`); }",
    );
    let (_, diags) = support::run(&mut host, &ev(EventKind::Text, 1));
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0].contains("Variable not found: BONUS"),
        "{}",
        diags[0]
    );
}
