//! A big prompt's text moved, not copied, from its record into its event. The parser decodes
//! a string with escapes into a `String` of the record's own; once the normalizer is done
//! reading the record, its prompt event takes that string. A pasted prompt of 50 MB was held
//! three times at once (the line, the decoded text, the event's copy); now twice (issue 28).
//!
//! The record is read through shared references (the state machine reads it in many places),
//! so the event gets a placeholder and where its text lies, and [`super::Normalizer::apply`],
//! which owns the record, moves the text in after the record ([`Moving::finish`]).

use std::borrow::Cow;

use familiar_model::Event;

use crate::record::{Record, TextOr};

/// Shorter texts are copied: moving one saves nothing worth the bookkeeping.
const MOVE_AT_LEAST: usize = 64 * 1024;

/// What the record being read offers to move, and what was claimed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Moving {
    #[default]
    Idle,
    /// The record owns its user text (the `message` or `message.content` string, or the one
    /// text block of `message.content`), at these addresses.
    Offered { at: usize, len: usize },
    /// Event `event` of the output shows bytes `start..end` of the text at `at`.
    Claimed {
        at: usize,
        event: usize,
        start: usize,
        end: usize,
    },
}

/// The record's user text that lies at `at`: its `message` string, its `message.content`
/// string, or a text block's text.
fn user_text_at<'r, 'a>(record: &'r mut Record<'a>, at: usize) -> Option<&'r mut Cow<'a, str>> {
    let is_at = |text: &Cow<'_, str>| text.as_ptr() as usize == at;
    match record.message.as_mut()? {
        TextOr::Text(text) => Some(text).filter(|text| is_at(text)),
        TextOr::Value(message) => match message.content.as_mut()? {
            TextOr::Text(text) => Some(text).filter(|text| is_at(text)),
            TextOr::Value(blocks) => blocks
                .iter_mut()
                .filter_map(|block| block.text.as_mut())
                .find(|text| is_at(text)),
        },
    }
}

impl Moving {
    /// What the record's user text `text` offers: itself, when the record owns it and it is
    /// big. (A `&Cow`, not a `&str`: whether the record owns it is the point.)
    #[allow(clippy::ptr_arg)]
    pub(super) fn offer(text: &Cow<'_, str>) -> Moving {
        match text {
            Cow::Owned(text) if text.len() >= MOVE_AT_LEAST => Moving::Offered {
                at: text.as_ptr() as usize,
                len: text.len(),
            },
            _ => Moving::Idle,
        }
    }

    /// The offered text's bytes that `part` is, if it is a piece of it.
    fn range_of(&self, part: &str) -> Option<(usize, usize)> {
        let Moving::Offered { at, len } = *self else {
            return None;
        };
        let start = (part.as_ptr() as usize).checked_sub(at)?;
        let end = start.checked_add(part.len())?;
        (end <= len).then_some((start, end))
    }

    /// The text an event showing `part` gets now: a placeholder when `part` is a piece of the
    /// offered text (then [`Moving::claim`] the event once it is in the output), a copy
    /// otherwise.
    pub(super) fn text_for(&self, part: &str) -> String {
        match self.range_of(part) {
            Some(_) => String::new(),
            None => part.to_owned(),
        }
    }

    /// Event `event` of the output shows `part`, given a placeholder by [`Moving::text_for`].
    pub(super) fn claim(&mut self, part: &str, event: usize) {
        if let (Some((start, end)), Moving::Offered { at, .. }) = (self.range_of(part), *self) {
            *self = Moving::Claimed {
                at,
                event,
                start,
                end,
            };
        }
    }

