//! The hook socket with real Unix sockets: messages cross it, the file goes with the guard,
//! a stale socket is taken over, only the user's own private directory and peers are accepted,
//! a slow client blocks nobody, idle ones starve nobody, past the connection cap a hook waits
//! rather than being dropped, a deleted socket (or directory) is bound again, and the sender
//! never hangs on a stopped listener.

use std::io::{Read as _, Write as _};
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use familiar_hook::{HookError, HookInput, HookListener, send};

/// A temp dir only this user can enter (the default one follows the umask).
fn private_tempdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    dir
}

const STOP: &[u8] = br#"{"hook_event_name":"Stop","session_id":"s1"}"#;

/// A hang guard, not a timing claim: every wait here is far above what the step needs.
const HANG: Duration = Duration::from_secs(20);

fn listen(
    path: &Path,
) -> (
    familiar_hook::HookGuard,
    crossbeam_channel::Receiver<HookInput>,
) {
    let listener = HookListener::bind(path).expect("binds");
    let (tx, rx) = crossbeam_channel::unbounded();
    let guard = listener.spawn(tx).expect("listener thread");
    (guard, rx)
}

#[test]
fn messages_cross_the_socket_and_a_second_familiar_is_refused() {
    let dir = private_tempdir();
    let path = dir.path().join("run/familiar/hook.sock");
    let (_guard, rx) = listen(&path);
    let mode = std::fs::metadata(path.parent().expect("dir"))
        .expect("dir")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700, "the directory is created private");
    assert!(matches!(
        HookListener::bind(&path),
        Err(HookError::InUse(_))
    ));
    // A probe (`familiar doctor`) sends nothing, and nothing arrives for it.
    familiar_hook::probe(&path, Duration::from_secs(5)).expect("someone listens");
    send(&path, STOP, Duration::from_secs(5)).expect("sent");
    let got = rx.recv_timeout(HANG).expect("received");
    assert_eq!(got.hook_event_name.as_deref(), Some("Stop"));
    assert_eq!(got.session_id.as_deref(), Some("s1"));

    let nobody = dir.path().join("nobody.sock");
    assert!(matches!(
        send(&nobody, b"{}", Duration::from_secs(1)),
        Err(HookError::NotListening { .. })
    ));
    assert!(matches!(
        familiar_hook::probe(&nobody, Duration::from_secs(1)),
        Err(HookError::NotListening { .. })
    ));
}

#[test]
fn socket_left_behind_is_removed_when_the_guard_drops() {
    let dir = private_tempdir();
    let path = dir.path().join("hook.sock");
    let (guard, _rx) = listen(&path);
    assert!(path.exists());
    drop(guard);
    assert!(!path.exists(), "the socket file goes with the guard");

    // An unspawned listener removes it too.
    drop(HookListener::bind(&path).expect("binds"));
    assert!(!path.exists());
}

#[test]
fn socket_taken_over_by_another_familiar_is_not_removed_by_the_first() {
    let dir = private_tempdir();
    let path = dir.path().join("hook.sock");
    let (first, _rx) = listen(&path);
    // The second takes the path over in one step (a rename over the first's file): were it
    // removed first, the first's listener could bind it again in between (it rebinds a
    // socket file that went missing).
    let other = dir.path().join("other.sock");
    let (_second, rx) = listen(&other);
    std::fs::rename(&other, &path).expect("renamed over");
    drop(first);
    assert!(path.exists(), "the second Familiar's socket stays");
    send(&path, STOP, Duration::from_secs(5)).expect("sent");
    assert!(rx.recv_timeout(HANG).is_ok());
}

