//! The local end of `watch --remote`: the user's own `ssh` runs `familiar feed` on the host,
//! its lines are read back ([`super::wire`]), and a dropped link is tried again with backoff,
//! resuming where the last stream stopped ([`super::cursor`]). Nothing listens on a port:
//! SSH is the only transport, with the user's config, keys and agent.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use familiar_hook::HookInput;
use familiar_model::text::printable_line;
use familiar_tail::TailMessage;
use familiar_tail::status_files::StatusFileChange;

use super::cursor::Cursor;
use super::spec::RemoteSpec;
use super::wire::{FEED_VERSION, FeedLine, Received};

/// A link that says nothing this long is taken as dropped (the feed says it is alive every
/// [`super::feed::ALIVE_EVERY`]).
pub const SILENCE: Duration = Duration::from_secs(10);
/// The first wait before trying a dropped link again; it doubles up to [`MAX_BACKOFF`], and
/// starts over once a link is up.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(250);
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The longest feed line read (a 64 MiB record, escaped).
const MAX_WIRE_LINE: u64 = 512 << 20;

/// What a link says, in order.
#[derive(Debug)]
// Tail messages are nearly all the traffic.
#[allow(clippy::large_enum_variant)]
pub enum News {
    /// Connected: the remote Familiar's version.
    Up {
        version: String,
    },
    Tail(TailMessage),
    Hook(HookInput),
    CliState(StatusFileChange),
    /// The link dropped (or could not be made), and is tried again after `retry_in`.
    Down {
        reason: String,
        retry_in: Duration,
    },
    /// Given up for good, and why (one line for the user): `familiar` is not installed
    /// there, or speaks another feed format.
    Failed {
        reason: String,
    },
}

/// One remote's link, tried again until dropped.
pub struct Link {
    stop: Arc<AtomicBool>,
    child: Arc<Mutex<Option<Child>>>,
    thread: Option<JoinHandle<()>>,
}

