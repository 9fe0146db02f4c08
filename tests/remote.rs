//! `familiar watch --remote` against a real OpenSSH server on 127.0.0.1 (`common::sshd`): a
//! session on the "remote" side (its own config dir) comes through the local pipeline with
//! the same events as a local one, beside a local session; a link cut at random points is
//! tried again and loses and doubles nothing; a remote hook reaches a local notification; a
//! remote without Familiar, or with another feed format, is one clear line while the local
//! sessions go on; and no remote process outlives its ssh session. Dormant remote sessions:
//! [`dormant`].

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
#[path = "remote/dormant.rs"]
mod dormant;

use common::sshd::Sshd;
use common::watch::*;
use familiar_testkit::dbus::{DbusDaemon, start_notification_server};

/// `line` without the `"host"` a remote event carries.
fn without_host(line: &str, host: &str) -> String {
    line.replace(&format!(",\"host\":\"{host}\""), "")
}

fn remote_args(sshd: &Sshd, dir: Option<&Path>) -> Vec<String> {
    let mut args = remote_with_bin(sshd, env!("CARGO_BIN_EXE_familiar"));
    args[1] = sshd.remote(dir);
    args
}

fn start_watch(project: &Project, sshd: &Sshd, extra: &[&str]) -> Watch {
    let mut args: Vec<String> = remote_args(sshd, None);
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    let watch = watch_through(project, sshd, &args, None);
    watch.wait_stderr(&format!("{}: caught up", sshd.remote(None)));
    watch
}

/// `familiar watch ARGS` in `project`, its `ssh` reaching `sshd` (and notifying on `bus`).
fn watch_through(project: &Project, sshd: &Sshd, args: &[String], bus: Option<&str>) -> Watch {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Watch::start_with(
        &project.config,
        &project.project,
        &args,
        Options {
            env: sshd.env(),
            bus,
            ..Options::default()
        },
    )
}

/// A stand-in for the remote `familiar`: a shell script beside the server.
fn fake_familiar(sshd: &Sshd, name: &str, script: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = sshd.root.join(name);
    fs::write(&path, script).expect("script");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// `--remote` this server with `bin` as the remote `familiar`.
fn remote_with_bin(sshd: &Sshd, bin: &str) -> Vec<String> {
    vec![
        "--remote".to_owned(),
        sshd.remote(None),
        "--remote-bin".to_owned(),
        bin.to_owned(),
    ]
}

/// A prompt in the local project (its `cwd` places it there).
fn local_prompt(project: &Project, text: &str) -> String {
    prompt_record(text).replace(
        "\"sessionId\"",
        &format!("\"cwd\":\"{}\",\"sessionId\"", project.project.display()),
    )
}

/// `familiar sessions --json --remote` this server, run in `project`.
fn remote_sessions(project: &Project, sshd: &Sshd) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_familiar"));
    command
        .args(["sessions", "--json", "--remote", &sshd.remote(None)])
        .args(["--remote-bin", env!("CARGO_BIN_EXE_familiar")])
        .env("CLAUDE_CONFIG_DIR", &project.config)
        .env("HOME", &project.config)
        .env("XDG_CONFIG_HOME", project.config.join(".config"))
        .env("NO_COLOR", "1")
        .envs(sshd.env())
        .current_dir(&project.project);
    command
}

/// A remote session file under the remote config dir's project `-work-remote`.
fn remote_session(sshd: &Sshd, name: &str) -> std::path::PathBuf {
    let dir = sshd.remote_config.join("projects").join("-work-remote");
    fs::create_dir_all(&dir).expect("mkdir");
    dir.join(name)
}

