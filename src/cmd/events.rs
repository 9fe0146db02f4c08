//! `familiar events`: transcripts in, normalized events out as NDJSON (`docs/events.md`).

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use super::{InputOptions, inputs_or_stdin, is_broken_pipe, read_transcript};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Transcript files (JSONL, stream-json or a JSON array); `-` or nothing reads stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub input: InputOptions,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = args.input.normalizer_config();
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut failed = false;
    for path in inputs_or_stdin(&args.files) {
        let result = read_transcript(&path, &config, |event| {
            serde_json::to_writer(&mut out, &event)?;
            out.write_all(b"\n")
        });
        match result {
            Ok(_) => {}
            Err(err) if is_broken_pipe(&err) => return Ok(ExitCode::SUCCESS),
            Err(err) => {
                super::style::error(format_args!("{err:#}"));
                failed = true;
            }
        }
    }
    match out.flush() {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
        other => other?,
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