#[test]
fn stale_socket_is_taken_over() {
    let dir = private_tempdir();
    let stale = dir.path().join("stale.sock");
    // A Familiar that died: its file stays, nobody answers.
    drop(std::os::unix::net::UnixListener::bind(&stale).expect("bind"));
    assert!(stale.exists());
    let (_guard, rx) = listen(&stale);
    send(&stale, STOP, Duration::from_secs(5)).expect("sent");
    assert!(rx.recv_timeout(HANG).is_ok());

    // A path that is not a socket is never removed.
    let file = dir.path().join("file.sock");
    std::fs::write(&file, "mine").expect("write");
    assert!(matches!(
        HookListener::bind(&file),
        Err(HookError::Io { .. })
    ));
    assert_eq!(std::fs::read_to_string(&file).expect("kept"), "mine");
}

#[test]
fn socket_directory_open_to_other_users_is_refused() {
    let dir = private_tempdir();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).expect("mkdir");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let path = shared.join("hook.sock");
    let err = HookListener::bind(&path).err().expect("refused");
    assert!(matches!(err, HookError::UnsafeDir { .. }));
    assert!(
        err.to_string().contains("open to other users (mode 777"),
        "{err}"
    );
    assert!(!path.exists());
    // Nor does the sender hand anything to a socket there.
    drop(std::os::unix::net::UnixListener::bind(&path).expect("bind"));
    assert!(matches!(
        send(&path, STOP, Duration::from_secs(1)),
        Err(HookError::UnsafeDir { .. })
    ));

    // A symlink to a private directory is not the directory itself.
    let real = dir.path().join("real");
    std::fs::create_dir(&real).expect("mkdir");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    assert!(matches!(
        HookListener::bind(&link.join("hook.sock")),
        Err(HookError::UnsafeDir { .. })
    ));

    // A directory that belongs to someone else (needs root to make one).
    if std::fs::metadata(dir.path()).expect("dir").uid() == 0 {
        let theirs = dir.path().join("theirs");
        std::fs::create_dir(&theirs).expect("mkdir");
        std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).expect("chown");
        let err = HookListener::bind(&theirs.join("hook.sock"))
            .err()
            .expect("refused");
        assert!(err.to_string().contains("belongs to uid 65534"), "{err}");
    }
}

