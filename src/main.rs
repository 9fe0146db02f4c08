//! The `familiar` binary: the imperative shell around the pipeline crates.
//!
//! Each subcommand lives in its own module under `src/cmd/`; this file only parses the command
//! line, sets up logging and maps errors to exit codes (0 ok, 1 runtime error, 2 usage error).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

/// Events are allocated on a reading thread and freed on another (the scripts', the printer's):
/// mimalloc frees them without the arena lock glibc takes (docs/architecture.md, issue 17).
#[global_allocator]
static GLOBAL_ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc.h (v2 and v3 alike: between `eager_commit_delay`, 14,
/// and `use_numa_nodes`, 16); libmimalloc-sys names the options around it but not this one.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Memory mimalloc frees goes back to the system after 100 ms instead of its default 1 s (10 s
/// in its arenas): through a long bulk read (`familiar events` on 12 GB) RSS then holds at
/// 14–16 MB instead of creeping to 18, at the same speed (docs/architecture.md). Set once
/// mimalloc has read its environment, so `MIMALLOC_PURGE_DELAY` is left to win.
fn configure_allocator() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets a process-wide option value; mimalloc reads options with atomics.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 100) };
    }
    // A thread that handled a big record gives its memory back when it goes idle
    // (familiar_model::memory): mimalloc purges only on a thread's next allocation.
    familiar_model::memory::set_release(|| {
        // SAFETY: collects the calling thread's heap; no preconditions.
        unsafe { libmimalloc_sys::mi_collect(true) }
    });
}

/// Memory mimalloc frees goes back to the system at once from now on, unless
/// `MIMALLOC_PURGE_DELAY` says otherwise: for a batch command that reads input after input on
/// every core (`familiar stats`), whose readers otherwise hold each input's freed pages for
/// the delay while the next fills others (5,000 transcripts: 42 → 41 MB peak RSS, no
/// slower), and for the watcher, which runs for days beside thousands of sessions and
/// whatever scripts the user loads (5,000 sessions at 100 MB/s: 49.8 → 44.2 MB peak, with a
/// hostile script 69 → 52–56 MB; 1,000 sessions' CPU the same; docs/performance.md).
pub fn free_memory_at_once() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets a process-wide option value; mimalloc reads options with atomics.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    }
}

/// `-v`/`-q` under their own heading, after each subcommand's own options.
const GLOBAL: &str = "Global options";

#[derive(Debug, Parser)]
#[command(
    name = "familiar",
    version,
    about = "Watch a coding agent work",
    long_about = None,
    after_help = "Exit status: 0 success, 1 runtime error, 2 usage error.\n\
                  Logs go to stderr: -v/-vv for more, -q for errors only, RUST_LOG to filter; \
                  NO_COLOR turns colors off."
)]
struct Cli {
    /// More log output on stderr (-v info, -vv debug, -vvv trace).
    #[arg(short, long, action = clap::ArgAction::Count, global = true, help_heading = GLOBAL)]
    verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose", help_heading = GLOBAL)]
    quiet: bool,
    #[command(subcommand)]
    command: Option<Command>,
    /// With no command, `familiar` is `familiar watch`, and takes its flags
    /// (`familiar --headless`, `familiar --all`).
    #[command(flatten)]
    watch: cmd::watch::Args,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Follow live sessions (the current project by default) through the scripts, in the game
    /// window or, with --headless, as NDJSON actions; the default when no command is given.
    Watch(cmd::watch::Args),
    /// Play a transcript by its own timestamps (idle gaps shortened unless --realtime).
    Replay(cmd::replay::Args),
    /// Replay a bundled example session: see Familiar work before you have a session.
    Demo(cmd::demo::Args),
    /// List the sessions of the current project (or --all) with their status, context and
    /// subagents: what `watch` would show first.
    Sessions(cmd::sessions::Args),
    /// Print the normalized events of transcripts as NDJSON (`-` reads stdin).
    Events(cmd::events::Args),
    /// Summarize transcripts: events, errors, tools, tokens, cost.
    Stats(cmd::stats::Args),
    /// Claude Code's, Copilot CLI's or Qwen Code's statusLine command: session JSON in, one line
    /// out.
    Statusline(cmd::statusline::Args),
    /// Compile scripts, list their handlers and print warnings and errors with positions.
    Check(cmd::check::Args),
    /// Dry run: the actions scripts produce for a transcript, as NDJSON.
    Run(cmd::run::Args),
    /// Script unit test: compare the actions for a transcript with an expectation file.
    Test(cmd::test::Args),
    /// List the scripts built into Familiar (the shipped ones and the examples), or print one.
    Scripts(cmd::scripts::Args),
    /// Check the setup (config, Claude Code dir, sessions, scripts, D-Bus, display).
    Doctor(cmd::doctor::Args),
    /// Claude Code hook: hand hook input (stdin) to a running Familiar; `hook install` /
    /// `hook uninstall` add or remove the hooks in settings.json.
    Hook(cmd::hook::Args),
    /// Write this host's sessions as they grow, for `familiar watch --remote` on another
    /// machine (run by its ssh; one JSON object a line).
    Feed(cmd::feed::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::Args),
    /// Print the man page (roff).
    Man(cmd::completions::ManArgs),
}

