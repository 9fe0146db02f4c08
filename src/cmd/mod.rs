//! Subcommands of the `familiar` binary, one module each, plus what they share: logging and
//! opening transcript inputs (`-` is stdin).

pub mod agents;
pub mod check;
pub mod completions;
pub mod demo;
pub mod doctor;
pub mod events;
pub mod feed;
pub mod hook;
pub mod pipeline;
pub mod progress;
pub mod replay;
pub mod run;
pub mod scripts;
pub mod selection;
pub mod sessions;
pub mod stats;
pub mod statusline;
pub mod test;
pub mod watch;

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use familiar_transcript::{DiagnosticKind, Event, Normalizer, NormalizerConfig, Threads};

pub use familiar_pipeline::report::{self as style, SkippedLines, init_logging, quiet};

/// Options every transcript-reading command takes.
#[derive(Debug, Clone, clap::Args)]
pub struct InputOptions {
    /// Context window in tokens, overriding detection (200k, or 1M for `[1m]` models).
    #[arg(long, value_name = "TOKENS", value_parser = parse_tokens)]
    pub context_limit: Option<u64>,
    /// Longest line read, in bytes; longer lines are skipped with a diagnostic.
    #[arg(long, value_name = "BYTES", default_value_t = familiar_transcript::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: usize,
}

impl InputOptions {
    /// These flags as overrides of the config file.
    pub fn overrides(&self) -> familiar_config::Overrides {
        familiar_config::Overrides {
            context_limit: self.context_limit,
            ..familiar_config::Overrides::default()
        }
    }

    /// How to read transcripts with these flags, under `settings` (the config file merged with
    /// them: a `context_limit` from either).
    pub fn normalizer_config(&self, settings: &familiar_config::Settings) -> NormalizerConfig {
        NormalizerConfig {
            max_line_bytes: self.max_line_bytes,
            context_limit: settings.context_limit,
            keep_raw: false,
            ..NormalizerConfig::default()
        }
    }

    /// [`InputOptions::normalizer_config`] under the config file merged with these flags.
    pub fn load_normalizer_config(&self) -> anyhow::Result<NormalizerConfig> {
        Ok(self.normalizer_config(&familiar_pipeline::settings::settings(&self.overrides())?))
    }
}

/// The remote hosts of the merged settings (`[remote]` and `--remote`), each told which
/// agents to feed.
/// The remote hosts to follow, from the settings, each told whose sessions (`agent`) and which
/// files there to leave dormant (`since`, as `selection::Since` reads it; `None`: the default).
pub fn remote_specs(
    settings: &familiar_config::Settings,
    agent: agents::AgentArg,
    since: Option<selection::Since>,
) -> anyhow::Result<Vec<familiar_pipeline::source::remote::RemoteSpec>> {
    settings
        .remote_hosts
        .iter()
        .map(|text| {
            let mut spec =
                familiar_pipeline::source::remote::RemoteSpec::parse(text, &settings.remote_bin)
                    .map_err(anyhow::Error::msg)?;
            spec.agent = agent.name().map(str::to_owned);
            spec.dormant_after = selection::dormant_after(since, &[]);
            Ok(spec)
        })
        .collect()
}

/// A token count on the command line: `1000000`, `200k`, `1M`, `1.25M`.
pub fn parse_tokens(text: &str) -> Result<u64, String> {
    familiar_model::words::parse_tokens(text)
        .ok_or_else(|| format!("{text:?} is not a token count; write e.g. 200k, 1M or 1000000"))
}

/// Display name of an input: the path, or `<stdin>`.
pub fn input_name(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}

/// An input from the command line, opened: its name in messages ([`input_name`]) and its
/// reader (stdin for `-`).
pub fn open_input(path: &Path) -> anyhow::Result<Input> {
    let name = input_name(path);
    let (reader, len): (Box<dyn Read>, _) = if path == Path::new("-") {
        (Box::new(io::stdin().lock()), None)
    } else if let Some((db, session)) = familiar_tail::opencode::parse_address(path)
        && db.is_file()
    {
        // An opencode session: its rows, read now, as the lines the live source sends.
        let lines = familiar_tail::opencode::read_session(&db, &session)
            .with_context(|| format!("cannot read {name}"))?;
        let len = lines.len() as u64;
        (Box::new(io::Cursor::new(lines)), Some(len))
    } else {
        let file = File::open(path).with_context(|| format!("cannot open {name}"))?;
        // A regular file's size: a line longer than a read then gets room at once.
        let len = file
            .metadata()
            .ok()
            .filter(|meta| meta.is_file())
            .map(|meta| meta.len());
        (Box::new(file), len)
    };
    Ok(Input { name, reader, len })
}

/// An input opened by [`open_input`].
pub struct Input {
    /// Its name in messages.
    pub name: String,
    pub reader: Box<dyn Read>,
    /// Its size, when known (a file, not a pipe).
    pub len: Option<u64>,
}

/// Read one transcript through a fresh normalizer, parsing on `threads`, and hand `warn` its
/// skipped lines as `FILE:LINE: reason` (the first few, then how many more; a caller prints
/// them, or queues them to print in input order). An input where no line is a record (a
/// binary file, a text file) is an error: "not a transcript". Returns the normalizer (its
/// metrics and final state).
pub fn read_transcript(
    path: &Path,
    config: &NormalizerConfig,
    threads: Threads,
    mut warn: impl FnMut(String),
    mut on_event: impl FnMut(Event) -> io::Result<()>,
) -> anyhow::Result<Normalizer> {
    let Input { name, reader, len } = open_input(path)?;
    let mut normalizer = Normalizer::new(config.clone());
    let mut events = 0u64;
    let mut skipped = SkippedLines::new(&name);
    // Lines that are not records; an unfinished last line may yet become one.
    let mut bad = 0u64;
    familiar_transcript::normalize_read_on(
        threads,
        reader,
        len,
        &mut normalizer,
        |event| {
            events += 1;
            on_event(event)
        },
        |diagnostic| {
            if !matches!(diagnostic.kind, DiagnosticKind::Unfinished { .. }) {
                bad += 1;
            }
            if let Some(warning) = skipped.skip(&diagnostic) {
                warn(warning);
            }
        },
    )
    .with_context(|| format!("reading {name}"))?;
    let records = events + normalizer.metrics().records.values().sum::<u64>();
    if records == 0 && bad > 0 {
        anyhow::bail!(
            "not a transcript: {name}: none of its {bad} line(s) is a JSON record (JSONL, \
             stream-json or a JSON array expected)"
        );
    }
    if let Some(summary) = skipped.summary() {
        warn(summary);
    }
    Ok(normalizer)
}

/// `true` when an I/O error means the reader of our stdout went away (`| head`).
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Inputs from the command line; none means stdin.
pub fn inputs_or_stdin(files: &[PathBuf]) -> Vec<PathBuf> {
    if files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        files.to_vec()
    }
}
