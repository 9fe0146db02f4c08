//! The spawned listener: one thread, one `mio` poll over the listening socket and every open
//! connection. A connection is checked (`SO_PEERCRED`) as it is accepted, read as bytes
//! arrive, and closed at its end (a message, or a probe), past [`MAX_MESSAGE`], or past its
//! own [`READ_DEADLINE`]; idle clients hold nothing but their descriptor. With
//! [`MAX_CONNECTIONS`] open, accepting stops and new connections wait in the kernel's backlog
//! until one closes. About once a second the socket's path is checked: a deleted file (or
//! directory) is bound again, a path another Familiar holds is left alone.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read as _};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use mio::net::{UnixListener, UnixStream};
use mio::{Events, Interest, Poll, Token};

use super::listener::{Shared, check_peer, identity, lock, parse, timed_out, too_long};
use super::{HookError, MAX_BUFFERED, MAX_CONNECTIONS, MAX_MESSAGE, READ_DEADLINE};
use super::{parent, private_dir};
use crate::HookInput;

const LISTENER: Token = Token(0);

/// How often the socket's path is checked (and the thread sees that its guard dropped).
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// How long accepting rests after it failed (out of descriptors, say).
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// One open connection: what it sent so far.
struct Conn {
    stream: UnixStream,
    bytes: Vec<u8>,
}

/// Conditions said once until they end, not at every turn of the loop.
#[derive(Default)]
struct Said {
    full: bool,
    accept_failed: bool,
    rebind_failed: bool,
    taken: bool,
}

pub(super) struct Server {
    poll: Poll,
    listener: UnixListener,
    path: PathBuf,
    bound: Shared,
    tx: Sender<HookInput>,
    conns: HashMap<Token, Conn>,
    /// Open connections' deadlines in the order accepted (so in time order); a connection
    /// closed before its deadline is skipped when met.
    deadlines: VecDeque<(Instant, Token)>,
    next_token: usize,
    /// Bytes held by all open connections together.
    buffered: usize,
    /// Connections may be waiting in the kernel's backlog.
    backlog: bool,
    accept_after: Instant,
    next_check: Instant,
    said: Said,
}

impl Server {
    pub(super) fn new(
        listener: std::os::unix::net::UnixListener,
        path: PathBuf,
        bound: Shared,
        tx: Sender<HookInput>,
    ) -> io::Result<Server> {
        listener.set_nonblocking(true)?;
        let mut listener = UnixListener::from_std(listener);
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        let now = Instant::now();
        Ok(Server {
            poll,
            listener,
            path,
            bound,
            tx,
            conns: HashMap::new(),
            deadlines: VecDeque::new(),
            next_token: 1,
            buffered: 0,
            // Clients may have connected before the loop started.
            backlog: true,
            accept_after: now,
            next_check: now + CHECK_EVERY,
            said: Said::default(),
        })
    }

    /// Serve until the guard drops.
    pub(super) fn run(mut self) {
        let mut events = Events::with_capacity(256);
        loop {
            let timeout = self.timeout(Instant::now());
            // A failed poll leaves no events; deadlines and the path are still seen to.
            if let Err(err) = self.poll.poll(&mut events, Some(timeout))
                && err.kind() != io::ErrorKind::Interrupted
            {
                tracing::warn!("hook socket {}: {err}", self.path.display());
                std::thread::sleep(ACCEPT_RETRY);
            }
            for event in &events {
                match event.token() {
                    LISTENER => self.backlog = true,
                    token => self.read(token),
                }
            }
            // Expired after the events are read: a message that arrived while the loop was
            // held up (a full channel) is taken, not timed out.
            let now = Instant::now();
            self.expire(now);
            if self.backlog && now >= self.accept_after {
                self.accept(now);
            }
            if now >= self.next_check {
                if !self.check_path(now) {
                    return;
                }
                self.next_check = now + CHECK_EVERY;
            }
        }
    }

    /// Until the nearest deadline, the next check of the path, or the next try at accepting.
    fn timeout(&mut self, now: Instant) -> Duration {
        while let Some(&(_, token)) = self.deadlines.front()
            && !self.conns.contains_key(&token)
        {
            self.deadlines.pop_front();
        }
        let mut wake = self.next_check;
        if let Some(&(deadline, _)) = self.deadlines.front() {
            wake = wake.min(deadline);
        }
        if self.backlog && self.conns.len() < MAX_CONNECTIONS {
            wake = wake.min(self.accept_after);
        }
        wake.saturating_duration_since(now)
    }

    /// Accept what waits in the backlog, up to [`MAX_CONNECTIONS`] open.
    fn accept(&mut self, now: Instant) {
        loop {
            if self.conns.len() >= MAX_CONNECTIONS {
                if !self.said.full {
                    self.said.full = true;
                    tracing::warn!(
                        "hook socket {}: {MAX_CONNECTIONS} connections open; new ones wait until one closes",
                        self.path.display()
                    );
                }
                return;
            }
            match self.listener.accept() {
                Ok((stream, _)) => {
                    self.said.accept_failed = false;
                    self.open(stream);
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                    self.backlog = false;
                    self.said.full = false;
                    return;
                }
                Err(err)
                    if matches!(
                        err.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted
                    ) => {}
                Err(err) => {
                    if !self.said.accept_failed {
                        self.said.accept_failed = true;
                        tracing::warn!("hook socket {}: {err}", self.path.display());
                    }
                    self.accept_after = now + ACCEPT_RETRY;
                    return;
                }
            }
        }
    }

