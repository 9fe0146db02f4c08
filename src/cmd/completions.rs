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
    let mut out = io::stdout().lock();
    clap_complete::generate(args.shell, &mut command, "familiar", &mut out);
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, clap::Args)]
pub struct ManArgs {}

pub fn man(_args: ManArgs, command: clap::Command) -> anyhow::Result<ExitCode> {
    let mut out = io::stdout().lock();
    clap_mangen::Man::new(command).render(&mut out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
