//! `familiar watch --headless`: follow live Claude Code sessions through `familiar-tail` and
//! print their events as NDJSON (the schema of `familiar events`, `docs/events.md`) until
//! Ctrl-C or until stdout is closed. Until the script engine is wired in, events are the only
//! output (`--events` asks for them explicitly and will keep doing so).

use std::io::{self, IsTerminal as _, Read as _, Write};
use std::os::fd::AsRawFd as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use crossbeam_channel::select;
use familiar_tail::{Selector, TailMessage, TailerConfig, Timers, WatchMode};

use super::InputOptions;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Stay in the terminal (no window; the only mode until the window exists).
    #[arg(long)]
    pub headless: bool,
    /// Follow the sessions of the project at DIR (repeatable; default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Vec<PathBuf>,
    /// Follow every session under the Claude Code config dir.
    #[arg(long)]
    pub all: bool,
    /// Follow one session by id, with its subagents (repeatable).
    #[arg(long, value_name = "ID")]
    pub session: Vec<String>,
    /// Follow one transcript file, wherever it is, with its subagents (repeatable).
    #[arg(long, value_name = "PATH")]
    pub file: Vec<PathBuf>,
    /// Read a hook's JSON on stdin and follow the transcript it names (`transcript_path`).
    #[arg(long)]
    pub hook: bool,
    /// Print existing transcripts from their first line instead of starting at their end.
    #[arg(long)]
    pub from_start: bool,
    /// Poll file sizes instead of using inotify (NFS, WSL paths).
    #[arg(long)]
    pub poll: bool,
    /// Poll interval with --poll.
    #[arg(long, value_name = "DURATION", default_value = "250ms", value_parser = humantime::parse_duration)]
    pub poll_interval: Duration,
    /// A session without records this long becomes idle.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = humantime::parse_duration)]
    pub idle_after: Duration,
    /// A text-only turn without a turn-end marker this quiet means waiting for input.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = humantime::parse_duration)]
    pub quiet_after: Duration,
    /// Print normalized events as NDJSON (the only output for now).
    #[arg(long)]
    pub events: bool,
    #[command(flatten)]
    pub input: InputOptions,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config_dir = familiar_tail::config_dir().context("finding the Claude Code config dir")?;
    let mut selectors: Vec<Selector> = Vec::new();
    if args.all {
        selectors.push(Selector::All);
    }
    selectors.extend(args.project.iter().cloned().map(Selector::Project));
    selectors.extend(args.session.iter().cloned().map(Selector::Session));
    selectors.extend(args.file.iter().cloned().map(Selector::File));
    if args.hook {
        let mut json = String::new();
        io::stdin()
            .lock()
            .take(1 << 20)
            .read_to_string(&mut json)
            .context("reading the hook's JSON on stdin")?;
        let path = familiar_tail::transcript_path_from_hook(&json)?;
        selectors.push(Selector::File(path));
    }
    if selectors.is_empty() {
        let cwd = std::env::current_dir().context("finding the current directory")?;
        selectors.push(Selector::Project(cwd));
    }
    tracing::info!(
        "watching {selectors:?} (Claude Code config dir {})",
        config_dir.display()
    );

    let mut config = TailerConfig::new(config_dir, selectors);
    config.from_start = args.from_start;
    config.mode = if args.poll {
        WatchMode::Poll {
            interval: args.poll_interval,
        }
    } else {
        WatchMode::Inotify
    };
    config.timers = Timers {
        idle_after: args.idle_after,
        quiet_after: args.quiet_after,
    };
    config.normalizer = args.input.normalizer_config();

    let (interrupt_tx, interrupt) = crossbeam_channel::bounded(1);
    ctrlc::set_handler(move || {
        let _ = interrupt_tx.try_send(());
    })
    .context("installing the Ctrl-C handler")?;

    let handle = familiar_tail::spawn(config)?;
    let stdout = io::stdout();
    let interactive = io::stderr().is_terminal();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let receiver = handle.receiver().clone();
    let result = loop {
        select! {
            recv(receiver) -> message => match message {
                Ok(TailMessage::Event(event)) => {
                    let written = serde_json::to_writer(&mut out, &event)
                        .map_err(io::Error::from)
                        .and_then(|()| out.write_all(b"\n"))
                        // Flush once the channel is drained: batches stay batched, a lone
                        // event goes out at once.
                        .and_then(|()| if receiver.is_empty() { out.flush() } else { Ok(()) });
                    if let Err(err) = written {
                        break closed_or_error(err);
                    }
                }
                Ok(TailMessage::Followed(followed)) => {
                    tracing::info!(
                        "following {} (session {}, {:?})",
                        followed.info.path.display(),
                        followed.session.as_deref().unwrap_or("?"),
                        followed.status
                    );
                }
                Ok(TailMessage::CaughtUp) => {
                    let files = handle.stats().files;
                    tracing::info!("caught up: following {files} transcript(s)");
                    if interactive {
                        eprintln!("familiar: following {files} transcript(s); Ctrl-C to stop");
                    }
                }
                // Problems, resets and removals are logged by the tailer itself.
                Ok(_) => {}
                Err(_) => break Err(anyhow::anyhow!("the tailer stopped unexpectedly")),
            },
            recv(interrupt) -> _ => break Ok(()),
            default(Duration::from_millis(500)) => {
                if stdout_closed() {
                    break Ok(());
                }
            }
        }
    };
    let _ = out.flush();
    let stats = handle.stats();
    handle.stop();
    tracing::info!("stopped: {stats:?}");
    if stats.channel_full > 0 {
        tracing::info!(
            "the output fell behind {} time(s); reading paused {} time(s), nothing was lost",
            stats.channel_full,
            stats.read_pauses
        );
    }
    result.map(|()| ExitCode::SUCCESS)
}

/// A write failed: the reader went away (clean end) or something else broke.
fn closed_or_error(err: io::Error) -> anyhow::Result<()> {
    if err.kind() == io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(anyhow::Error::new(err).context("writing events"))
    }
}

/// Has the reader of our stdout gone away? (A pipe whose read end is closed polls as an
/// error.) Checked while no events come, so `familiar watch | head -1` ends without waiting
/// for the next event.
fn stdout_closed() -> bool {
    let mut poll = libc::pollfd {
        fd: io::stdout().as_raw_fd(),
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid pollfd, zero timeout.
    let ready = unsafe { libc::poll(&mut poll, 1, 0) };
    ready > 0 && poll.revents & (libc::POLLERR | libc::POLLHUP) != 0
}
