//! `familiar check SCRIPT...`: compile and initialise each script on its own (as
//! `familiar_script::ScriptHost` does when Familiar starts), list the handlers Familiar will
//! call, the other functions, the state variables and constants, and print warnings and errors with their
//! position and a caret excerpt. Exit status 1 when a script does not load (or, with
//! `--deny-warnings`, has warnings).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use familiar_model::text::{printable, printable_line};
use familiar_script::{HostConfig, ScriptHost};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Scripts to check.
    #[arg(value_name = "SCRIPT", required = true)]
    pub scripts: Vec<PathBuf>,
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    pub deny_warnings: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut failed = false;
    // Written with `?`: a closed pipe ends quietly (main.rs) and a full disk is an error.
    let mut out = std::io::stdout().lock();
    for path in &args.scripts {
        let shown = printable_line(&path.display().to_string()).into_owned();
        let mut host = ScriptHost::new(HostConfig::default());
        match host.load_file(path) {
            Ok(report) => {
                let verdict = match report.warnings.len() {
                    0 => "ok".to_owned(),
                    n => format!("ok with {n} warning(s)"),
                };
                writeln!(out, "{shown}: {verdict}")?;
                let list = |items: &[String]| {
                    if items.is_empty() {
                        "none".to_owned()
                    } else {
                        printable_line(&items.join(", ")).into_owned()
                    }
                };
                writeln!(out, "  handlers: {}", list(&report.handlers))?;
                writeln!(out, "  functions: {}", list(&report.functions))?;
                writeln!(out, "  state: {}", list(&report.state))?;
                if !report.constants.is_empty() {
                    writeln!(out, "  constants: {}", list(&report.constants))?;
                }
                out.flush()?;
                for warning in &report.warnings {
                    super::style::diagnostic(warning);
                }
                failed |= args.deny_warnings && !report.warnings.is_empty();
            }
            Err(err) => {
                writeln!(out, "{shown}: error")?;
                out.flush()?;
                match err.diagnostic() {
                    Some(diagnostic) => super::style::diagnostic(diagnostic),
                    None => eprintln!("{}", printable(&err.to_string())),
                }
                failed = true;
            }
        }
    }
    out.flush()?;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
