//! `familiar statusline`: the command behind Claude Code's `statusLine` setting. Claude Code
//! runs it with the session's JSON on stdin (`transcript_path`, `model`, `context_window`, ...)
//! after every update and shows the first line it prints: here the mana (what is left of the
//! context window, as the game's bar says it), the session's status and its tool counts.
//!
//! It runs many times a minute, so it never reads a whole transcript: it reads the last
//! [`TAIL_BYTES`] at most, and from there only what follows the last compaction (the context the
//! mana describes). Tool counts cover that same stretch; `…` in front of them says the stretch
//! was cut by the byte budget rather than by a compaction or the start of the file. The window
//! comes from [`familiar_transcript::models::context_window`].
//!
//! Claude Code 2.1.332 sends its own figures in `context_window` (`context_window_size`,
//! `current_usage`, `used_percentage`): when present they are what the user sees in the CLI,
//! so the mana shows them; when absent (older CLIs, and 2.1.332 itself before the first answer
//! and right after a compaction, where `current_usage` and `used_percentage` are null) the
//! transcript's figures stand in. Its `effort`, `prompt_cache`, `cost` and the rest are not
//! shown. The real inputs are in `fixtures/statusline/`.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use familiar_model::text::printable_line;
use familiar_transcript::models::{WindowSources, context_window};
use familiar_transcript::{Normalizer, NormalizerConfig};
use serde::Deserialize;

/// Most bytes read from the end of a transcript.
const TAIL_BYTES: u64 = 8 << 20;
/// Tool names shown; the rest are summed as `+N`.
const TOOLS_SHOWN: usize = 4;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Context window in tokens, overriding every other source.
    #[arg(long, value_name = "TOKENS", value_parser = super::parse_tokens)]
    pub context_limit: Option<u64>,
    /// Read this transcript instead of the input's `transcript_path` (stdin may then be empty).
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
}

/// The fields of Claude Code's statusline input that are used; the rest is ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Input {
    transcript_path: Option<PathBuf>,
    model: Option<InputModel>,
    context_window: Option<InputWindow>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct InputModel {
    id: Option<String>,
    display_name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct InputWindow {
    context_window_size: Option<u64>,
    /// The last answer's usage (null before the first and after a compaction).
    current_usage: Option<InputUsage>,
    /// Of the window, as the CLI rounds it (an integer in 2.1.332).
    used_percentage: Option<f64>,
}

/// `context_window.current_usage`: the latest API usage, the context is its input side.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct InputUsage {
    input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

impl InputUsage {
    /// Tokens in the context: input + cache writes + cache reads, as `context_used`.
    fn context(&self) -> Option<u64> {
        let parts = [
            self.input_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        ];
        parts
            .iter()
            .any(Option::is_some)
            .then(|| parts.iter().flatten().sum())
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut raw = Vec::new();
    io::stdin()
        .take(1 << 20)
        .read_to_end(&mut raw)
        .context("reading the statusline input on stdin")?;
    let input: Input = if raw.trim_ascii().is_empty() {
        Input::default()
    } else {
        serde_json::from_slice(&raw).context("the statusline input on stdin is not JSON")?
    };
    let Some(path) = args.transcript.clone().or(input.transcript_path.clone()) else {
        anyhow::bail!("no transcript: the input has no `transcript_path` (or give --transcript)");
    };
    let tail = match read_tail(&path) {
        Ok(tail) => Some(tail),
        // A session that has not written its transcript yet.
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
    };
    let line = render(&args, &input, tail.as_ref());
    let mut out = io::stdout().lock();
    match writeln!(out, "{line}").and_then(|()| out.flush()) {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(err) => Err(err.into()),
        Ok(()) => Ok(ExitCode::SUCCESS),
    }
}

/// The end of a transcript, from its last compaction when that is within reach.
struct Tail {
    normalizer: Normalizer,
    /// The stretch read was cut by the byte budget.
    cut: bool,
    /// The last `toolUseResult.resolvedModel` in it.
    resolved_model: Option<String>,
}

fn read_tail(path: &std::path::Path) -> io::Result<Tail> {
    use std::os::unix::fs::OpenOptionsExt as _;
    // Opened without blocking (a FIFO would wait for a writer for ever: Claude Code would
    // wait on its status line), then read only if it is a regular file.
    let mut file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let len = meta.len();
    let start = len.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity((len - start) as usize);
    file.take(TAIL_BYTES).read_to_end(&mut bytes)?;
    let finder = memchr_rfind(&bytes, br#""subtype":"compact_boundary""#);
    let (from, cut) = match finder {
        Some(at) => (line_start(&bytes, at), false),
        // Skip the partial first line of a cut read.
        None if start > 0 => (
            bytes
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |n| n + 1),
            true,
        ),
        None => (0, false),
    };
    let region = &bytes[from..];
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut events = Vec::new();
    let mut diagnostics = Vec::new();
    familiar_transcript::feed(&mut normalizer, region, &mut events, &mut diagnostics);
    Ok(Tail {
        normalizer,
        cut,
        resolved_model: last_resolved_model(&bytes),
    })
}

fn memchr_rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::rfind(haystack, needle)
}

fn line_start(bytes: &[u8], at: usize) -> usize {
    bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |n| n + 1)
}

