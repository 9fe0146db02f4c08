//! Text from transcripts on its way to a person's terminal.
//!
//! Transcript content is untrusted (web pages, tool output): a raw ESC, OSC or BEL byte printed
//! to a terminal can clear the screen, set the title or forge lines. Every human-readable output
//! of the binary (tables, `doctor`, script diagnostics) passes text through [`printable`];
//! NDJSON output is already safe because JSON escapes control characters.

use std::borrow::Cow;

/// `text` with every control character (C0 except tab and newline, DEL, C1) replaced by a
/// visible escape (`\e`, `\x07`, `\u{9b}`), so printing it cannot drive the terminal.
/// Borrows when there is nothing to replace.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            match c {
                '\u{1b}' => out.push_str("\\e"),
                '\r' => out.push_str("\\r"),
                c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
                c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`printable`] for one-line contexts (a table cell, a file name): newlines and tabs are
/// escaped too, so one value can never forge a second line.
pub fn printable_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unsafe(c) || c == '\n' || c == '\t') {
        return Cow::Borrowed(text);
    }
    let escaped = printable(text);
    Cow::Owned(escaped.replace('\n', "\\n").replace('\t', "\\t"))
}

fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        // Bidirectional overrides reorder what the eye reads without being control characters.
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_made_visible() {
        assert_eq!(printable("a\u{1b}]0;title\u{7}b"), "a\\e]0;title\\x07b");
        assert_eq!(printable("\u{9b}2J"), "\\u{9b}2J");
        assert_eq!(printable("x\rforged"), "x\\rforged");
        assert_eq!(printable("\u{202e}txt.exe"), "\\u{202e}txt.exe");
    }

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(printable("héllo\tworld\n日本"), Cow::Borrowed(_)));
        assert!(matches!(printable_line("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn one_line_contexts_escape_newlines() {
        assert_eq!(printable_line("a\nb\tc\u{1b}"), "a\\nb\\tc\\e");
    }
}
