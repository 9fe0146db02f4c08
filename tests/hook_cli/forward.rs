//! `familiar hook` at run time, against a running, stopped or absent Familiar: the socket left
//! behind after a signal, a full backlog, an input that stays open. Part of `tests/hook_cli.rs`.

use super::*;

#[test]
fn socket_left_behind_after_term_int_or_hup_is_gone_and_a_stale_one_is_taken_over() {
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        let tmp = tempfile::tempdir().expect("temp dir");
        let config = tmp.path().join("claude");
        std::fs::create_dir_all(config.join("projects")).expect("mkdir");
        let socket = config.join("run/hook.sock");
        let mut watch = common::watch::Watch::start(&config, tmp.path(), &[]);
        watch.wait_stderr("listening for Claude Code hooks");
        assert!(socket.exists());
        watch.signal(signal);
        let status = watch.wait_exit();
        assert!(
            status.success(),
            "signal {signal}: {status:?}: {}",
            watch.stderr()
        );
        assert!(
            !socket.exists(),
            "signal {signal}: the socket file is removed"
        );
    }

    // A Familiar killed outright leaves its file; the next one takes it over quietly.
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    std::fs::create_dir_all(config.join("projects")).expect("mkdir");
    let socket = config.join("run/hook.sock");
    let mut first = common::watch::Watch::start(&config, tmp.path(), &[]);
    first.wait_stderr("listening for Claude Code hooks");
    first.signal(libc::SIGKILL);
    first.wait_exit();
    assert!(socket.exists(), "left behind by SIGKILL");
    let mut second = common::watch::Watch::start(&config, tmp.path(), &[]);
    second.wait_stderr("listening for Claude Code hooks");
    assert!(!second.stderr().contains("WARN"), "{}", second.stderr());
    second.signal(libc::SIGTERM);
    assert!(second.wait_exit().success());
    assert!(!socket.exists());
}

#[test]
fn the_hook_does_not_hang_on_a_stopped_familiar_with_a_full_backlog() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let socket = tmp.path().join("run/hook.sock");
    // Bound and never accepting, as a Familiar under SIGSTOP.
    let _stopped = HookListener::bind(&socket).expect("binds");
    let address = {
        let path = socket.to_str().expect("UTF-8").as_bytes();
        // SAFETY: sockaddr_un is plain data; zeroed is a valid value.
        let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        address.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (slot, byte) in address.sun_path.iter_mut().zip(path) {
            *slot = *byte as libc::c_char;
        }
        address
    };
    let mut held = Vec::new();
    loop {
        // SAFETY: plain socket calls on a fd owned here; the address is a valid sockaddr_un.
        let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_NONBLOCK, 0) };
        assert!(fd >= 0);
        let rc = unsafe {
            libc::connect(
                fd,
                (&raw const address).cast(),
                std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t,
            )
        };
        // SAFETY: fd is ours.
        held.push(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
        if rc != 0 {
            break;
        }
        assert!(held.len() < 10_000, "the backlog never filled");
    }
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_familiar"))
        .arg("hook")
        .env("FAMILIAR_SOCKET", &socket)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("familiar hook runs");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(br#"{"hook_event_name":"Stop"}"#)
            .expect("input");
    }
    // A hang guard only: the hook gives up after 300 ms.
    let status = common::wait_within(
        &mut child,
        Duration::from_secs(20),
        "familiar hook on a stopped Familiar",
    );
    assert!(status.success());
}

/// Issue 28: `familiar hook` waited as long as its input stayed open (`(echo '{}'; sleep 30) |
/// familiar hook` took 30 s), and Claude Code waits for its hooks. It reads for a second at
/// most, then goes on with what it has.
#[test]
fn a_hook_whose_input_stays_open_returns_within_its_deadline() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_familiar"))
        .arg("hook")
        .env("FAMILIAR_SOCKET", "/nonexistent/familiar-test/hook.sock")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("familiar runs");
    let mut stdin = child.stdin.take().expect("stdin");
    {
        use std::io::Write as _;
        stdin.write_all(b"{}\n").expect("the input");
    }
    let started = std::time::Instant::now();
    // The write end stays open (as `sleep 30` would keep it) while the hook runs.
    let status = common::wait_within(
        &mut child,
        Duration::from_secs(10),
        "familiar hook with its input left open",
    );
    drop(stdin);
    assert!(status.success(), "{status}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}
