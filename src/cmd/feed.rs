//! `familiar feed`: the remote end of `familiar watch --remote`. Run by the user's `ssh` on
//! the host where the agents work, it writes what the transcripts hold as they grow (the
//! lines, numbered, per file), the hooks that reach this host and the CLI's session states,
//! one JSON object a line (`familiar_pipeline::source::remote::wire`). The local Familiar
//! reads them through its own session model, scripts and sinks.

use std::io::{self, BufRead as _, IsTerminal as _, Read as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use familiar_pipeline::source::remote::cursor::Request;
use familiar_pipeline::source::remote::feed::feed;
use familiar_tail::TailerConfig;

use super::agents::AgentArg;
use super::selection;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The sessions of the project at DIR (repeatable; default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Vec<PathBuf>,
    /// Every session.
    #[arg(long, conflicts_with = "project")]
    pub all: bool,
    /// Whose sessions: Claude Code's, Codex's, Gemini CLI's, or all.
    #[arg(long, value_enum, default_value_t = AgentArg::All)]
    pub agent: AgentArg,
    /// Read where to go on from (one JSON line, sent by `watch --remote` after a dropped
    /// link) on stdin first, and stop when stdin closes (the ssh session ended).
    #[arg(long)]
    pub cursor_on_stdin: bool,
}

/// The longest cursor line read (a path and five numbers per followed file).
const MAX_CURSOR_BYTES: u64 = 64 << 20;

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config_dir = familiar_tail::config_dir().context("finding the Claude Code config dir")?;
    let selectors = selection::selectors(&config_dir, args.all, &args.project, &[], &[])?;
    let mut config = TailerConfig::new(config_dir, selectors);
    // Run by hand, as `watch` would; by `watch --remote`, as its request says.
    config.dormant_after = Some(familiar_tail::DORMANT_AFTER);
    args.agent.apply(&mut config);
    let (stop_tx, stop) = crossbeam_channel::bounded(2);
    let on_interrupt = stop_tx.clone();
    ctrlc::set_handler(move || {
        let _ = on_interrupt.try_send(());
    })
    .context("installing the Ctrl-C handler")?;
    if args.cursor_on_stdin && !io::stdin().is_terminal() {
        let mut line = String::new();
        io::stdin()
            .lock()
            .take(MAX_CURSOR_BYTES)
            .read_line(&mut line)
            .context("reading the cursor on stdin")?;
        if line.is_empty() {
            return Ok(ExitCode::SUCCESS); // stdin closed: the link is gone already
        }
        let request: Request = serde_json::from_str(&line)
            .context("the cursor on stdin is not one this Familiar can read")?;
        config.resume = request.resume_from().map(Arc::new);
        config.dormant_after = request.dormant_after();
        // The rest of stdin is nothing; its end is the end of the ssh session.
        std::thread::spawn(move || {
            let _ = io::copy(&mut io::stdin().lock(), &mut io::sink());
            let _ = stop_tx.try_send(());
        });
    }
    feed(config, io::stdout().lock(), &stop)?;
    Ok(ExitCode::SUCCESS)
}