impl Link {
    /// Start linking `spec`; its news goes to `news` tagged with `index`.
    pub fn spawn(index: usize, spec: RemoteSpec, news: Sender<(usize, News)>) -> Link {
        let stop = Arc::new(AtomicBool::new(false));
        let child = Arc::new(Mutex::new(None));
        let thread = {
            let stop = Arc::clone(&stop);
            let child = Arc::clone(&child);
            std::thread::Builder::new()
                .name(format!("familiar-remote-{index}"))
                .spawn(move || run(index, &spec, &news, &stop, &child))
                .map_err(|err| tracing::warn!("cannot start the remote link: {err}"))
                .ok()
        };
        Link {
            stop,
            child,
            thread,
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        kill(&self.child);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn kill(child: &Mutex<Option<Child>>) {
    let taken = child.lock().map(|mut child| child.take());
    if let Ok(Some(mut child)) = taken {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Hand `item` to the reader of the news, waiting while it is busy, unless a stop comes
/// meanwhile (a reader that stopped reading but still holds the channel must not keep the
/// link from ending); `false` when it was not handed over.
fn deliver(news: &Sender<(usize, News)>, stop: &AtomicBool, mut item: (usize, News)) -> bool {
    loop {
        match news.send_timeout(item, Duration::from_millis(100)) {
            Ok(()) => return true,
            Err(crossbeam_channel::SendTimeoutError::Timeout(back)) => {
                if stop.load(Ordering::SeqCst) {
                    return false;
                }
                item = back;
            }
            Err(crossbeam_channel::SendTimeoutError::Disconnected(_)) => return false,
        }
    }
}

/// How one connection ended.
pub(super) enum Ended {
    /// Dropped (after it was up, or before): try again.
    Dropped {
        reason: String,
        was_up: bool,
    },
    Failed(String),
    /// Stopped from here, or nobody reads the news any more.
    Stopped,
}

fn run(
    index: usize,
    spec: &RemoteSpec,
    news: &Sender<(usize, News)>,
    stop: &AtomicBool,
    child: &Mutex<Option<Child>>,
) {
    let mut cursor = Cursor::default();
    let mut backoff = FIRST_BACKOFF;
    while !stop.load(Ordering::SeqCst) {
        let ended = connect(index, spec, &mut cursor, news, stop, child);
        kill(child);
        let reason = match ended {
            Ended::Stopped => return,
            Ended::Failed(reason) => {
                let _ = deliver(news, stop, (index, News::Failed { reason }));
                return;
            }
            Ended::Dropped { reason, was_up } => {
                if was_up {
                    backoff = FIRST_BACKOFF;
                }
                reason
            }
        };
        let down = News::Down {
            reason,
            retry_in: backoff,
        };
        if !deliver(news, stop, (index, down)) {
            return;
        }
        // A stop comes within a tenth of a second, however long the wait.
        let mut waited = Duration::ZERO;
        while waited < backoff && !stop.load(Ordering::SeqCst) {
            let step = Duration::from_millis(100).min(backoff - waited);
            std::thread::sleep(step);
            waited += step;
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// One connection, from `ssh` started to its end.
fn connect(
    index: usize,
    spec: &RemoteSpec,
    cursor: &mut Cursor,
    news: &Sender<(usize, News)>,
    stop: &AtomicBool,
    child_slot: &Mutex<Option<Child>>,
) -> Ended {
    let mut command = spec.command();
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Ended::Failed("`ssh` is not installed here (or not on PATH)".to_owned());
        }
        Err(err) => {
            return Ended::Dropped {
                reason: format!("cannot start ssh: {err}"),
                was_up: false,
            };
        }
    };
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Ended::Dropped {
            reason: "ssh has no pipes".to_owned(),
            was_up: false,
        };
    };
    if let Ok(mut slot) = child_slot.lock() {
        *slot = Some(child);
    }
    if stop.load(Ordering::SeqCst) {
        return Ended::Stopped;
    }
    // Where to go on from, then stdin stays open: the feed ends when it closes.
    let request = cursor.request().with_dormant_after(spec.dormant_after);
    cursor.connecting();
    let sent = serde_json::to_vec(&request)
        .map_err(std::io::Error::from)
        .and_then(|mut line| {
            line.push(b'\n');
            stdin.write_all(&line)
        });
    if let Err(err) = sent {
        tracing::debug!("{}: cannot send the cursor: {err}", spec.name());
    }
    let errors = read_stderr(stderr);
    let lines = read_lines(stdout);
    let ended = take_lines(index, spec, cursor, news, stop, &lines);
    drop(stdin);
    match ended {
        Ended::Dropped { reason, was_up } => {
            kill(child_slot);
            let said = errors.join().unwrap_or_default();
            explain(spec, reason, was_up, &said)
        }
        other => other,
    }
}

/// Read the feed's lines until it ends, goes silent, or is stopped.
fn take_lines(
    index: usize,
    spec: &RemoteSpec,
    cursor: &mut Cursor,
    news: &Sender<(usize, News)>,
    stop: &AtomicBool,
    lines: &Receiver<Result<Vec<u8>, String>>,
) -> Ended {
    let mut was_up = false;
    let mut passed = Vec::new();
    loop {
        if stop.load(Ordering::SeqCst) {
            return Ended::Stopped;
        }
        let line = match lines.recv_timeout(SILENCE) {
            Ok(Ok(line)) => line,
            Ok(Err(reason)) => return Ended::Dropped { reason, was_up },
            Err(RecvTimeoutError::Timeout) => {
                return Ended::Dropped {
                    reason: format!("no word for {} s", SILENCE.as_secs()),
                    was_up,
                };
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Ended::Dropped {
                    reason: "the connection closed".to_owned(),
                    was_up,
                };
            }
        };
        let received = serde_json::from_slice::<FeedLine>(&line)
            .ok()
            .and_then(FeedLine::received);
        let item = match received {
            Some(Received::Hello { feed, version }) => {
                if feed != FEED_VERSION {
                    return Ended::Failed(format!(
                        "{} runs Familiar {}, whose feed (format {feed}) this one cannot read \
                         (format {FEED_VERSION}): install Familiar {} there",
                        spec.name(),
                        printable_line(&version),
                        env!("CARGO_PKG_VERSION")
                    ));
                }
                was_up = true;
                News::Up { version }
            }
            _ if !was_up => {
                // Not a feed (a login banner, a shell's greeting, an old Familiar's output).
                return Ended::Failed(format!(
                    "{} did not answer as `familiar feed` does (its first line: {:?}): is \
                     Familiar {} installed there?",
                    spec.name(),
                    printable_line(&String::from_utf8_lossy(&line[..line.len().min(80)])),
                    env!("CARGO_PKG_VERSION")
                ));
            }
            Some(Received::Tail(message)) => {
                cursor.pass(message, &mut passed);
                for message in passed.drain(..) {
                    if !deliver(news, stop, (index, News::Tail(message))) {
                        return Ended::Stopped;
                    }
                }
                continue;
            }
            Some(Received::Hook(input)) => News::Hook(input),
            Some(Received::CliState(change)) => News::CliState(change),
            Some(Received::Alive) => continue,
            None => {
                tracing::warn!("{}: a feed line that cannot be read; skipped", spec.name());
                continue;
            }
        };
        if !deliver(news, stop, (index, item)) {
            return Ended::Stopped;
        }
    }
}

/// Why a connection that ended did: what ssh or the remote shell said, when it says that
/// Familiar is not there (then it is not tried again).
pub(super) fn explain(spec: &RemoteSpec, reason: String, was_up: bool, said: &[String]) -> Ended {
    if !was_up {
        // bash: `familiar: command not found`, `/x/familiar: No such file or directory`;
        // dash: `familiar: not found`; zsh: `command not found: familiar`.
        let bin = spec.bin.rsplit('/').next().unwrap_or(&spec.bin);
        let missing = said.iter().any(|line| {
            line.contains(bin)
                && (line.contains("not found") || line.contains("No such file or directory"))
        });
        if missing {
            return Ended::Failed(format!(
                "`{}` was not found on {}: install Familiar there (see the README), or \
                 pass --remote-bin PATH",
                printable_line(&spec.bin),
                spec.name()
            ));
        }
        let old = said.iter().any(|line| {
            line.contains("unrecognized subcommand") || line.contains("unexpected argument")
        });
        if old {
            return Ended::Failed(format!(
                "the Familiar on {} has no `feed` that this one can use (an older version?): \
                 install Familiar {} there",
                spec.name(),
                env!("CARGO_PKG_VERSION")
            ));
        }
    }
    let reason = said
        .iter()
        .rev()
        .find(|line| !line.trim().is_empty())
        .map_or(reason, |line| printable_line(line.trim()).into_owned());
    Ended::Dropped { reason, was_up }
}

/// The feed's lines, read on a thread of their own (so a silent link can be timed out).
pub(super) fn read_lines(
    stdout: impl std::io::Read + Send + 'static,
) -> Receiver<Result<Vec<u8>, String>> {
    let (sender, receiver) = crossbeam_channel::bounded(64);
    let spawned = std::thread::Builder::new()
        .name("familiar-remote-read".into())
        .spawn(move || {
            let mut reader = BufReader::with_capacity(256 << 10, stdout);
            loop {
                let mut line = Vec::new();
                let read = (&mut reader)
                    .take(MAX_WIRE_LINE)
                    .read_until(b'\n', &mut line);
                let item = match read {
                    Ok(0) => return,
                    Ok(_) if line.last() == Some(&b'\n') => {
                        line.pop();
                        Ok(line)
                    }
                    Ok(_) if line.len() as u64 >= MAX_WIRE_LINE => {
                        Err(format!("a feed line over {} MiB", MAX_WIRE_LINE >> 20))
                    }
                    // Cut before its newline: the link broke in the middle of it.
                    Ok(_) => return,
                    Err(err) => Err(format!("reading the link: {err}")),
                };
                let last = item.is_err();
                if sender.send(item).is_err() || last {
                    return;
                }
            }
        });
    if let Err(err) = spawned {
        tracing::warn!("cannot read the remote link: {err}");
    }
    receiver
}

/// What ssh (or the remote side) writes on stderr, kept (the last lines) to say why a link
/// failed, and logged.
pub(super) fn read_stderr(stderr: impl std::io::Read + Send + 'static) -> JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut kept = std::collections::VecDeque::new();
        for line in BufReader::new(stderr).split(b'\n') {
            let Ok(mut line) = line else { break };
            // ssh ends its own lines with `\r\n`.
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = printable_line(&String::from_utf8_lossy(&line)).into_owned();
            tracing::info!("remote: {line}");
            if kept.len() == 8 {
                kept.pop_front();
            }
            kept.push_back(line);
        }
        kept.into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn news_nobody_reads_does_not_keep_a_link_from_stopping() {
        let (sender, _unread) = crossbeam_channel::bounded(1);
        let stop = Arc::new(AtomicBool::new(false));
        let up = || News::Up {
            version: "0".into(),
        };
        assert!(deliver(&sender, &stop, (0, up())), "room for one");
        let stopper = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(150));
                stop.store(true, Ordering::SeqCst);
            })
        };
        // The channel is full and its reader gone quiet: only the stop ends the wait.
        assert!(!deliver(&sender, &stop, (0, up())));
        stopper.join().expect("the stopper ends");
    }
}
