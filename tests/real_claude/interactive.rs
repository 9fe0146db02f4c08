//! The real CLI in an interactive session, in a pseudo-terminal (`common::terminal`), with
//! Familiar's hooks installed by `familiar hook install` into its throwaway config dir, beside
//! `familiar watch`: the permission prompts really open (each `PermissionRequest` is answered
//! with Enter, "Yes"), the hooks reach the watcher through its socket, and what the watcher
//! printed live equals `familiar events` of the transcript the CLI wrote. Part of
//! `tests/real_claude.rs` (its mock API, scripts and CLI).

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::common::terminal::Terminal;
use super::common::watch::{Watch, append, sentinel, without_status};
use super::mock::Mock;
use super::recorder::{Recorder, STATUS_LINE};

/// How long one step of the session may take (the CLI starting, a turn, a compaction).
const STEP: Duration = Duration::from_secs(90);

/// The hook inputs recorded so far.
fn recorded(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

fn count(hooks: &[Value], name: &str) -> usize {
    hooks
        .iter()
        .filter(|hook| hook["hook_event_name"] == name)
        .count()
}

/// Wait until `done` says so, answering every new permission prompt with Enter ("Yes").
fn drive(
    terminal: &mut Terminal,
    hooks: &Path,
    what: &str,
    mut done: impl FnMut(&[Value]) -> bool,
) {
    let deadline = Instant::now() + STEP;
    let mut answered = count(&recorded(hooks), "PermissionRequest");
    let mut pressed = Instant::now();
    loop {
        let seen = recorded(hooks);
        if done(&seen) {
            return;
        }
        let asked = count(&seen, "PermissionRequest");
        // (The `permission_prompt` notification comes while the dialog is up.)
        let waiting = seen
            .iter()
            .rfind(|hook| hook["hook_event_name"] != "Notification")
            .is_some_and(|hook| hook["hook_event_name"] == "PermissionRequest");
        if asked > answered || (waiting && pressed.elapsed() > Duration::from_secs(3)) {
            // The dialog is up once its hook ran; give Ink a moment to take keys. A key that
            // came too early is pressed again (Enter on an empty prompt does nothing).
            // The first one stays up past the 6 s after which the CLI notifies
            // (`permission_prompt`).
            let delay = if answered == 0 { 7_000 } else { 700 };
            std::thread::sleep(Duration::from_millis(delay));
            terminal.enter();
            answered = asked;
            pressed = Instant::now();
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not within {STEP:?}; hooks: {:?}; screen: {}",
            seen.iter()
                .map(|h| h["hook_event_name"].as_str().unwrap_or(""))
                .collect::<Vec<_>>(),
            terminal.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What the CLI kept in `$CLAUDE_CONFIG_DIR/sessions/` while it ran: every distinct content
/// of every file there, in the order seen, polled every 50 ms.
struct SessionFiles {
    seen: Arc<Mutex<Vec<(String, Value)>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl SessionFiles {
    fn record(dir: PathBuf) -> SessionFiles {
        let seen: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
        let stop: Arc<std::sync::atomic::AtomicBool> = Arc::default();
        let (seen_by, stop_by) = (Arc::clone(&seen), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut last: std::collections::HashMap<String, String> = Default::default();
            while !stop_by.load(std::sync::atomic::Ordering::SeqCst) {
                for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    let Ok(text) = fs::read_to_string(entry.path()) else {
                        continue;
                    };
                    if last.get(&name) == Some(&text) {
                        continue;
                    }
                    if let Ok(value) = serde_json::from_str::<Value>(&text) {
                        last.insert(name.clone(), text);
                        seen_by
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push((name, value));
                    }
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        SessionFiles { seen, stop }
    }

    fn seen(&self) -> Vec<(String, Value)> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Drop for SessionFiles {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn an_interactive_session_in_a_terminal_fires_the_permission_prompt_and_its_hooks() {
    interactive_session(super::CURRENT, Hooks::Installed);
}

#[test]
fn the_previous_cli_in_a_terminal_fires_the_permission_prompt_and_its_hooks() {
    interactive_session(super::PREVIOUS, Hooks::Installed);
}

/// No `familiar hook install`: the permission prompts and the session's end reach the watcher
/// from the CLI's own sessions folder alone.
#[test]
fn without_hooks_the_sessions_folder_tells_the_permission_prompts() {
    interactive_session(super::CURRENT, Hooks::None);
}

/// Are Familiar's hooks installed for the session?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hooks {
    Installed,
    None,
}

fn interactive_session(generation: super::Generation, hooks_installed: Hooks) {
    let bin = generation.bin();
    let version = generation.version();
    let current = generation == super::CURRENT;
    let tmp = tempfile::tempdir().expect("temp dir");
    let home = tmp.path().join("home");
    let config = home.join(".claude");
    let project = tmp.path().join("project");
    for dir in [&config.join("projects"), &project] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    fs::write(project.join("a.txt"), "hello\n").expect("a.txt");
    let key = "sk-ant-familiar-test-dummy-key-0123456789";
    // A user who has started Claude Code before: onboarding done, the key and the project
    // trusted (otherwise dialogs come first).
    let state = serde_json::json!({
        "hasCompletedOnboarding": true,
        // The idle notification within the test (60 s by default).
        "messageIdleNotifThresholdMs": 2000,
        "customApiKeyResponses": {"approved": [&key[key.len() - 20..]], "rejected": []},
        "projects": {project.display().to_string(): {"hasTrustDialogAccepted": true}},
    });
    fs::write(config.join(".claude.json"), state.to_string()).expect(".claude.json");
    // A recorder beside Familiar's hook on every hook event and as the status line, so the
    // test sees what the CLI fired (and `FAMILIAR_RECORD` keeps it).
    let recorder = Recorder::new(tmp.path());
    let hooks = recorder.hooks.clone();
    let settings = config.join("settings.json");
    fs::write(&settings, recorder.settings().to_string()).expect("settings.json");
    if hooks_installed == Hooks::Installed {
        let install = Command::new(env!("CARGO_BIN_EXE_familiar"))
            .args(["hook", "install", "--yes", "--settings"])
            .arg(&settings)
            .env("HOME", &home)
            .output()
            .expect("familiar hook install");
        assert!(
            install.status.success(),
            "{}",
            String::from_utf8_lossy(&install.stderr)
        );
    }

    let mock = Mock::start(super::scripts(&project));
    // A loaded machine may run the Stop hooks slowly: the success waits for its
    // `turn_duration` longer than the 5 s default, so live equals offline whatever the load.
    let mut watch = Watch::start(&config, &project, &["--all", "--quiet-after", "60s"]);
    let socket = config.join("run/hook.sock");
    // Today's CLI starts in auto mode, which asks nobody: `manual` is the mode whose
    // permission prompts this test answers.
    let mode: &[&str] = if current {
        &["--permission-mode", "manual"]
    } else {
        &[]
    };
    let session_files = SessionFiles::record(config.join("sessions"));
    let env: [(&str, &OsStr); 9] = [
        ("HOME", home.as_os_str()),
        ("CLAUDE_CONFIG_DIR", config.as_os_str()),
        ("ANTHROPIC_BASE_URL", OsStr::new(mock.url.as_str())),
        ("ANTHROPIC_API_KEY", OsStr::new(key)),
        ("DISABLE_AUTOUPDATER", OsStr::new("1")),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", OsStr::new("1")),
        ("DISABLE_TELEMETRY", OsStr::new("1")),
        ("CLAUDE_CODE_MAX_RETRIES", OsStr::new("2")),
        // Familiar's hook finds the watcher's socket.
        ("FAMILIAR_SOCKET", socket.as_os_str()),
    ];
    let mut terminal = Terminal::start(&bin, mode, &project, &env);

    // The prompt box is up once the CLI printed its shortcuts hint, its permission mode
    // (2.1.332: "manual mode on") or the status line (which takes the hint's place).
    let deadline = Instant::now() + STEP;
    // (Ink moves the cursor instead of writing spaces: `shows` compares without them.)
    let shows = |terminal: &Terminal, text: &str| terminal.shows(text);
    while !["forshortcuts", "modeon", STATUS_LINE]
        .iter()
        .any(|hint| shows(&terminal, hint))
    {
        assert!(
            Instant::now() < deadline,
            "the CLI never showed its prompt: {}",
            terminal.screen()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // 2.1.332 then offers auto mode as the default: "No, keep manual mode" (the second choice).
    std::thread::sleep(Duration::from_secs(3));
    if shows(&terminal, "keepmanualmode") {
        terminal.key(b"\x1b[B");
        std::thread::sleep(Duration::from_millis(500));
        terminal.enter();
        std::thread::sleep(Duration::from_secs(1));
    }
    terminal.type_line("FAMILIAR-SCRIPT main");
    // 2.1.3xx: and the background agent's notification turn after it.
    let stops = if current { 2 } else { 1 };
    drive(&mut terminal, &hooks, "the scripted turn", |seen| {
        count(seen, "Stop") >= stops
    });
    // Idle at the prompt: the CLI notifies (`idle_prompt`) after its threshold, if it does.
    let idle = Instant::now();
    while idle.elapsed() < Duration::from_secs(8)
        && !recorded(&hooks)
            .iter()
            .any(|hook| hook["notification_type"] == "idle_prompt")
    {
        std::thread::sleep(Duration::from_millis(200));
    }
    // A turn the API fails (429 until the retries run out): StopFailure fires, not Stop.
    terminal.type_line("FAMILIAR-SCRIPT ratelimit");
    drive(&mut terminal, &hooks, "the rate-limited turn", |seen| {
        count(seen, "StopFailure") >= 1
    });
    terminal.type_line("/compact");
    drive(&mut terminal, &hooks, "/compact", |seen| {
        count(seen, "PreCompact") >= 1
    });
    // The compaction is over when its boundary is in the transcript.
    let dir = super::common::watch::encoded_project_dir(&config, &project);
    let deadline = Instant::now() + STEP;
    let transcript = loop {
        let found = fs::read_dir(&dir)
            .ok()
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .find(|path| {
                path.extension().is_some_and(|ext| ext == "jsonl")
                    && fs::read_to_string(path).is_ok_and(|text| text.contains("compact_boundary"))
            });
        if let Some(path) = found {
            break path;
        }
        assert!(
            Instant::now() < deadline,
            "no compaction: {}",
            terminal.screen()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    std::thread::sleep(Duration::from_secs(2));
    terminal.type_line("/exit");
    drive(&mut terminal, &hooks, "/exit", |seen| {
        count(seen, "SessionEnd") >= 1
    });
    terminal.wait_end(STEP);

    // Saved before any check, so a failing run can be looked at.
    if let Some(out) = super::common::save_dir(&format!("claude-{version}"))
        .filter(|_| hooks_installed == Hooks::Installed)
    {
        fs::copy(&transcript, out.join("interactive.jsonl")).expect("copy transcript");
        // Every state of the CLI's sessions file, one JSON object a line.
        let states: String = session_files
            .seen()
            .iter()
            .map(|(_, value)| format!("{value}\n"))
            .collect();
        fs::write(out.join("sessions-file.jsonl"), states).expect("sessions file states");
        // The hook samples were recorded by hand with a subagent at work; add what this run
        // fired that they lack.
        let hooks_dir = out
            .parent()
            .map_or_else(|| out.clone(), |base| base.join("hooks"));
        fs::create_dir_all(&hooks_dir).expect("hooks dir");
        let samples = hooks_dir.join(format!("claude-{version}.jsonl"));
        let have = recorded(&samples);
        for line in fs::read_to_string(&hooks).unwrap_or_default().lines() {
            let Ok(hook) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if count(&have, hook["hook_event_name"].as_str().unwrap_or("")) == 0 {
                // The line as the CLI wrote it.
                append(&samples, format!("{line}\n").as_bytes());
            }
        }
    }

    // The permission prompts really opened: Bash, Edit and Write asked (Read and the task
    // tools in the project do not).
    let seen = recorded(&hooks);
    let asked: Vec<&str> = seen
        .iter()
        .filter(|hook| hook["hook_event_name"] == "PermissionRequest")
        .filter_map(|hook| hook["tool_name"].as_str())
        .collect();
    assert_eq!(asked, ["Bash", "Edit", "Write"], "{seen:?}");
    assert_eq!(count(&seen, "StopFailure"), 1, "{seen:?}");
    // The failed turn fired no Stop. (2.1.332 runs the Agent tool in the background: its end
    // starts a turn of its own, with a Stop, so Stops are counted within the failed turn.)
    let failed_turn: Vec<&Value> = seen
        .iter()
        .skip_while(|hook| hook["prompt"] != "FAMILIAR-SCRIPT ratelimit")
        .take_while(|hook| hook["hook_event_name"] != "StopFailure")
        .collect();
    assert!(!failed_turn.is_empty(), "{seen:?}");
    assert_eq!(
        count(
            &failed_turn.into_iter().cloned().collect::<Vec<_>>(),
            "Stop"
        ),
        0,
        "the failed turn fired no Stop: {seen:?}"
    );

    // The status line ran, with the session's JSON on its stdin.
    assert!(
        recorder
            .status_lines()
            .iter()
            .any(|input| input["session_id"] == seen[0]["session_id"]),
        "{:?}",
        recorder.status_lines()
    );
    // Nothing the CLI sent is unknown to Familiar: its hooks and their notification types,
    // its status line's keys (a newer CLI's new ones fail here, and `drift.sh` names them).
    for hook in &seen {
        let input = familiar_hook::HookInput::parse(hook.to_string().as_bytes()).expect("hook");
        assert_eq!(familiar_hook::input::unknown_in(&input), None, "{hook}");
    }
    for input in recorder.status_lines() {
        let unknown = familiar_hook::statusline_input::unknown_keys(&input);
        assert!(
            unknown.is_empty(),
            "status line keys not known: {unknown:?}"
        );
    }

    // Live: everything up to a sentinel written after the CLI exited.
    let marker = dir.join("zz-sentinel.jsonl");
    append(&marker, sentinel("interactive-end").as_bytes());
    let live_lines = watch.events_until("interactive-end");
    watch.interrupt();
    let live: Vec<Value> = live_lines
        .iter()
        .map(|line| serde_json::from_str(line).expect("event JSON"))
        .collect();
    let offline = super::events(&transcript);
    let session = offline[0]["session"].clone();

    // The hooks' (or the sessions folder's) word reached the watcher. The session model's own
    // `status` events say what they replace (`previous_status`); of those, only a hook or the
    // CLI's sessions file says `waiting_for_approval` (the permission prompts) or, within the
    // test, `idle` (/exit's SessionEnd, or the removed sessions file; the idle timer takes
    // minutes).
    let ours: Vec<&Value> = live
        .iter()
        .filter(|e| e["session"] == session && e["agent"].is_null())
        .collect();
    let told = |status: &str| {
        ours.iter().any(|e| {
            e["kind"] == "status" && e["status"] == status && !e["previous_status"].is_null()
        })
    };
    assert!(told("waiting_for_approval"), "{ours:#?}");
    if hooks_installed == Hooks::None {
        // Only the sessions folder can have said so: its words are the CLI's.
        assert!(
            ours.iter()
                .any(|e| e["status"] == "waiting_for_approval" && e["text"] == "permission prompt"),
            "{ours:#?}"
        );
    }
    let last_status = ours
        .iter()
        .rev()
        .find(|e| e["kind"] == "status")
        .expect("a status event");
    assert_eq!(last_status["status"], "idle", "{ours:#?}");

    // The turn's success carries its duration, live as offline; the failed turn is an API
    // error, no success.
    let success: Vec<&Value> = offline.iter().filter(|e| e["kind"] == "success").collect();
    assert_eq!(success.len(), 1, "{offline:#?}");
    assert!(
        offline
            .iter()
            .any(|e| e["kind"] == "error" && e["error"] == "api"),
        "{offline:#?}"
    );
    assert!(success[0]["duration_ms"].as_u64().is_some(), "{success:?}");

    // Live equals offline (status events aside: live ones come from timers and hooks too).
    let want: Vec<&Value> = offline.iter().filter(|e| e["kind"] != "status").collect();
    let got: Vec<Value> = without_status(
        live_lines
            .into_iter()
            .filter(|line| {
                serde_json::from_str::<Value>(line)
                    .is_ok_and(|e| e["session"] == session && e["agent"].is_null())
            })
            .collect(),
    )
    .iter()
    .map(|line| serde_json::from_str(line).expect("event JSON"))
    .collect();
    let got: Vec<&Value> = got.iter().collect();
    assert_eq!(got, want, "live differs from offline");
}
