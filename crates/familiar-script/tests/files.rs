//! Script and module files (issue 28): only regular files of bounded size are read, and a
//! script too long or with too many functions is refused before Rhai compiles it (its compile
//! time grows with size × functions, and a hot reload holds the pipeline meanwhile).

mod support;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use familiar_script::Limits;
use support::host;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    path
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", path.display());
}

/// The load's error (or "loaded"), from another thread; `None` if it took over 5 s (a FIFO
/// read waits for a writer that never comes).
fn load_error_in_time(path: &Path) -> Option<String> {
    let (tx, rx) = mpsc::channel();
    let path = path.to_owned();
    std::thread::spawn(move || {
        let (mut host, _) = host();
        let outcome = match host.load_file(&path) {
            Ok(_) => "loaded".to_owned(),
            Err(err) => err.to_string(),
        };
        let _ = tx.send(outcome);
    });
    rx.recv_timeout(Duration::from_secs(5)).ok()
}

#[test]
fn a_script_that_is_a_fifo_or_a_device_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fifo = dir.path().join("fifo.rhai");
    mkfifo(&fifo);
    let err = load_error_in_time(&fifo);
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("cannot read script: not a regular file")),
        "{err:?}"
    );

    let zero = dir.path().join("zero.rhai");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap_or_else(|e| panic!("{e}"));
    let err = load_error_in_time(&zero);
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("cannot read script: not a regular file")),
        "{err:?}"
    );
}

#[test]
fn a_module_that_is_a_fifo_or_a_device_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    mkfifo(&dir.path().join("lib.rhai"));
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.rhai"))
        .unwrap_or_else(|e| panic!("{e}"));
    let script = write(
        dir.path(),
        "a.rhai",
        "fn on_prompt(ev) { import \"lib\" as l; }\n",
    );
    let err = load_error_in_time(&script);
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("lib (not a regular file)")),
        "{err:?}"
    );
    let script = write(
        dir.path(),
        "b.rhai",
        "fn on_prompt(ev) { import \"zero\" as z; }\n",
    );
    // (Refused as pointing outside the directory, before its kind is looked at.)
    let err = load_error_in_time(&script);
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("Module not found: zero (")),
        "{err:?}"
    );
}

#[test]
fn a_script_too_long_or_with_too_many_functions_is_refused_before_compiling() {
    let limits = Limits::default();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));

    // On disk: refused before it is read whole.
    let long = format!(
        "// {}\nfn on_prompt(ev) {{}}\n",
        "x".repeat(limits.max_script_bytes)
    );
    let path = write(dir.path(), "long.rhai", &long);
    let err = load_error_in_time(&path).unwrap_or_default();
    assert!(
        err.contains(&format!(
            "cannot read script: larger than the {} bytes read at most",
            limits.max_script_bytes
        )),
        "{err}"
    );
    // From text: refused before compiling.
    let (mut host, _) = host();
    let err = host
        .load_source("long.rhai", &long, None)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("more than the 262144 a script may have; split it into modules"),
        "{err}"
    );

    let many: String = (0..=limits.max_functions)
        .map(|i| format!("fn helper_{i}(a) {{ a + {i} }}\n"))
        .collect();
    let path = write(dir.path(), "many.rhai", &many);
    let err = load_error_in_time(&path).unwrap_or_default();
    assert!(
        err.contains("the script defines 1001 functions, more than the 1000 a script may have"),
        "{err}"
    );

    // At the limit it loads, and its helpers are all checked.
    let at_limit: String = (0..limits.max_functions)
        .map(|i| format!("fn helper_{i}(a) {{ a + {i} }}\n"))
        .collect();
    let path = write(dir.path(), "fits.rhai", &at_limit);
    assert_eq!(load_error_in_time(&path).as_deref(), Some("loaded"));
}
