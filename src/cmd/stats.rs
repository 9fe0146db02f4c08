//! `familiar stats`: a summary per transcript (events, errors, tools, tokens, estimated cost)
//! and a total across them.
//!
//! Files are read in parallel, one per core; each line of a file is parsed once, where it lies,
//! for both the normalizer (counts) and the usage ledger
//! ([`familiar_transcript::usage::push_line`]). The per-file usage ledgers are merged in input
//! order (runs of them on each core, then those: the merge is associative), so an API message
//! found in several files (a resumed session, a subagent's file and its `progress` records)
//! counts once, for the file whose record was kept. The rows therefore add up to the total. A
//! file's normalizer becomes its summary as soon as the file is read, so memory holds
//! summaries and ledgers, not every file's session state. Skipped lines are reported in input
//! order once all are read, the first few of a file one by one, then how many in all (as
//! `familiar events` reports them).

use std::collections::BTreeMap;
use std::io::{self, IsTerminal as _, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Context as _;
use familiar_model::text::printable_line;
use familiar_transcript::usage;
use familiar_transcript::{
    Diagnostic, DiagnosticKind, Ledger, Normalizer, NormalizerConfig, PriceFile, PriceTable,
    ReadLine, Summary, Tokens, round_cost,
};

use super::style::{HEADING, Paint};
use super::{InputOptions, input_name};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Transcript files; `-` reads stdin. With none, the current project's sessions (or stdin
    /// when a pipe or a file with data is there).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// One JSON object per file instead of the readable summary.
    #[arg(long)]
    pub json: bool,
    /// TOML file of model prices (USD per million tokens) that replace or add to the built-in
    /// table, e.g. `[models."opus-4-5"]` with `input = 5.0` and `output = 25.0` (optional:
    /// `cache_write`, `cache_write_1h`, `cache_read`).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputOptions,
}

/// The `--json` form is [`Summary`]; this adds the readable one.
trait Readable {
    fn write_readable(&self, out: &mut impl Write, paint: Paint) -> io::Result<()>;
}

