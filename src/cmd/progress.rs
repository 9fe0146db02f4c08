//! Progress bars for long work (`stats` over many files): on stderr, and
//! hidden when stderr is not a terminal or `-q` was given, so callers need no checks.

use std::io::{self, IsTerminal as _};

/// A bar over `total` bytes, for work that prints only once it is done (`stats`): shown
/// whenever stderr is a terminal, cleared before the output.
pub fn bytes(total: u64) -> indicatif::ProgressBar {
    if !io::stderr().is_terminal() || super::quiet() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    let template = "{spinner} {bar:30} {binary_bytes}/{binary_total_bytes} ({eta} left)";
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}
