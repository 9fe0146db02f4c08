//! `familiar check SCRIPT...`: compile and initialise each script on its own (as
//! `familiar_script::ScriptHost` does when Familiar starts), list the handlers Familiar will
//! call, the other functions, the state variables and constants, and print warnings and errors with their
//! position and a caret excerpt. Exit status 1 when a script does not load (or, with
//! `--deny-warnings`, has warnings).

use std::path::PathBuf;
use std::process::ExitCode;

use familiar_script::{HostConfig, ScriptHost};

use super::run::print_diagnostics;

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
    for path in &args.scripts {
        let mut host = ScriptHost::new(HostConfig::default());
        match host.load_file(path) {
            Ok(report) => {
                let verdict = match report.warnings.len() {
                    0 => "ok".to_owned(),
                    n => format!("ok with {n} warning(s)"),
                };
                println!("{}: {verdict}", path.display());
                let list = |items: &[String]| {
                    if items.is_empty() {
                        "none".to_owned()
                    } else {
                        items.join(", ")
                    }
                };
                println!("  handlers: {}", list(&report.handlers));
                println!("  functions: {}", list(&report.functions));
                println!("  state: {}", list(&report.state));
                if !report.constants.is_empty() {
                    println!("  constants: {}", list(&report.constants));
                }
                print_diagnostics(&report.warnings);
                failed |= args.deny_warnings && !report.warnings.is_empty();
            }
            Err(err) => {
                println!("{}: error", path.display());
                eprintln!("{err}");
                failed = true;
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
