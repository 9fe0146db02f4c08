//! `familiar completions SHELL` and `familiar man`: shell completion scripts (clap_complete)
//! and a roff man page (clap_mangen), both generated from the same clap definition as
//! `--help`, so they never drift from the real flags. The man pages are familiar(1) and one
//! page per subcommand, familiar-watch(1) and so on, as familiar(1) refers to them.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Shell to generate completions for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn completions(args: Args, mut command: clap::Command) -> anyhow::Result<ExitCode> {
    // clap_complete panics when its writer fails: generate into memory, then write with `?`
    // (a closed pipe ends quietly in main.rs, a full disk is an error).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "familiar", &mut script);
    let mut out = io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Where `familiar(1)` points for the subcommands' own pages.
const MAN_PAGES_NOTE: &str = "Each subcommand has its own page, familiar-SUBCOMMAND(1): read one \
with `familiar man watch | man -l -`, or install them all with \
`familiar man --dir ~/.local/share/man/man1`.";

#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// The subcommand whose page to print, e.g. `watch` or `hook install`; none prints
    /// familiar(1).
    #[arg(value_name = "SUBCOMMAND")]
    pub subcommand: Vec<String>,
    /// Write every page (familiar.1, familiar-watch.1, ...) into this directory instead of
    /// printing one, e.g. ~/.local/share/man/man1.
    #[arg(long, value_name = "DIR", conflicts_with = "subcommand")]
    pub dir: Option<PathBuf>,
}

/// `familiar man`: familiar(1), which lists the subcommands as familiar-SUBCOMMAND(1), and
/// those pages themselves (`familiar man watch`, or all of them with `--dir`).
pub fn man(args: ManArgs, command: clap::Command) -> anyhow::Result<ExitCode> {
    let after = command
        .get_after_help()
        .map(|text| format!("{text}\n\n{MAN_PAGES_NOTE}"))
        .unwrap_or_else(|| MAN_PAGES_NOTE.to_owned());
    // Built (as clap_mangen's own `generate_to` does) so subcommands are named
    // `familiar-watch` and carry the global flags; no `help` subcommand, which has no page.
    // Every page names the version, the subcommands' too.
    let mut command = without_help_subcommands(command)
        .after_long_help(after)
        .propagate_version(true);
    command.build();
    if let Some(dir) = &args.dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        write_pages(&command, dir).with_context(|| format!("writing to {}", dir.display()))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut page = &command;
    for name in &args.subcommand {
        let Some(found) = page.find_subcommand(name) else {
            // A name that is not a subcommand is a usage error (exit 2), as clap's own are.
            let known: Vec<&str> = page.get_subcommands().map(|c| c.get_name()).collect();
            super::style::error(format_args!(
                "no page for `{}`: {} has the subcommands {}",
                args.subcommand.join(" "),
                page.get_display_name().unwrap_or(page.get_name()),
                known.join(", ")
            ));
            return Ok(ExitCode::from(2));
        };
        page = found;
    }
    let mut roff = Vec::new();
    clap_mangen::Man::new(page.clone()).render(&mut roff)?;
    let mut out = io::stdout().lock();
    match out.write_all(&roff).and_then(|()| out.flush()) {
        // `familiar man | head`: the reader has what it wanted.
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        other => other.map(|()| ExitCode::SUCCESS).map_err(Into::into),
    }
}

/// The command tree without clap's `help` subcommands (their pages would only repeat
/// `--help`).
fn without_help_subcommands(command: clap::Command) -> clap::Command {
    let names: Vec<String> = command
        .get_subcommands()
        .map(|sub| sub.get_name().to_owned())
        .collect();
    names
        .iter()
        .fold(command.disable_help_subcommand(true), |command, name| {
            command.mut_subcommand(name, without_help_subcommands)
        })
}

/// `command`'s page and, recursively, every subcommand's page it refers to.
fn write_pages(command: &clap::Command, dir: &Path) -> io::Result<()> {
    clap_mangen::Man::new(command.clone()).generate_to(dir)?;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir)?;
    }
    Ok(())
}
