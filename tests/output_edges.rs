//! Output at the edges: with stdout on `/dev/full`, `check`, `doctor`, `completions`, `man`,
//! `hook install`, `--help` and `--version` fail with one line and exit 1 (no panic); with stdout a pipe nobody
//! reads (`| head -1` after it left), each ends quietly with exit 0. An error's whole chain,
//! as the binary prints it, names each cause once.

use std::fs::File;
use std::os::fd::{FromRawFd as _, OwnedFd};
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn commands(dir: &Path) -> Vec<Vec<String>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/default.rhai");
    let settings = dir.join("settings.json");
    vec![
        vec!["--help".into()],
        vec!["--version".into()],
        vec!["check".into(), script.display().to_string()],
        vec!["doctor".into()],
        vec!["completions".into(), "bash".into()],
        vec!["man".into()],
        vec![
            "hook".into(),
            "install".into(),
            "--dry-run".into(),
            "--settings".into(),
            settings.display().to_string(),
        ],
    ]
}

fn familiar(args: &[String], dir: &Path, stdout: Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_familiar"))
        .args(args)
        .env("HOME", dir)
        .env("CLAUDE_CONFIG_DIR", dir.join(".claude"))
        .env("XDG_CONFIG_HOME", dir.join(".config"))
        .env("FAMILIAR_SOCKET", dir.join("run/hook.sock"))
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/familiar-test-bus",
        )
        .env_remove("DISPLAY")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("familiar runs")
}

#[test]
fn a_full_stdout_is_an_error_of_one_line_not_a_panic() {
    let dir = tempfile::tempdir().expect("temp dir");
    for args in commands(dir.path()) {
        let full = File::options()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let out = familiar(&args, dir.path(), Stdio::from(full));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("familiar: ") && stderr.contains("No space left on device"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    let dir = tempfile::tempdir().expect("temp dir");
    for args in commands(dir.path()) {
        let mut fds = [0; 2];
        // SAFETY: a two-int buffer for pipe(2).
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both fds were just made by pipe(2) and are owned here alone.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // The reader is gone before the first write, as after `| head -1` read its line.
        drop(read);
        let out = familiar(&args, dir.path(), Stdio::from(write));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}");
    }
}

#[test]
fn check_escapes_control_characters_in_script_names() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = dir.path().join("evil\x1b]0;pwned\x07\nforged.rhai");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/default.rhai"),
        &script,
    )
    .expect("script");
    let out = familiar(
        &["check".to_owned(), script.display().to_string()],
        dir.path(),
        Stdio::piped(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with(&format!(
            "{}/evil\\e]0;pwned\\x07\\nforged.rhai: ok",
            dir.path().display()
        )),
        "{stdout}"
    );
    assert!(!stdout.contains('\x1b') && !stdout.contains('\x07'));
}

#[test]
fn regression_watch_and_replay_on_a_full_stdout_fail_instead_of_exiting_0() {
    // `watch --headless` used to log the write error and exit 0, as if all went well.
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join(".claude/projects/-p");
    std::fs::create_dir_all(&project).expect("dirs");
    let fixture = familiar_testkit::real_fixture("v2.1.38-spotter-slash-command-queue.jsonl");
    std::fs::copy(&fixture, project.join("s.jsonl")).expect("copy fixture");
    for args in [
        vec!["watch", "--headless", "--events", "--all", "--no-notify"],
        vec![
            "replay",
            "--headless",
            "--events",
            "--no-notify",
            "--max-gap",
            "0",
        ],
    ] {
        let mut args: Vec<String> = args.into_iter().map(str::to_owned).collect();
        if args[0] == "replay" {
            args.push(fixture.display().to_string());
        }
        let full = File::options()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let out = familiar(&args, dir.path(), Stdio::from(full));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot write to stdout"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn regression_an_error_chain_prints_each_cause_once() {
    // Printed as `familiar: cannot load the config: cannot read config file DIR: Is a
    // directory (os error 21): Is a directory (os error 21)`: the cause was in the config
    // error's message and again as its `source`, which `{:#}` prints too.
    let dir = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_familiar"))
        .arg("sessions")
        .env("FAMILIAR_CONFIG", dir.path())
        .env("CLAUDE_CONFIG_DIR", dir.path().join("claude"))
        .env("HOME", dir.path())
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run familiar");
    assert_eq!(output.status.code(), Some(1));
    let is_a_directory = std::io::Error::from_raw_os_error(libc::EISDIR);
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "familiar: cannot load the config: cannot read config file {}: {is_a_directory}\n",
            dir.path().display()
        )
    );
}
