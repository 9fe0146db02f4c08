//! `familiar watch` (and `familiar` with no command): follow live Claude Code sessions through
//! `familiar-tail`, run their events through the scripts and out to the sinks and the game
//! window (`--headless`: actions as NDJSON on stdout; `--events`: events too, in the schema of
//! `familiar events`) until Ctrl-C, the window closes, or stdout is closed. Script files
//! hot-reload while it runs.

use std::io::{self, IsTerminal as _, Read as _};
use std::os::fd::AsRawFd as _;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use std::sync::Arc;

use crossbeam_channel::{Receiver, select};
use familiar_session::{ModelConfig, Timers};
use familiar_tail::{Selector, TailerConfig, WatchMode};

use super::InputOptions;
use super::agents::AgentArg;
use super::front::{self, Front};
use super::live::{self, CliStates, Live, Took};
use super::pipeline::{self, PipelineArgs, Stage, StageOptions};

#[derive(Debug, clap::Args)]
pub struct Args {
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
    /// Whose sessions to follow: Claude Code's, OpenAI Codex CLI's ($CODEX_HOME or ~/.codex),
    /// or both.
    #[arg(long, value_enum, default_value_t = AgentArg::All)]
    pub agent: AgentArg,
    /// Wait for a --session or --file that does not exist yet, instead of stopping with an
    /// error.
    #[arg(long)]
    pub wait: bool,
    /// Read a hook's JSON on stdin and follow the transcript it names (`transcript_path`).
    #[arg(long)]
    pub hook: bool,
    /// Print existing transcripts from their first line instead of starting at their end.
    #[arg(long)]
    pub from_start: bool,
    /// Poll file sizes instead of using inotify (NFS, WSL paths).
    #[arg(long)]
    pub poll: bool,
    /// Poll interval with --poll (or `poll = true` in the config).
    #[arg(long, value_name = "DURATION", default_value = "250ms", value_parser = humantime::parse_duration)]
    pub poll_interval: Duration,
    /// A session without records this long becomes idle [default: 5m, or `idle_timeout` in the
    /// config].
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub idle_after: Option<Duration>,
    /// A text-only turn without a turn-end marker this quiet means waiting for input.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = humantime::parse_duration)]
    pub quiet_after: Duration,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
    #[command(flatten)]
    pub input: InputOptions,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config_dir = familiar_tail::config_dir().context("finding the Claude Code config dir")?;
    if let Some(dir) = args.file.iter().find(|path| path.is_dir()) {
        anyhow::bail!(
            "{} is a directory: --file follows one transcript (a .jsonl file); for the \
             sessions of a project use --project DIR",
            dir.display()
        );
    }
    live::check_paths(
        &config_dir,
        args.agent.codex_home().as_deref(),
        &args.project,
        &args.file,
        args.wait,
    )?;
    let sessions = live::resolve_sessions(
        &config_dir,
        args.agent.codex_home().as_deref(),
        &args.session,
        args.wait,
    )?;
    let mut files = args.file.clone();
    if args.hook {
        let mut json = String::new();
        io::stdin()
            .lock()
            .take(1 << 20)
            .read_to_string(&mut json)
            .context("reading the hook's JSON on stdin")?;
        files.push(familiar_tail::transcript_path_from_hook(&json)?);
    }
    let selectors = live::selectors(&config_dir, args.all, &args.project, &sessions, &files)?;
    tracing::info!(
        "watching {selectors:?} (Claude Code config dir {})",
        config_dir.display()
    );

    let mut overrides = args.pipeline.overrides(&args.input);
    overrides.poll = args.poll.then_some(true);
    overrides.idle_timeout = args.idle_after;
    let settings = pipeline::settings(&overrides)?;
    let mut looked_in = where_sessions_appear(&config_dir, &selectors);
    // Only for the sessions of projects: files and ids name nothing elsewhere.
    let projects: Vec<PathBuf> = selectors
        .iter()
        .map(|selector| match selector {
            Selector::Project(dir) => Some(dir.clone()),
            _ => None,
        })
        .collect::<Option<_>>()
        .unwrap_or_default();
    let elsewhere_in = config_dir.clone();
    let elsewhere = move || live::elsewhere(&elsewhere_in, &projects);
    let mut config = TailerConfig::new(config_dir, selectors);
    args.agent.apply(&mut config);
    if let Some(home) = &config.codex_home {
        looked_in.push_str(&format!(
            "; Codex rollouts under {} (placed by their cwd)",
            home.join("sessions").display()
        ));
    }
    config.from_start = args.from_start;
    config.mode = if settings.poll {
        WatchMode::Poll {
            interval: args.poll_interval,
        }
    } else {
        WatchMode::Inotify
    };
    config.max_line_bytes = args.input.max_line_bytes;
    let mut model = ModelConfig {
        normalizer: args.input.normalizer_config(&settings),
        timers: Timers {
            idle_after: settings
                .idle_timeout
                .unwrap_or(Timers::default().idle_after),
            quiet_after: args.quiet_after,
        },
    };
    // Scripts may read `ev.raw`.
    model.normalizer.keep_raw = true;
    // The user's own sessions: their configured model is a source of the window.
    model.normalizer.configured_model = super::statusline::configured_model();

