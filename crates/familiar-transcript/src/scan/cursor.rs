//! The JSON grammar under [`super`]: a [`Cursor`] moving forward through one text, validating
//! every byte as `serde_json` would (structure, numbers, escapes, control characters, nesting)
//! and skipping strings a window at a time ([`super::bytes`]); the small field readers every
//! typed reader shares (strings, raw values, counts, serde on a slice), and [`Seen`] for
//! duplicate keys. What the fields of a record mean is in [`super::fields`].

use std::borrow::Cow;

use serde::de::{Deserialize, DeserializeOwned};
use serde_json::value::RawValue;

use super::bytes::{Masks, WINDOW, escape_len, escaped, window_mask, window_masks};

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
        let Some(mask) = window_mask(self.bytes, start) else {
            // Fewer than 64 bytes left in the text.
            return self.string_tail(start, false);
        };
        // Most strings (keys, ids, names) end in their first window before any escape.
        let first = start + mask.trailing_zeros() as usize;
        if mask != 0 && self.bytes[first] == b'"' {
            self.pos = first + 1;
            return Some((&self.text[start..first], false));
        }
        self.long_string(start)
    }

    /// The rest of a string that has an escape or a control byte in its first window, or is
    /// longer: 64 bytes a step without a branch per escape (tool output has one in about 40
    /// bytes; a step per escape cost `familiar stats` a tenth more on a heavy user's tree).
    fn long_string(&mut self, start: usize) -> Option<(&'a str, bool)> {
        let mut window = start;
        let mut carry = 0;
        let mut has_escapes = false;
        while let Some(masks) = window_masks(self.bytes, window) {
            if let Some(end) =
                string_window(self.bytes, window, masks, &mut carry, &mut has_escapes)?
            {
                self.pos = end + 1;
                return Some((&self.text[start..end], has_escapes));
            }
            window += WINDOW;
        }
        // The last bytes of the text: from the backslash that ended the last window, if one
        // escapes the first of them.
        self.pos = window - carry as usize;
        self.string_tail(start, has_escapes)
    }

    /// A string's last bytes, at most a window of them to the end of the text (a line's last
    /// strings: its timestamp, its uuid), as one window padded with spaces.
    fn string_tail(&mut self, start: usize, mut has_escapes: bool) -> Option<(&'a str, bool)> {
        let from = self.pos;
        let rest = &self.bytes[from..];
        let mut padded = [b' '; WINDOW];
        padded.get_mut(..rest.len())?.copy_from_slice(rest);
        let masks = window_masks(&padded, 0)?;
        // No closing quote before the end of the text: not a string.
        let end = string_window(self.bytes, from, masks, &mut 0, &mut has_escapes)??;
        self.pos = end + 1;
        Some((&self.text[start..end], has_escapes))
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

/// One window of a string's bytes, from `window` in `bytes` (its [`Masks`]): where its
/// closing quote is (`Some(None)` when it goes on past the window), or `None` where serde_json
/// refuses it (a control byte, a bad escape). The escaped characters come from the
/// backslashes' runs ([`escaped`]; `carry` goes from one window to the next); those other than
/// `"`, `\`, `n` and `t` are checked one by one.
#[inline]
fn string_window(
    bytes: &[u8],
    window: usize,
    masks: Masks,
    carry: &mut u64,
    has_escapes: &mut bool,
) -> Option<Option<usize>> {
    let escaped_chars = escaped(masks.backslash, carry);
    let ends = masks.quote & !escaped_chars;
    // Every bit before the first unescaped quote (all of them when there is none).
    let before = (ends & ends.wrapping_neg()).wrapping_sub(1);
    if masks.control & before != 0 {
        return None;
    }
    let escapes = escaped_chars & before;
    *has_escapes |= escapes != 0;
    let mut rare = escapes & !(masks.quote | masks.backslash | masks.common);
    while rare != 0 {
        escape_len(bytes.get(window + rare.trailing_zeros() as usize..)?)?;
        rare &= rare - 1;
    }
    Some((ends != 0).then(|| window + ends.trailing_zeros() as usize))
}

#[cfg(test)]
mod tests {
    use super::Cursor;
    use proptest::prelude::*;
    use serde::de::IgnoredAny;

    /// serde_json's reading of the string at the start of `text`: where it ends, or `None`
    /// when serde refuses it.
    fn serde_end(text: &str) -> Option<usize> {
        let mut values = serde_json::Deserializer::from_str(text).into_iter::<IgnoredAny>();
        values.next()?.ok()?;
        Some(values.byte_offset())
    }

    /// Pieces of a long string's text: runs of backslashes of every length, each escape,
    /// bad escapes, control bytes, multi-byte characters and plain runs.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "[a-z ]{0,70}",
            3 => "\\\\{1,5}",
            3 => prop::sample::select(vec![
                "\\n", "\\t", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\r", "\\u00e9", "\\uD83D",
                "n", "t", "u", "é", "日本", "😀",
            ])
            .prop_map(str::to_owned),
            1 => prop::sample::select(vec!["\\x", "\\u12", "\\u12g4", "\\é", "\u{1}", "\n", "\""])
                .prop_map(str::to_owned),
        ]
    }

    proptest::proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        /// Any text after an opening quote, at any offset from a window's edge, ends where
        /// serde_json ends it or is refused as serde refuses it, with escapes reported.
        #[test]
        fn strings_end_where_serde_ends_them(
            lead in 0usize..70,
            pieces in prop::collection::vec(piece(), 0..24),
            tail in 0usize..140,
        ) {
            let text = format!("{}\"{}\"{}", " ".repeat(lead), pieces.concat(), "x".repeat(tail));
            let mut cursor = Cursor::new(&text);
            cursor.pos = lead;
            let ours = cursor.string().map(|(contents, escaped)| (contents.len(), escaped, cursor.pos));
            let theirs = serde_end(&text[lead..]).map(|end| {
                let contents = &text[lead + 1..lead + end - 1];
                (contents.len(), contents.contains('\\'), lead + end)
            });
            prop_assert_eq!(ours, theirs, "{:?}", text);
        }
    }
}
