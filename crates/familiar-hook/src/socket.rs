//! The local socket between `familiar hook` (a short-lived process Claude Code starts) and a
//! running Familiar: one JSON line per connection.
//!
//! Only the user may talk to it: the socket lives in a private directory (under
//! `$XDG_RUNTIME_DIR`, else `/tmp/familiar-$UID`) that must be a real directory owned by the
//! user with no group or other permissions (created 0700, verified every time), and each
//! connection's peer must be the same user (`SO_PEERCRED`). The listener reads each connection
//! on its own thread under a deadline (a cap bounds how many at once), so a slow client delays
//! nobody else. The sender gives up within its deadline even when the listener is stopped and
//! its backlog full, so Claude Code is never slowed. The socket file is removed when the
//! listener's [`HookGuard`] drops, and a stale one (nobody answers) is taken over.

use std::io::{self, Read as _, Write as _};
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::fs::{DirBuilderExt as _, FileTypeExt as _, MetadataExt as _};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use crate::HookInput;

/// Longest hook message accepted (hook JSON is small; this bounds a bad client).
pub const MAX_MESSAGE: usize = 1 << 20;

/// Environment variable naming the socket, overriding the default (tests, several users).
pub const SOCKET_ENV: &str = "FAMILIAR_SOCKET";

/// How long one connection may take to send its message.
pub const READ_DEADLINE: Duration = Duration::from_secs(2);

/// Connections read at once; more are closed unread (hooks are rare, so only a misbehaving
/// client gets here).
pub const MAX_CONNECTIONS: usize = 32;

/// Why the hook socket could not be used. An I/O cause is part of the message (`cause`), not
/// a `source`, so it is printed once however the error is shown.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("no Familiar is listening on {}: {cause}", path.display())]
    NotListening { path: PathBuf, cause: io::Error },
    #[error("another Familiar already listens on {}", .0.display())]
    InUse(PathBuf),
    #[error(
        "hook socket directory {} {reason}; refusing to use it (fix or remove it, or set {SOCKET_ENV} to a path in a directory only you can enter)",
        path.display()
    )]
    UnsafeDir { path: PathBuf, reason: String },
    #[error("hook socket {}: a connection from uid {uid}, not this user; closed", path.display())]
    Stranger { path: PathBuf, uid: u32 },
    #[error("hook socket {}: {cause}", path.display())]
    Io { path: PathBuf, cause: io::Error },
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// `$FAMILIAR_SOCKET`, else `$XDG_RUNTIME_DIR/familiar/hook.sock`, else
/// `/tmp/familiar-$UID/hook.sock` (the temp dir from `TMPDIR`).
pub fn socket_path() -> Result<PathBuf, HookError> {
    if let Some(path) = std::env::var_os(SOCKET_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(runtime) => PathBuf::from(runtime).join("familiar"),
        None => std::env::temp_dir().join(format!("familiar-{}", euid())),
    };
    Ok(dir.join("hook.sock"))
}

