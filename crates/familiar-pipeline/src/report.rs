//! How Familiar talks on stderr, in one place: `familiar: …` errors and warnings, script
//! diagnostics, skipped lines ([`SkippedLines`]), and the logs (`tracing`, [`init_logging`]),
//! coloured as clap decides for its own messages: anstream's stderr keeps the styles only on
//! a terminal, and honours `NO_COLOR`, `CLICOLOR` and `CLICOLOR_FORCE`. [`Paint`] does the same
//! for tables on stdout.

use std::fmt::Display;
use std::io::Write as _;

use anstyle::{AnsiColor, Style};

const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();

/// `familiar: {message}` on stderr, the prefix in red: something failed.
pub fn error(message: impl Display) {
    line(ERROR, message);
}

/// `familiar: {message}` on stderr, the prefix in yellow: something was skipped or changed,
/// and the run goes on.
pub fn warning(message: impl Display) {
    line(WARNING, message);
}

fn line(style: Style, message: impl Display) {
    // Nowhere to report a failure to write to stderr.
    let _ = writeln!(
        anstream::stderr().lock(),
        "{style}familiar:{style:#} {message}"
    );
}

/// Colour for what a command prints on stdout (the `doctor`, `sessions` and `stats` tables),
/// decided once per run as clap decides: on a terminal, unless `NO_COLOR` (or `CLICOLOR=0`);
/// `CLICOLOR_FORCE` turns it on anywhere. Off, [`Paint::paint`] adds nothing, so piped output
/// costs no stripping pass and stays byte for byte what the golden tests read.
#[derive(Debug, Clone, Copy)]
pub struct Paint {
    on: bool,
}

/// Headings and names.
pub const HEADING: Style = Style::new().bold();
/// All is well.
pub const GOOD: Style = AnsiColor::Green.on_default().bold();
/// Needs the user.
pub const ATTENTION: Style = AnsiColor::Yellow.on_default().bold();
/// Nothing happening.
pub const QUIET: Style = Style::new().dimmed();

impl Paint {
    pub fn stdout() -> Paint {
        let choice = anstream::AutoStream::choice(&std::io::stdout());
        Paint {
            on: !matches!(choice, anstream::ColorChoice::Never),
        }
    }

    /// No colour (tests of the plain text).
    pub fn plain() -> Paint {
        Paint { on: false }
    }

    /// `text` in `style` when colour is on, else as it is.
    pub fn paint(self, style: Style, text: impl Display) -> String {
        if self.on {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }
}

/// A script diagnostic on stderr, in colour when stderr takes it (the same decision as
/// [`error`]): the plain text is the golden-tested one.
pub fn diagnostic(diagnostic: &familiar_script::ScriptDiagnostic) {
    let _ = writeln!(anstream::stderr().lock(), "{}", diagnostic.coloured());
}

/// A script that did not load: its diagnostic as [`diagnostic`] prints it, or the plain error.
pub fn script_error(err: &familiar_script::ScriptError) {
    match err.diagnostic() {
        Some(located) => diagnostic(located),
        None => eprintln!("{err}"),
    }
}

static QUIET_FLAG: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `-q` was given: no progress bars, errors only.
pub fn quiet() -> bool {
    QUIET_FLAG.load(std::sync::atomic::Ordering::Relaxed)
}

static LOG_LEVEL: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// The log level `-v`/`-q` chose (`warn` by default), for the window process to log alike.
pub fn log_level() -> &'static str {
    LOG_LEVEL.get().copied().unwrap_or("warn")
}

/// Logging for `-v` (positive `verbosity`) and `-q`; `RUST_LOG` still wins when set.
pub fn init_logging(verbosity: i8, quiet: bool) {
    QUIET_FLAG.store(quiet, std::sync::atomic::Ordering::Relaxed);
    let level = match (quiet, verbosity) {
        (true, _) => "error",
        (false, ..=0) => "warn",
        (false, 1) => "info",
        (false, 2) => "debug",
        (false, _) => "trace",
    };
    let _ = LOG_LEVEL.set(level);
    // The PulseAudio client crate logs a server closing our connection (`familiar doctor`'s
    // probe ends it on purpose) as an ERROR: not one to the user; shown from `-vv` on.
    let directives = if verbosity >= 2 {
        level.to_owned()
    } else {
        format!("{level},pulseaudio=off")
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(directives));
    // Plain lines beside the commands' own messages: no clock, and the module only when
    // debugging (`-vv`).
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .without_time()
        .with_target(verbosity >= 2)
        .with_writer(std::io::stderr)
        // The same decision as the `familiar:` lines (terminal, NO_COLOR, CLICOLOR, ...).
        .with_ansi(anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never)
        .try_init();
}

/// Skipped lines reported one by one per input; the rest are counted in one summary line, so
/// a binary file does not flood the terminal.
const REPORTED_SKIPS: u64 = 3;

/// The skipped lines of one input, as warnings: `NAME:LINE: reason` for the first
/// [`REPORTED_SKIPS`], then how many in all. The one way every command tells them.
pub struct SkippedLines {
    name: String,
    count: u64,
}

impl SkippedLines {
    pub fn new(name: &str) -> SkippedLines {
        SkippedLines {
            name: familiar_model::text::printable_line(name).into_owned(),
            count: 0,
        }
    }

    /// One more skipped line: its warning, while it is among the first few.
    pub fn skip(&mut self, diagnostic: &familiar_transcript::Diagnostic) -> Option<String> {
        self.count += 1;
        (self.count <= REPORTED_SKIPS)
            .then(|| format!("{}:{}: {}", self.name, diagnostic.line, diagnostic.kind))
    }

    /// One more skipped line of an input that has no end (a live transcript): its warning
    /// while it is among the first few, then once that the rest are counted, not told.
    pub fn skip_live(&mut self, diagnostic: &familiar_transcript::Diagnostic) -> Option<String> {
        self.skip(diagnostic).or_else(|| {
            (self.count == REPORTED_SKIPS + 1).then(|| {
                format!(
                    "{}: more lines skipped; the rest are counted, not told (familiar stats shows how many)",
                    self.name
                )
            })
        })
    }

    /// The closing count, when some lines were not told one by one.
    pub fn summary(&self) -> Option<String> {
        (self.count > REPORTED_SKIPS).then(|| {
            format!(
                "{}: {} more line(s) skipped, {} in all",
                self.name,
                self.count - REPORTED_SKIPS,
                self.count
            )
        })
    }
}
