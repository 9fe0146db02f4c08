//! `familiar completions SHELL` and `familiar man`: shell completion scripts (clap_complete)
//! and a roff man page (clap_mangen), both generated from the same clap definition as
//! `--help`, so they never drift from the real flags.

use std::io::{self, Write as _};
use std::process::ExitCode;

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

#[derive(Debug, clap::Args)]
pub struct ManArgs {}

pub fn man(_args: ManArgs, command: clap::Command) -> anyhow::Result<ExitCode> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command).render(&mut page)?;
    let mut out = io::stdout().lock();
    out.write_all(&page)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
