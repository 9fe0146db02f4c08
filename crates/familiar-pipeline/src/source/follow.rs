//! The live loop of `watch`: tailer messages through the session model ([`Live`]) and the
//! [`Stage`], with Claude Code's hooks, the CLI's sessions folder, script reloads, the
//! scripts' timers on the model's clock, and Ctrl-C, until one of them ends it (or the window
//! closes, or stdout does).

use std::io::{self, IsTerminal as _};
use std::os::fd::AsRawFd as _;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, select};
use familiar_session::ModelConfig;
use familiar_tail::TailerConfig;

use super::live::{CliStates, Live, Took};
use super::remote::{Hosts, RemoteSpec};
use crate::Error;
use crate::stage::Stage;
use crate::window::Front;

/// What a live run follows, and what it tells when there is nothing yet.
pub struct Following {
    /// This machine's sessions.
    pub tailer: TailerConfig,
    /// Other machines' sessions, over ssh.
    pub remotes: Vec<RemoteSpec>,
    /// Ctrl-C (or TERM, HUP): the run ends.
    pub interrupt: Receiver<()>,
    /// Where sessions will appear, for the "no session yet" line.
    pub looked_in: String,
    /// Sessions of the selected projects found somewhere else, for the same line.
    pub elsewhere: Box<dyn Fn() -> Option<String>>,
}

/// The live loop: tailer messages (and the remote hosts' feeds) through the session model and
/// the stage until Ctrl-C, the window closing, or stdout closing. The caller finishes the
/// stage ([`super::Source::run`]).
pub(super) fn follow(
    following: Following,
    model: ModelConfig,
    stage: &mut Stage,
    front: &Front,
) -> Result<(), Error> {
    let Following {
        tailer: config,
        remotes,
        interrupt,
        looked_in,
        elsewhere,
    } = following;
    // The CLI's own sessions folder: statuses without hooks (only when its sessions are
    // followed).
    let cli_config = config.claude.then(|| config.config_dir.clone());
    let dormant_after = config.dormant_after;
    let handle = familiar_tail::spawn(config)
        .map_err(|err| Error::Live(format!("cannot follow the transcripts: {err}")))?;
    let interactive = io::stderr().is_terminal();
    let receiver = handle.receiver().clone();
    let mut reloads = stage
        .reload_events()
        .unwrap_or_else(crossbeam_channel::never);
    // Dropped when `follow` returns (Ctrl-C, TERM, HUP, window closed): removes the socket file.
    let (mut hooks, _hook_socket) = listen_for_hooks();
    let mut cli_states = CliStates::follow(cli_config.as_deref());
    let mut states = cli_states.receiver();
    let mut hosts = Hosts::start(remotes, &model);
    let mut news = hosts.news();
    let mut live = Live::new(model);
    // A copy of every record, kept only while a script may read it.
    live.set_keep_raw(stage.uses_raw());
    hosts.set_keep_raw(stage.uses_raw());
    let mut unknown_hooks = std::collections::HashSet::new();
    let mut caught_up = false;
    let mut run = 0;
    let mut reclaim = familiar_model::memory::Reclaim::default();
    let result = loop {
        // A message already waiting is taken without a select (which locks and registers
        // with every channel: 5x the main thread's futex calls at 200 sessions), a bounded
        // run at a time so that hooks, reloads and Ctrl-C still come in.
        let mut message = None;
        if run < RUN {
            message = receiver.try_recv().ok().map(Ok);
            run += 1;
        }
        if message.is_none() {
            run = 0;
            select! {
                recv(receiver) -> received => message = Some(received),
                recv(reloads) -> change => match change {
                    Ok(_) => {
                        stage.reload_changed();
                        live.set_keep_raw(stage.uses_raw());
                        hosts.set_keep_raw(stage.uses_raw());
                    }
                    // The script watcher stopped: a disconnected channel would be ready forever.
                    Err(_) => reloads = crossbeam_channel::never(),
                },
                recv(hooks) -> input => {
                    // Regression: a listener that could not start left a disconnected channel,
                    // always ready, and the loop spun a core (the window never got its first
                    // frame).
                    let Ok(input) = input else {
                        hooks = crossbeam_channel::never();
                        continue;
                    };
                    // The tailer follows it from now on, unless it does already (a session
                    // outside the selection, or under another config dir, shows up at once).
                    if let Some(path) =
                        input.transcript_path.as_ref().filter(|p| p.is_absolute())
                    {
                        handle.follow(path.clone());
                    }
                    if let Some(what) = familiar_hook::input::unknown_in(&input)
                        && unknown_hooks.insert(what.clone())
                    {
                        // Said once per name (`-v`): a newer CLI fires something new.
                        tracing::info!(
                            "{} not known to Familiar (a newer Claude Code?); not read",
                            familiar_model::text::printable_line(&what)
                        );
                    }
                    if let Some(signal) = familiar_hook::hook_event(&input) {
                        live.hook(&signal);
                    }
                }
                recv(states) -> change => match change {
                    Ok(change) => live.cli_state(&mut cli_states, change),
                    Err(_) => states = crossbeam_channel::never(),
                },
                recv(news) -> item => match item {
                    Ok((index, item)) => hosts.take(index, item, stage),
                    Err(_) => news = crossbeam_channel::never(),
                },
                recv(interrupt) -> _ => break Ok(()),
                default(TICK) => {
                    reclaim.idle();
                    live.tick();
                    hosts.tick();
                    if front.stop.is_set() || (front.headless && stdout_closed()) {
                        break Ok(());
                    }
                }
            }
        }
        if let Some(message) = message {
            match message {
                Ok(message) => {
                    let mut longest = 0;
                    if let familiar_tail::TailMessage::Lines { lines, .. } = &message {
                        let lengths = lines.iter().map(|line| line.bytes.len() as u64);
                        reclaim.note(lengths.clone().sum());
                        longest = lengths.max().unwrap_or(0);
                    }
                    // Later ones: files a hook named have delivered their backlog.
                    let took = live.take(message);
                    // The lines are dropped: a big one's memory goes back before the scripts
                    // read its events.
                    reclaim.freed(longest);
                    if took == Took::CaughtUp && !caught_up {
                        caught_up = true;
                        live.caught_up(&mut cli_states);
                        let familiar_tail::TailStatsSnapshot { files, dormant, .. } =
                            handle.stats();
                        tracing::info!(
                            "caught up: following {files} transcript(s), {dormant} dormant"
                        );
                        let dormant_after = dormant_after.filter(|_| dormant > 0);
                        if let Some(after) = dormant_after.filter(|_| files == 0) {
                            eprintln!(
                                "familiar: no session written in the last {} in {looked_in}; \
                                 {dormant} older transcript(s) are followed and read once \
                                 written again (`--since all` reads them now)",
                                familiar_model::words::duration(after)
                            );
                            stage.tell_window(familiar_model::WindowFeed::Waiting {
                                looked_in: looked_in.to_owned(),
                            });
                        } else if files == 0 && !hosts.any() {
                            eprintln!(
                                "familiar: no Claude Code session yet in {looked_in}; \
                                 waiting for one to appear (`familiar demo` shows one meanwhile)"
                            );
                            stage.tell_window(familiar_model::WindowFeed::Waiting {
                                looked_in: looked_in.to_owned(),
                            });
                            if let Some(sessions) = elsewhere() {
                                eprintln!("familiar: {sessions}");
                            }
                        } else if interactive {
                            let older = if dormant_after.is_some() {
                                format!(" ({dormant} older ones once written again)")
                            } else {
                                String::new()
                            };
                            eprintln!(
                                "familiar: following {files} transcript(s){older}; Ctrl-C to stop"
                            );
                        }
                    }
                }
                Err(_) => break Err(Error::Live("the tailer stopped unexpectedly".to_owned())),
            }
        }
        // Ctrl-C is looked for between events, not only between batches: a batch of a
        // thousand lines through a script near its time limit would take minutes.
        let interrupted = || !interrupt.is_empty() || front.stop.is_set();
        let mut stopped = pass_on_until(&mut live, stage, &interrupted).is_break();
        for remote in hosts.lives() {
            stopped = stopped || pass_on_until(remote, stage, &interrupted).is_break();
        }
        if stopped {
            break Ok(());
        }
    };
    drop(hosts);
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
    result
}