#[test]
fn a_remote_session_has_the_events_of_a_local_one_beside_a_local_session() {
    let sshd = Sshd::start();
    let project = Project::new();
    let remote = remote_session(&sshd, "session.jsonl");
    fs::write(&remote, "").expect("create");
    let local = project.session(1, "");
    let watch = start_watch(&project, &sshd, &[]);
    let host = sshd.remote(None);

    // Appended in uneven chunks that cut lines anywhere, as in tests/watch.rs.
    let bytes = real_fixture_bytes(FIXTURE);
    let (mut at, mut step) = (0, 1);
    while at < bytes.len() {
        let end = (at + step).min(bytes.len());
        append(&remote, &bytes[at..end]);
        at = end;
        step = (step * 7 + 3) % 9_000 + 1;
    }
    // The two come in their own order: each is waited for.
    append(&local, local_prompt(&project, "local-hello").as_bytes());
    append(&local, sentinel("local-end").as_bytes());
    let mut printed = watch.events_until("local-end");
    append(&remote, sentinel("remote-end").as_bytes());
    printed.extend(watch.events_until("remote-end"));

    let (remote_lines, local_lines): (Vec<String>, Vec<String>) = printed
        .into_iter()
        .partition(|line| line.contains(&format!("\"host\":\"{host}\"")));
    assert!(
        local_lines
            .iter()
            .any(|line| line.contains("local-hello") && !line.contains("\"host\"")),
        "the local session goes on beside the remote one: {local_lines:?}; {}",
        watch.stderr()
    );
    let got: Vec<String> = without_status(remote_lines)
        .iter()
        .map(|line| without_host(line, &host))
        .collect();
    let copy = project.root.join("copy.jsonl");
    fs::write(&copy, &bytes).expect("copy");
    let want = without_status(familiar_events(&copy));
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

/// A small deterministic generator: the seed is printed, and `FAMILIAR_CUT_SEED` replays it.
struct Rng(u64);

impl Rng {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below.max(1)
    }
}

