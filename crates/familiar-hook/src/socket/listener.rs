//! The listening end: binding in a private directory (a stale socket taken over), the
//! blocking [`HookListener::accept`], the checks every message goes through (peer, size,
//! deadline, hook JSON), and the [`HookGuard`] that removes the socket file this listener
//! bound last.

use std::io::{self, Read as _};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use super::serve::Server;
use super::{HookError, MAX_MESSAGE, READ_DEADLINE, connect, euid, parent, private_dir};
use crate::HookInput;

/// What a listener and its guard share: the socket file the listener bound last (device and
/// inode, replaced when it binds again), and whether the guard has dropped (then the listener
/// binds nothing more and stops).
#[derive(Debug)]
pub(super) struct Bound {
    pub(super) identity: Option<(u64, u64)>,
    pub(super) released: bool,
}

pub(super) type Shared = Arc<Mutex<Bound>>;

/// The shared state, even when a thread panicked holding it (two plain fields, always whole).
pub(super) fn lock(shared: &Shared) -> MutexGuard<'_, Bound> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Which file a path is, to remove only the socket file this listener made.
pub(super) fn identity(path: &Path) -> Option<(u64, u64)> {
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
                path: path.to_owned(),
                bound: Arc::new(Mutex::new(Bound {
                    identity: identity(path),
                    released: false,
                })),
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

    /// Accept hook messages on a thread that waits on every connection at once (each under
    /// its own deadline) and send them on `tx`; the socket file is bound again if it is
    /// deleted. Bad messages are logged and skipped. Keep the returned guard for as long as
    /// Familiar listens: dropping it removes the socket file and ends the thread.
    pub fn spawn(self, tx: Sender<HookInput>) -> io::Result<HookGuard> {
        let HookListener { listener, guard } = self;
        // The thread owns the listening socket; the caller's guard owns the file.
        let server = Server::new(listener, guard.path.clone(), Arc::clone(&guard.bound), tx)?;
        std::thread::Builder::new()
            .name("familiar-hook".to_owned())
            .spawn(move || server.run())?;
        Ok(guard)
    }
}

/// The uid of the process at the other end of `stream`.
fn peer_uid(stream: &impl AsRawFd) -> io::Result<u32> {
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

fn io_err(path: &Path, cause: io::Error) -> HookError {
    HookError::Io {
        path: path.to_owned(),
        cause,
    }
}

/// Is the peer of `stream` this user? ([`HookError::Stranger`] when not.)
pub(super) fn check_peer(path: &Path, stream: &impl AsRawFd) -> Result<(), HookError> {
    let uid = peer_uid(stream).map_err(|cause| io_err(path, cause))?;
    if uid != euid() {
        return Err(HookError::Stranger {
            path: path.to_owned(),
            uid,
        });
    }
    Ok(())
}

/// A connection past its [`READ_DEADLINE`].
pub(super) fn timed_out(path: &Path) -> HookError {
    io_err(
        path,
        io::Error::new(
            io::ErrorKind::TimedOut,
            "the client sent no complete message in time; closed",
        ),
    )
}

/// A connection that sent more than [`MAX_MESSAGE`].
pub(super) fn too_long(path: &Path) -> HookError {
    io_err(
        path,
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("hook message longer than {MAX_MESSAGE} bytes; closed"),
        ),
    )
}

/// What a connection sent, read to its end: `None` for nothing at all (a [`probe`]).
///
/// [`probe`]: super::probe
pub(super) fn parse(path: &Path, bytes: &[u8]) -> Result<Option<HookInput>, HookError> {
    if bytes.is_empty() {
        return Ok(None);
    }
    HookInput::parse(bytes).map(Some).map_err(|err| {
        io_err(
            path,
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("hook message is not hook JSON: {err}"),
            ),
        )
    })
}

/// Check the peer, then read one message within [`READ_DEADLINE`] (blocking, on this thread);
/// `None` for a connection closed without a byte (a [`probe`](super::probe)).
fn read_message(path: &Path, mut stream: UnixStream) -> Result<Option<HookInput>, HookError> {
    check_peer(path, &stream)?;
    let deadline = Instant::now() + READ_DEADLINE;
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(timed_out(path));
        }
        stream
            .set_read_timeout(Some(left))
            .map_err(|cause| io_err(path, cause))?;
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if bytes.len() > MAX_MESSAGE {
                    return Err(too_long(path));
                }
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(timed_out(path));
            }
            Err(err) => return Err(io_err(path, err)),
        }
    }
    parse(path, &bytes)
}

/// Removes the socket file of a spawned [`HookListener`] when dropped: the file the listener
/// bound last (it binds again when its file is deleted), and only if it is still that file,
/// not one a later Familiar took over. The listener's thread then stops.
#[must_use = "dropping the guard removes the socket file"]
pub struct HookGuard {
    path: PathBuf,
    bound: Shared,
}

impl HookGuard {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for HookGuard {
    fn drop(&mut self) {
        // Under the lock: the listener binds no new file after this, nor between the check
        // and the removal.
        let mut bound = lock(&self.bound);
        bound.released = true;
        if bound.identity.is_some() && identity(&self.path) == bound.identity {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
