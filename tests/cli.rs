//! The command line itself: `--help` (golden), usage errors exit 2, completions, man page,
//! `-q`/`-v` and `NO_COLOR`.

mod common;

use common::Test;

/// A test isolated from the machine's display, D-Bus and config.
fn isolated() -> Test {
    Test::new()
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/familiar-test-bus",
        )
        .env("COLUMNS", "100")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("FAMILIAR_CONFIG")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_is_golden() {
    let out = isolated().arg("--help").run();
    insta::assert_snapshot!("help", text(&out.stdout));
}

#[test]
fn replay_help_is_golden() {
    let out = isolated().args(["replay", "--help"]).run();
    insta::assert_snapshot!("replay_help", text(&out.stdout));
}

#[test]
fn usage_errors_exit_2() {
    isolated()
        .arg("--no-such-flag")
        .status(2)
        .stderr_contains("unexpected argument '--no-such-flag'")
        .run();
    isolated()
        .args(["replay", "x.jsonl", "--speed", "0"])
        .status(2)
        .stderr_contains("a number from 0.01 to 1000")
        .run();
    isolated()
        .args(["replay", "x.jsonl", "--speed", "2", "--realtime"])
        .status(2)
        .stderr_contains("cannot be used with")
        .run();
    isolated()
        .args(["completions", "tcsh"])
        .status(2)
        .stderr_contains("invalid value 'tcsh'")
        .run();
    // A command takes only its own flags: watch's, given before another command, are refused
    // rather than ignored.
    isolated()
        .args(["--all", "events", "x.jsonl"])
        .status(2)
        .stderr_contains("the subcommand 'events' cannot be used with '--all'")
        .run();
    // A page that does not exist is a usage error too (it exited 1).
    isolated()
        .args(["man", "nope"])
        .status(2)
        .stderr_contains("no page for `nope`")
        .run();
    isolated()
        .args(["events", "--context-limit", "lots", "x.jsonl"])
        .status(2)
        .stderr_contains("is not a token count; write e.g. 200k, 1M or 1000000")
        .run();
    isolated()
        .args(["-q", "-v", "doctor"])
        .status(2)
        .stderr_contains("cannot be used with")
        .run();
}

#[test]
fn completions_cover_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = isolated().args(["completions", shell]).run();
        let script = text(&out.stdout);
        for word in ["replay", "demo", "doctor", "completions", "--realtime"] {
            assert!(script.contains(word), "{shell} completions lack {word}");
        }
    }
    isolated()
        .args(["completions", "bash"])
        .stdout_contains("complete -F _familiar")
        .run();
}

#[test]
fn man_page_is_roff() {
    isolated()
        .arg("man")
        .stdout_contains(".TH familiar 1")
        .stdout_contains("Exit status: 0 success, 1 runtime error, 2 usage error.")
        .stdout_contains("familiar\\-replay")
        .stdout_contains("familiar man \\-\\-dir")
        .run();
}

/// The demo's API error makes the shipped notify-errors.rhai send a notification, and with no
/// session bus that is a warning to show or hide.
/// A demo asked to notify a desktop that has no session bus: a warning to show or hide.
fn warning_test() -> Test {
    isolated().args(["demo", "--headless", "--max-gap", "0", "--notify"])
}

#[test]
fn quiet_hides_warnings_and_no_color_is_respected() {
    let out = warning_test()
        .stderr_contains("WARN")
        .stderr_contains("desktop notifications unavailable")
        .run();
    assert!(
        !text(&out.stderr).contains('\u{1b}'),
        "NO_COLOR set: no escapes"
    );

    warning_test().arg("-q").stderr("").run();

    // Logs piped to a file or another program carry no escape codes either.
    let out = warning_test().env_remove("NO_COLOR").run();
    assert!(
        !text(&out.stderr).contains('\u{1b}'),
        "stderr is not a terminal: no escapes"
    );
}

/// `familiar` is `familiar watch`, and takes its flags (`familiar --headless --all` was
/// refused): here `--file` reaches watch, which refuses a directory at once.
#[test]
fn the_top_level_command_takes_watchs_flags() {
    let dir = tempfile::tempdir().expect("temp dir");
    isolated()
        .args(["--headless", "--file"])
        .arg(dir.path())
        .status(1)
        .stderr_contains("is a directory: --file follows one transcript")
        .run();
}