#[test]
fn a_link_cut_at_fifty_random_points_loses_and_doubles_nothing() {
    let seed = std::env::var("FAMILIAR_CUT_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
                | 1
        });
    eprintln!("FAMILIAR_CUT_SEED={seed}");
    let mut rng = Rng(seed);
    let sshd = Sshd::start();
    let project = Project::new();
    let remote = remote_session(&sshd, "cut.jsonl");
    append(&remote, prompt_record("before-any-cut").as_bytes());
    let watch = start_watch(&project, &sshd, &[]);

    let mut written = 0;
    let mut write_some = |rng: &mut Rng, most: u64| {
        for _ in 0..rng.next(most + 1) {
            let text = if rng.next(4) == 0 {
                // A big line: the cut may land while it is on its way.
                format!("p-{written}-{}", "x".repeat(300_000))
            } else {
                format!("p-{written}")
            };
            append(&remote, prompt_record(&text).as_bytes());
            written += 1;
        }
    };
    for cut in 0..50 {
        write_some(&mut rng, 4);
        std::thread::sleep(Duration::from_millis(rng.next(120)));
        let connections = sshd.connections();
        let latest = *connections.last().expect("a connection");
        // SAFETY: kill(2) of a pid this test's ssh wrapper wrote; at worst it is gone.
        unsafe { libc::kill(latest, libc::SIGKILL) };
        // Written while the link is down.
        write_some(&mut rng, 2);
        // The next cut falls in a stream that is up again.
        let deadline = Instant::now() + WAIT;
        while watch.stderr().matches("connected again").count() <= cut {
            assert!(
                Instant::now() < deadline,
                "cut {cut}: not connected again: {}",
                watch.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(sshd.connections().len() > connections.len());
    }
    append(&remote, sentinel("after-the-cuts").as_bytes());
    let prompts: Vec<String> = watch
        .events_until("after-the-cuts")
        .into_iter()
        .filter(|line| line.contains("\"kind\":\"prompt\""))
        .filter_map(|line| {
            let start = line.find("\"text\":\"p-")? + "\"text\":\"".len();
            let rest = &line[start..];
            let end = rest.find(['"', 'x'])?;
            Some(rest[..end].trim_end_matches('-').to_owned())
        })
        .collect();
    let want: Vec<String> = (0..written).map(|n| format!("p-{n}")).collect();
    assert_eq!(prompts, want, "seed {seed}");
    assert!(
        watch.stderr().contains("connected again"),
        "{}",
        watch.stderr()
    );
    drop(watch);
    // No remote process outlives its ssh session.
    let deadline = Instant::now() + WAIT;
    while !sshd.remote_feeds().is_empty() {
        assert!(
            Instant::now() < deadline,
            "remote feeds left running: {:?}",
            sshd.remote_feeds()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_remote_permission_prompt_and_a_remote_error_notify_here() {
    let sshd = Sshd::start();
    let project = Project::new();
    let bus = tempfile::tempdir().expect("temp dir");
    let daemon = DbusDaemon::start(bus.path());
    let notified = start_notification_server(&daemon.address);
    let remote = remote_session(&sshd, "5e55-0000.jsonl");
    let mut first = prompt_record("hello from afar");
    first = first.replace("\"sessionId\":\"s-watch\"", "\"sessionId\":\"5e55-0000\"");
    append(&remote, first.as_bytes());
    let mut args = remote_args(&sshd, None);
    args.push("--script".into());
    args.push(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scripts/notify-errors.rhai")
            .display()
            .to_string(),
    );
    let watch = watch_through(&project, &sshd, &args, Some(&daemon.address));
    watch.wait_stderr(&format!("{}: caught up", sshd.remote(None)));
    // The remote feed holds the remote hook socket once it is up.
    let deadline = Instant::now() + WAIT;
    while !sshd.remote_socket.exists() {
        assert!(Instant::now() < deadline, "no remote hook socket");
        std::thread::sleep(Duration::from_millis(20));
    }

    // What Claude Code on the remote host hands its `familiar hook`.
    let hook = format!(
        "{{\"session_id\":\"5e55-0000\",\"transcript_path\":\"{}\",\"hook_event_name\":\"Notification\",\"notification_type\":\"permission_prompt\",\"message\":\"Claude needs your permission to use Bash\"}}",
        remote.display()
    );
    let sent = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_familiar"))
        .arg("hook")
        .env("FAMILIAR_SOCKET", &sshd.remote_socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the remote hook");
    use std::io::Write as _;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(hook.as_bytes())
        .expect("hook input");
    let status = child.wait().expect("the hook ends");
    assert!(status.success());
    let call = notified
        .recv_timeout(WAIT)
        .unwrap_or_else(|_| panic!("no notification here: {}", watch.stderr()));
    let took = sent.elapsed();
    assert_eq!(call.summary, "Claude Code needs your approval");
    assert!(
        took < Duration::from_secs(1),
        "the remote prompt took {took:?} to notify here"
    );

    // A session there that ends on an API error (as the real Claude Code CLI wrote it).
    let failing = remote_session(&sshd, "5bbf869c-c9f4-4122-b582-261f32f7f0e9.jsonl");
    let written = fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude-2.1.332/overload.jsonl"),
    )
    .expect("the fixture");
    append(&failing, &written);
    let deadline = Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let call = notified
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("the remote error notified nobody: {}", watch.stderr()));
        if call.summary == "Claude Code stopped on an API error" {
            assert!(call.body.contains("529"), "{call:?}");
            break;
        }
    }
}

#[test]
fn a_remote_without_familiar_is_one_clear_line_and_local_sessions_go_on() {
    let sshd = Sshd::start();
    let project = Project::new();
    let local = project.session(1, "");
    let args = remote_with_bin(&sshd, "/opt/nowhere/familiar");
    let watch = watch_through(&project, &sshd, &args, None);
    watch.wait_stderr("was not found on");
    append(&local, local_prompt(&project, "still-here").as_bytes());
    append(&local, sentinel("local-end").as_bytes());
    let printed = watch.events_until("local-end");
    assert!(printed.iter().any(|line| line.contains("still-here")));
    let said: Vec<String> = watch
        .stderr()
        .lines()
        .filter(|line| line.starts_with("familiar: "))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        said,
        [format!(
            "familiar: `/opt/nowhere/familiar` was not found on {}: install Familiar there \
             (see the README), or pass --remote-bin PATH",
            sshd.remote(None)
        )],
        "{}",
        watch.stderr()
    );
}

#[test]
fn a_remote_familiar_with_another_feed_format_is_refused_in_one_line() {
    let sshd = Sshd::start();
    let project = Project::new();
    let newer = fake_familiar(
        &sshd,
        "newer-familiar",
        "#!/bin/sh\necho '{\"hello\":{\"feed\":99,\"version\":\"9.0.0\"}}'\nsleep 30\n",
    );
    let args = remote_with_bin(&sshd, &newer.display().to_string());
    let watch = watch_through(&project, &sshd, &args, None);
    watch.wait_stderr("cannot read");
    assert!(
        watch.stderr().contains(&format!(
            "familiar: {} runs Familiar 9.0.0, whose feed (format 99) this one cannot read \
             (format 1): install Familiar",
            sshd.remote(None)
        )),
        "{}",
        watch.stderr()
    );
    // Given up: not tried again.
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(sshd.connections().len(), 1, "{}", watch.stderr());
}

#[test]
fn sessions_lists_the_remote_ones_beside_the_local_ones_and_names_a_host_it_cannot_reach() {
    let sshd = Sshd::start();
    let project = Project::new();
    let local = project.session(1, "");
    append(&local, local_prompt(&project, "here").as_bytes());
    let remote = remote_session(&sshd, "d3m0.jsonl");
    fs::write(&remote, real_fixture_bytes(FIXTURE)).expect("write");
    let unreachable = format!("localhost:{}", sshd.port + 1);
    let output = remote_sessions(&project, &sshd)
        .args(["--remote", &unreachable])
        .output()
        .expect("run familiar sessions");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let sessions: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a JSON array");
    let hosts: Vec<Option<&str>> = sessions
        .as_array()
        .expect("an array")
        .iter()
        .map(|session| session["host"].as_str())
        .collect();
    assert_eq!(hosts, [None, Some(sshd.remote(None).as_str())], "{stderr}");
    assert_eq!(output.status.code(), Some(1), "a host not reached fails it");
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [format!(
            "familiar: {unreachable}: ssh: connect to host localhost port {}: Connection refused",
            sshd.port + 1
        )],
        "{stderr}"
    );
}

