//! Text for the screen: labels, and prompts or targets flattened and shortened (Bevy's built-in
//! font is an ASCII subset).

/// Typographic characters common in prompts and replies, spelled in ASCII: Bevy's built-in
/// font is an ASCII subset and would draw boxes.
pub(crate) fn plain(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{2032}' => "'",
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{2033}' => "\"",
        '\u{2013}' | '\u{2014}' | '\u{2212}' => "-",
        '\u{2026}' => "...",
        '\u{2022}' | '\u{00B7}' => "*",
        '\u{2192}' => "->",
        '\u{2190}' => "<-",
        _ => return None,
    })
}

/// Flattened whitespace, ASCII typography, at most `max` characters.
pub(crate) fn trimmed(text: &str, max: usize) -> String {
    let mut ascii = String::with_capacity(text.len());
    for c in text.chars() {
        match plain(c) {
            Some(s) => ascii.push_str(s),
            None => ascii.push(c),
        }
    }
    let flat: String = ascii.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        // ASCII dots: Bevy's built-in font is an ASCII subset.
        let mut s: String = flat.chars().take(max.saturating_sub(3)).collect();
        s.push_str("...");
        s
    }
}

/// Last path component or the start of a command, short enough to float.
pub(crate) fn short_target(target: &str) -> String {
    let t = target.trim();
    let looks_like_path = !t.contains(' ') && t.contains('/');
    let base = if looks_like_path {
        t.rsplit('/').find(|s| !s.is_empty()).unwrap_or(t)
    } else {
        t
    };
    trimmed(base, 28)
}

/// `my-project 258c72`: the project (the session's `cwd`) and the session's first characters,
/// so several familiars can be told apart.
pub fn session_label(cwd: &str, session: Option<&str>) -> String {
    let project = std::path::Path::new(cwd)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| cwd.to_owned());
    let short: String = session.unwrap_or("").chars().take(6).collect();
    trimmed(format!("{project} {short}").trim(), 40)
}
