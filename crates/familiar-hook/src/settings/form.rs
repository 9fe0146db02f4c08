//! The form a settings file is written in, kept through an edit ([`Form`]).

/// How a settings file is written, kept through an edit: a byte-order mark in front (some
/// Windows editors write one), and CRLF line ends (when every line ends so). The edits work
/// on the file without them; what they add gets the file's own line ends.
#[derive(Debug, Clone, Copy)]
pub(super) struct Form {
    bom: bool,
    crlf: bool,
}

impl Form {
    /// The form of `text`, and `text` without it.
    pub(super) fn of(text: &str) -> (Form, std::borrow::Cow<'_, str>) {
        let body = text.strip_prefix('\u{feff}');
        let bom = body.is_some();
        let body = body.unwrap_or(text);
        let crlf = body.contains("\r\n") && !body.replace("\r\n", "").contains('\n');
        let plain = if crlf {
            std::borrow::Cow::Owned(body.replace("\r\n", "\n"))
        } else {
            std::borrow::Cow::Borrowed(body)
        };
        (Form { bom, crlf }, plain)
    }

    /// `text` (edited without the form) in the form again.
    pub(super) fn restore(self, text: String) -> String {
        let text = if self.crlf {
            text.replace('\n', "\r\n")
        } else {
            text
        };
        if self.bom {
            format!("\u{feff}{text}")
        } else {
            text
        }
    }
}