#[test]
fn a_remote_familiar_too_old_for_feed_is_told_to_update() {
    let sshd = Sshd::start();
    let project = Project::new();
    // What an older `familiar`, one without `feed`, answers (clap's usage error).
    let older = fake_familiar(
        &sshd,
        "older-familiar",
        "#!/bin/sh\necho \"error: unrecognized subcommand 'feed'\" >&2\nexit 2\n",
    );
    let args = remote_with_bin(&sshd, &older.display().to_string());
    let watch = watch_through(&project, &sshd, &args, None);
    watch.wait_stderr("no `feed`");
    assert!(
        watch.stderr().contains(&format!(
            "familiar: the Familiar on {} has no `feed` that this one can use (an older \
             version?): install Familiar",
            sshd.remote(None)
        )),
        "{}",
        watch.stderr()
    );
}

#[test]
fn a_remote_directory_selects_that_project_there() {
    let sshd = Sshd::start();
    let project = Project::new();
    let mut sessions = Vec::new();
    for name in ["app-a", "app-b"] {
        let dir = sshd.root.join(name);
        fs::create_dir_all(&dir).expect("mkdir");
        let folder = encoded_project_dir(&sshd.remote_config, &dir);
        fs::create_dir_all(&folder).expect("mkdir");
        let path = folder.join(format!("{name}.jsonl"));
        fs::write(&path, "").expect("create");
        sessions.push((dir, path));
    }
    let chosen = &sessions[0].0;
    let watch = watch_through(&project, &sshd, &remote_args(&sshd, Some(chosen)), None);
    let name = sshd.remote(None);
    watch.wait_stderr(&format!("{name}: caught up"));
    for (dir, path) in &sessions {
        let text = format!(
            "from-{}",
            dir.file_name().and_then(|n| n.to_str()).unwrap_or("?")
        );
        let record = prompt_record(&text).replace(
            "\"sessionId\"",
            &format!("\"cwd\":\"{}\",\"sessionId\"", dir.display()),
        );
        append(path, record.as_bytes());
    }
    append(&sessions[0].1, sentinel("chosen-end").as_bytes());
    let printed = watch.events_until("chosen-end");
    assert!(
        printed.iter().any(|line| line.contains("from-app-a")),
        "{printed:?}"
    );
    // The other project's prompt was written first; it is not followed.
    assert!(
        !printed.iter().any(|line| line.contains("from-app-b")),
        "{printed:?}"
    );
    assert!(
        printed
            .iter()
            .all(|line| line.contains(&format!("\"host\":\"{name}\""))),
        "{printed:?}"
    );
}