/// The value of the last `"resolvedModel":"…"` (Agent tool results name the model that ran,
/// with its `[1m]`).
fn last_resolved_model(bytes: &[u8]) -> Option<String> {
    let key = br#""resolvedModel":""#;
    let at = memchr_rfind(bytes, key)? + key.len();
    let end = bytes[at..].iter().position(|&b| b == b'"')? + at;
    std::str::from_utf8(&bytes[at..end]).ok().map(str::to_owned)
}

fn render(args: &Args, input: &Input, tail: Option<&Tail>) -> String {
    let model_id = input.model.as_ref().and_then(|m| m.id.as_deref());
    // "Opus 4.8 (1M context)": the display name says what the id may not.
    let display_1m = input
        .model
        .as_ref()
        .and_then(|m| m.display_name.as_deref())
        .is_some_and(|name| name.contains("1M"));
    let configured = familiar_pipeline::settings::configured_model();
    let window = input.context_window.as_ref();
    // The CLI's own figure first: it is the one the user sees.
    let reported_used = window
        .and_then(|w| w.current_usage.as_ref())
        .and_then(InputUsage::context);
    let used = reported_used.or_else(|| tail.and_then(|tail| tail.normalizer.context_used()));
    let mut resolved: Vec<&str> = model_id.into_iter().collect();
    if display_1m {
        resolved.push("[1m]");
    }
    if let Some(model) = tail.and_then(|tail| tail.resolved_model.as_deref()) {
        resolved.push(model);
    }
    let transcript_model = tail.and_then(|tail| tail.normalizer.metrics().last_model());
    let limit = context_window(&WindowSources {
        explicit: args.context_limit,
        reported: window.and_then(|w| w.context_window_size),
        named_1m: resolved.iter().any(|model| model.ends_with("[1m]")),
        // The model running: the CLI's own word, else the transcript's.
        model: resolved.first().copied().or(transcript_model.as_deref()),
        configured_model: configured.as_deref(),
        used,
    });
    // The CLI's percentage goes with the CLI's count, of the CLI's window (not when
    // --context-limit, or a count past it, chose another).
    let reported_left = window
        .filter(|w| reported_used.is_some() && w.context_window_size == Some(limit))
        .and_then(|w| w.used_percentage)
        .filter(|p| p.is_finite() && (0.0..=100.0).contains(p))
        .map(|used| (100.0 - used).floor() as u64);
    let percent = reported_left
        .or_else(|| familiar_model::words::percent_left(used, limit))
        .map(|percent| format!(" ({percent}%)"))
        .unwrap_or_default();
    // Mana is what is left, as the window's bar and `familiar sessions` say it.
    let mut line = format!(
        "mana {}{percent}",
        familiar_model::words::context_left(used, limit)
    );
    let Some(tail) = tail else {
        line.push_str(" · no transcript yet");
        return line;
    };
    line.push_str(" · ");
    line.push_str(familiar_model::words::status(tail.normalizer.status()));
    let mut tools: Vec<(&String, &u64)> = tail.normalizer.metrics().tool_calls.iter().collect();
    tools.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    if !tools.is_empty() {
        line.push_str(" · ");
        if tail.cut {
            line.push('…');
        }
        let shown: Vec<String> = tools
            .iter()
            .take(TOOLS_SHOWN)
            .map(|(name, count)| format!("{} {count}", printable_line(name)))
            .collect();
        line.push_str(&shown.join(" "));
        let rest: u64 = tools.iter().skip(TOOLS_SHOWN).map(|(_, n)| **n).sum();
        if rest > 0 {
            line.push_str(&format!(" +{rest}"));
        }
    }
    line
}
