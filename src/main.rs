//! The `familiar` binary: the imperative shell around the pipeline crates.
//!
//! Each subcommand lives in its own module under `src/cmd/`; this file only parses the command
//! line, sets up logging and maps errors to exit codes (0 ok, 1 runtime error, 2 usage error).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

#[derive(Debug, Parser)]
#[command(name = "familiar", version, about = "Watch a coding agent work", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the normalized events of transcripts as NDJSON (`-` reads stdin).
    Events(cmd::events::Args),
    /// Summarize transcripts: events, errors, tools, tokens, cost.
    Stats(cmd::stats::Args),
    /// Follow live sessions and print their events as NDJSON until Ctrl-C.
    Watch(cmd::watch::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    cmd::init_logging();
    let result = match cli.command {
        Some(Command::Events(args)) => cmd::events::run(args),
        Some(Command::Watch(args)) => cmd::watch::run(args),
        Some(Command::Stats(args)) => cmd::stats::run(args),
        None => {
            eprintln!("familiar: no command given; try `familiar --help`");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("familiar: {err:#}");
            ExitCode::from(1)
        }
    }
}
