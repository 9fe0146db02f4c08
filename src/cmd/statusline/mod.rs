//! `familiar statusline`: the command behind Claude Code's, GitHub Copilot CLI's and Qwen
//! Code's `statusLine` setting. The CLI runs it with the session's JSON on stdin (`transcript_path`,
//! `model`, `context_window`, ...) after every update and shows what it prints: here one line,
//! the mana (what is left of the context window, as the game's bar says it), the session's
//! status and its tool counts. Which CLI called, and what its input says, is [`input`]'s.
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
//!
//! GitHub Copilot CLI 1.0.102 names the session's folder (its `events.jsonl` is read the same
//! way, from its last `session.compaction_complete`); its figures are the last request's, which
//! it does not reset at a compaction: after one, until the next request, the session file's
//! figure (the compaction's `postCompactionTokens`) stands in. Real inputs:
//! `fixtures/copilot-1.0.102/statusline/`.
//!
//! Qwen Code 0.24.4 names no file: its project and session id place its session file, read
//! the same way from its last `chat_compression`. Real inputs: `fixtures/qwen-0.24.4/statusline/`.

mod input;

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use familiar_hook::statusline_input::Caller;
use familiar_model::text::printable_line;
use familiar_transcript::models::{WindowSources, context_window};
use familiar_transcript::{Normalizer, NormalizerConfig};
use input::Said;

/// Most bytes read from the end of a transcript.
const TAIL_BYTES: u64 = 8 << 20;
/// Tool names shown; the rest are summed as `+N`.
const TOOLS_SHOWN: usize = 4;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Context window in tokens, overriding every other source.
    #[arg(long, value_name = "TOKENS", value_parser = super::parse_tokens)]
    pub context_limit: Option<u64>,
    /// Read this transcript instead of the input's `transcript_path` (Copilot CLI's: the
    /// session folder's `events.jsonl`); stdin may then be empty.
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut raw = Vec::new();
    io::stdin()
        .take(1 << 20)
        .read_to_end(&mut raw)
        .context("reading the statusline input on stdin")?;
    let said = if raw.trim_ascii().is_empty() {
        Said::nothing()
    } else {
        let json: serde_json::Value =
            serde_json::from_slice(&raw).context("the statusline input on stdin is not JSON")?;
        Said::from_json(&json).context("the statusline input on stdin")?
    };
    let path = args
        .transcript
        .clone()
        .or(said.transcript.clone())
        .or_else(|| {
            let id = said.session_id.as_deref()?;
            match said.caller {
                // Copilot CLI without its `transcript_path`: the session id names the folder.
                Caller::CopilotCli => {
                    let dir = familiar_tail::discovery::copilot_dir().ok()?;
                    Some(input::copilot_session_file(&dir, id))
                }
                // Qwen Code names no file: its project and session id place it.
                Caller::QwenCode => {
                    let dir = familiar_tail::discovery::qwen_dir().ok()?;
                    Some(input::qwen_session_file(&dir, said.project.as_deref()?, id))
                }
                Caller::ClaudeCode => None,
            }
        });
    let Some(path) = path else {
        anyhow::bail!("no transcript: the input has no `transcript_path` (or give --transcript)");
    };
    let tail = match read_tail(&path, said.caller) {
        Ok(tail) => Some(tail),
        // A session that has not written its transcript yet.
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
    };
    let line = render(&args, &said, tail.as_ref());
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
    /// Copilot CLI: the stretch starts at a compaction and no request came after it.
    compacted_since_request: bool,
    /// The session's status.
    status: familiar_model::Status,
    /// Copilot CLI: the window its session file says (`maxPromptTokens`, else the model's).
    session_window: Option<u64>,
}

/// The record a compaction starts the context from, for each CLI.
fn compaction_marker(caller: Caller) -> &'static [u8] {
    match caller {
        Caller::ClaudeCode => br#""subtype":"compact_boundary""#,
        Caller::CopilotCli => br#""type":"session.compaction_complete""#,
        Caller::QwenCode => br#""subtype":"chat_compression""#,
    }
}

