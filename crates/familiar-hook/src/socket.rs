//! The local socket between `familiar hook` (a short-lived process Claude Code starts) and a
//! running Familiar: one JSON line per connection. The socket lives in a private directory
//! under `$XDG_RUNTIME_DIR` (mode 0700), so only the user can talk to it.

use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::Sender;

use crate::HookInput;

/// Longest hook message accepted (hook JSON is small; this bounds a bad client).
pub const MAX_MESSAGE: usize = 1 << 20;

/// Environment variable naming the socket, overriding the default (tests, several users).
pub const SOCKET_ENV: &str = "FAMILIAR_SOCKET";

#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("no runtime dir for the hook socket: set XDG_RUNTIME_DIR (or {SOCKET_ENV})")]
    NoRuntimeDir,
    #[error("no Familiar is listening on {}: {source}", path.display())]
    NotListening { path: PathBuf, source: io::Error },
    #[error("another Familiar already listens on {}", .0.display())]
    InUse(PathBuf),
    #[error("hook socket {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

/// `$FAMILIAR_SOCKET`, else `$XDG_RUNTIME_DIR/familiar/hook.sock`.
pub fn socket_path() -> Result<PathBuf, HookError> {
    if let Some(path) = std::env::var_os(SOCKET_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|v| !v.is_empty())
        .map(|dir| PathBuf::from(dir).join("familiar").join("hook.sock"))
        .ok_or(HookError::NoRuntimeDir)
}

/// Hand one hook message to the Familiar listening at `path`, within `timeout`.
pub fn send(path: &Path, message: &[u8], timeout: Duration) -> Result<(), HookError> {
    let mut stream = UnixStream::connect(path).map_err(|source| HookError::NotListening {
        path: path.to_owned(),
        source,
    })?;
    let io_err = |source| HookError::Io {
        path: path.to_owned(),
        source,
    };
    stream.set_write_timeout(Some(timeout)).map_err(io_err)?;
    let message = &message[..message.len().min(MAX_MESSAGE)];
    stream.write_all(message).map_err(io_err)?;
    if !message.ends_with(b"\n") {
        stream.write_all(b"\n").map_err(io_err)?;
    }
    stream.shutdown(std::net::Shutdown::Write).map_err(io_err)
}

/// The listening end, owned by a running Familiar; removes its socket file when dropped.
pub struct HookListener {
    listener: UnixListener,
    path: PathBuf,
}

impl HookListener {
    /// Listen at `path`, creating its directory (0700). A socket file left by a Familiar that
    /// died is replaced; one that a live Familiar answers on is [`HookError::InUse`].
    pub fn bind(path: &Path) -> Result<HookListener, HookError> {
        let io_err = |source| HookError::Io {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
            && !dir.exists()
        {
            std::fs::create_dir_all(dir).map_err(io_err)?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(io_err)?;
        }
        let listener = match UnixListener::bind(path) {
            Ok(listener) => listener,
            Err(err) if err.kind() == io::ErrorKind::AddrInUse => {
                if UnixStream::connect(path).is_ok() {
                    return Err(HookError::InUse(path.to_owned()));
                }
                std::fs::remove_file(path).map_err(io_err)?;
                UnixListener::bind(path).map_err(io_err)?
            }
            Err(err) => return Err(io_err(err)),
        };
        Ok(HookListener {
            listener,
            path: path.to_owned(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Accept one connection and read its message (bounded by [`MAX_MESSAGE`]).
    pub fn accept(&self) -> Result<HookInput, HookError> {
        let io_err = |source| HookError::Io {
            path: self.path.clone(),
            source,
        };
        let (stream, _) = self.listener.accept().map_err(io_err)?;
        // A client that connects and stalls must not hold the listener forever.
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .map_err(io_err)?;
        let mut bytes = Vec::new();
        stream
            .take(MAX_MESSAGE as u64)
            .read_to_end(&mut bytes)
            .map_err(io_err)?;
        HookInput::parse(&bytes).map_err(|err| {
            io_err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("hook message is not hook JSON: {err}"),
            ))
        })
    }

    /// Accept hook messages on a thread and send them on `tx` until the receiver is gone.
    /// Bad messages are logged and skipped.
    pub fn spawn(self, tx: Sender<HookInput>) -> io::Result<JoinHandle<()>> {
        std::thread::Builder::new()
            .name("familiar-hook".to_owned())
            .spawn(move || {
                loop {
                    match self.accept() {
                        Ok(input) => {
                            if tx.send(input).is_err() {
                                return;
                            }
                        }
                        Err(err) => tracing::warn!("{err}"),
                    }
                }
            })
    }
}

impl Drop for HookListener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
