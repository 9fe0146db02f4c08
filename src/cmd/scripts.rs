//! `familiar scripts`: the scripts built into Familiar, for a user who installed only the
//! binary. With no name it lists them (the shipped ones, loaded before the user's, and the
//! examples, to copy), each with the first line of its own comment; with a name it prints
//! that script, as it is built in (`familiar scripts git-push-sound > ~/familiar/push.rhai`).

use std::io::{self, Write as _};
use std::process::ExitCode;

use familiar_script::{EXAMPLES, SHIPPED};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A script to print: its file name, with or without `.rhai`.
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut out = io::stdout().lock();
    let Some(name) = args.name else {
        out.write_all(list().as_bytes())?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    };
    let wanted = name.strip_suffix(".rhai").unwrap_or(&name);
    let found = SHIPPED
        .iter()
        .chain(EXAMPLES.iter())
        .find(|(file, _)| file.strip_suffix(".rhai") == Some(wanted));
    match found {
        Some((_, source)) => {
            out.write_all(source.as_bytes())?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let names: Vec<&str> = SHIPPED
                .iter()
                .chain(EXAMPLES.iter())
                .map(|(file, _)| *file)
                .collect();
            super::style::error(format_args!(
                "no built-in script `{}`; there are {}",
                familiar_model::text::printable_line(&name),
                names.join(", ")
            ));
            Ok(ExitCode::from(2))
        }
    }
}

/// The listing: each script with what its own first comment line says it is.
fn list() -> String {
    let mut text = String::from("Loaded before yours, in this order:\n");
    for (file, source) in SHIPPED {
        text.push_str(&format!("  {file:<22} {}\n", summary(file, source)));
    }
    text.push_str("\nExamples to copy (`familiar scripts NAME > FILE`, then `--script FILE`):\n");
    for (file, source) in EXAMPLES {
        text.push_str(&format!("  {file:<22} {}\n", summary(file, source)));
    }
    text
}

/// `// name.rhai: what it does, ...` → `what it does, ...`: its first comment paragraph.
fn summary(file: &str, source: &str) -> String {
    let paragraph: Vec<&str> = source
        .lines()
        .map_while(|line| line.strip_prefix("//"))
        .map(str::trim)
        .take_while(|line| !line.is_empty())
        .collect();
    let text = paragraph.join(" ");
    text.strip_prefix(file)
        .and_then(|rest| rest.strip_prefix(':'))
        .unwrap_or(&text)
        .trim()
        .to_owned()
}
