//! Imports resolve only to `.rhai` files inside the importing script's directory.

mod support;

use std::fs;
use std::path::Path;

use familiar_model::{ActionKind, EventKind};
use support::{ev, host, run};

fn write(dir: &Path, name: &str, text: &str) {
    if let Some(parent) = dir.join(name).parent() {
        fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
    }
    fs::write(dir.join(name), text).unwrap_or_else(|e| panic!("{e}"));
}

fn load_error(path: &Path) -> String {
    let (mut host, _) = host();
    match host.load_file(path) {
        Ok(_) => "loaded".to_owned(),
        Err(err) => err.to_string(),
    }
}

#[test]
fn a_module_beside_the_script_and_in_a_subdirectory_can_be_imported() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(
        dir.path(),
        "lib/words.rhai",
        "fn shout(s) { s.to_upper() + \"!\" }\n",
    );
    write(dir.path(), "greet.rhai", "fn greeting() { \"hi\" }\n");
    write(
        dir.path(),
        "main.rhai",
        "import \"greet\" as g;\n\
         fn on_text(ev) {\n\
             import \"lib/words\" as w;\n\
             import \"greet\" as g;\n\
             say(w::shout(g::greeting()));\n\
         }\n",
    );
    let (mut host, _) = host();
    let report = host
        .load_file(&dir.path().join("main.rhai"))
        .unwrap_or_else(|e| panic!("{e}"));
    // The top-level import works for the body but not for handlers: a warning says so.
    let warnings: Vec<String> = report.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        vec![
            "main.rhai:1:1: warning: handlers do not see modules imported at the top level; \
             move this import into the functions that use it\n  |\n1 | import \"greet\" as \
             g;\n  | ^"
        ]
    );
    let (actions, diags) = run(&mut host, &ev(EventKind::Text, 1));
    assert_eq!(diags, Vec::<String>::new());
    assert_eq!(actions, vec![ActionKind::Say { text: "HI!".into() }]);
}

#[test]
fn parent_directories_and_absolute_paths_are_refused() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(root.path(), "secret.rhai", "fn value() { 42 }\n");
    write(
        root.path(),
        "scripts/up.rhai",
        "import \"../secret\" as s;\nfn on_text(ev) { }\n",
    );
    let secret = root.path().join("secret");
    write(
        root.path(),
        "scripts/abs.rhai",
        &format!(
            "import {:?} as s;\nfn on_text(ev) {{ }}\n",
            secret.display().to_string()
        ),
    );
    assert_eq!(
        load_error(&root.path().join("scripts/up.rhai")),
        "up.rhai:1:8: error in <top level>: Module not found: ../secret (imports are relative \
         paths inside the script's directory)\n  |\n1 | import \"../secret\" as s;\n  |        ^"
    );
    let abs = load_error(&root.path().join("scripts/abs.rhai"));
    assert!(
        abs.starts_with("abs.rhai:1:8: error in <top level>: Module not found: ")
            && abs.contains("(imports are relative paths inside the script's directory)"),
        "{abs}"
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_pointing_outside_is_refused() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(root.path(), "outside/secret.rhai", "fn value() { 42 }\n");
    write(
        root.path(),
        "scripts/main.rhai",
        "import \"link\" as s;\nfn on_text(ev) { }\n",
    );
    std::os::unix::fs::symlink(
        root.path().join("outside/secret.rhai"),
        root.path().join("scripts/link.rhai"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        load_error(&root.path().join("scripts/main.rhai")),
        "main.rhai:1:8: error in <top level>: Module not found: link (outside the script's \
         directory)\n  |\n1 | import \"link\" as s;\n  |        ^"
    );
}

#[test]
fn a_missing_module_and_a_dynamic_path_are_errors() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(dir.path(), "missing.rhai", "import \"nope\" as n;\n");
    assert_eq!(
        load_error(&dir.path().join("missing.rhai")),
        "missing.rhai:1:8: error in <top level>: Module not found: nope (no such file)\n  |\n1 | \
         import \"nope\" as n;\n  |        ^"
    );
    write(dir.path(), "util.rhai", "fn f() { 1 }\n");
    write(
        dir.path(),
        "dynamic.rhai",
        "fn on_text(ev) {\n    let name = \"util\";\n    import name as u;\n}\n",
    );
    let (mut host, _) = host();
    host.load_file(&dir.path().join("dynamic.rhai"))
        .unwrap_or_else(|e| panic!("{e}"));
    let (_, diags) = run(&mut host, &ev(EventKind::Text, 1));
    assert_eq!(
        diags,
        vec![
            "dynamic.rhai:3:12: error in on_text (event text from line 1): Module not found: \
             util\n  |\n3 |     import name as u;\n  |            ^\n  = note: import inside \
             the function that uses the module (handlers do not see top-level imports), with a \
             string literal path"
        ]
    );
}

#[test]
fn scripts_from_text_cannot_import() {
    let (mut host, _) = host();
    let err = host
        .load_source("inline.rhai", "import \"x\" as x;", None)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some(
            "inline.rhai:1:8: error in <top level>: Module not found: x (imports must be string \
             literals resolved when the script loads)\n  |\n1 | import \"x\" as x;\n  |        ^"
        )
    );
}

/// Issue 28: a module that imported itself, or two that imported each other, recursed until
/// the stack overflowed (a segmentation fault, no message). Now the load fails with the cycle
/// named, at the import that closes it.
#[test]
fn an_import_cycle_is_a_load_error_that_names_it() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(
        dir.path(),
        "lib.rhai",
        "import \"lib\" as me;\nexport const x = 1;\n",
    );
    write(
        dir.path(),
        "a.rhai",
        "fn on_prompt(ev) { import \"lib\" as l; }\n",
    );
    let err = load_error(&dir.path().join("a.rhai"));
    assert!(
        err.contains("an import cycle: lib.rhai → lib.rhai"),
        "{err}"
    );
    write(
        dir.path(),
        "c.rhai",
        "import \"b\" as b;\nexport const x = 1;\n",
    );
    write(
        dir.path(),
        "b.rhai",
        "import \"c\" as c;\nexport const y = 2;\n",
    );
    write(
        dir.path(),
        "d.rhai",
        "fn on_prompt(ev) { import \"c\" as l; }\n",
    );
    let err = load_error(&dir.path().join("d.rhai"));
    assert!(
        err.contains("an import cycle: c.rhai → b.rhai → c.rhai"),
        "{err}"
    );
}

/// Issue 28: `sleep` stalled every event, hook and reload (the call limit counts operations,
/// not time asleep), and `timestamp` read the machine's clock. Both fail at once, saying why.
#[test]
fn scripts_cannot_sleep_or_read_the_clock() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(
        dir.path(),
        "s.rhai",
        "fn on_text(ev) { sleep(3); }\nfn on_prompt(ev) { let t = timestamp(); }\n",
    );
    let (mut host, _) = host();
    host.load_file(&dir.path().join("s.rhai"))
        .unwrap_or_else(|e| panic!("{e}"));
    let started = std::time::Instant::now();
    let (_, diags) = run(&mut host, &ev(EventKind::Text, 1));
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    assert!(
        diags
            .iter()
            .any(|d| d.contains("`sleep` is not available to scripts")),
        "{diags:?}"
    );
    let (_, diags) = run(&mut host, &ev(EventKind::Prompt, 2));
    assert!(
        diags
            .iter()
            .any(|d| d.contains("`timestamp` is not available to scripts")),
        "{diags:?}"
    );
}
