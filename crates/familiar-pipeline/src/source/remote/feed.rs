//! `familiar feed`, the remote end of `watch --remote`: what the tailer reads, the hooks that
//! reach this host's socket and the CLI's sessions folder, written as [`super::wire`] lines to
//! stdout until stdin closes (the ssh session ended), stdout does, or Ctrl-C.

use std::io::{self, Write};
use std::time::Duration;

use crossbeam_channel::{Receiver, select};
use familiar_tail::TailerConfig;
use familiar_tail::status_files::StatusFiles;

use super::wire::{FEED_VERSION, FeedLine};
use crate::Error;

/// How long the feed stays silent before it says it is alive (the reader gives up on a link
/// after [`super::link::SILENCE`]).
pub const ALIVE_EVERY: Duration = Duration::from_secs(2);

/// Write the feed of `config`'s sessions to `out` until `stop` says so (stdin closed, Ctrl-C)
/// or `out` cannot be written any more (the reader is gone: no error).
pub fn feed(config: TailerConfig, out: impl Write, stop: &Receiver<()>) -> Result<(), Error> {
    let mut out = io::BufWriter::with_capacity(256 << 10, out);
    let cli_dir = config.claude.then(|| {
        config
            .config_dir
            .join(familiar_hook::cli_sessions::SESSIONS_DIR)
    });
    let handle = familiar_tail::spawn(config)
        .map_err(|err| Error::Live(format!("cannot follow the transcripts: {err}")))?;
    let receiver = handle.receiver().clone();
    // Dropped on return: removes the socket file. The feed of a link that just dropped may
    // hold the socket a moment longer: taken as soon as it is free.
    let (mut hooks, mut hook_socket) = listen_for_hooks(true);
    let cli_files = cli_dir.and_then(|dir| {
        StatusFiles::follow(dir)
            .inspect_err(|err| tracing::info!("not following Claude Code's sessions folder: {err}"))
            .ok()
    });
    let mut states = cli_files
        .as_ref()
        .map_or_else(crossbeam_channel::never, |files| files.receiver().clone());
    let result = (|| -> Result<(), Error> {
        write(
            &mut out,
            &FeedLine::Hello {
                feed: FEED_VERSION,
                version: env!("CARGO_PKG_VERSION").to_owned(),
            },
        )?;
        out.flush().map_err(Error::Output)?;
        loop {
            let line = select! {
                recv(receiver) -> message => match message {
                    Ok(message) => FeedLine::tail(message),
                    Err(_) => return Err(Error::Live("the tailer stopped unexpectedly".to_owned())),
                },
                recv(hooks) -> input => match input {
                    Ok(input) => {
                        // Followed from now on, as `watch` does with a local hook.
                        if let Some(path) = input.transcript_path.as_ref().filter(|p| p.is_absolute()) {
                            handle.follow(path.clone());
                        }
                        FeedLine::Hook(input)
                    }
                    Err(_) => {
                        hooks = crossbeam_channel::never();
                        continue;
                    }
                },
                recv(states) -> change => match change {
                    Ok(change) => FeedLine::cli_state(change),
                    Err(_) => {
                        states = crossbeam_channel::never();
                        continue;
                    }
                },
                recv(stop) -> _ => return Ok(()),
                default(ALIVE_EVERY) => {
                    if hook_socket.is_none() {
                        (hooks, hook_socket) = listen_for_hooks(false);
                    }
                    FeedLine::Alive
                }
            };
            write(&mut out, &line)?;
            // Written out when nothing more waits: a burst goes in few writes, a lone line
            // at once.
            if receiver.is_empty() {
                out.flush().map_err(Error::Output)?;
            }
        }
    })();
    handle.stop();
    match result {
        // The reader went away (the ssh session ended): nothing to tell anyone.
        Err(Error::Output(err)) if err.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        result => result,
    }
}

/// The hooks that reach this host's socket, when it can be had (`said`: tell why not).
fn listen_for_hooks(
    said: bool,
) -> (
    Receiver<familiar_hook::HookInput>,
    Option<familiar_hook::HookGuard>,
) {
    let (tx, rx) = crossbeam_channel::bounded(64);
    let listening = familiar_hook::socket_path()
        .and_then(|path| familiar_hook::HookListener::bind(&path))
        .map_err(|err| err.to_string())
        .and_then(|listener| {
            tracing::info!("listening for hooks on {}", listener.path().display());
            listener.spawn(tx).map_err(|err| err.to_string())
        });
    match listening {
        Ok(guard) => (rx, Some(guard)),
        Err(err) => {
            if said {
                tracing::info!("not listening for hooks yet: {err}");
            }
            (crossbeam_channel::never(), None)
        }
    }
}

fn write(out: &mut impl Write, line: &FeedLine) -> Result<(), Error> {
    serde_json::to_writer(&mut *out, line)
        .map_err(io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .map_err(Error::Output)
}
