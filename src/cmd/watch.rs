//! `familiar watch` (and `familiar` with no command): follow live Claude Code sessions through
//! `familiar-tail`, run their events through the scripts and out to the sinks and the game
//! window (`--headless`: actions as NDJSON on stdout; `--events`: events too, in the schema of
//! `familiar events`) until Ctrl-C, the window closes, or stdout is closed. Script files
//! hot-reload while it runs.

use std::io::{self, Read as _};
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use familiar_pipeline::source::Source;
use familiar_pipeline::source::follow::Following;
use familiar_pipeline::{Stage, StageOptions, settings, window};
use familiar_tail::{Selector, TailerConfig, WatchMode};

use super::InputOptions;
use super::agents::AgentArg;
use super::pipeline::PipelineArgs;
use super::selection;

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
    /// Gemini CLI's, Qwen Code's ($QWEN_HOME or ~/.qwen), GitHub Copilot CLI's ($COPILOT_HOME
    /// or ~/.copilot), opencode's (its database, $OPENCODE_DB or ~/.local/share/opencode), or
    /// all of them.
    #[arg(long, value_enum, default_value_t = AgentArg::All)]
    pub agent: AgentArg,
    /// Also follow the sessions on another machine, over ssh: `[USER@]HOST[:PORT][:DIR]`
    /// (DIR: one project there; default: all its sessions). Repeatable; uses your ssh, its
    /// config, keys and agent, and needs Familiar installed there.
    #[arg(long, value_name = "HOST")]
    pub remote: Vec<String>,
    /// The `familiar` to run on the remote hosts, when it is not on their PATH [default:
    /// familiar, or `[remote] bin` in the config].
    #[arg(long, value_name = "PATH")]
    pub remote_bin: Option<String>,
    /// Wait for a --session or --file that does not exist yet, instead of stopping with an
    /// error.
    #[arg(long)]
    pub wait: bool,
    /// Read a hook's JSON on stdin and follow the transcript it names (`transcript_path`).
    #[arg(long)]
    pub hook: bool,
    /// Read the sessions written within DURATION (such as 3d or 12h) at start, or `all`
    /// [default: 1d]: older ones are followed, and read once written again (on `--remote`
    /// hosts too).
    #[arg(long, value_name = "DURATION")]
    pub since: Option<selection::Since>,
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
    crate::free_memory_at_once();
    let config_dir = familiar_tail::config_dir().context("finding the Claude Code config dir")?;
    if let Some(dir) = args.file.iter().find(|path| path.is_dir()) {
        anyhow::bail!(
            "{} is a directory: --file follows one transcript (a .jsonl file); for the \
             sessions of a project use --project DIR",
            dir.display()
        );
    }
    selection::check_paths(
        &config_dir,
        args.agent.codex_home().as_deref(),
        &args.project,
        &args.file,
        args.wait,
    )?;
    let sessions = selection::resolve_sessions(&config_dir, args.agent, &args.session, args.wait)?;
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
    let selectors = selection::selectors(&config_dir, args.all, &args.project, &sessions, &files)?;
    tracing::info!(
        "watching {selectors:?} (Claude Code config dir {})",
        config_dir.display()
    );

    let mut overrides = args.pipeline.overrides(&args.input);
    overrides.poll = args.poll.then_some(true);
    overrides.idle_timeout = args.idle_after;
    overrides.remote_hosts = args.remote.clone();
    overrides.remote_bin = args.remote_bin.clone();
    let settings = settings::settings(&overrides)?;
    let remotes = super::remote_specs(&settings, args.agent, args.since)?;
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
    let elsewhere = move || selection::elsewhere(&elsewhere_in, &projects);
    let dormant_after = selection::dormant_after(args.since, &selectors);
    let mut config = TailerConfig::new(config_dir, selectors);
    config.dormant_after = dormant_after;
    args.agent.apply(&mut config);
    if let Some(home) = &config.codex_home {
        looked_in.push_str(&format!(
            "; Codex rollouts under {} (placed by their cwd)",
            home.join("sessions").display()
        ));
    }
    if let Some(dir) = &config.gemini_dir {
        looked_in.push_str(&format!(
            "; Gemini CLI sessions under {} (placed by their project folder)",
            dir.join("tmp").display()
        ));
    }
    if let Some(dir) = &config.qwen_dir {
        looked_in.push_str(&format!(
            "; Qwen Code sessions under {} (placed by their cwd)",
            dir.join("projects").display()
        ));
    }
    if let Some(dir) = &config.copilot_dir {
        looked_in.push_str(&format!(
            "; Copilot CLI sessions under {} (placed by their cwd)",
            dir.join("session-state").display()
        ));
    }
    if let Some(db) = &config.opencode_db {
        looked_in.push_str(&format!(
            "; opencode sessions in {} (placed by their directory)",
            db.display()
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
    let mut model = settings::model_config(
        &settings,
        args.input.normalizer_config(&settings),
        Some(args.quiet_after),
    );
    // Whether records are kept for `ev.raw` is the scripts' to say (`follow`, at each load).
    // The user's own sessions: their configured model is a source of the window.
    model.normalizer.configured_model = settings::configured_model();

    let (interrupt_tx, interrupt) = crossbeam_channel::bounded(1);
    ctrlc::set_handler(move || {
        let _ = interrupt_tx.try_send(());
    })
    .context("installing the Ctrl-C handler")?;

    let print_events = args.pipeline.events;
    let audio = settings::audio(&settings);
    let window = window::WindowSpec {
        title: "Familiar",
        replay: None,
        screenshot: args.pipeline.screenshot.clone(),
        close_with_pipeline: true,
    };
    let source = Source::Live(Following {
        tailer: config,
        remotes,
        interrupt,
        looked_in,
        elsewhere: Box::new(elsewhere),
    });
    window::run(args.pipeline.headless, window, move |front| {
        let mut stage = Stage::new(
            &settings,
            StageOptions {
                print_events,
                print_actions: front.headless,
                game: front.game.clone(),
                clock: Arc::new(familiar_script::SystemClock::new()),
                hot_reload: true,
                store_dir: familiar_script::store::default_dir(),
                audio,
                carry_out: true,
                collect: false,
                flush_each: true,
                progress: familiar_pipeline::progress::default_path(),
            },
        )?;
        source.run(model, &mut stage, &front)?;
        Ok::<_, anyhow::Error>(ExitCode::SUCCESS)
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