/// The command line: `familiar --all` is `familiar watch --all`, and a command takes only its
/// own flags (`familiar --all events x` is a usage error, not `--all` ignored). The global
/// `-v`/`-q` go anywhere.
fn parse_cli() -> Cli {
    use clap::{CommandFactory as _, FromArgMatches as _};
    let mut command = Cli::command();
    let matches = command
        .clone()
        .try_get_matches()
        .unwrap_or_else(|err| exit_for(err));
    if let Some((name, _)) = matches.subcommand() {
        let given = matches.ids().find(|id| {
            !matches!(id.as_str(), "verbose" | "quiet")
                && matches.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
        });
        if let Some(id) = given {
            command
                .error(
                    clap::error::ErrorKind::ArgumentConflict,
                    format!(
                        "the subcommand '{name}' cannot be used with '--{}'",
                        id.as_str().replace('_', "-")
                    ),
                )
                .exit();
        }
    }
    Cli::from_arg_matches(&matches).unwrap_or_else(|err| exit_for(err))
}

/// Exit as clap does for `err` (help and version on stdout with status 0, usage errors on
/// stderr with 2), except that help or version that could not be written (a full disk,
/// `/dev/full`) is an error, said once, with status 1; a closed pipe (`| head`) is not.
fn exit_for(err: clap::Error) -> ! {
    use clap::error::ErrorKind;
    use std::io::Write as _;
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        let written = err.print().and_then(|()| std::io::stdout().flush());
        match written {
            Err(cause) if cause.kind() != std::io::ErrorKind::BrokenPipe => {
                cmd::style::error(format_args!("cannot write to stdout: {cause}"));
                std::process::exit(1);
            }
            _ => std::process::exit(0),
        }
    }
    err.exit()
}

/// The commands that follow every session of a project hold a descriptor per transcript: the
/// common soft limit of 1,024 is raised to the hard limit (past that, the tailer closes idle
/// files between reads).
fn raise_open_file_limit() {
    match familiar_tail::descriptors::raise_limit() {
        Ok((before, after)) if before != after => {
            tracing::debug!("open-file limit raised from {before} to {after}");
        }
        Ok(_) => {}
        Err(err) => tracing::debug!("open-file limit not raised: {err}"),
    }
}

fn main() -> ExitCode {
    configure_allocator();
    let cli = parse_cli();
    cmd::init_logging(i8::try_from(cli.verbose).unwrap_or(i8::MAX), cli.quiet);
    if matches!(
        cli.command,
        None | Some(
            Command::Watch(_)
                | Command::Sessions(_)
                | Command::Stats(_)
                | Command::Events(_)
                | Command::Feed(_)
        )
    ) {
        raise_open_file_limit();
    }
    let result = match cli.command {
        Some(Command::Events(args)) => cmd::events::run(args),
        Some(Command::Watch(args)) => cmd::watch::run(args),
        Some(Command::Check(args)) => cmd::check::run(args),
        Some(Command::Run(args)) => cmd::run::run(args),
        Some(Command::Test(args)) => cmd::test::run(args),
        Some(Command::Stats(args)) => cmd::stats::run(args),
        Some(Command::Sessions(args)) => cmd::sessions::run(args),
        Some(Command::Statusline(args)) => cmd::statusline::run(args),
        Some(Command::Replay(args)) => cmd::replay::run(args),
        Some(Command::Demo(args)) => cmd::demo::run(args),
        Some(Command::Doctor(args)) => cmd::doctor::run(args),
        Some(Command::Scripts(args)) => cmd::scripts::run(args),
        Some(Command::Hook(args)) => cmd::hook::run(args),
        Some(Command::Feed(args)) => cmd::feed::run(args),
        Some(Command::Completions(args)) => {
            cmd::completions::completions(args, <Cli as clap::CommandFactory>::command())
        }
        Some(Command::Man(args)) => {
            cmd::completions::man(args, <Cli as clap::CommandFactory>::command())
        }
        // No command: watch (the current directory's project by default), with its flags.
        None => cmd::watch::run(cli.watch),
    };
    match result {
        Ok(code) => code,
        // The reader of our stdout went away (`| head -1`): nothing more to say.
        Err(err) if cmd::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            cmd::style::error(format_args!("{err:#}"));
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{MI_OPTION_PURGE_DELAY, configure_allocator};

    /// Option 15 is mimalloc's purge delay (its default, 1000 ms, or what the environment
    /// says), and `configure_allocator` sets it: a mimalloc whose options moved would fail here
    /// instead of silently changing another option.
    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        let from_env = std::env::var("MIMALLOC_PURGE_DELAY").ok();
        // SAFETY: reads a process-wide option value.
        let get = || unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        let expected_default = from_env.as_deref().map_or(Some(1000), |v| v.parse().ok());
        if let Some(default) = expected_default {
            assert_eq!(get(), default);
        }
        configure_allocator();
        if from_env.is_none() {
            assert_eq!(get(), 100);
        }
    }
}