#[test]
fn a_peer_that_is_another_user_is_refused() {
    let dir = private_tempdir();
    if std::fs::metadata(dir.path()).expect("dir").uid() != 0 {
        eprintln!("skipped: running a client as another user needs root");
        return;
    }
    let sockets = dir.path().join("sockets");
    let path = sockets.join("hook.sock");
    let (_guard, rx) = listen(&path);
    // Open the way on purpose, as a careless setup might, so only SO_PEERCRED stands.
    for p in [dir.path(), sockets.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    // The listener may close the stranger's connection before it has sent anything (a
    // broken pipe on send): only the connect must succeed, whatever happens after.
    let output = std::process::Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(
            "import socket,sys\n\
             s=socket.socket(socket.AF_UNIX)\n\
             s.connect(sys.argv[1])\n\
             try:\n\
             \x20 s.sendall(b'{\"hook_event_name\":\"Notification\",\"notification_type\":\"permission_prompt\"}\\n')\n\
             \x20 s.shutdown(socket.SHUT_WR)\n\
             \x20 s.recv(1)\n\
             except OSError:\n  pass\n",
        )
        .arg(&path)
        .uid(65534)
        .gid(65534)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "the stranger connected and was closed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    send(&path, STOP, Duration::from_secs(5)).expect("sent");
    let first = rx.recv_timeout(HANG).expect("received");
    assert_eq!(
        first.hook_event_name.as_deref(),
        Some("Stop"),
        "the stranger's message never arrives"
    );
}

use std::os::unix::process::CommandExt as _;

#[test]
fn one_slow_client_does_not_block_others() {
    let dir = private_tempdir();
    let path = dir.path().join("hook.sock");
    let (_guard, rx) = listen(&path);
    // A client that sends one byte and then nothing more.
    let mut slow = UnixStream::connect(&path).expect("connects");
    slow.write_all(b"{").expect("writes");
    send(&path, STOP, Duration::from_secs(5)).expect("sent");
    let got = rx
        .recv_timeout(HANG)
        .expect("the other client's message arrives");
    assert_eq!(got.hook_event_name.as_deref(), Some("Stop"));
    // The slow one is cut off by its deadline, not kept forever.
    slow.set_read_timeout(Some(HANG)).expect("timeout");
    let mut rest = Vec::new();
    assert_eq!(
        slow.read_to_end(&mut rest).expect("closed by the server"),
        0
    );
}

#[test]
fn send_does_not_hang_on_a_stopped_listener_with_a_full_backlog() {
    let dir = private_tempdir();
    let path = dir.path().join("hook.sock");
    // A Familiar that is stopped (SIGSTOP): bound, never accepting.
    let _stopped = HookListener::bind(&path).expect("binds");
    let mut held = Vec::new();
    loop {
        let socket = socket2::Socket::new(socket2::Domain::UNIX, socket2::Type::STREAM, None)
            .expect("socket");
        socket.set_nonblocking(true).expect("nonblocking");
        match socket.connect(&socket2::SockAddr::unix(&path).expect("addr")) {
            Ok(()) => held.push(socket),
            Err(_) => break,
        }
        assert!(held.len() < 10_000, "the backlog never filled");
    }
    let (done_tx, done_rx) = crossbeam_channel::bounded(1);
    let target = path.clone();
    std::thread::spawn(move || {
        let _ = done_tx.send(send(&target, STOP, Duration::from_millis(300)));
    });
    let result = done_rx.recv_timeout(HANG).expect("send returned");
    assert!(
        matches!(result, Err(HookError::NotListening { .. })),
        "{result:?}"
    );
}

/// Issue 28: a runtime dir that did not exist (deleted while running, or never made) was
/// created with the umask's mode. Every directory made for the socket is the user's alone.
#[test]
fn missing_directories_on_the_way_to_the_socket_are_made_private() {
    let dir = private_tempdir();
    let runtime = dir.path().join("run-user/1000");
    let path = runtime.join("familiar/hook.sock");
    let listener = HookListener::bind(&path).expect("binds");
    for made in [
        dir.path().join("run-user"),
        runtime.clone(),
        runtime.join("familiar"),
    ] {
        let mode = std::fs::metadata(&made).expect("made").permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", made.display());
    }
    drop(listener);
}

/// Issue 28: a hook sent while Familiar was between two lives (its old socket left behind,
/// a new one taking it over) was dropped at the first refusal. A refused connection is tried
/// again within the hook's deadline.
#[test]
fn a_hook_refused_for_a_moment_gets_through_within_its_deadline() {
    let dir = private_tempdir();
    let path = dir.path().join("hook.sock");
    // The old Familiar's socket: there, but nobody answers (connecting is refused).
    drop(std::os::unix::net::UnixListener::bind(&path).expect("bind"));
    let starting = {
        let path = path.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            listen(&path)
        })
    };
    send(&path, STOP, Duration::from_secs(5)).expect("sent once the new Familiar listens");
    let (_guard, rx) = starting.join().expect("the new Familiar starts");
    let got = rx.recv_timeout(HANG).expect("the hook arrives");
    assert_eq!(got.hook_event_name.as_deref(), Some("Stop"));
    // Nobody coming: still refused, within the deadline.
    let gone = dir.path().join("gone.sock");
    drop(std::os::unix::net::UnixListener::bind(&gone).expect("bind"));
    let started = std::time::Instant::now();
    assert!(matches!(
        send(&gone, STOP, Duration::from_millis(200)),
        Err(HookError::NotListening { .. })
    ));
    assert!(started.elapsed() < HANG);
}

/// Issue 28: 32 connections that sent nothing held every reader, and a real hook arriving
/// meanwhile was closed unread (dropped) for up to the read deadline. Idle connections wait
/// on their own deadlines; the hook is read at once.
#[test]
fn idle_connections_do_not_starve_a_real_hook() {
    let dir = private_tempdir();
    let path = dir.path().join("hook.sock");
    let (_guard, rx) = listen(&path);
    let idle: Vec<UnixStream> = (0..40)
        .map(|_| UnixStream::connect(&path).expect("connects"))
        .collect();
    send(&path, STOP, Duration::from_secs(5)).expect("sent");
    let got = rx
        .recv_timeout(Duration::from_secs(1))
        .expect("the hook arrives while 40 idle connections are open");
    assert_eq!(got.hook_event_name.as_deref(), Some("Stop"));
    drop(idle);
}