#[test]
fn hosts_in_the_config_are_followed_without_a_flag() {
    let sshd = Sshd::start();
    let project = Project::new();
    let config_dir = project.config.join(".config/familiar");
    fs::create_dir_all(&config_dir).expect("mkdir");
    fs::write(
        config_dir.join("config.toml"),
        format!(
            "[remote]\nhosts = [\"{}\"]\nbin = \"{}\"\n",
            sshd.remote(None),
            env!("CARGO_BIN_EXE_familiar")
        ),
    )
    .expect("config");
    let remote = remote_session(&sshd, "configured.jsonl");
    fs::write(&remote, "").expect("create");
    let watch = Watch::start_with(
        &project.config,
        &project.project,
        &[],
        Options {
            env: sshd.env(),
            ..Options::default()
        },
    );
    watch.wait_stderr(&format!("{}: caught up", sshd.remote(None)));
    append(&remote, prompt_record("configured-host").as_bytes());
    let line = watch.line_containing("configured-host");
    assert!(
        line.contains(&format!("\"host\":\"{}\"", sshd.remote(None))),
        "{line}"
    );
}

#[test]
fn doctor_reaches_each_configured_host_and_says_why_one_does_not_answer() {
    let sshd = Sshd::start();
    let project = Project::new();
    let config_dir = project.config.join(".config/familiar");
    fs::create_dir_all(&config_dir).expect("mkdir");
    let unreachable = format!("localhost:{}", sshd.port + 1);
    fs::write(
        config_dir.join("config.toml"),
        format!(
            "[remote]\nhosts = [\"{}\", \"{unreachable}\"]\nbin = \"{}\"\n",
            sshd.remote(None),
            env!("CARGO_BIN_EXE_familiar")
        ),
    )
    .expect("config");
    let output = Command::new(env!("CARGO_BIN_EXE_familiar"))
        .arg("doctor")
        .env("CLAUDE_CONFIG_DIR", &project.config)
        .env("HOME", &project.config)
        .env("XDG_CONFIG_HOME", project.config.join(".config"))
        .env("NO_COLOR", "1")
        .envs(sshd.env())
        .current_dir(&project.project)
        .output()
        .expect("run familiar doctor");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let remotes: Vec<&str> = stdout
        .lines()
        .filter(|line| line.contains("] remote: "))
        .collect();
    assert_eq!(
        remotes,
        [
            format!(
                "[ok] remote: {}: Familiar {} answers over ssh",
                sshd.remote(None),
                env!("CARGO_PKG_VERSION")
            ),
            format!(
                "[!!] remote: {unreachable}: ssh: connect to host localhost port {}: Connection refused",
                sshd.port + 1
            ),
        ],
        "{stdout}"
    );
}