/// Is `dir` a real directory, owned by this user, with no group or other permissions?
pub fn check_private_dir(dir: &Path) -> Result<(), HookError> {
    let unsafe_dir = |reason: String| HookError::UnsafeDir {
        path: dir.to_owned(),
        reason,
    };
    let meta = std::fs::symlink_metadata(dir).map_err(|source| HookError::Io {
        path: dir.to_owned(),
        cause: source,
    })?;
    if !meta.file_type().is_dir() {
        return Err(unsafe_dir(
            "is not a directory (a symlink or a file)".to_owned(),
        ));
    }
    let me = euid();
    if meta.uid() != me {
        return Err(unsafe_dir(format!(
            "belongs to uid {}, not to you (uid {me})",
            meta.uid()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(unsafe_dir(format!(
            "is open to other users (mode {:o}, needs 700)",
            meta.mode() & 0o7777
        )));
    }
    Ok(())
}

/// Create `dir` 0700 when it is missing (missing parents 0700 too: a runtime dir made here,
/// once deleted, is the user's alone again), then verify it.
fn private_dir(dir: &Path) -> Result<(), HookError> {
    let io_err = |source| HookError::Io {
        path: dir.to_owned(),
        cause: source,
    };
    if let Some(parent) = dir.parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(io_err)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(io_err(err)),
    }
    check_private_dir(dir)
}

fn parent(path: &Path) -> Option<&Path> {
    path.parent().filter(|dir| !dir.as_os_str().is_empty())
}

/// Connect to `path` within `timeout`, even when the listener is stopped with a full backlog.
fn connect(path: &Path, timeout: Duration) -> io::Result<UnixStream> {
    let socket = socket2::Socket::new(socket2::Domain::UNIX, socket2::Type::STREAM, None)?;
    socket.connect_timeout(&socket2::SockAddr::unix(path)?, timeout)?;
    Ok(UnixStream::from(OwnedFd::from(socket)))
}

/// Nothing is sent into a directory that is not the user's own: the directory of `path` is
/// checked, and one that cannot be read means nobody is listening there.
fn check_socket_dir(path: &Path) -> Result<(), HookError> {
    let Some(dir) = parent(path) else {
        return Ok(());
    };
    check_private_dir(dir).map_err(|err| match err {
        HookError::Io { cause, .. } => HookError::NotListening {
            path: path.to_owned(),
            cause,
        },
        err => err,
    })
}

/// How often a refused connection is tried again within the deadline.
const RETRY_EVERY: Duration = Duration::from_millis(20);

/// Hand one hook message to the Familiar listening at `path`, all within `timeout` (connect
/// and write). Nothing is sent into a directory that is not the user's own.
pub fn send(path: &Path, message: &[u8], timeout: Duration) -> Result<(), HookError> {
    let deadline = Instant::now() + timeout;
    check_socket_dir(path)?;
    // A refused connection is a Familiar between two lives (a socket left behind, taken over
    // in a moment): tried again until the deadline, so the hook is not dropped meanwhile.
    let mut stream = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match connect(path, left.max(Duration::from_millis(1))) {
            Ok(stream) => break stream,
            Err(err) if err.kind() == io::ErrorKind::ConnectionRefused && left > RETRY_EVERY => {
                std::thread::sleep(RETRY_EVERY);
            }
            Err(cause) => {
                return Err(HookError::NotListening {
                    path: path.to_owned(),
                    cause,
                });
            }
        }
    };
    let io_err = |source| HookError::Io {
        path: path.to_owned(),
        cause: source,
    };
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    stream.set_write_timeout(Some(left)).map_err(io_err)?;
    let message = &message[..message.len().min(MAX_MESSAGE)];
    stream.write_all(message).map_err(io_err)?;
    if !message.ends_with(b"\n") {
        stream.write_all(b"\n").map_err(io_err)?;
    }
    stream.shutdown(std::net::Shutdown::Write).map_err(io_err)
}

/// Is a Familiar listening at `path`? Connects (within `timeout`) and closes without a
/// message, which the listener takes as a probe and ignores.
pub fn probe(path: &Path, timeout: Duration) -> Result<(), HookError> {
    check_socket_dir(path)?;
    connect(path, timeout)
        .map(drop)
        .map_err(|source| HookError::NotListening {
            path: path.to_owned(),
            cause: source,
        })
}

/// The uid of the process at the other end of `stream`.
fn peer_uid(stream: &UnixStream) -> io::Result<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: a valid socket fd, and a buffer of the size passed.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut cred).cast(),
            &mut len,
        )
    };
    if rc == 0 {
        Ok(cred.uid)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Which file a path is, to remove only the socket file this listener made.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|meta| (meta.dev(), meta.ino()))
}

/// The listening end, owned by a running Familiar; removes its socket file when dropped
/// (or, once [`spawn`](HookListener::spawn)ed, when its [`HookGuard`] drops).
pub struct HookListener {
    listener: UnixListener,
    guard: HookGuard,
}

