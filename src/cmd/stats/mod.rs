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
//!
//! What reading a file gave is kept in a cache ([`cache`]) with the file's identity, and used
//! instead of reading it again while the file is the same: a second `stats` reads only what
//! was written since.
//!
//! - [`read`]: reading the inputs on every core, or taking them from the cache;
//! - [`cache`]: the cache (`stats.sqlite3` in the user's cache folder);
//! - here: the command, and the readable and JSON forms of its answer.

pub(super) mod cache;
mod read;

use read::{open_cache, read_all};

use std::collections::BTreeMap;
use std::io::{self, IsTerminal as _, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use familiar_model::text::printable_line;
use familiar_transcript::{PriceFile, PriceTable, Summary, Tokens, round_cost};

use super::InputOptions;
use super::style::{HEADING, Paint};

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
    /// Read every file, neither using nor updating the cache of files read before
    /// (`stats.sqlite3` in `~/.cache/familiar`), which otherwise spares reading files that
    /// have not changed since.
    #[arg(long)]
    pub no_cache: bool,
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

pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    crate::free_memory_at_once();
    let prices = load_prices(args.prices.as_deref())?;
    let config = args.input.load_normalizer_config()?;
    let inputs = inputs(std::mem::take(&mut args.files))?;
    // Each input's identity and size, once: for the cache, the progress bar and the order the
    // files are read in.
    let stamps: Vec<Option<cache::Stamp>> = inputs
        .iter()
        .map(|path| {
            (path != Path::new("-"))
                .then(|| cache::Stamp::of(path))
                .flatten()
        })
        .collect();
    let total_bytes = stamps.iter().flatten().map(cache::Stamp::size).sum();
    let progress = super::progress::bytes(total_bytes);
    let files = inputs.iter().any(|path| path != Path::new("-"));
    let cache = if args.no_cache || !files {
        None
    } else {
        open_cache(&config)
    };
    let (results, ledger) = read_all(&inputs, &stamps, &config, &progress, cache);
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
