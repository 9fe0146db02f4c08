//! The local socket between `familiar hook` (a short-lived process Claude Code starts) and a
//! running Familiar: one JSON line per connection. A hook never blocks Claude Code, and is
//! not dropped because other clients are slow, idle or many, nor because the socket file
//! was deleted.
//!
//! Only the user may talk to it: the socket lives in a private directory (under
//! `$XDG_RUNTIME_DIR`, else `/tmp/familiar-$UID`) that must be a real directory owned by the
//! user with no group or other permissions (created 0700, verified every time), and each
//! connection's peer must be the same user (`SO_PEERCRED`, checked as it is accepted). The
//! sender gives up within its deadline even when the listener is stopped and its backlog
//! full, and tries a refused connection again meanwhile, so Claude Code is never slowed.
//!
//! - this file: the socket's path and directory checks, and the sending end ([`send`],
//!   [`probe`]);
//! - `listener`: binding ([`HookListener::bind`]; a stale socket, nobody answering, is taken
//!   over), the blocking [`HookListener::accept`], the checks every message goes through, and
//!   the [`HookGuard`] that removes the socket file when it drops (only the file this
//!   listener bound last, never one another Familiar made);
//! - `serve`: the spawned listener, one thread waiting on every connection at once (`mio`),
//!   each read under its own deadline ([`READ_DEADLINE`]) and size limit ([`MAX_MESSAGE`],
//!   [`MAX_BUFFERED`] for all together), so a slow or idle client delays nobody else; past
//!   [`MAX_CONNECTIONS`] new connections wait in the kernel's backlog (a hook's message waits
//!   there with them) until one closes, never closed unread. About once a second it checks
//!   that its socket file is still at its path: one deleted (with its directory, by the user
//!   or a session manager) is made again, the directory 0700, and bound anew; a path another
//!   Familiar holds is left alone.

mod listener;
mod serve;

use std::io::{self, Write as _};
use std::os::fd::OwnedFd;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use listener::{HookGuard, HookListener};

/// Longest hook message accepted (hook JSON is small; this bounds a bad client).
pub const MAX_MESSAGE: usize = 1 << 20;

/// Environment variable naming the socket, overriding the default (tests, several users).
pub const SOCKET_ENV: &str = "FAMILIAR_SOCKET";

/// How long one connection may take to send its message.
pub const READ_DEADLINE: Duration = Duration::from_secs(2);

/// Connections read at once; more wait in the kernel's backlog until one closes (hooks take
/// milliseconds, so only a misbehaving client gets here).
pub const MAX_CONNECTIONS: usize = 1024;

/// Bytes all open connections may hold together before the one that passes it is closed
/// (`MAX_CONNECTIONS` messages of [`MAX_MESSAGE`] would be a gigabyte).
pub const MAX_BUFFERED: usize = 32 * MAX_MESSAGE;

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
