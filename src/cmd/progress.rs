//! Progress bars for long work (`replay` catching up, `stats` over many files): on stderr,
//! shown only when stderr is a terminal, stdout is not (so the bar never tears through output
//! on the same screen) and `-q` was not given; hidden otherwise, so callers need no checks.

use std::io::{self, IsTerminal as _};

/// A bar over `len` items called `what` ("events", "files").
pub fn bar(len: usize, what: &str) -> indicatif::ProgressBar {
    if !io::stderr().is_terminal() || io::stdout().is_terminal() || super::quiet() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len as u64);
    let template = format!("{{spinner}} {{bar:30}} {{pos}}/{{len}} {what} ({{eta}} left)");
    if let Ok(style) = indicatif::ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    bar
}