/// How often the session model's timers are looked at while nothing else happens.
const TICK: Duration = Duration::from_millis(250);
/// Tailer messages taken one after another without looking at the other channels.
const RUN: usize = 64;

/// Hook messages from `familiar hook` (Claude Code's permission and idle prompts), when the
/// socket can be had; another running Familiar or no runtime dir only costs this feature.
fn listen_for_hooks() -> (
    Receiver<familiar_hook::HookInput>,
    Option<familiar_hook::HookGuard>,
) {
    let (tx, rx) = crossbeam_channel::bounded(64);
    let listener =
        familiar_hook::socket_path().and_then(|path| familiar_hook::HookListener::bind(&path));
    match listener {
        Ok(listener) => {
            tracing::info!(
                "listening for Claude Code hooks on {}",
                listener.path().display()
            );
            match listener.spawn(tx) {
                Ok(guard) => return (rx, Some(guard)),
                Err(err) => tracing::warn!("cannot listen for hooks: {err}"),
            }
        }
        Err(err) => tracing::info!("not listening for hooks: {err}"),
    }
    drop(rx);
    (crossbeam_channel::never(), None)
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

/// The events the live inputs so far caused, through the stage, then the model's clock: the
/// scripts' timers run on the session model's clock, like the session timers. `Break` when
/// stdout closed.
pub fn pass_on(live: &mut Live, stage: &mut Stage) -> std::ops::ControlFlow<()> {
    pass_on_until(live, stage, &|| false)
}

/// [`pass_on`], stopping between two events once `stop` says so (Ctrl-C while slow scripts
/// work through a big batch): what is left is not handled.
fn pass_on_until(
    live: &mut Live,
    stage: &mut Stage,
    stop: &dyn Fn() -> bool,
) -> std::ops::ControlFlow<()> {
    for event in live.drain() {
        if stop() {
            return std::ops::ControlFlow::Break(());
        }
        stage.on_event(Arc::new(event))?;
    }
    match live.model.now() {
        Some(now) => stage.tick(now),
        None => std::ops::ControlFlow::Continue(()),
    }
}
