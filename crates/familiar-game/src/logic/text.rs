//! Text for the screen: labels, and prompts or targets flattened and shortened. The pixel font
//! (`crate::font`) draws typography, accents, CJK and emoji, so they are kept as written; cuts
//! fall between grapheme clusters (never between a letter and its accent, or inside an emoji).

use unicode_segmentation::UnicodeSegmentation;

/// Flattened whitespace, at most `max` grapheme clusters (the last one `…` when cut).
pub(crate) fn trimmed(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.graphemes(true).count() <= max {
        flat
    } else {
        let mut s: String = flat.graphemes(true).take(max.saturating_sub(1)).collect();
        s.push('…');
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
    let project = project_of(cwd);
    let short: String = session.unwrap_or("").chars().take(6).collect();
    trimmed(format!("{project} {short}").trim(), 40)
}

/// `my-project codex 1a4f8e` for a Codex session: it says which agent it is, and ends with
/// the end of the session id (a Codex id is a UUIDv7, whose start is the time: alike for every
/// session of a day).
pub fn codex_label(cwd: &str, session: Option<&str>) -> String {
    agent_label(cwd, "codex", session)
}

/// `my-project gemini 3ca3e2` for another agent's session (`agent`: its name), ending with the
/// end of the session id as [`codex_label`] does.
pub fn agent_label(cwd: &str, agent: &str, session: Option<&str>) -> String {
    let project = project_of(cwd);
    let id: Vec<char> = session.unwrap_or("").chars().collect();
    let short: String = id[id.len().saturating_sub(6)..].iter().collect();
    trimmed(format!("{project} {agent} {short}").trim(), 40)
}

/// The project's name: the last component of the session's `cwd`.
pub(crate) fn project_of(cwd: &str) -> String {
    let project = std::path::Path::new(cwd)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| cwd.to_owned());
    trimmed(&project, 40)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_never_splits_a_letter_from_its_accent_or_an_emoji() {
        assert_eq!(trimmed("  café\n crème ", 40), "café crème");
        // "e" + combining acute is one cluster; a family emoji (joined by ZWJ) is one.
        assert_eq!(trimmed("cafe\u{301}s noirs", 5), "cafe\u{301}…");
        let family = "👨\u{200d}👩\u{200d}👧";
        assert_eq!(
            trimmed(&format!("{family}{family}{family}"), 2),
            format!("{family}…")
        );
        assert_eq!(trimmed("修正テスト", 3), "修正…");
    }
}
