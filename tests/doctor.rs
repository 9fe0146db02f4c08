//! `familiar doctor` end to end: golden output (paths normalized) with a temp Claude Code dir
//! holding two projects, one of them the current directory's; a real `dbus-daemon` with no
//! notification server on it; invalid and named config files.

mod common;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::{Test, fixture};

/// Claude Code's dash encoding of a path (as `familiar-tail` does it).
fn encode(path: &Path) -> String {
    path.display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// A doctor run in `$HOME/work/app`, with that project and another one holding a session.
fn doctor() -> Test {
    let test = Test::new()
        .arg("doctor")
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/familiar-test-bus",
        )
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("FAMILIAR_CONFIG")
        .env("XDG_RUNTIME_DIR", "/nonexistent/familiar-test-runtime")
        .env_remove("PULSE_SERVER")
        .env_remove("PULSE_RUNTIME_PATH");
    let home = test.home().to_owned();
    let test = test.env("FAMILIAR_SOCKET", home.join("run/hook.sock"));
    let app = home.join("work/app");
    std::fs::create_dir_all(&app).expect("app dir");
    let projects = home.join(".claude/projects");
    let here = projects.join(encode(&app));
    std::fs::create_dir_all(&here).expect("project dir");
    std::fs::copy(
        fixture("demo.jsonl"),
        here.join("d3m0d3m0-0000-4000-8000-00000000f00d.jsonl"),
    )
    .expect("session");
    let other = projects.join("-home-user-proj");
    std::fs::create_dir_all(&other).expect("other project");
    std::fs::copy(
        fixture("errors-each-kind.jsonl"),
        other.join("5b2c0c1e-7d1a-4c43-9a55-0a4cfe1f3f10.jsonl"),
    )
    .expect("other session");
    test.current_dir(app)
}

fn normalized(out: &[u8], home: &Path) -> String {
    let home_text = home.display().to_string();
    // The window's executable, checked beside `familiar`.
    let window = Path::new(env!("CARGO_BIN_EXE_familiar"))
        .with_file_name("familiar-window")
        .display()
        .to_string();
    // The open-file limits are the machine's (inherited from this test).
    let limit = familiar_tail::descriptors::open_file_limit().expect("getrlimit");
    let shown = |n: Option<u64>| n.map_or("unlimited".to_owned(), |n| n.to_string());
    String::from_utf8_lossy(out)
        .replace(
            &format!("may hold {} files open", shown(limit.hard)),
            "may hold [HARD] files open",
        )
        // Said only where the soft limit is below the hard one.
        .replace(
            &format!(
                " (it raises its soft limit, {}, to that when it starts)",
                shown(limit.soft)
            ),
            "",
        )
        .replace(&home_text, "[HOME]")
        .replace(&encode(home), "[HOME-ENCODED]")
        .replace(&window, "[BIN]/familiar-window")
}

#[test]
fn doctor_golden_without_bus_or_display() {
    let test = doctor();
    let home = test.home().to_owned();
    let out = test.run();
    insta::assert_snapshot!("doctor_plain", normalized(&out.stdout, &home));
}

#[test]
fn doctor_shows_the_merged_config_and_where_it_came_from() {
    let test = doctor();
    let home = test.home().to_owned();
    let config = home.join("named.toml");
    std::fs::write(
        &config,
        "allow_run = true\nidle_timeout = \"90s\"\n[notifications]\nevents = { success = false }\n",
    )
    .expect("config");
    let out = test.env("FAMILIAR_CONFIG", &config).run();
    let text = normalized(&out.stdout, &home);
    assert!(
        text.contains("[ok] config: [HOME]/named.toml (from FAMILIAR_CONFIG) (read)"),
        "{text}"
    );
    assert!(text.contains("  allow_run = true\n"), "{text}");
    assert!(text.contains("  idle_timeout = \"1m 30s\"\n"), "{text}");
    assert!(
        text.contains("  notifications muted for = [success]\n"),
        "{text}"
    );
}