impl Readable for Summary {
    fn write_readable(&self, out: &mut impl Write, paint: Paint) -> io::Result<()> {
        let session = self
            .session
            .as_deref()
            .map_or("(no session id)".into(), printable_line);
        let file = printable_line(&self.file);
        writeln!(out, "{}  session {session}", paint.paint(HEADING, file))?;
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
            .map(|(name, count)| format!("{} {count}", printable_line(name)))
            .collect();
        let total: u64 = self.tool_calls.values().sum();
        writeln!(out, "  tool calls   {total}: {}", tools.join(", "))?;
        writeln!(out, "  files edited {}", self.files_modified.len())?;
        write_tokens(out, &self.tokens, self.cost_usd)?;
        if let Some(cost) = self.cli_cost_usd {
            writeln!(
                out,
                "  cost (CLI)   ${cost:.2} for the session, by the CLI's own count"
            )?;
        }
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

fn write_tokens(out: &mut impl Write, t: &Tokens, cost: f64) -> io::Result<()> {
    writeln!(
        out,
        "  tokens       input {}, output {}, cache read {}, cache write {} (1h {})",
        thousands(t.input),
        thousands(t.output),
        thousands(t.cache_read),
        thousands(t.cache_creation),
        thousands(t.cache_creation_1h)
    )?;
    writeln!(out, "  cost (est.)  ${:.2}", round_cost(cost))
}

/// What reading one input said on the way (skipped lines), printed in input order once
/// every input is read, whichever core read it.
type Warnings = Vec<String>;

/// What reading one input gave: its warnings, and its result.
type FileRead = (Warnings, anyhow::Result<FileResult>);

/// What is kept of one input until every input is read: its warnings, and its summary as its
/// JSON, one allocation of about a kilobyte instead of a few dozen in maps and strings (5,000
/// transcripts: 51 → 42 MB peak RSS); it reads back exactly.
type FileDone = (Warnings, anyhow::Result<Box<str>>);

/// What reading one input left behind.
struct FileResult {
    /// Without its tokens and cost yet: those wait for every input's ledger (a message may
    /// be counted for another input). The normalizer is dropped as soon as its file is read.
    summary: Summary,
    /// Merged into the one ledger of every input as soon as the input is read whole.
    ledger: Ledger,
}

pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    crate::free_memory_at_once();
    let prices = load_prices(args.prices.as_deref())?;
    let config = args.input.load_normalizer_config()?;
    let inputs = inputs(std::mem::take(&mut args.files))?;
    let total_bytes = inputs
        .iter()
        .filter(|path| *path != Path::new("-"))
        .filter_map(|path| std::fs::metadata(path).ok())
        .map(|meta| meta.len())
        .sum();
    let progress = super::progress::bytes(total_bytes);
    let (results, ledger) = read_all(&inputs, &config, &progress);
    progress.finish_and_clear();

    let mut failed = false;
    let mut read = Vec::new();
    for (index, (warnings, result)) in results.into_iter().enumerate() {
        for warning in warnings {
            super::style::warning(warning);
        }
        match result {
            Ok(summary) => read.push((index, summary)),
            Err(err) => {
                eprintln!("familiar: {err:#}");
                failed = true;
            }
        }
    }
    let rows = ledger.by_source(inputs.len(), &prices);

    let paint = Paint::stdout();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut sessions = std::collections::BTreeSet::new();
    let mut total_cost = SessionCosts::default();
    for (index, json) in &read {
        let mut stats: Summary =
            serde_json::from_str(json).context("reading a kept summary back")?;
        let (tokens, cost) = rows.get(*index).copied().unwrap_or_default();
        stats.credit(tokens, cost);
        let stats = &stats;
        total_cost.add(stats, cost);
        if let Some(session) = &stats.session {
            sessions.insert(session.clone());
        }
        let written = if args.json {
            serde_json::to_writer(&mut out, &stats)
                .map_err(io::Error::from)
                .and_then(|()| out.write_all(b"\n"))
        } else {
            stats.write_readable(&mut out, paint)
        };
        if let Some(code) = write_result(written)? {
            return Ok(code);
        }
    }
    if !args.json && read.len() > 1 {
        let written = writeln!(
            out,
            "{}  {} files, {} sessions",
            paint.paint(HEADING, "total"),
            read.len(),
            sessions.len()
        )
        .and_then(|()| write_tokens(&mut out, &ledger.tokens(), total_cost.total()));
        if let Some(code) = write_result(written)? {
            return Ok(code);
        }
    }
    if let Some(code) = write_result(out.flush())? {
        return Ok(code);
    }
    // What was read is not freed block by block on the way out (a few milliseconds for a
    // large tree): the process ends just after, and the system takes it back at once.
    std::mem::forget(ledger);
    std::mem::forget(read);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The total cost of what was read: a session whose CLI counted its own cost (Claude Code
/// 2.1.3xx `cost-state`, which covers its subagents and the requests no record shows, such
/// as a compaction's) by that figure, every other file by its estimate.
#[derive(Debug, Default)]
struct SessionCosts {
    /// Files of sessions without a figure of the CLI's, and files that name no session.
    estimated: f64,
    /// Per session: the CLI's own figure (the largest read: it only grows), and the
    /// estimates of its files, used should no file of it carry the CLI's figure.
    sessions: BTreeMap<String, (Option<f64>, f64)>,
}

impl SessionCosts {
    /// `stats` of one file, whose estimated cost (unrounded) is `cost`.
    fn add(&mut self, stats: &Summary, cost: f64) {
        let Some(session) = &stats.session else {
            self.estimated += cost;
            return;
        };
        let entry = self.sessions.entry(session.clone()).or_default();
        entry.1 += cost;
        if let Some(cli) = stats.cli_cost_usd {
            entry.0 = Some(entry.0.map_or(cli, |seen: f64| seen.max(cli)));
        }
    }

    fn total(&self) -> f64 {
        self.estimated
            + self
                .sessions
                .values()
                .map(|(cli, estimated)| cli.unwrap_or(*estimated))
                .sum::<f64>()
    }
}

/// `Some(exit code)` when the reader of stdout went away (`| head`): stop quietly.
fn write_result(written: io::Result<()>) -> anyhow::Result<Option<ExitCode>> {
    match written {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(Some(ExitCode::SUCCESS)),
        Err(err) => Err(err.into()),
        Ok(()) => Ok(None),
    }
}

/// The inputs to read: the files given; else stdin when it is piped (or a file with data);
/// else the sessions of the current directory's project, which is what a user typing
/// `familiar stats` means (and what cron, with nothing on stdin, means too).
fn inputs(files: Vec<PathBuf>) -> anyhow::Result<Vec<PathBuf>> {
    if !files.is_empty() {
        return Ok(files);
    }
    if stdin_has_data() {
        return Ok(vec![PathBuf::from("-")]);
    }
    let here = std::env::current_dir().context("finding the current directory")?;
    let config_dir = familiar_tail::config_dir().context("finding the Claude Code config dir")?;
    // From any subdirectory of the project, as `familiar` itself.
    let cwd = super::selection::project_of(&config_dir, &here);
    let selector = familiar_tail::discovery::Selector::Project(cwd.clone());
    // Every agent's sessions of the project (Codex rollouts, Qwen Code and Copilot CLI sessions
    // matched by their cwd, Gemini CLI sessions by their project folder).
    let all = super::agents::AgentArg::All;
    let matcher = familiar_tail::Matcher::new(&config_dir, &[selector])
        .agents(true, all.codex_home().as_deref())
        .gemini(all.gemini_dir().as_deref())
        .qwen(all.qwen_dir().as_deref())
        .copilot(all.copilot_dir().as_deref());
    let mut found: Vec<PathBuf> = familiar_tail::discovery::discover_with(&matcher)
        .into_iter()
        .map(|info| info.path)
        .collect();
    found.sort();
    // opencode's sessions of the project: rows of its database, one address each.
    if let Some(db) = all.opencode_db().filter(|db| db.exists()) {
        match familiar_tail::opencode::list_sessions(&db) {
            Ok(sessions) => found.extend(
                sessions
                    .iter()
                    .filter(|s| matcher.decide_opencode(&db, &s.id, &s.directory))
                    .map(|s| familiar_tail::opencode::address(&db, &s.id)),
            ),
            Err(err) => super::style::warning(format_args!(
                "{}: {}",
                printable_line(&db.display().to_string()),
                printable_line(&err.to_string())
            )),
        }
    }
    if found.is_empty() {
        anyhow::bail!(
            "no Claude Code sessions of {} under {}: give transcript files, or `-` to read stdin",
            printable_line(&cwd.display().to_string()),
            printable_line(&config_dir.display().to_string())
        );
    }
    eprintln!(
        "familiar: {} transcripts of {} (give files, or `-` for stdin, to read others)",
        found.len(),
        printable_line(&cwd.display().to_string())
    );
    Ok(found)
}

/// Is stdin something to read transcripts from: a pipe, a socket, or a file with bytes in it?
/// Not a terminal, nor what cron, an IDE task or `</dev/null` leave there (a device, an empty
/// file, nothing at all): `familiar stats` then reads the project's sessions.
fn stdin_has_data() -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    if io::stdin().is_terminal() {
        return false;
    }
    // The metadata of whatever fd 0 is (none when it is closed).
    match std::fs::metadata("/dev/stdin") {
        Ok(meta) => {
            let kind = meta.file_type();
            kind.is_fifo() || kind.is_socket() || (kind.is_file() && meta.len() > 0)
        }
        Err(_) => false,
    }
}

/// Read every input, in parallel across cores (largest first), keeping input order in the
/// results; and every input's usage in one ledger. Each input read whole has its ledger
/// merged into that one at once (which record of a message counts does not depend on the
/// order: `familiar_transcript::usage`), so what waits for the last input is one ledger, not
/// one per input: 5,000 transcripts kept 5,000, each with room for 4,096 messages and an
/// index of its own, and then merged them (98.7 MB peak RSS).
fn read_all(
    inputs: &[PathBuf],
    config: &NormalizerConfig,
    progress: &indicatif::ProgressBar,
) -> (Vec<FileDone>, Ledger) {
    // Largest first: the last file a worker takes is then a small one, and both cores finish
    // together (a large file taken last would leave the other core idle while it is read).
    let mut order: Vec<usize> = (0..inputs.len()).collect();
    let size = |path: &Path| std::fs::metadata(path).map_or(0, |meta| meta.len());
    let sizes: Vec<u64> = inputs
        .iter()
        .map(|path| {
            if path == Path::new("-") {
                0
            } else {
                size(path)
            }
        })
        .collect();
    order.sort_by_key(|&index| std::cmp::Reverse(sizes[index]));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<FileDone>>> =
        Mutex::new((0..inputs.len()).map(|_| None).collect());
    // Locked once per input, for a merge of its few dozen messages.
    let ledger = Mutex::new(Ledger::new());
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(inputs.len())
        .max(1);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                // One read buffer per worker, for all its files.
                let mut chunk = Vec::new();
                while let Some(&index) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let path = &inputs[index];
                    let (warnings, result) =
                        read_one(path, index as u32, config, progress, &mut chunk);
                    let done = result.and_then(|file| {
                        if let Ok(mut ledger) = ledger.lock() {
                            ledger.merge(file.ledger);
                        }
                        let json = serde_json::to_string(&file.summary)
                            .context("keeping a summary as JSON")?;
                        Ok(json.into_boxed_str())
                    });
                    if let Ok(mut results) = results.lock() {
                        results[index] = Some((warnings, done));
                    }
                }
            });
        }
    });
    let results = results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .zip(inputs)
        .map(|(result, path)| {
            result.unwrap_or_else(|| {
                let err = anyhow::anyhow!("{} was not read", input_name(path));
                (Warnings::new(), Err(err))
            })
        })
        .collect();
    (results, ledger.into_inner().unwrap_or_default())
}