/// Send until it gets through (the listener rebinds about once a second), within `within`.
fn send_until_it_gets_through(path: &Path, within: Duration) {
    let started = std::time::Instant::now();
    while let Err(err) = send(path, STOP, Duration::from_millis(200)) {
        assert!(
            started.elapsed() < within,
            "nobody listens again at {}: {err}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Issue 28: a runtime dir deleted while Familiar ran (by the user or a session manager)
/// took the socket with it, and hooks were lost until a restart. The directory is made again,
/// private, and the socket bound again at the same path; a path that another file holds is
/// left alone; the guard removes the new socket file.
#[test]
fn a_deleted_socket_directory_is_made_again_and_the_socket_rebound() {
    let dir = private_tempdir();
    let familiar = dir.path().join("run/familiar");
    let path = familiar.join("hook.sock");
    let (guard, rx) = listen(&path);
    let first = std::fs::metadata(&path).expect("bound").ino();

    std::fs::remove_dir_all(dir.path().join("run")).expect("deleted");
    send_until_it_gets_through(&path, Duration::from_secs(3));
    let got = rx.recv_timeout(HANG).expect("the hook arrives");
    assert_eq!(got.hook_event_name.as_deref(), Some("Stop"));
    for made in [dir.path().join("run"), familiar.clone()] {
        let mode = std::fs::metadata(&made).expect("made").permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", made.display());
    }
    assert_ne!(std::fs::metadata(&path).expect("bound").ino(), first);

    // The socket file alone, too.
    std::fs::remove_file(&path).expect("removed");
    send_until_it_gets_through(&path, Duration::from_secs(3));
    assert!(rx.recv_timeout(HANG).is_ok());

    // A path another file holds (another Familiar's, say) is left as it is.
    // (Put there in one step: the path is never missing meanwhile.)
    let theirs = familiar.join("theirs");
    std::fs::write(&theirs, "theirs").expect("write");
    std::fs::rename(&theirs, &path).expect("renamed over the socket");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(std::fs::read_to_string(&path).expect("kept"), "theirs");
    std::fs::remove_file(&path).expect("removed");
    send_until_it_gets_through(&path, Duration::from_secs(3));
    assert!(rx.recv_timeout(HANG).is_ok());

    drop(guard);
    assert!(!path.exists(), "the guard removes the new socket file");
}

/// Issue 28: past the cap a new connection was closed unread. Now it waits in the kernel's
/// backlog until an open one closes (here the idle ones, at their deadline), and is read then.
#[test]
fn past_the_connection_cap_a_hook_waits_and_is_not_dropped() {
    let wanted = familiar_hook::socket::MAX_CONNECTIONS as u64 * 2 + 200;
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid rlimit to fill, then to set.
    let raised = unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && {
            limit.rlim_cur = limit.rlim_cur.max(wanted.min(limit.rlim_max));
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0
        }
    };
    if !raised || limit.rlim_cur < wanted {
        eprintln!("skipped: needs {wanted} open files (the listener's end and this one's)");
        return;
    }
    let dir = private_tempdir();
    let path = dir.path().join("hook.sock");
    let (_guard, rx) = listen(&path);
    let idle: Vec<UnixStream> = (0..familiar_hook::socket::MAX_CONNECTIONS + 8)
        .map(|_| UnixStream::connect(&path).expect("connects"))
        .collect();
    send(&path, STOP, Duration::from_secs(5)).expect("sent");
    let got = rx.recv_timeout(HANG).expect("the hook arrives after all");
    assert_eq!(got.hook_event_name.as_deref(), Some("Stop"));
    drop(idle);
}
