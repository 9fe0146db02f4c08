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
