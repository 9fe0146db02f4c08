//! A JSON text as a `serde_json::Value`, read by the [`Cursor`]: each string decoded once,
//! into an allocation of its own length. `serde_json` decodes a string with escapes into a
//! scratch buffer grown by doubling and then copies it out: a 50 MB text in a record cost
//! three times itself at once. The readers of records held in a `Value` (Copilot CLI's `data`,
//! Gemini CLI's `content`, Qwen Code's `parts`) read through this, then move the big texts out
//! instead of copying them.

use serde_json::{Map, Number, Value};

use super::cursor::Cursor;

impl Cursor<'_> {
    /// The value at the cursor, as `serde_json::from_str::<Value>` makes it (a key given
    /// twice keeps its last value; numbers as serde_json reads them).
    fn build(&mut self) -> Option<Value> {
        match self.peek()? {
            b'"' => self
                .string_value()
                .map(|text| Value::String(text.into_owned())),
            b'{' => {
                let mut map = Map::new();
                self.members(|cursor, key| {
                    let value = cursor.build()?;
                    map.insert(key, value);
                    Some(())
                })?;
                Some(Value::Object(map))
            }
            b'[' => {
                let mut items = Vec::new();
                self.items(b'[', b']', |cursor| {
                    items.push(cursor.build()?);
                    Some(())
                })?;
                Some(Value::Array(items))
            }
            b't' => self.literal(b"true").map(|()| Value::Bool(true)),
            b'f' => self.literal(b"false").map(|()| Value::Bool(false)),
            b'n' => self.literal(b"null").map(|()| Value::Null),
            b'-' | b'0'..=b'9' => {
                let start = self.pos;
                self.number()?;
                number(&self.text[start..self.pos]).map(Value::Number)
            }
            _ => None,
        }
    }
}

impl Cursor<'_> {
    /// The members of an object at the cursor: `on_member` gets each key, decoded, with the
    /// cursor on its value, and must move past the value.
    fn members(
        &mut self,
        mut on_member: impl FnMut(&mut Self, String) -> Option<()>,
    ) -> Option<()> {
        self.items(b'{', b'}', |cursor| {
            let key = cursor.string_value()?.into_owned();
            cursor.whitespace();
            cursor.eat(b':')?;
            cursor.whitespace();
            on_member(cursor, key)
        })
    }
}

/// A number the cursor validated, as serde_json reads it: an integer that fits as `u64` (or
/// `i64` when negative), anything else as the nearest `f64` (both parsers round correctly),
/// and out of `f64`'s range refused.
fn number(text: &str) -> Option<Number> {
    if !text.contains(['.', 'e', 'E']) {
        let integer = match text.strip_prefix('-') {
            Some(_) => text.parse::<i64>().ok().map(Number::from),
            None => text.parse::<u64>().ok().map(Number::from),
        };
        if integer.is_some() {
            return integer;
        }
    }
    text.parse::<f64>().ok().and_then(Number::from_f64)
}

/// `json` as a `Value`, or `None` where `serde_json` would refuse it (or nests deeper than
/// the cursor allows).
pub fn value(json: &str) -> Option<Value> {
    let mut cursor = Cursor::new(json);
    cursor.whitespace();
    let value = cursor.build()?;
    cursor.whitespace();
    (cursor.pos == cursor.bytes.len()).then_some(value)
}

/// Strings shorter than this are decoded on their own even by [`value_in_place`]: reusing the
/// buffer saves nothing worth it.
const IN_PLACE_AT_LEAST: usize = 64 * 1024;

/// [`value`] of `json`, a JSON text held in a `String` of its own (one decoded out of
/// another string, as opencode rows were written before 2026-11-28), whose string `key` of the
/// top-level object, when long, becomes that buffer: decoded in place once everything else is
/// read, instead of into an allocation of its own. A 50 MB prompt then costs its line and one
/// copy, not its line and two.
pub(crate) fn value_in_place(json: String, key: &str) -> Option<Value> {
    let (mut value, span) = {
        let mut cursor = Cursor::new(&json);
        cursor.whitespace();
        let mut span = None;
        let value = if cursor.peek()? == b'{' {
            let mut map = Map::new();
            cursor.members(|cursor, name| {
                let value = if name != key {
                    cursor.build()?
                } else {
                    // A key given twice keeps its last value.
                    span = None;
                    match cursor.peek() {
                        Some(b'"') => match cursor.string()? {
                            (raw, _) if raw.len() >= IN_PLACE_AT_LEAST => {
                                let start = raw.as_ptr() as usize - json.as_ptr() as usize;
                                span = Some((start, start + raw.len()));
                                Value::Null
                            }
                            (raw, true) => Value::String(super::bytes::unescape(raw)?),
                            (raw, false) => Value::String(raw.to_owned()),
                        },
                        _ => cursor.build()?,
                    }
                };
                map.insert(name, value);
                Some(())
            })?;
            Value::Object(map)
        } else {
            cursor.build()?
        };
        cursor.whitespace();
        (cursor.pos == cursor.bytes.len()).then_some((value, span))?
    };
    if let (Some((start, end)), Value::Object(map)) = (span, &mut value) {
        let text = super::bytes::unescape_in_place(json.into_bytes(), start, end)?;
        map.insert(key.to_owned(), Value::String(text));
    }
    Some(value)
}

/// The string `key` of `value`, taken out of it (a prompt can be tens of MB).
pub(crate) fn take_string(value: &mut Value, key: &str) -> Option<String> {
    match value.get_mut(key).map(Value::take)? {
        Value::String(text) => Some(text),
        _ => None,
    }
}