    /// A new connection: a stranger is closed; what has arrived is read at once, and the rest
    /// awaited until [`READ_DEADLINE`].
    fn open(&mut self, mut stream: UnixStream) {
        if let Err(err) = check_peer(&self.path, &stream) {
            tracing::warn!("{err}");
            return;
        }
        let token = Token(self.next_token);
        self.next_token += 1;
        // Registered before the first read: a byte arriving between the two is not missed.
        if let Err(err) = self
            .poll
            .registry()
            .register(&mut stream, token, Interest::READABLE)
        {
            tracing::warn!("hook socket {}: {err}", self.path.display());
            return;
        }
        let deadline = Instant::now() + READ_DEADLINE;
        self.conns.insert(
            token,
            Conn {
                stream,
                bytes: Vec::new(),
            },
        );
        self.deadlines.push_back((deadline, token));
        self.read(token);
    }

    /// Read what `token`'s connection has; at its end, hand the message on.
    fn read(&mut self, token: Token) {
        let Some(conn) = self.conns.get_mut(&token) else {
            return;
        };
        let before = conn.bytes.len();
        let ended = fill(&mut conn.stream, &mut conn.bytes, &self.path);
        self.buffered += conn.bytes.len() - before;
        match ended {
            Ok(false) if self.buffered > MAX_BUFFERED => {
                self.close(token);
                tracing::warn!(
                    "hook socket {}: open connections hold more than {MAX_BUFFERED} bytes; closed one",
                    self.path.display()
                );
            }
            Ok(false) => {}
            Ok(true) => {
                if let Some(conn) = self.close(token) {
                    match parse(&self.path, &conn.bytes) {
                        // A full channel holds the loop up (the backlog keeps what comes
                        // meanwhile); nobody receiving means Familiar is stopping.
                        Ok(Some(input)) => drop(self.tx.send(input)),
                        Ok(None) => tracing::debug!("hook socket probed (`familiar doctor`)"),
                        Err(err) => tracing::warn!("{err}"),
                    }
                }
            }
            Err(err) => {
                self.close(token);
                tracing::warn!("{err}");
            }
        }
    }

    fn close(&mut self, token: Token) -> Option<Conn> {
        let mut conn = self.conns.remove(&token)?;
        self.buffered -= conn.bytes.len();
        let _ = self.poll.registry().deregister(&mut conn.stream);
        Some(conn)
    }

    /// Close the connections past their deadline, each after a last read.
    fn expire(&mut self, now: Instant) {
        while let Some(&(deadline, token)) = self.deadlines.front()
            && deadline <= now
        {
            self.deadlines.pop_front();
            self.read(token);
            if self.close(token).is_some() {
                tracing::warn!("{}", timed_out(&self.path));
            }
        }
    }

    /// Is the socket file still at its path? A missing one is bound again (`false`: the guard
    /// dropped, stop serving).
    fn check_path(&mut self, now: Instant) -> bool {
        if lock(&self.bound).released {
            return false;
        }
        match std::fs::symlink_metadata(&self.path) {
            Ok(meta) => {
                let ours = lock(&self.bound).identity == Some((meta.dev(), meta.ino()));
                if !ours && !self.said.taken {
                    self.said.taken = true;
                    tracing::debug!(
                        "hook socket {}: another file is there now (another Familiar's?); left as it is",
                        self.path.display()
                    );
                }
                return true;
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            // Cannot tell (a directory on the way not searchable): left as it is.
            Err(_) => return true,
        }
        // What reached the old socket before its file went.
        self.accept(now);
        let shared = Arc::clone(&self.bound);
        // Held while binding: the guard, dropping meanwhile, removes the new file.
        let mut bound = lock(&shared);
        if bound.released {
            return false;
        }
        match self.rebind() {
            Ok(made) => {
                bound.identity = made;
                drop(bound);
                self.said.rebind_failed = false;
                self.said.taken = false;
                tracing::info!(
                    "hook socket {} was deleted; made again, listening there again",
                    self.path.display()
                );
            }
            Err(err) => {
                drop(bound);
                if !self.said.rebind_failed {
                    self.said.rebind_failed = true;
                    tracing::warn!(
                        "hook socket was deleted and cannot be made again: {err}; trying again every second"
                    );
                }
            }
        }
        true
    }

    /// Make the private directory again, bind at the path and swap the new listener in.
    fn rebind(&mut self) -> Result<Option<(u64, u64)>, HookError> {
        let io_err = |cause| HookError::Io {
            path: self.path.clone(),
            cause,
        };
        if let Some(dir) = parent(&self.path) {
            private_dir(dir)?;
        }
        let mut listener = UnixListener::bind(&self.path).map_err(io_err)?;
        let registry = self.poll.registry();
        if let Err(err) = registry.register(&mut listener, LISTENER, Interest::READABLE) {
            let _ = std::fs::remove_file(&self.path);
            return Err(io_err(err));
        }
        let _ = registry.deregister(&mut self.listener);
        self.listener = listener;
        self.backlog = true;
        Ok(identity(&self.path))
    }
}

/// Read `stream` until it has nothing more for now: `Ok(true)` at its end.
fn fill(stream: &mut UnixStream, bytes: &mut Vec<u8>, path: &Path) -> Result<bool, HookError> {
    let mut chunk = [0u8; 8192];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(true),
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if bytes.len() > MAX_MESSAGE {
                    return Err(too_long(path));
                }
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(cause) => {
                return Err(HookError::Io {
                    path: path.to_owned(),
                    cause,
                });
            }
        }
    }
}