fn read_tail(path: &std::path::Path, caller: Caller) -> io::Result<Tail> {
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
    // The first whole line (a cut read starts inside one).
    let first = if start > 0 {
        bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |n| n + 1)
    } else {
        0
    };
    let finder = memchr_rfind(&bytes, compaction_marker(caller));
    let (from, cut) = match finder {
        Some(at) => (line_start(&bytes, at).max(first), false),
        None => (first, start > 0),
    };
    let region = &bytes[from..];
    let read = |bytes: &[u8]| {
        let mut normalizer = Normalizer::new(NormalizerConfig::default());
        let mut events = Vec::new();
        let mut diagnostics = Vec::new();
        familiar_transcript::feed(&mut normalizer, bytes, &mut events, &mut diagnostics);
        normalizer
    };
    let normalizer = read(region);
    let mut status = normalizer.status();
    let mut session_window = None;
    let mut compacted_since_request = false;
    if caller == Caller::CopilotCli {
        // A Copilot CLI compaction record says neither the session's state nor its window
        // (`maxPromptTokens` is in each request's record): the whole tail does.
        let whole = (from > first).then(|| read(&bytes[first..]));
        let whole = whole.as_ref().unwrap_or(&normalizer);
        status = whole.status();
        session_window = (whole.agent_kind() == familiar_model::AgentKind::Copilot)
            .then(|| whole.context_limit());
        compacted_since_request = finder.is_some()
            && normalizer.metrics().compactions > 0
            && memchr::memmem::find(region, br#""type":"session.usage_record""#).is_none();
    }
    Ok(Tail {
        normalizer,
        status,
        session_window,
        cut,
        resolved_model: last_resolved_model(&bytes),
        compacted_since_request,
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

fn render(args: &Args, said: &Said, tail: Option<&Tail>) -> String {
    let claude = said.caller == Caller::ClaudeCode;
    // Claude Code's own settings name its model; not Copilot CLI's.
    let configured = claude
        .then(familiar_pipeline::settings::configured_model)
        .flatten();
    // The CLI's own figure first: it is the one the user sees (Copilot CLI's is stale after a
    // compaction, until the next request).
    let stale = tail.is_some_and(|tail| tail.compacted_since_request);
    let reported_used = said.used.filter(|_| !stale);
    let used = reported_used.or_else(|| tail.and_then(|tail| tail.normalizer.context_used()));
    let mut resolved: Vec<&str> = said.model_id.as_deref().into_iter().collect();
    if said.display_1m {
        resolved.push("[1m]");
    }
    if let Some(model) = tail.and_then(|tail| tail.resolved_model.as_deref()) {
        resolved.push(model);
    }
    let transcript_model = tail.and_then(|tail| tail.normalizer.metrics().last_model());
    // Copilot CLI's window, when its input has none yet: the session file's
    // (`maxPromptTokens`).
    let session_window = tail.and_then(|tail| tail.session_window);
    let limit = context_window(&WindowSources {
        explicit: args.context_limit,
        reported: said.window.or(session_window),
        named_1m: resolved.iter().any(|model| model.ends_with("[1m]")),
        // The model running: the CLI's own word, else the transcript's.
        model: resolved.first().copied().or(transcript_model.as_deref()),
        configured_model: configured.as_deref(),
        used,
        ..WindowSources::default()
    });
    // The CLI's percentage goes with the CLI's count, of the CLI's window (not when
    // --context-limit, or a count past it, chose another).
    let reported_left = said
        .used_percentage
        .filter(|_| reported_used.is_some() && said.window == Some(limit))
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
    line.push_str(familiar_model::words::status(tail.status));
    let mut tools: Vec<(&str, u64)> = tail.normalizer.metrics().tool_calls.iter().collect();
    tools.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
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
        let rest: u64 = tools.iter().skip(TOOLS_SHOWN).map(|(_, n)| n).sum();
        if rest > 0 {
            line.push_str(&format!(" +{rest}"));
        }
    }
    line
}