/// `text` without the whitespace at its end, trimmed in place (not copied).
pub(crate) fn trimmed_end(mut text: String) -> String {
    text.truncate(text.trim_end().len());
    text
}

/// `text` without the whitespace at either end, trimmed in place (not copied).
pub(crate) fn trimmed(text: String) -> String {
    let mut text = trimmed_end(text);
    let start = text.len() - text.trim_start().len();
    text.drain(..start);
    text
}

/// The `text` strings of `parts` (Gemini API content parts), taken out of them and joined
/// without a separator: one text is moved, not copied (a pasted prompt can be tens of MB).
pub(crate) fn take_texts<'v>(parts: impl Iterator<Item = &'v mut Value>) -> String {
    let mut texts = parts.filter_map(|part| take_string(part, "text"));
    let first = texts.next().unwrap_or_default();
    texts.fold(first, |mut all, text| {
        all.push_str(&text);
        all
    })
}

/// serde's `deserialize_with` for a field read as a `Value` through [`value`]: serde_json
/// keeps the field's text (a `RawValue`, no decoding), and the cursor reads it once. A struct
/// of small fields around one big `Value` is read by serde as fast as ever.
pub(crate) fn exact_value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    let raw = <&'de serde_json::value::RawValue as serde::Deserialize>::deserialize(d)?;
    value(raw.get()).ok_or_else(|| serde::de::Error::custom("not a JSON value serde would read"))
}

/// [`exact_value`] for a field holding an array.
pub(crate) fn exact_values<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
    match exact_value(d)? {
        Value::Array(items) => Ok(items),
        _ => Err(serde::de::Error::custom("not an array")),
    }
}

#[cfg(test)]
mod tests {
    use super::{IN_PLACE_AT_LEAST, take_texts, trimmed, trimmed_end, value, value_in_place};

    #[test]
    fn trimming_keeps_the_buffer() {
        let text = String::from("  \n a text \t\n");
        let at = text.as_ptr();
        let text = trimmed_end(text);
        assert_eq!((text.as_str(), text.as_ptr()), ("  \n a text", at));
        assert_eq!(trimmed(text), "a text");
        assert_eq!(trimmed(" \n ".to_owned()), "");
    }

    #[test]
    fn one_text_is_moved_and_several_are_joined() {
        let mut one = serde_json::json!([{"text": "a long text"}, {"other": 1}]);
        let parts = one.as_array_mut().expect("parts");
        let at = parts[0]["text"].as_str().expect("text").as_ptr();
        let text = take_texts(parts.iter_mut());
        assert_eq!((text.as_str(), text.as_ptr()), ("a long text", at));
        let mut two = serde_json::json!([{"text": "a"}, {"text": 2}, {"text": "b"}]);
        let parts = two.as_array_mut().expect("parts");
        assert_eq!(take_texts(parts.iter_mut()), "ab");
    }

    #[test]
    fn reads_as_serde_json_reads() {
        for json in [
            r#"{"type":"user.message","data":{"content":"a\tb \u00e9 \ud83d\ude00","n":[1,-2,3.5,1e3,18446744073709551616,null,true,false]},"k":1,"k":2}"#,
            r#" [ {} , [] , "" ] "#,
            r#""just a string""#,
            "0",
            "-0.0",
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"[1 2]"#,
            r#"{"a":01}"#,
            r#""bad \x""#,
            "\"control \u{1}\"",
            r#"{"a":1} x"#,
            "[-9223372036854775808, -9223372036854775809, 18446744073709551615, 1e400, -0, 0.1, 2.5e-3, 123456789012345678901234567890]",
            "",
        ] {
            let ours = value(json);
            let serde = serde_json::from_str::<serde_json::Value>(json).ok();
            assert_eq!(ours, serde, "{json}");
            assert_eq!(
                value_in_place(json.to_owned(), "k"),
                serde,
                "in place: {json}"
            );
        }
    }

    #[test]
    fn a_long_text_is_decoded_in_its_own_json_buffer() {
        let long = r#"a line\twith \"escapes\" \u00e9\n"#.repeat(IN_PLACE_AT_LEAST / 16);
        let plain = "x".repeat(IN_PLACE_AT_LEAST);
        for json in [
            format!(r#"{{"type":"text","text":"{long}","time":{{"end":1}}}}"#),
            format!(r#"{{"text":"{plain}"}}"#),
            // A key given twice keeps its last value, long or not.
            format!(r#"{{"text":"{long}","text":"short"}}"#),
            format!(r#"{{"text":"{long}","text":null}}"#),
            format!(r#"{{"text":"short","text":"{long}"}}"#),
            // Only the top level's `text`.
            format!(r#"{{"part":{{"text":"{long}"}},"text":1}}"#),
            format!(r#"[{{"text":"{long}"}}]"#),
            format!(r#"{{"text":"{long}"}} x"#),
            format!(r#"{{"text":"{long}\ud800"}}"#),
        ] {
            let serde = serde_json::from_str::<serde_json::Value>(&json).ok();
            let held = json.clone();
            let at = held.as_ptr();
            let ours = value_in_place(held, "text");
            assert_eq!(ours, serde, "{}", &json[..40]);
            let text = ours.as_ref().and_then(|value| value.get("text")?.as_str());
            if text.is_some_and(|text| text.len() >= IN_PLACE_AT_LEAST) {
                assert_eq!(
                    text.map(str::as_ptr),
                    Some(at),
                    "{}: not moved",
                    &json[..40]
                );
            }
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(value(&deep), None);
    }
}
