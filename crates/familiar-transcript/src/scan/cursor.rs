//! The JSON grammar under [`super`]: a [`Cursor`] moving forward through one text, validating
//! every byte as `serde_json` would (structure, numbers, escapes, control characters, nesting)
//! and skipping strings a window at a time ([`super::bytes`]); the small field readers every
//! typed reader shares (strings, raw values, counts, serde on a slice), and [`Seen`] for
//! duplicate keys. What the fields of a record mean is in [`super::fields`].

use std::borrow::Cow;

use serde::de::{Deserialize, DeserializeOwned};
use serde_json::value::RawValue;

use super::bytes::{WINDOW, escape_len, special_offset, window_mask};

/// Nesting allowed before giving up (serde_json's own limit is 128; below it serde accepts).
const MAX_DEPTH: u32 = 100;

/// A position in one JSON text, moving forward.
pub(super) struct Cursor<'a> {
    pub(super) text: &'a str,
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
    pub(super) depth: u32,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(text: &'a str) -> Cursor<'a> {
        Cursor {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            depth: 0,
        }
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// JSON's four whitespace bytes only (serde_json's set).
    pub(super) fn whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    pub(super) fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    /// A string starting at the cursor (at its quote): its contents and whether they hold
    /// escapes. Escapes are checked as serde_json checks strings it skips.
    pub(super) fn string(&mut self) -> Option<(&'a str, bool)> {
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
    pub(super) fn string_value(&mut self) -> Option<Cow<'a, str>> {
        match self.string()? {
            (text, false) => Some(Cow::Borrowed(text)),
            // Escapes: decoded in one allocation of at most the text's length (a record's text
            // may be tens of MB).
            (text, true) => super::bytes::unescape(text).map(Cow::Owned),
        }
    }

    /// Skip one value, validating it; its text.
    pub(super) fn value(&mut self) -> Option<&'a str> {
        let start = self.pos;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' => self.items(b'{', b'}', |cursor| {
                cursor.string()?;
                cursor.whitespace();
                cursor.eat(b':')?;
                cursor.whitespace();
                cursor.value().map(drop)
            })?,
            b'[' => self.items(b'[', b']', |cursor| cursor.value().map(drop))?,
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return None,
        }
        Some(&self.text[start..self.pos])
    }

    pub(super) fn nest(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    pub(super) fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.bytes[self.pos..].starts_with(word).then(|| {
            self.pos += word.len();
        })
    }

    /// JSON's number grammar (serde_json's `ignore_number`): `-?(0|[1-9][0-9]*)(.[0-9]+)?
    /// ([eE][+-]?[0-9]+)?`. What may follow is checked by the caller (`,`, `}`, `]`, end).
    pub(super) fn number(&mut self) -> Option<()> {
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

    pub(super) fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    pub(super) fn some_digits(&mut self) -> Option<()> {
        let start = self.pos;
        self.digits();
        (self.pos > start).then_some(())
    }

    /// The members of an object at the cursor: `on_field` gets each key (never escaped: an
    /// escaped key gives up, as serde would decode it before matching) with the cursor on
    /// its value, and must move past the value.
    pub(super) fn object(
        &mut self,
        mut on_field: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        self.items(b'{', b'}', |cursor| {
            let (key, escaped) = cursor.string()?;
            if escaped {
                return None;
            }
            cursor.whitespace();
            cursor.eat(b':')?;
            cursor.whitespace();
            on_field(cursor, key)
        })
    }

    /// An array or object opening with `open` at the cursor: each item, read by `item`, up to
    /// the `close` that ends it (the grammar of the commas and whitespace between them, and
    /// the nesting limit, shared by every reader of an array or object).
    pub(super) fn items(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.nest()?;
        self.eat(open)?;
        self.whitespace();
        if self.eat(close).is_none() {
            loop {
                self.whitespace();
                item(self)?;
                self.whitespace();
                match self.peek()? {
                    b',' => self.pos += 1,
                    byte if byte == close => {
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
    pub(super) fn str_field(&mut self) -> Option<Option<Cow<'a, str>>> {
        match self.peek()? {
            b'"' => self.string_value().map(Some),
            b'n' => self.literal(b"null").map(|()| None),
            _ => None,
        }
    }

    /// `Option<&RawValue>`: null is `None`; any other value is its own text.
    pub(super) fn raw_field(&mut self) -> Option<Option<&'a RawValue>> {
        let text = self.value()?;
        if text == "null" {
            return Some(None);
        }
        raw_value(text).map(Some)
    }

    /// A small field of any other type: serde reads its own slice, so it means exactly what
    /// serde makes of it in place.
    pub(super) fn serde_field<T: Deserialize<'a>>(&mut self) -> Option<T> {
        let text = self.value()?;
        serde_json::from_str(text).ok()
    }

    pub(super) fn owned_field<T: DeserializeOwned>(&mut self) -> Option<T> {
        self.serde_field()
    }

    /// `Option<u64>`: null, or digits that fit (no sign, fraction or exponent: serde reads
    /// those as other types, so they are left to it).
    pub(super) fn count(&mut self) -> Option<Option<u64>> {
        if self.peek()? == b'n' {
            return self.literal(b"null").map(|()| None);
        }
        let start = self.pos;
        self.number()?;
        let digits = &self.bytes[start..self.pos];
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        // Past `MAX_TOKENS` a count is none, as serde's lenient reading has it.
        digits
            .iter()
            .try_fold(0u64, |n, &digit| {
                n.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
            })
            .map(|n| Some(n).filter(|n| *n <= crate::record::MAX_TOKENS))
    }
}

/// Which fields of one object were read: a second one is serde's `duplicate field` error.
#[derive(Default)]
pub(super) struct Seen(u64);

impl Seen {
    pub(super) fn first(&mut self, field: u32) -> Option<()> {
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
pub(super) fn raw_value(text: &str) -> Option<&RawValue> {
    use serde::de::value::{BorrowedStrDeserializer, Error, MapDeserializer};
    const TOKEN: &str = "$serde_json::private::RawValue";
    let entry = (
        BorrowedStrDeserializer::<Error>::new(TOKEN),
        BorrowedStrDeserializer::<Error>::new(text),
    );
    <&RawValue>::deserialize(MapDeserializer::<_, Error>::new(std::iter::once(entry))).ok()
}
