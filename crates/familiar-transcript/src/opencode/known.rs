//! What Familiar knows opencode writes to its database (1.18.33's `message` and `part` rows,
//! as Familiar's source hands them over: `opencode.session`, `opencode.message`,
//! `opencode.part` lines, `fixtures/opencode-1.18.33/`). Message roles and part types not
//! listed here are counted as unknown (`opencode/...` in `Metrics::unknown`) and said once.
//! Part of [`super::Session`].

/// Part types (`data.type`), those the real CLI wrote in the tests first; the rest are those
/// of opencode's `MessageV2.Part` union (its source, `session/message-v2.ts`), read but
/// evented only where the event vocabulary has a word for them.
const PART_TYPES: &[&str] = &[
    "text",
    "reasoning",
    "tool",
    "step-start",
    "step-finish",
    "compaction",
    "file",
    "patch",
    "snapshot",
    "agent",
    "subtask",
    "retry",
];

const ROLES: &[&str] = &["user", "assistant"];

/// `Some("opencode/part:<type>")` for a part type Familiar does not know.
pub(super) fn unknown_part(kind: &str) -> Option<String> {
    (!PART_TYPES.contains(&kind)).then(|| format!("opencode/part:{kind}"))
}

/// `Some("opencode/message:<role>")` for a message role Familiar does not know.
pub(super) fn unknown_role(role: &str) -> Option<String> {
    (!ROLES.contains(&role)).then(|| format!("opencode/message:{role}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seen_types_are_known_and_others_are_named() {
        assert_eq!(unknown_part("tool"), None);
        assert_eq!(unknown_part("compaction"), None);
        assert_eq!(
            unknown_part("hologram").as_deref(),
            Some("opencode/part:hologram")
        );
        assert_eq!(
            unknown_role("system").as_deref(),
            Some("opencode/message:system")
        );
    }
}