/// A newer CLI writes a record type, a subtype and an attachment type nobody taught Familiar:
/// `doctor` names each, with how many and the CLI version that wrote them.
#[test]
fn doctor_lists_what_the_newest_sessions_hold_that_familiar_does_not_know() {
    let test = doctor();
    let home = test.home().to_owned();
    let here = home
        .join(".claude/projects")
        .join(encode(&home.join("work/app")));
    let session = here.join("d3m0d3m0-0000-4000-8000-00000000f00d.jsonl");
    let mut text = std::fs::read_to_string(&session).expect("session");
    for line in [
        r#"{"type":"hologram","sessionId":"d3m0","version":"2.1.400","timestamp":"2099-01-01T00:00:00Z"}"#,
        r#"{"type":"hologram","sessionId":"d3m0","version":"2.1.400"}"#,
        r#"{"type":"system","subtype":"weather","sessionId":"d3m0","version":"2.1.400"}"#,
        r#"{"type":"attachment","attachment":{"type":"smell"},"sessionId":"d3m0"}"#,
    ] {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(&session, text).expect("write");
    let out = normalized(&test.run().stdout, &home);
    assert!(
        out.contains(
            "[ok] Claude Code records: the newest sessions (CLI 2.1.400) hold 3 kind(s) of \
             record Familiar does not know yet"
        ),
        "{out}"
    );
    for name in ["attachment/smell ×1", "hologram ×2", "system/weather ×1"] {
        assert!(out.contains(&format!("       {name}\n")), "{name}: {out}");
    }
}

#[test]
fn doctor_reports_an_invalid_config_with_its_line_and_exits_1() {
    let test = doctor().status(1);
    let home = test.home().to_owned();
    let config = home.join(".config/familiar/config.toml");
    std::fs::create_dir_all(config.parent().expect("parent")).expect("dir");
    std::fs::write(&config, "poll = true\nallow_run = \"yes\"\n").expect("config");
    let out = test.run();
    let text = normalized(&out.stdout, &home);
    let expected = "\
[!!] config: [HOME]/.config/familiar/config.toml is invalid; fix it (every command refuses to start until then)
       invalid config file [HOME]/.config/familiar/config.toml:2:13: invalid type: string \"yes\", expected a boolean
         |
       2 | allow_run = \"yes\"
         |             ^^^^^
";
    assert!(text.starts_with(expected), "{text}");
    assert!(
        !text.contains("settings (config"),
        "no settings from a broken file"
    );
}

#[test]
fn an_invalid_config_stops_replay_with_a_located_error() {
    let test = Test::new()
        .args(["demo", "--max-gap", "0"])
        .env_remove("FAMILIAR_CONFIG")
        .status(1);
    let home = test.home().to_owned();
    let config = home.join(".config/familiar/config.toml");
    std::fs::create_dir_all(config.parent().expect("parent")).expect("dir");
    std::fs::write(&config, "[notifications]\nevents = { sucess = false }\n").expect("config");
    let out = test.stdout("").run();
    assert_eq!(
        normalized(&out.stderr, &home),
        "familiar: cannot load the config: invalid config file \
         [HOME]/.config/familiar/config.toml:2:12: unknown variant `sucess`, expected one of \
         `session_start`, `prompt`, `thinking`, `text`, `reading`, `writing`, `bash`, `tool`, \
         `subagent_start`, `subagent_end`, `error`, `compact_boundary`, `success`, `summary`, \
         `status`, `snapshot`\n  |\n2 | events = { sucess = false }\n  |            ^^^^^^\n"
    );

    let missing = home.join("nope.toml");
    let out = Test::new()
        .args(["demo", "--max-gap", "0"])
        .env("FAMILIAR_CONFIG", &missing)
        .status(1)
        .run();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("(named by FAMILIAR_CONFIG) does not exist"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `dbus-daemon --session` on a socket in `dir`, killed on drop.
struct Bus {
    child: Child,
    address: String,
}

impl Bus {
    fn start(dir: &Path) -> Bus {
        let mut child = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .arg(format!("--address=unix:path={}", dir.join("bus").display()))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon runs (apt-get install dbus)");
        let mut address = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut address)
            .expect("address");
        Bus {
            child,
            address: address.trim().to_owned(),
        }
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn doctor_with_a_bus_but_no_notification_server_and_a_dead_display() {
    let test = doctor();
    let home = test.home().to_owned();
    let bus = Bus::start(&home);
    let out = test
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .env("DISPLAY", ":4242")
        .run();
    let text = normalized(&out.stdout, &home);
    assert!(
        text.contains("[ok] D-Bus session bus: unix:path=[HOME]/bus"),
        "{text}"
    );
    assert!(
        text.contains("[!!] notification server: no notification server on the session bus:"),
        "{text}"
    );
    assert!(text.contains("start a notification daemon"), "{text}");
    assert!(
        text.contains("[!!] display: DISPLAY=:4242 but no X server socket at /tmp/.X11-unix/X4242"),
        "{text}"
    );
}

#[test]
fn doctor_reports_installed_hooks_a_listening_socket_and_escapes_names() {
    let test = doctor();
    let home = test.home().to_owned();
    // A project dir whose name would retitle the terminal if printed raw.
    let evil = home.join(".claude/projects/-evil\x1b]0;pwned\x07");
    std::fs::create_dir_all(&evil).expect("evil project");
    std::fs::copy(
        fixture("demo.jsonl"),
        evil.join("e0e0e0e0-0000-4000-8000-00000000f00d.jsonl"),
    )
    .expect("session");
    let exe = env!("CARGO_BIN_EXE_familiar");
    Test::new()
        .args(["hook", "install", "--yes", "--statusline", "--settings"])
        .arg(home.join(".claude/settings.json"))
        .run();
    let socket = home.join("run/hook.sock");
    let listener = familiar_hook::HookListener::bind(&socket).expect("listens");
    let (tx, _rx) = crossbeam_channel::unbounded();
    let _guard = listener.spawn(tx).expect("thread");
    let out = test.run();
    let stdout = normalized(&out.stdout, &home).replace(exe, "[EXE]");
    assert!(
        !stdout.contains('\x1b') && !stdout.contains('\x07'),
        "{stdout}"
    );
    assert!(
        stdout.contains("-evil\\e]0;pwned\\x07/e0e0e0e0"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "[ok] hooks: installed in [HOME]/.claude/settings.json (SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, Notification, PreCompact, SubagentStop, Stop, StopFailure, SessionEnd, PostToolUseFailure, PermissionDenied, SubagentStart, PostCompact)\n\
             [ok] status line: installed ([EXE] statusline)\n\
             [ok] hook socket: [HOME]/run/hook.sock: a running Familiar listens\n"
        ),
        "{stdout}"
    );
}

#[test]
fn doctor_says_when_the_window_executable_is_missing() {
    // `familiar` copied alone, as a user who copied only one of the two executables.
    let dir = tempfile::tempdir().expect("tempdir");
    let lone = dir.path().join("familiar");
    std::fs::copy(env!("CARGO_BIN_EXE_familiar"), &lone).expect("copy");
    let run = || {
        std::process::Command::new(&lone)
            .arg("doctor")
            .env("HOME", dir.path())
            .env("CLAUDE_CONFIG_DIR", dir.path().join(".claude"))
            .env("XDG_CONFIG_HOME", dir.path().join(".config"))
            .env_remove("FAMILIAR_CONFIG")
            .output()
    };
    // Another test's thread forking while the copy was open for writing holds it open in its
    // child until that child's exec: "text file busy" for a moment.
    let mut out = run();
    for _ in 0..50 {
        match &out {
            Err(err) if err.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
                out = run();
            }
            _ => break,
        }
    }
    let out = out.expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|line| line.contains("window:"))
        .unwrap_or_default()
        .replace(&dir.path().display().to_string(), "[DIR]");
    assert_eq!(
        line,
        "[!!] window: no familiar-window beside [DIR]/familiar: the game window cannot open \
         (`cargo install --path . --profile dist-window --bin familiar-window` installs it, \
         `cargo build --release` builds it there; `cargo run` builds it on first use)"
    );
}

#[test]
fn doctor_counts_the_sessions_left_unread_as_dormant() {
    let test = doctor();
    let home = test.home().to_owned();
    let other = home
        .join(".claude/projects/-home-user-proj")
        .join("5b2c0c1e-7d1a-4c43-9a55-0a4cfe1f3f10.jsonl");
    let file = std::fs::File::options()
        .write(true)
        .open(&other)
        .expect("open to date");
    file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3 * 86_400))
        .expect("set the mtime");
    let out = normalized(&test.run().stdout, &home);
    assert!(
        out.contains(
            "[ok] sessions: 2 found (1 not written in the last 1d: read once written again, or \
             with --since), newest:"
        ),
        "{out}"
    );
}