impl HookListener {
    /// Listen at `path`, in a private directory (created 0700 when missing, refused when it is
    /// not the user's alone). A socket file left by a Familiar that died (nobody answers) is
    /// taken over; one that a live Familiar answers on is [`HookError::InUse`].
    pub fn bind(path: &Path) -> Result<HookListener, HookError> {
        let io_err = |source| HookError::Io {
            path: path.to_owned(),
            cause: source,
        };
        if let Some(dir) = parent(path) {
            private_dir(dir)?;
        }
        let listener = match UnixListener::bind(path) {
            Ok(listener) => listener,
            Err(err) if err.kind() == io::ErrorKind::AddrInUse => {
                if connect(path, Duration::from_millis(200)).is_ok() {
                    return Err(HookError::InUse(path.to_owned()));
                }
                let is_socket =
                    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_socket());
                if !is_socket {
                    return Err(io_err(io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        "the path exists and is not a socket; left as it is",
                    )));
                }
                std::fs::remove_file(path).map_err(io_err)?;
                UnixListener::bind(path).map_err(io_err)?
            }
            Err(err) => return Err(io_err(err)),
        };
        Ok(HookListener {
            listener,
            guard: HookGuard {
                identity: identity(path),
                path: path.to_owned(),
            },
        })
    }

    pub fn path(&self) -> &Path {
        &self.guard.path
    }

    /// Accept one connection and read its message (bounded by [`MAX_MESSAGE`] and
    /// [`READ_DEADLINE`]), on this thread.
    pub fn accept(&self) -> Result<HookInput, HookError> {
        let (stream, _) = self.listener.accept().map_err(|source| HookError::Io {
            path: self.path().to_owned(),
            cause: source,
        })?;
        read_message(self.path(), stream)?.ok_or_else(|| HookError::Io {
            path: self.path().to_owned(),
            cause: io::Error::new(io::ErrorKind::InvalidData, "an empty message (a probe)"),
        })
    }

    /// Accept hook messages on a thread, each connection read on a thread of its own, and
    /// send them on `tx`. Bad messages are logged and skipped. Keep the returned guard for as
    /// long as Familiar listens: dropping it removes the socket file.
    pub fn spawn(self, tx: Sender<HookInput>) -> io::Result<HookGuard> {
        let HookListener { listener, guard } = self;
        let path = guard.path.clone();
        // The thread owns only the listening socket; the caller's guard owns the file.
        std::thread::Builder::new()
            .name("familiar-hook".to_owned())
            .spawn(move || serve(&listener, &path, &tx))?;
        Ok(guard)
    }
}

/// The accept loop: a thread per connection, at most [`MAX_CONNECTIONS`] at once.
fn serve(listener: &UnixListener, path: &Path, tx: &Sender<HookInput>) {
    let active = Arc::new(AtomicUsize::new(0));
    loop {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(err) => {
                tracing::warn!("hook socket {}: {err}", path.display());
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        if active.load(Ordering::Acquire) >= MAX_CONNECTIONS {
            tracing::warn!(
                "hook socket {}: {MAX_CONNECTIONS} connections already open; closed one",
                path.display()
            );
            continue;
        }
        active.fetch_add(1, Ordering::AcqRel);
        let (counter, tx, path) = (Arc::clone(&active), tx.clone(), path.to_owned());
        let spawned = std::thread::Builder::new()
            .name("familiar-hook-conn".to_owned())
            .spawn(move || {
                match read_message(&path, stream) {
                    Ok(Some(input)) => {
                        let _ = tx.send(input);
                    }
                    Ok(None) => tracing::debug!("hook socket probed (`familiar doctor`)"),
                    Err(err) => tracing::warn!("{err}"),
                }
                counter.fetch_sub(1, Ordering::AcqRel);
            });
        if let Err(err) = spawned {
            active.fetch_sub(1, Ordering::AcqRel);
            tracing::warn!("hook socket: cannot start a reader thread: {err}");
        }
    }
}

/// Check the peer, then read one message within [`READ_DEADLINE`]; `None` for a connection
/// closed without a byte (a [`probe`]).
fn read_message(path: &Path, mut stream: UnixStream) -> Result<Option<HookInput>, HookError> {
    let io_err = |source| HookError::Io {
        path: path.to_owned(),
        cause: source,
    };
    let uid = peer_uid(&stream).map_err(io_err)?;
    if uid != euid() {
        return Err(HookError::Stranger {
            path: path.to_owned(),
            uid,
        });
    }
    let deadline = Instant::now() + READ_DEADLINE;
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io_err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client sent no complete message in time; closed",
            )));
        }
        stream.set_read_timeout(Some(left)).map_err(io_err)?;
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if bytes.len() > MAX_MESSAGE {
                    return Err(io_err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("hook message longer than {MAX_MESSAGE} bytes; closed"),
                    )));
                }
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(io_err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the client sent no complete message in time; closed",
                )));
            }
            Err(err) => return Err(io_err(err)),
        }
    }
    if bytes.is_empty() {
        return Ok(None);
    }
    HookInput::parse(&bytes).map(Some).map_err(|err| {
        io_err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("hook message is not hook JSON: {err}"),
        ))
    })
}

fn remove_if_ours(path: &Path, made: Option<(u64, u64)>) {
    if made.is_some() && identity(path) == made {
        let _ = std::fs::remove_file(path);
    }
}

/// Removes the socket file of a spawned [`HookListener`] when dropped (only if it is still
/// the file this listener made, not one a later Familiar took over).
#[must_use = "dropping the guard removes the socket file"]
pub struct HookGuard {
    path: PathBuf,
    identity: Option<(u64, u64)>,
}

impl HookGuard {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for HookGuard {
    fn drop(&mut self) {
        remove_if_ours(&self.path, self.identity);
    }
}
