//! The fast path under [`crate::normalize::parse_line`]: a record line → the same
//! [`Record`] serde would build, without serde stepping through the large strings nobody
//! reads (tool output, file contents: two thirds of a transcript's bytes).
//!
//! [`record`] walks the JSON once: it validates every byte as `serde_json` would (structure,
//! numbers, escapes, no control characters in strings, nesting depth), skips strings 64 bytes
//! at a time (SSE2 masks on x86-64), and picks out only the fields [`Record`], `Message` and
//! `Block` name. Large values the normalizer reads only sometimes (`input`, tool result
//! `content`, `toolUseResult`) become `&RawValue` slices without a second pass. Token counts
//! (`usage`) are read here when they are plain unsigned integers; other small fields
//! (numbers, `compactMetadata`) and any odd shape are handed to `serde_json` on their own
//! slice, so they get exactly serde's meaning. [`tool_input`] reads a tool call's `input`
//! the same way.
//!
//! Whenever the line is not plainly valid (malformed JSON, a duplicate field, an escaped key,
//! a field of an unexpected type, deep nesting) it returns `None` and the caller parses the
//! line with serde, which gives the error (the one-line diagnostic) and everything else.
//! So the fast path never decides anything serde would not: `tests/scan_differential.rs`
//! checks it against serde on arbitrary records and on every real transcript.
//!
//! - `bytes`: where the next special byte of a string is, 64 at a time.
//! - `cursor`: the JSON grammar and the field readers every type shares.
//! - `fields`: what the fields of records, messages, blocks, usage and tool inputs mean.

mod bytes;
mod cursor;
mod fields;
mod value;

use std::borrow::Cow;

use crate::record::Record;
use crate::tools::ToolInput;
use cursor::Cursor;
pub use value::value;
pub(crate) use value::{
    exact_value, exact_values, take_string, take_texts, trimmed, trimmed_end, value_in_place,
};

/// The record of one JSON object, read exactly as `serde_json::from_str::<Record>` reads it;
/// `None` when the fast path cannot vouch for the line (then parse it with serde).
pub fn record(json: &str) -> Option<Record<'_>> {
    let mut record = Record::default();
    record_into(json, &mut record).then_some(record)
}

/// [`record`] into a record the caller holds (a boxed one: a record is about 1 KB, and
/// moving it from frame to frame cost more than reading it). On `false` the record holds
/// part of the line: the caller must not use it.
pub fn record_into<'a>(json: &'a str, record: &mut Record<'a>) -> bool {
    let mut cursor = Cursor::new(json);
    cursor.whitespace();
    if cursor.record(record).is_none() {
        return false;
    }
    cursor.whitespace();
    cursor.pos == cursor.bytes.len()
}

/// The fields of a tool call's `input` that [`ToolInput`] names, exactly as
/// `serde_json::from_str::<ToolInput>` reads them; `None` when the fast path cannot vouch for
/// the text (then serde reads it). The other fields (a file's new contents, an edit's old and
/// new text) are skipped a window at a time, where serde stepped through them.
pub fn tool_input(json: &str) -> Option<ToolInput<'_>> {
    let mut cursor = Cursor::new(json);
    cursor.whitespace();
    let input = cursor.tool_input()?;
    cursor.whitespace();
    (cursor.pos == cursor.bytes.len()).then_some(input)
}

/// A JSON string (quotes included, as a `RawValue` holds it) decoded as serde_json decodes
/// it: borrowed when it has no escapes, else decoded in one allocation of at most its length.
/// serde_json decodes into a scratch buffer that grows by doubling and then copies it: three
/// times a 50 MB pasted prompt at once. `None` when it is not one string.
pub fn string(json: &str) -> Option<Cow<'_, str>> {
    let mut cursor = Cursor::new(json);
    cursor.whitespace();
    let text = cursor.string_value()?;
    cursor.whitespace();
    (cursor.pos == cursor.bytes.len()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::cursor::raw_value;
    use super::*;

    fn same_as_serde(json: &str) -> bool {
        let fast = record(json).map(|record| format!("{record:?}"));
        let slow = serde_json::from_str::<Record>(json).map(|record| format!("{record:?}"));
        match (fast, slow) {
            (Some(fast), Ok(slow)) => fast == slow,
            (Some(_), Err(_)) => false,
            (None, _) => true,
        }
    }

    #[test]
    fn a_string_reads_as_serde_json_reads_it() {
        for json in [
            r#""plain""#,
            r#" "padded" "#,
            r#""tab\tquote\"slash\/""#,
            r#""\u00e9t\u00e9 \ud83d\ude00""#,
            r#""lone \ud83d""#,
            r#""bad \x""#,
            "\"control \u{1}\"",
            r#""unterminated"#,
            r#""a" "b""#,
            "42",
            "null",
        ] {
            let ours = string(json).map(|text| text.into_owned());
            let serde = serde_json::from_str::<String>(json).ok();
            assert_eq!(ours, serde, "{json}");
        }
        assert!(matches!(string(r#""no escapes""#), Some(Cow::Borrowed(_))));
    }

    #[test]
    fn raw_values_are_borrowed_through_serde_json_protocol() {
        let raw = raw_value("{\"a\": [1, \"x\"]}").expect("raw value");
        assert_eq!(raw.get(), "{\"a\": [1, \"x\"]}");
    }

    #[test]
    fn an_assistant_tool_use_takes_the_fast_path() {
        let line = r#"{"type":"assistant","sessionId":"s","message":{"id":"m","model":"claude","content":[{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"/a\"b"}}],"usage":{"input_tokens":3,"output_tokens":4}},"uuid":"u"}"#;
        let fast = record(line).expect("fast path");
        assert_eq!(fast.kind.as_deref(), Some("assistant"));
        assert!(same_as_serde(line));
    }

    #[test]
    fn what_serde_refuses_is_left_to_serde() {
        for bad in [
            r#"{"type":"a","type":"b"}"#,
            r#"{"type":1}"#,
            r#"{"x":"a	b"}"#,
            r#"{"x":"\q"}"#,
            r#"{"x":01}"#,
            r#"{"x":1.}"#,
            r#"{"x":[1,]}"#,
            r#"{"x":1} x"#,
            r#"{"typ\u0065":"a"}"#,
            r#"{"message":{"content":[{"type":"a","type":"b"}]}}"#,
            r#"{"retryAttempt":-1}"#,
        ] {
            assert!(record(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn escaped_strings_decode_as_serde_decodes_them() {
        let line = r#"{"type":"us\u00e9r\n","summary":"\ud83d\ude00","message":"x\"y"}"#;
        let fast = record(line).expect("fast path");
        assert_eq!(fast.kind.as_deref(), Some("usér\n"));
        assert!(same_as_serde(line));
        // A lone surrogate in a field that is read: serde refuses it, so the fast path does.
        assert!(record(r#"{"type":"\ud800"}"#).is_none());
        // ... but serde skips it in a field nobody reads, and so does the fast path.
        assert!(record(r#"{"other":"\ud800","type":"x"}"#).is_some());
    }
}