fn read_one(
    path: &Path,
    source: u32,
    config: &NormalizerConfig,
    progress: &indicatif::ProgressBar,
    chunk: &mut Vec<u8>,
) -> FileRead {
    let mut warnings = Warnings::new();
    let result = read_one_warning(path, source, config, progress, chunk, &mut warnings);
    (warnings, result)
}

/// [`read_one`], its skipped lines told to `warnings` ([`super::SkippedLines`]).
fn read_one_warning(
    path: &Path,
    source: u32,
    config: &NormalizerConfig,
    progress: &indicatif::ProgressBar,
    chunk: &mut Vec<u8>,
    warnings: &mut Warnings,
) -> anyhow::Result<FileResult> {
    let super::Input { name, reader, len } = super::open_input(path)?;
    let mut normalizer = Normalizer::new(config.clone());
    let mut ledger = Ledger::new();
    ledger.set_source(source);
    let cap = config.max_line_bytes;
    let mut skipped = super::SkippedLines::new(&name);
    let mut report = |diagnostic: Diagnostic| warnings.extend(skipped.skip(&diagnostic));
    // One pass over each line, on this thread: the files already keep every core busy, and
    // one parse of the line, where it lies in the read buffer, feeds the normalizer and the
    // usage ledger.
    let mut events = Vec::new();
    let read = familiar_transcript::read_lines_with(
        Counted {
            inner: reader,
            progress,
        },
        len,
        cap,
        chunk,
        |line| {
            match line {
                ReadLine::Line { number, bytes } => {
                    if let Err(diagnostic) =
                        usage::push_line(&mut normalizer, &mut ledger, bytes, number, &mut events)
                    {
                        report(diagnostic);
                    }
                    events.clear();
                }
                ReadLine::TooLong { number, len } => {
                    normalizer.skipped_line();
                    report(Diagnostic {
                        line: number,
                        kind: DiagnosticKind::TooLong {
                            len,
                            cap: cap as u64,
                        },
                    });
                }
                ReadLine::Unfinished { number, len } => report(Diagnostic {
                    line: number,
                    kind: DiagnosticKind::Unfinished { len },
                }),
            }
            Ok(())
        },
    )
    .with_context(|| format!("reading {name}"));
    warnings.extend(skipped.summary());
    read?;
    // The input ended: a turn's `success` held for its `turn_duration` counts as it is.
    normalizer.flush(&mut events);
    let summary = Summary::new(&name, &normalizer, Tokens::default(), 0.0);
    Ok(FileResult { summary, ledger })
}

/// A reader that counts the bytes it passes on, on the progress bar.
struct Counted<'p, R> {
    inner: R,
    progress: &'p indicatif::ProgressBar,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.progress.inc(read as u64);
        Ok(read)
    }
}

fn load_prices(path: Option<&Path>) -> anyhow::Result<PriceTable> {
    let defaults = PriceTable::default();
    let Some(path) = path else {
        return Ok(defaults);
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read price file {}", path.display()))?;
    let file: PriceFile =
        toml::from_str(&text).with_context(|| format!("invalid price file {}", path.display()))?;
    Ok(defaults.merged_with(file))
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

/// A duration in the words every command uses (`familiar_model::words`).
fn format_duration(ms: u64) -> String {
    familiar_model::words::duration(std::time::Duration::from_millis(ms))
}
