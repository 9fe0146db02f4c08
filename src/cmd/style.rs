//! Colour for the binary's own stderr lines (`familiar: …` errors, skipped-line diagnostics,
//! the window fallback), decided as clap decides for its own messages: anstream's stderr keeps
//! the styles only on a terminal, and honours `NO_COLOR`, `CLICOLOR` and `CLICOLOR_FORCE`.
//! Logs (`tracing`) colour themselves the same way (`init_logging_with`).

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
    #[cfg(test)]
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
