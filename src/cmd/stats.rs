//! `familiar stats`: a summary per transcript: events, errors, tools, tokens, estimated cost.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use familiar_transcript::{PriceTable, Summary};

use super::{InputOptions, input_name, inputs_or_stdin, read_transcript};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Transcript files; `-` or nothing reads stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// One JSON object per file instead of the readable summary.
    #[arg(long)]
    pub json: bool,
    /// TOML file of model prices (USD per million tokens) that replace or add to the built-in
    /// table, e.g. `[models."opus-4-5"]` with `input = 5.0` and `output = 25.0`.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputOptions,
}

/// The `--json` form is [`Summary`]; this adds the readable one.
trait Readable {
    fn write_readable(&self, out: &mut impl Write) -> io::Result<()>;
}

impl Readable for Summary {
    fn write_readable(&self, out: &mut impl Write) -> io::Result<()> {
        let session = self.session.as_deref().unwrap_or("(no session id)");
        writeln!(out, "{}  session {session}", self.file)?;
        let duration = self
            .duration_ms
            .map(format_duration)
            .unwrap_or_else(|| "unknown".to_owned());
        let context = match self.context_used {
            Some(used) => format!(
                "{} / {} tokens ({:.0}%)",
                thousands(used),
                thousands(self.context_limit),
                used as f64 * 100.0 / self.context_limit.max(1) as f64
            ),
            None => format!("unknown / {} tokens", thousands(self.context_limit)),
        };
        writeln!(out, "  duration     {duration}")?;
        writeln!(out, "  context      {context}")?;
        writeln!(
            out,
            "  prompts      {}    compactions {}",
            self.prompts, self.compactions
        )?;
        writeln!(out, "  events       {}", join_counts(&self.events))?;
        let errors = if self.errors.is_empty() {
            "none".to_owned()
        } else {
            join_counts(&self.errors)
        };
        writeln!(out, "  errors       {errors}")?;
        let mut tools: Vec<(&String, &u64)> = self.tool_calls.iter().collect();
        tools.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let tools: Vec<String> = tools
            .iter()
            .map(|(name, count)| format!("{name} {count}"))
            .collect();
        let total: u64 = self.tool_calls.values().sum();
        writeln!(out, "  tool calls   {total}: {}", tools.join(", "))?;
        writeln!(out, "  files edited {}", self.files_modified.len())?;
        let t = &self.tokens;
        writeln!(
            out,
            "  tokens       input {}, output {}, cache read {}, cache write {}",
            thousands(t.input),
            thousands(t.output),
            thousands(t.cache_read),
            thousands(t.cache_creation)
        )?;
        writeln!(out, "  cost (est.)  ${:.2}", self.cost_usd)?;
        if self.skipped_lines > 0 {
            writeln!(
                out,
                "  skipped      {} lines (see stderr)",
                self.skipped_lines
            )?;
        }
        writeln!(out)
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let prices = load_prices(args.prices.as_deref())?;
    let config = args.input.normalizer_config();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut failed = false;
    let inputs = inputs_or_stdin(&args.files);
    let progress = super::progress::bar(inputs.len(), "files");
    for path in inputs {
        progress.inc(1);
        let read = progress.suspend(|| read_transcript(&path, &config, |_| Ok(())));
        let normalizer = match read {
            Ok(normalizer) => normalizer,
            Err(err) => {
                progress.suspend(|| eprintln!("familiar: {err:#}"));
                failed = true;
                continue;
            }
        };
        let stats = Summary::new(&input_name(&path), &normalizer, &prices);
        let written = if args.json {
            serde_json::to_writer(&mut out, &stats)
                .map_err(io::Error::from)
                .and_then(|()| out.write_all(b"\n"))
        } else {
            stats.write_readable(&mut out)
        };
        match written.and_then(|()| out.flush()) {
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
            Err(err) => return Err(err.into()),
            Ok(()) => {}
        }
    }
    progress.finish_and_clear();
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn load_prices(path: Option<&Path>) -> anyhow::Result<PriceTable> {
    let defaults = PriceTable::default();
    let Some(path) = path else {
        return Ok(defaults);
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read price file {}", path.display()))?;
    let overrides: PriceTable =
        toml::from_str(&text).with_context(|| format!("invalid price file {}", path.display()))?;
    Ok(defaults.merged_with(overrides))
}

fn join_counts(counts: &BTreeMap<String, u64>) -> String {
    counts
        .iter()
        .map(|(name, count)| format!("{name} {count}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

fn format_duration(ms: u64) -> String {
    let seconds = ms / 1000;
    match seconds {
        0..=59 => format!("{seconds}s"),
        60..=3599 => format!("{}m {:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h {:02}m", seconds / 3600, (seconds % 3600) / 60),
    }
}