    let (interrupt_tx, interrupt) = crossbeam_channel::bounded(1);
    ctrlc::set_handler(move || {
        let _ = interrupt_tx.try_send(());
    })
    .context("installing the Ctrl-C handler")?;

    let print_events = args.pipeline.events;
    let audio = pipeline::audio(&settings);
    let window = front::WindowSpec {
        title: "Familiar",
        sound: audio.clone(),
        replay: None,
        screenshot: args.pipeline.screenshot.clone(),
        close_with_pipeline: true,
        // The same file the game would choose (`familiar_game::default_progress_path`), named
        // here: this executable does not link the game.
        progress: familiar_save::data_dir().map(|dir| dir.join("progress.json")),
    };
    front::run(args.pipeline.headless, window, move |front| {
        let stage = Stage::new(
            &settings,
            StageOptions {
                print_events,
                print_actions: front.headless,
                game: front.game.clone(),
                clock: Arc::new(familiar_script::SystemClock::new()),
                hot_reload: true,
                timers_from_events: false,
                store_dir: familiar_script::store::default_dir(),
                audio,
            },
        )?;
        follow(
            config, model, stage, &front, &interrupt, &looked_in, &elsewhere,
        )
    })
}

/// Where the transcripts of `selectors` will appear, for the "no session yet" message.
fn where_sessions_appear(config_dir: &Path, selectors: &[Selector]) -> String {
    let projects = config_dir.join("projects");
    let places: Vec<String> = selectors
        .iter()
        .map(|selector| match selector {
            Selector::All => projects.display().to_string(),
            Selector::Project(dir) => format!(
                "{} (for {})",
                projects
                    .join(familiar_tail::discovery::dash_encode(dir))
                    .display(),
                dir.display()
            ),
            Selector::Session(id) => format!("session {id} under {}", projects.display()),
            Selector::File(path) => path.display().to_string(),
        })
        .collect();
    let source = if std::env::var_os("CLAUDE_CONFIG_DIR").is_some() {
        "the config dir comes from CLAUDE_CONFIG_DIR"
    } else {
        "set CLAUDE_CONFIG_DIR if Claude Code keeps its files elsewhere"
    };
    format!("{} ({source})", places.join(", "))
}

/// The live loop: tailer messages through the session model and the stage until Ctrl-C, the
/// window closing, or stdout closing.
fn follow(
    config: TailerConfig,
    model: ModelConfig,
    mut stage: Stage,
    front: &Front,
    interrupt: &Receiver<()>,
    looked_in: &str,
    elsewhere: &dyn Fn() -> Option<String>,
) -> anyhow::Result<ExitCode> {
    // The CLI's own sessions folder: statuses without hooks (only when its sessions are
    // followed).
    let cli_config = config.claude.then(|| config.config_dir.clone());
    let handle = familiar_tail::spawn(config)?;
    let interactive = io::stderr().is_terminal();
    let receiver = handle.receiver().clone();
    let mut reloads = stage
        .reload_events()
        .unwrap_or_else(crossbeam_channel::never);
    // Dropped when `follow` returns (Ctrl-C, TERM, HUP, window closed): removes the socket file.
    let (mut hooks, _hook_socket) = listen_for_hooks();
    let mut cli_states = CliStates::follow(cli_config.as_deref());
    let mut states = cli_states.receiver();
    let mut live = Live::new(model);
    let mut unknown_hooks = std::collections::HashSet::new();
    let mut caught_up = false;
    let mut run = 0;
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
                    Ok(_) => stage.reload_changed(),
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
                recv(interrupt) -> _ => break Ok(()),
                default(TICK) => {
                    live.tick();
                    if front.stop.is_set() || (front.headless && stdout_closed()) {
                        break Ok(());
                    }
                }
            }
        }
        if let Some(message) = message {
            match message {
                Ok(message) => {
                    // Later ones: files a hook named have delivered their backlog.
                    if live.take(message) == Took::CaughtUp && !caught_up {
                        caught_up = true;
                        live.caught_up(&mut cli_states);
                        let files = handle.stats().files;
                        tracing::info!("caught up: following {files} transcript(s)");
                        if files == 0 {
                            eprintln!(
                                "familiar: no Claude Code session yet in {looked_in}; \
                                 waiting for one to appear (`familiar demo` shows one meanwhile)"
                            );
                            if let Some(sessions) = elsewhere() {
                                eprintln!("familiar: {sessions}");
                            }
                        } else if interactive {
                            eprintln!("familiar: following {files} transcript(s); Ctrl-C to stop");
                        }
                    }
                }
                Err(_) => break Err(anyhow::anyhow!("the tailer stopped unexpectedly")),
            }
        }
        if live.drain().any(|event| stage.on_event(&event).is_break()) {
            break Ok(());
        }
        // Script timers run on the session model's clock, like the session timers.
        if let Some(now) = live.model.now()
            && stage.tick(now).is_break()
        {
            break Ok(());
        }
    };
    stage.finish();
    let output_error = stage.output_error();
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
    if let Some(err) = output_error {
        return Err(err).context("cannot write to stdout");
    }
    result.map(|()| ExitCode::SUCCESS)
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