    /// After the record: the claimed text moves into its event; what was offered and not
    /// claimed stays where it is. Ready for the next record.
    pub(super) fn finish(&mut self, record: &mut Record<'_>, out: &mut [Event]) {
        let Moving::Claimed {
            at,
            event,
            start,
            end,
        } = std::mem::take(self)
        else {
            return;
        };
        let (Some(text), Some(event)) = (user_text_at(record, at), out.get_mut(event)) else {
            return;
        };
        // Offered only when owned; taking it leaves an empty text in a record done with.
        if let Cow::Owned(mut text) = std::mem::take(text) {
            text.truncate(end);
            text.drain(..start);
            event.text = Some(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use familiar_model::EventKind;

    use super::MOVE_AT_LEAST;
    use crate::normalize::{Normalizer, parse_line};

    /// A user record as Claude Code writes it, its prompt `text` as a JSON string, in the
    /// `message.content` string or (older) as the `message` string.
    fn prompt_line(text: &str, flat: bool) -> Vec<u8> {
        let text = serde_json::to_string(text).unwrap_or_default();
        let message = if flat {
            text
        } else {
            format!(r#"{{"role":"user","content":{text}}}"#)
        };
        format!(
            r#"{{"type":"user","sessionId":"s","isSidechain":false,"timestamp":"2026-11-28T10:00:00Z","message":{message}}}"#
        )
        .into_bytes()
    }

    /// A user record whose `message.content` holds `texts` as text blocks, after an image
    /// (as Claude Code writes a prompt with a pasted image).
    fn blocks_line(texts: &[&str]) -> Vec<u8> {
        let mut blocks = vec![serde_json::json!({"type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})];
        blocks.extend(
            texts
                .iter()
                .map(|text| serde_json::json!({"type": "text", "text": text})),
        );
        let message = serde_json::json!({"role": "user", "content": blocks});
        format!(
            r#"{{"type":"user","sessionId":"s","isSidechain":false,"timestamp":"2026-11-28T10:00:00Z","message":{message}}}"#
        )
        .into_bytes()
    }

    /// The text of the prompt event `line` gives, and whether it is the buffer the parser
    /// decoded the record's text into (moved, not copied).
    fn prompt_of(line: &[u8]) -> (String, bool) {
        let mut parsed = parse_line(line, usize::MAX).expect("a record");
        let decoded = parsed
            .records()
            .next()
            .and_then(|record| match record.message.as_ref()? {
                crate::record::TextOr::Text(text) => Some(text.as_ptr()),
                crate::record::TextOr::Value(message) => match message.content.as_ref()? {
                    crate::record::TextOr::Text(text) => Some(text.as_ptr()),
                    crate::record::TextOr::Value(blocks) => blocks
                        .iter()
                        .find_map(|block| block.text.as_ref())
                        .map(|text| text.as_ptr()),
                },
            });
        let mut out = Vec::new();
        Normalizer::default().apply(&mut parsed, 1, &mut out);
        let prompt = out
            .into_iter()
            .find(|event| event.kind == EventKind::Prompt)
            .and_then(|event| event.text)
            .expect("a prompt event with its text");
        // Trimmed in place: the text starts where the decoded buffer does.
        let moved = decoded == Some(prompt.as_ptr());
        (prompt, moved)
    }

    #[test]
    fn a_big_prompt_with_escapes_is_moved_into_its_event_whole_and_trimmed() {
        let body = "line of a pasted file\twith a tab\n".repeat(MOVE_AT_LEAST / 16);
        for flat in [false, true] {
            let text = format!("  \n{body}é\n\n");
            let (prompt, moved) = prompt_of(&prompt_line(&text, flat));
            assert_eq!(prompt, text.trim(), "flat: {flat}");
            assert!(moved, "flat {flat}: the event copied the decoded text");
        }
    }

    #[test]
    fn a_big_prompt_in_one_text_block_is_moved_and_several_blocks_are_joined() {
        let body = "line of a pasted file\twith a tab\n".repeat(MOVE_AT_LEAST / 16);
        let text = format!("  \n{body}é\n\n");
        let (prompt, moved) = prompt_of(&blocks_line(&[&text]));
        assert_eq!(prompt, text.trim());
        assert!(moved, "the event copied the text block's decoded text");

        let (prompt, moved) = prompt_of(&blocks_line(&[&body, "and\tthis"]));
        assert_eq!(prompt, format!("{body}\nand\tthis").trim());
        assert!(!moved);
    }

    #[test]
    fn small_prompts_and_text_without_escapes_are_copied_as_before() {
        // Short: copied. No escapes: the parser borrows it from the line, so it is copied.
        for text in ["fix the bug\n".to_owned(), "x".repeat(2 * MOVE_AT_LEAST)] {
            let (prompt, moved) = prompt_of(&prompt_line(&text, false));
            assert_eq!(prompt, text.trim());
            assert!(!moved);
        }
    }

    #[test]
    fn a_big_slash_command_keeps_its_own_text() {
        let args = "a\tb ".repeat(MOVE_AT_LEAST / 4);
        let text =
            format!("<command-name>/review</command-name>\n<command-args>{args}</command-args>");
        let (prompt, moved) = prompt_of(&prompt_line(&text, false));
        assert!(prompt.starts_with("/review a\tb"), "{:?}", &prompt[..20]);
        assert!(!moved);
    }
}
