//! The fast path under [`crate::normalize::parse_line`]: a record line → the same
//! [`Record`] serde would build, without serde stepping through the large strings nobody
//! reads (tool output, file contents: two thirds of a transcript's bytes).
//!
//! [`record`] walks the JSON once: it validates every byte as `serde_json` would (structure,
//! numbers, escapes, no control characters in strings, nesting depth), skips strings 64 bytes
//! at a time (SSE2 masks on x86-64), and picks out only the fields [`Record`], [`Message`] and
//! [`Block`] name. Large values the normalizer reads only sometimes (`input`, tool result
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

mod bytes;

use bytes::{WINDOW, escape_len, special_offset, window_mask};

use std::borrow::Cow;

use serde::de::{Deserialize, DeserializeOwned};
use serde_json::value::RawValue;

use crate::record::{Block, CacheCreation, Content, Message, MessageField, Record, TextOr, Usage};
use crate::tools::ToolInput;

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
    let mut input = ToolInput::default();
    let mut cursor = Cursor::new(json);
    cursor.whitespace();
    let mut seen = Seen::default();
    cursor.object(|cursor, key| {
        let i = &mut input;
        match key {
            "file_path" => (seen.first(0)?, i.file_path = cursor.str_field()?),
            "notebook_path" => (seen.first(1)?, i.notebook_path = cursor.str_field()?),
            "path" => (seen.first(2)?, i.path = cursor.str_field()?),
            "pattern" => (seen.first(3)?, i.pattern = cursor.str_field()?),
            "command" => (seen.first(4)?, i.command = cursor.str_field()?),
            "url" => (seen.first(5)?, i.url = cursor.str_field()?),
            "query" => (seen.first(6)?, i.query = cursor.str_field()?),
            "bash_id" => (seen.first(7)?, i.bash_id = cursor.str_field()?),
            "shell_id" => (seen.first(8)?, i.shell_id = cursor.str_field()?),
            "description" => (seen.first(9)?, i.description = cursor.str_field()?),
            "subagent_type" => (seen.first(10)?, i.subagent_type = cursor.str_field()?),
            "skill" => (seen.first(11)?, i.skill = cursor.str_field()?),
            "subject" => (seen.first(12)?, i.subject = cursor.str_field()?),
            "taskId" => (seen.first(13)?, i.task_id = cursor.str_field()?),
            _ => (cursor.value().map(drop)?, ()),
        };
        Some(())
    })?;
    cursor.whitespace();
    (cursor.pos == cursor.bytes.len()).then_some(input)
}

/// Nesting allowed before giving up (serde_json's own limit is 128; below it serde accepts).
const MAX_DEPTH: u32 = 100;

