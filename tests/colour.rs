//! End-to-end: the tables of `stats`, `sessions` and `doctor` in colour on a terminal, decided
//! as clap decides (issue 13: no colour anywhere). `CLICOLOR_FORCE=1` turns colour on through a
//! pipe, `NO_COLOR` wins over it, and a pipe alone gets plain text; a pseudo-terminal (`script`)
//! gets colour with neither. Escapes are shown as `␛` in the goldens.

mod common;

use std::process::Command;

use common::{Test, fixture};

fn visible(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace('\u{1b}', "␛")
}

fn stats() -> Test {
    Test::new().current_dir(fixture("")).args([
        "stats",
        "usage-1h-cache.jsonl",
        "usage-copied-messages.jsonl",
    ])
}

#[test]
fn stats_headings_are_bold_when_colour_is_forced() {
    let output = stats()
        .env_remove("NO_COLOR")
        .env("CLICOLOR_FORCE", "1")
        .stderr("")
        .run();
    insta::assert_snapshot!(visible(&output.stdout));
}

#[test]
fn no_color_wins_over_clicolor_force_and_a_pipe_is_plain() {
    let plain = stats().run().stdout;
    assert!(!plain.contains(&0x1b));
    let both = stats().env("CLICOLOR_FORCE", "1").run().stdout;
    assert_eq!(both, plain, "NO_COLOR set: no escapes even when forced");
    let piped = stats().env_remove("NO_COLOR").run().stdout;
    assert_eq!(piped, plain, "stdout is a pipe: no escapes");
}

#[test]
fn a_terminal_gets_colour_without_being_asked() {
    // `script` gives the command a pseudo-terminal; its output comes back through the pty.
    let output = Command::new("script")
        .args(["-qec"])
        .arg(format!(
            // `--no-cache`: run in the tester's own home, it keeps nothing there.
            "{} stats --no-cache usage-1h-cache.jsonl",
            env!("CARGO_BIN_EXE_familiar")
        ))
        .arg("/dev/null")
        .current_dir(fixture(""))
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR")
        .env("TERM", "xterm-256color")
        .output()
        .expect("script");
    let text = visible(&output.stdout);
    // (The progress bar shares the pty: stderr is a terminal too.)
    assert!(
        text.contains("␛[1musage-1h-cache.jsonl␛[0m  session "),
        "{text}"
    );
}

#[test]
fn sessions_header_and_status_are_painted() {
    let test = Test::new();
    let home = test.home().to_owned();
    let here = home.join("work/app");
    let project = home.join(".claude/projects").join(
        here.to_str()
            .expect("UTF-8")
            .replace(|c: char| !c.is_ascii_alphanumeric(), "-"),
    );
    std::fs::create_dir_all(&project).expect("dirs");
    std::fs::create_dir_all(&here).expect("dirs");
    // The fixture's records name /home/user/proj; a project's sessions must name it.
    let records = std::fs::read_to_string(fixture("errors-each-kind.jsonl")).expect("fixture");
    let cwd = format!(
        "\"cwd\":{}",
        serde_json::json!(here.to_str().expect("UTF-8"))
    );
    std::fs::write(
        project.join("5b2c0c1e-7d1a-4c43-9a55-0a4cfe1f3f10.jsonl"),
        records.replace("\"cwd\":\"/home/user/proj\"", &cwd),
    )
    .expect("write");
    let run = |colour: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_familiar"));
        command
            .arg("sessions")
            .current_dir(&here)
            .env("HOME", &home)
            .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env_remove("RUST_LOG");
        if colour {
            command.env_remove("NO_COLOR").env("CLICOLOR_FORCE", "1");
        } else {
            command.env("NO_COLOR", "1");
        }
        visible(&command.output().expect("familiar sessions").stdout)
    };
    let (plain, painted) = (run(false), run(true));
    let header = plain.lines().next().unwrap_or_default();
    let mut bold = header.to_owned();
    for name in [
        "PROJECT",
        "SESSION",
        "MODEL",
        "STATUS",
        "MANA",
        "LAST ACTIVITY",
    ] {
        bold = bold.replacen(name, &format!("␛[1m{name}␛[0m"), 1);
    }
    let mut lines = painted.lines();
    assert_eq!(lines.next(), Some(bold.as_str()), "{painted}");
    let row = lines.next().unwrap_or_default();
    assert!(
        row.contains("  ␛[2midle"),
        "an old session is idle, dimmed: {row}"
    );
    // Escapes take no columns: without them, the same table.
    let stripped = painted
        .replace("␛[1m", "")
        .replace("␛[2m", "")
        .replace("␛[0m", "");
    assert_eq!(stripped, plain);
}

#[test]
fn doctor_marks_are_green_and_yellow() {
    let output = Test::new()
        .arg("doctor")
        .env_remove("NO_COLOR")
        .env("CLICOLOR_FORCE", "1")
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .run();
    let text = visible(&output.stdout);
    assert!(
        text.starts_with("␛[1m␛[32m[ok]␛[0m ␛[1mconfig␛[0m: "),
        "{text}"
    );
    assert!(
        text.contains("␛[1m␛[33m[!!]␛[0m ␛[1mD-Bus session bus␛[0m: "),
        "{text}"
    );
    assert!(text.contains("\n␛[1msettings (config file merged with defaults):␛[0m\n"));
}

#[test]
fn script_diagnostics_are_coloured_like_rustc_and_plain_when_piped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = dir.path().join("broken.rhai");
    std::fs::write(
        &script,
        "fn on_prompt(ev) {\n    let hits = 1\n    say(`${hits}`);\n}\nfn on_bsah(ev) {}\n",
    )
    .expect("script");
    let check = || {
        Test::new()
            .current_dir(dir.path())
            .args(["check", "broken.rhai"])
    };
    let plain = check().status(1).run();
    let painted = check()
        .env_remove("NO_COLOR")
        .env("CLICOLOR_FORCE", "1")
        .status(1)
        .run();
    let text = visible(&painted.stderr);
    insta::assert_snapshot!(text);
    // The colours add nothing else: the plain text is the golden-tested one.
    let stripped = text
        .replace("␛[1m", "")
        .replace("␛[31m", "")
        .replace("␛[34m", "")
        .replace("␛[0m", "");
    assert_eq!(stripped, visible(&plain.stderr));

    std::fs::write(dir.path().join("typo.rhai"), "fn on_bsah(ev) {}\n").expect("script");
    let warned = Test::new()
        .current_dir(dir.path())
        .args(["check", "typo.rhai"])
        .env_remove("NO_COLOR")
        .env("CLICOLOR_FORCE", "1")
        .run();
    let text = visible(&warned.stderr);
    assert!(
        text.starts_with("␛[1mtypo.rhai:1:4:␛[0m ␛[1m␛[33mwarning:␛[0m "),
        "{text}"
    );
    assert!(text.contains("␛[1m␛[33m^␛[0m"), "{text}");
}