#[test]
fn verbose_shows_info_then_debug() {
    let out = isolated()
        .args(["demo", "--headless", "--max-gap", "0"])
        .run();
    assert!(!text(&out.stderr).contains("INFO"), "{}", text(&out.stderr));
    let out = isolated()
        .args(["demo", "--headless", "--max-gap", "0", "-v"])
        .stderr_contains("replay starting")
        .run();
    assert!(
        !text(&out.stderr).contains("DEBUG"),
        "{}",
        text(&out.stderr)
    );
    // Plain lines beside the commands' own messages: no clock, no module path.
    for line in text(&out.stderr).lines() {
        assert!(
            !line.trim_start().starts_with("20") && !line.contains("familiar::cmd"),
            "{line}"
        );
    }
    isolated()
        .args(["-vv", "demo", "--headless", "--max-gap", "0"])
        .stderr_contains("DEBUG")
        .stderr_contains("replay pacing")
        .run();
}

/// The `familiar-SUBCOMMAND(1)` pages a roff page refers to (roff escapes `-` as `\-`).
fn page_references(roff: &str) -> Vec<String> {
    roff.split("(1)")
        .filter_map(|before| {
            let start = before.rfind("familiar")?;
            let name = before[start..].replace("\\-", "-");
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c == '-')
                .then_some(name)
        })
        .collect()
}

#[test]
fn man_page_references_pages_that_exist() {
    let dir = tempfile::tempdir().expect("temp dir");
    isolated()
        .args(["man", "--dir"])
        .arg(dir.path())
        .stdout("")
        .run();
    let main = std::fs::read_to_string(dir.path().join("familiar.1")).expect("familiar.1");
    let referenced = page_references(&main);
    for name in [
        "familiar-watch",
        "familiar-replay",
        "familiar-hook",
        "familiar-man",
    ] {
        assert!(
            referenced.iter().any(|r| r == name),
            "{name} in {referenced:?}"
        );
    }
    assert!(
        !referenced.iter().any(|r| r == "familiar-help"),
        "no page for clap's help subcommand"
    );
    let hook =
        std::fs::read_to_string(dir.path().join("familiar-hook.1")).expect("familiar-hook.1");
    assert!(
        page_references(&hook)
            .iter()
            .any(|r| r == "familiar-hook-install")
    );
    for name in referenced.iter().chain(&page_references(&hook)) {
        assert!(
            dir.path().join(format!("{name}.1")).is_file(),
            "{name}(1) is referred to but was not written"
        );
    }
    // Each subcommand page documents its own flags, and the global ones.
    let watch = std::fs::read_to_string(dir.path().join("familiar-watch.1")).expect("watch page");
    assert!(watch.contains("\\-\\-headless"), "{watch}");
    assert!(watch.contains("\\-\\-verbose"), "{watch}");
}

#[test]
fn man_prints_one_subcommand_page() {
    isolated()
        .args(["man", "hook", "install"])
        .stdout_contains(".TH familiar-hook-install 1")
        .run();
    let out = isolated().args(["man", "replay"]).run();
    let page = text(&out.stdout);
    assert!(page.contains(".TH familiar-replay 1"), "{page}");
    assert!(page.contains("\\-\\-realtime"), "{page}");
    isolated()
        .args(["man", "hook", "nope"])
        .status(2)
        // Not the whole list: other branches add hook subcommands.
        .stderr_contains(
            "familiar: no page for `hook nope`: familiar-hook has the subcommands install",
        )
        .run();
}

#[test]
fn diagnostics_are_coloured_as_clap_colours_honouring_no_color_and_clicolor_force() {
    // Not a terminal, but CLICOLOR_FORCE: colour.
    isolated()
        .env_remove("NO_COLOR")
        .env("CLICOLOR_FORCE", "1")
        .args(["events", "/nonexistent/session.jsonl"])
        .status(1)
        .stderr(
            "\u{1b}[1m\u{1b}[31mfamiliar:\u{1b}[0m cannot open /nonexistent/session.jsonl: No \
             such file or directory (os error 2)\n",
        )
        .run();
    // NO_COLOR wins over CLICOLOR_FORCE, as in clap.
    isolated()
        .env("NO_COLOR", "1")
        .env("CLICOLOR_FORCE", "1")
        .args(["events", "/nonexistent/session.jsonl"])
        .status(1)
        .stderr(
            "familiar: cannot open /nonexistent/session.jsonl: No such file or directory (os \
             error 2)\n",
        )
        .run();
    // Piped, nothing forced: plain.
    isolated()
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .args(["events", "/nonexistent/session.jsonl"])
        .status(1)
        .stderr_contains("familiar: cannot open")
        .run();
}