/// A position in one JSON text, moving forward.
struct Cursor<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: u32,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Cursor<'a> {
        Cursor {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            depth: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// JSON's four whitespace bytes only (serde_json's set).
    fn whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    /// A string starting at the cursor (at its quote): its contents and whether they hold
    /// escapes. Escapes are checked as serde_json checks strings it skips.
    fn string(&mut self) -> Option<(&'a str, bool)> {
        self.eat(b'"')?;
        let start = self.pos;
        let bytes = self.bytes;
        let mut escaped = false;
        // 64 bytes at a time: the mask of their quotes, backslashes and control bytes, each
        // escape skipped within the mask (one in ~40 bytes of tool output) without reloading.
        let mut window = self.pos;
        'windows: while let Some(mut mask) = window_mask(bytes, window) {
            while mask != 0 {
                let at = window + mask.trailing_zeros() as usize;
                match bytes[at] {
                    b'"' => {
                        self.pos = at + 1;
                        return Some((&self.text[start..at], escaped));
                    }
                    b'\\' => {
                        escaped = true;
                        // Nearly every escape is one character (`\n`, `\"`, `\\`).
                        let next = match bytes.get(at + 1) {
                            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => at + 2,
                            _ => at + 1 + escape_len(&bytes[at + 1..])?,
                        };
                        let skip = next - window;
                        if skip >= WINDOW {
                            window = next;
                            continue 'windows;
                        }
                        mask &= u64::MAX << skip;
                    }
                    // A control character: serde_json refuses it.
                    _ => return None,
                }
            }
            window += WINDOW;
        }
        // The last bytes of the line (less than a window).
        self.pos = window;
        loop {
            let at = self.pos + special_offset(&bytes[self.pos..])?;
            match bytes[at] {
                b'"' => {
                    self.pos = at + 1;
                    return Some((&self.text[start..at], escaped));
                }
                b'\\' => {
                    escaped = true;
                    self.pos = at + escape_len(&bytes[at + 1..])? + 1;
                }
                _ => return None,
            }
        }
    }

    /// A string value as serde's borrowed `Cow<str>` holds it: borrowed unless it has escapes.
    fn string_value(&mut self) -> Option<Cow<'a, str>> {
        let start = self.pos;
        match self.string()? {
            (text, false) => Some(Cow::Borrowed(text)),
            // Escapes (rare in the fields read): serde decodes them, surrogates and all.
            (_, true) => serde_json::from_str::<String>(&self.text[start..self.pos])
                .ok()
                .map(Cow::Owned),
        }
    }

    /// Skip one value, validating it; its text.
    fn value(&mut self) -> Option<&'a str> {
        let start = self.pos;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' => {
                self.nest()?;
                self.pos += 1;
                self.whitespace();
                if self.eat(b'}').is_none() {
                    loop {
                        self.whitespace();
                        self.string()?;
                        self.whitespace();
                        self.eat(b':')?;
                        self.whitespace();
                        self.value()?;
                        self.whitespace();
                        match self.peek()? {
                            b',' => self.pos += 1,
                            b'}' => {
                                self.pos += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                self.depth -= 1;
            }
            b'[' => {
                self.nest()?;
                self.pos += 1;
                self.whitespace();
                if self.eat(b']').is_none() {
                    loop {
                        self.whitespace();
                        self.value()?;
                        self.whitespace();
                        match self.peek()? {
                            b',' => self.pos += 1,
                            b']' => {
                                self.pos += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                self.depth -= 1;
            }
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return None,
        }
        Some(&self.text[start..self.pos])
    }

    fn nest(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.bytes[self.pos..].starts_with(word).then(|| {
            self.pos += word.len();
        })
    }

    /// JSON's number grammar (serde_json's `ignore_number`): `-?(0|[1-9][0-9]*)(.[0-9]+)?
    /// ([eE][+-]?[0-9]+)?`. What may follow is checked by the caller (`,`, `}`, `]`, end).
    fn number(&mut self) -> Option<()> {
        let _ = self.eat(b'-');
        match self.peek()? {
            b'0' => self.pos += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.eat(b'.').is_some() {
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.pos;
        self.digits();
        (self.pos > start).then_some(())
    }

    /// The members of an object at the cursor: `on_field` gets each key (never escaped: an
    /// escaped key gives up, as serde would decode it before matching) with the cursor on
    /// its value, and must move past the value.
    fn object(&mut self, mut on_field: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.nest()?;
        self.eat(b'{')?;
        self.whitespace();
        if self.eat(b'}').is_none() {
            loop {
                self.whitespace();
                let (key, escaped) = self.string()?;
                if escaped {
                    return None;
                }
                self.whitespace();
                self.eat(b':')?;
                self.whitespace();
                on_field(self, key)?;
                self.whitespace();
                match self.peek()? {
                    b',' => self.pos += 1,
                    b'}' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    /// `Option<Cow<str>>` with `#[serde(borrow)]`: a string or null; anything else is serde's
    /// type error, left to serde.
    fn str_field(&mut self) -> Option<Option<Cow<'a, str>>> {
        match self.peek()? {
            b'"' => self.string_value().map(Some),
            b'n' => self.literal(b"null").map(|()| None),
            _ => None,
        }
    }

    /// `Option<&RawValue>`: null is `None`; any other value is its own text.
    fn raw_field(&mut self) -> Option<Option<&'a RawValue>> {
        let text = self.value()?;
        if text == "null" {
            return Some(None);
        }
        raw_value(text).map(Some)
    }

    /// A small field of any other type: serde reads its own slice, so it means exactly what
    /// serde makes of it in place.
    fn serde_field<T: Deserialize<'a>>(&mut self) -> Option<T> {
        let text = self.value()?;
        serde_json::from_str(text).ok()
    }

    fn owned_field<T: DeserializeOwned>(&mut self) -> Option<T> {
        self.serde_field()
    }

    /// `Option<Usage>`, on every API message: its token counts read here when they are plain
    /// (unsigned integers, no duplicate key), else by serde from the value's own slice.
    fn usage_field(&mut self) -> Option<Option<Usage>> {
        let (start, depth) = (self.pos, self.depth);
        if let Some(usage) = self.plain_usage() {
            return Some(usage);
        }
        (self.pos, self.depth) = (start, depth);
        self.owned_field()
    }

    fn plain_usage(&mut self) -> Option<Option<Usage>> {
        if self.peek()? == b'n' {
            return self.literal(b"null").map(|()| None);
        }
        let mut usage = Usage::default();
        let mut seen = Seen::default();
        self.object(|cursor, key| {
            let u = &mut usage;
            match key {
                "input_tokens" => (seen.first(0)?, u.input_tokens = cursor.count()?),
                "output_tokens" => (seen.first(1)?, u.output_tokens = cursor.count()?),
                "cache_read_input_tokens" => {
                    (seen.first(2)?, u.cache_read_input_tokens = cursor.count()?)
                }
                "cache_creation_input_tokens" => (
                    seen.first(3)?,
                    u.cache_creation_input_tokens = cursor.count()?,
                ),
                "cache_creation" => (seen.first(4)?, u.cache_creation = cursor.cache_creation()?),
                _ => (cursor.value().map(drop)?, ()),
            };
            Some(())
        })?;
        Some(Some(usage))
    }

    fn cache_creation(&mut self) -> Option<Option<CacheCreation>> {
        if self.peek()? == b'n' {
            return self.literal(b"null").map(|()| None);
        }
        let mut cache = CacheCreation::default();
        let mut seen = Seen::default();
        self.object(|cursor, key| {
            let c = &mut cache;
            match key {
                "ephemeral_5m_input_tokens" => (
                    seen.first(0)?,
                    c.ephemeral_5m_input_tokens = cursor.count()?,
                ),
                "ephemeral_1h_input_tokens" => (
                    seen.first(1)?,
                    c.ephemeral_1h_input_tokens = cursor.count()?,
                ),
                _ => (cursor.value().map(drop)?, ()),
            };
            Some(())
        })?;
        Some(Some(cache))
    }

    /// `Option<u64>`: null, or digits that fit (no sign, fraction or exponent: serde reads
    /// those as other types, so they are left to it).
    fn count(&mut self) -> Option<Option<u64>> {
        if self.peek()? == b'n' {
            return self.literal(b"null").map(|()| None);
        }
        let start = self.pos;
        self.number()?;
        let digits = &self.bytes[start..self.pos];
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        digits
            .iter()
            .try_fold(0u64, |n, &digit| {
                n.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
            })
            .map(Some)
    }

    fn record(&mut self, record: &mut Record<'a>) -> Option<()> {
        let mut seen = Seen::default();
        self.object(|cursor, key| {
            let r = &mut *record;
            match key {
                "type" => (seen.first(0)?, r.kind = cursor.str_field()?),
                "subtype" => (seen.first(1)?, r.subtype = cursor.str_field()?),
                "sessionId" => (seen.first(2)?, r.session_id = cursor.str_field()?),
                "session_id" => (seen.first(3)?, r.session_id_snake = cursor.str_field()?),
                "agentId" => (seen.first(4)?, r.agent_id = cursor.str_field()?),
                "parent_tool_use_id" => {
                    (seen.first(5)?, r.parent_tool_use_id = cursor.str_field()?)
                }
                "isSidechain" => (seen.first(6)?, r.is_sidechain = cursor.owned_field()?),
                "isMeta" => (seen.first(7)?, r.is_meta = cursor.owned_field()?),
                "isCompactSummary" => {
                    (seen.first(8)?, r.is_compact_summary = cursor.owned_field()?)
                }
                "isApiErrorMessage" => (
                    seen.first(9)?,
                    r.is_api_error_message = cursor.owned_field()?,
                ),
                "timestamp" => (seen.first(10)?, r.timestamp = cursor.str_field()?),
                "entrypoint" => (seen.first(11)?, r.entrypoint = cursor.str_field()?),
                "payload" => (seen.first(12)?, r.payload = cursor.raw_field()?),
                "message" => (seen.first(13)?, r.message = cursor.message_field()?),
                "error" => (seen.first(14)?, r.error = cursor.raw_field()?),
                "cause" => (seen.first(15)?, r.cause = cursor.raw_field()?),
                "retryInMs" => (seen.first(16)?, r.retry_in_ms = cursor.owned_field()?),
                "retryAttempt" => (seen.first(17)?, r.retry_attempt = cursor.owned_field()?),
                "maxRetries" => (seen.first(18)?, r.max_retries = cursor.owned_field()?),
                "attempt" => (seen.first(19)?, r.attempt = cursor.owned_field()?),
                "max_retries" => (seen.first(20)?, r.max_retries_snake = cursor.owned_field()?),
                "retry_delay_ms" => (seen.first(21)?, r.retry_delay_ms = cursor.owned_field()?),
                "error_status" => (seen.first(22)?, r.error_status = cursor.owned_field()?),
                "api_error_status" => (seen.first(23)?, r.api_error_status = cursor.owned_field()?),
                "compactMetadata" => (seen.first(24)?, r.compact_metadata = cursor.serde_field()?),
                "durationMs" => (seen.first(25)?, r.duration_ms_camel = cursor.owned_field()?),
                "content" => (seen.first(26)?, r.content = cursor.raw_field()?),
                "summary" => (seen.first(27)?, r.summary = cursor.str_field()?),
                "toolUseResult" => (seen.first(28)?, r.tool_use_result = cursor.raw_field()?),
                "is_error" => (seen.first(29)?, r.is_error = cursor.owned_field()?),
                "duration_ms" => (seen.first(30)?, r.duration_ms = cursor.owned_field()?),
                "num_turns" => (seen.first(31)?, r.num_turns = cursor.owned_field()?),
                "total_cost_usd" => (seen.first(32)?, r.total_cost_usd = cursor.owned_field()?),
                "result" => (seen.first(33)?, r.result = cursor.raw_field()?),
                "errors" => (seen.first(34)?, r.errors = cursor.raw_field()?),
                "usage" => (seen.first(35)?, r.usage = cursor.usage_field()?),
                "model" => (seen.first(36)?, r.model = cursor.str_field()?),
                "name" => (seen.first(37)?, r.name = cursor.str_field()?),
                "input" => (seen.first(38)?, r.input = cursor.raw_field()?),
                "tool_use_id" => (seen.first(39)?, r.tool_use_id = cursor.str_field()?),
                "id" => (seen.first(40)?, r.id = cursor.str_field()?),
                "requestId" => (seen.first(41)?, r.request_id = cursor.str_field()?),
                "data" => (seen.first(42)?, r.data = cursor.raw_field()?),
                _ => ((), cursor.value().map(drop)?),
            };
            Some(())
        })
    }

    /// `message`: an object read here; a string or an odd shape read by serde.
    fn message_field(&mut self) -> Option<Option<MessageField<'a>>> {
        if self.peek()? != b'{' {
            return self.serde_field();
        }
        let mut message = Message::default();
        let mut seen = Seen::default();
        self.object(|cursor, key| {
            let m = &mut message;
            match key {
                "id" => (seen.first(0)?, m.id = cursor.str_field()?),
                "model" => (seen.first(1)?, m.model = cursor.str_field()?),
                "content" => (seen.first(2)?, m.content = cursor.content_field()?),
                "stop_reason" => (seen.first(3)?, m.stop_reason = cursor.str_field()?),
                "usage" => (seen.first(4)?, m.usage = cursor.usage_field()?),
                _ => ((), cursor.value().map(drop)?),
            };
            Some(())
        })?;
        Some(Some(TextOr::Value(message)))
    }

    /// `message.content`: an array of blocks read here; a string or an odd shape by serde.
    fn content_field(&mut self) -> Option<Option<Content<'a>>> {
        if self.peek()? != b'[' {
            return self.serde_field();
        }
        self.nest()?;
        self.pos += 1;
        let mut blocks = Vec::new();
        self.whitespace();
        if self.eat(b']').is_none() {
            loop {
                self.whitespace();
                blocks.push(if self.peek()? == b'{' {
                    self.block()?
                } else {
                    self.serde_field()?
                });
                self.whitespace();
                match self.peek()? {
                    b',' => self.pos += 1,
                    b']' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(Some(TextOr::Value(blocks)))
    }

    fn block(&mut self) -> Option<Block<'a>> {
        let mut block = Block::default();
        let mut seen = Seen::default();
        self.object(|cursor, key| {
            let b = &mut block;
            match key {
                "type" => (seen.first(0)?, b.kind = cursor.str_field()?),
                "text" => (seen.first(1)?, b.text = cursor.str_field()?),
                "thinking" => (seen.first(2)?, b.thinking = cursor.str_field()?),
                "id" => (seen.first(3)?, b.id = cursor.str_field()?),
                "name" => (seen.first(4)?, b.name = cursor.str_field()?),
                "input" => (seen.first(5)?, b.input = cursor.raw_field()?),
                "tool_use_id" => (seen.first(6)?, b.tool_use_id = cursor.str_field()?),
                "content" => (seen.first(7)?, b.content = cursor.raw_field()?),
                "is_error" => (seen.first(8)?, b.is_error = cursor.owned_field()?),
                _ => ((), cursor.value().map(drop)?),
            };
            Some(())
        })?;
        Some(block)
    }
}

/// Which fields of one object were read: a second one is serde's `duplicate field` error.
#[derive(Default)]
struct Seen(u64);

impl Seen {
    fn first(&mut self, field: u32) -> Option<()> {
        let bit = 1u64 << field;
        let first = self.0 & bit == 0;
        self.0 |= bit;
        first.then_some(())
    }
}

/// A `&RawValue` of text already validated, without parsing it again: serde_json's own
/// borrowed raw-value protocol (a one-entry map under its private token), which it uses to
/// hand out raw slices from any deserializer. Should the token ever change, this returns
/// `None` and the line is read by serde, as before (slower, never wrong).
fn raw_value(text: &str) -> Option<&RawValue> {
    use serde::de::value::{BorrowedStrDeserializer, Error, MapDeserializer};
    const TOKEN: &str = "$serde_json::private::RawValue";
    let entry = (
        BorrowedStrDeserializer::<Error>::new(TOKEN),
        BorrowedStrDeserializer::<Error>::new(text),
    );
    <&RawValue>::deserialize(MapDeserializer::<_, Error>::new(std::iter::once(entry))).ok()
}

#[cfg(test)]
mod tests {
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
