//! A format-preserving editor for JSON text (comments allowed), used by [`crate::settings`]
//! on Claude Code's `settings.json`: `jsonc-parser` gives every value's byte range, and each
//! edit splices only the bytes it must, so formatting, key order, comments and numbers as
//! written (`1e3`, `12345678901234567890123`) stay as they were.
//!
//! Insertion and removal are built as inverses: an item appended to a container is removed
//! again with exactly the bytes that were inserted, so install followed by uninstall gives back
//! the original text. One family of layouts cannot round-trip on text alone: an empty
//! container written over exactly two lines with its closing bracket at its own line's indent
//! (`{⏎}`) comes back as `{}`, because both get the same layout with an item in them. The
//! binary resolves that case (and every other ambiguity) from its backup of the original.

use jsonc_parser::ast::{Object, Value};
use jsonc_parser::common::Ranged as _;
use jsonc_parser::{CollectOptions, ParseOptions};

/// Why a text could not be parsed: its 1-based line and column, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseProblem {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Strict JSON plus comments (which a user may have written and Familiar keeps).
fn options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// Parse `text`; `Ok(None)` when it holds no value (empty, whitespace or comments only).
pub fn parse(text: &str) -> Result<Option<Value<'_>>, ParseProblem> {
    jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &options())
        .map(|result| result.value)
        .map_err(|err| ParseProblem {
            line: err.line_display(),
            column: err.column_display(),
            message: err.kind().to_string(),
        })
}

/// The value of `key` in `object`, with the member's index.
pub fn member<'v, 'a>(object: &'v Object<'a>, key: &str) -> Option<(usize, &'v Value<'a>)> {
    object
        .properties
        .iter()
        .enumerate()
        .find(|(_, prop)| prop.name.as_str() == key)
        .map(|(index, prop)| (index, &prop.value))
}

/// A container seen as what the edits need: where its inside starts (after the opening
/// bracket) and ends (at the closing one), and the byte range of each item (a whole member
/// `"key": value` for objects).
pub struct Container {
    open_end: usize,
    close: usize,
    items: Vec<(usize, usize)>,
}

impl Container {
    pub fn of(value: &Value<'_>) -> Option<Container> {
        let (range, items): (_, Vec<(usize, usize)>) = match value {
            Value::Object(object) => (
                object.range,
                object
                    .properties
                    .iter()
                    .map(|prop| (prop.range.start, prop.range.end))
                    .collect(),
            ),
            Value::Array(array) => (
                array.range,
                array
                    .elements
                    .iter()
                    .map(|element| (element.start(), element.end()))
                    .collect(),
            ),
            _ => return None,
        };
        Some(Container {
            open_end: range.start + 1,
            close: range.end - 1,
            items,
        })
    }
}

/// A member `"key": value` for an object, or a bare value for an array, as it is rendered.
pub enum Item<'a, T: serde::Serialize> {
    Member(&'a str, &'a T),
    Element(&'a T),
}

impl<T: serde::Serialize> Item<'_, T> {
    /// The item's text: pretty-printed with `indent` as its line's indent and `unit` per
    /// level, or on one line.
    fn render(&self, pretty: bool, indent: &str, unit: &str) -> String {
        let (key, value) = match self {
            Item::Member(key, value) => (Some(*key), *value),
            Item::Element(value) => (None, *value),
        };
        let value = if pretty {
            let mut out = Vec::new();
            let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
            let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
            let _ = serde::Serialize::serialize(value, &mut serializer);
            String::from_utf8_lossy(&out).replace('\n', &format!("\n{indent}"))
        } else {
            serde_json::to_string(value).unwrap_or_default()
        };
        match key {
            Some(key) => format!("{}: {value}", serde_json::Value::from(key)),
            None => value,
        }
    }
}

/// The leading whitespace of the line holding byte `pos`.
fn line_indent(text: &str, pos: usize) -> &str {
    let start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    let end = line
        .find(|c: char| c != ' ' && c != '\t')
        .unwrap_or(line.len());
    &line[..end]
}

/// One indent level as the file writes it: the indent of the top-level object's first
/// member, else two spaces (what Claude Code itself writes).
pub fn indent_unit(text: &str, root: &Value<'_>) -> String {
    if let Value::Object(object) = root
        && let Some(first) = object.properties.first()
    {
        let before = &text[object.range.start + 1..first.range.start];
        if before.contains('\n') {
            let indent = line_indent(text, first.range.start);
            if !indent.is_empty() {
                return indent.to_owned();
            }
        }
    }
    "  ".to_owned()
}

fn is_blank(text: &str) -> bool {
    text.chars().all(char::is_whitespace)
}

/// Where the comma is in the gap between two items (which holds only whitespace, comments
/// and that comma).
fn comma_in(gap: &str) -> Option<usize> {
    let bytes = gap.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b',' => return Some(i),
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i += gap[i..].find('\n').unwrap_or(gap.len() - i);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += gap[i + 2..].find("*/").map_or(gap.len() - i, |end| end + 4);
            }
            _ => i += 1,
        }
    }
    None
}

fn splice(text: &str, start: usize, end: usize, insert: &str) -> String {
    let mut out = String::with_capacity(text.len() + insert.len());
    out.push_str(&text[..start]);
    out.push_str(insert);
    out.push_str(&text[end..]);
    out
}

/// Append `item` at the end of `container`, laid out like the item before it (or, in an empty
/// container, one level deeper than the container's own line).
pub fn append<T: serde::Serialize>(
    text: &str,
    container: &Container,
    item: &Item<'_, T>,
    unit: &str,
) -> String {
    let Some(&(last_start, last_end)) = container.items.last() else {
        let inside = &text[container.open_end..container.close];
        let outer = line_indent(text, container.open_end - 1);
        let inner = format!("{outer}{unit}");
        let mut insert = format!("\n{inner}{}", item.render(true, &inner, unit));
        if !inside.contains('\n') {
            insert.push('\n');
            insert.push_str(outer);
        }
        return splice(text, container.open_end, container.open_end, &insert);
    };
    let before_last = match container.items.len() {
        1 => container.open_end,
        n => {
            let prev_end = container.items[n - 2].1;
            comma_in(&text[prev_end..last_start]).map_or(prev_end, |comma| prev_end + comma + 1)
        }
    };
    let gap = &text[before_last..last_start];
    let separator = if is_blank(gap) {
        gap.to_owned()
    } else if gap.contains('\n') {
        format!("\n{}", line_indent(text, last_start))
    } else {
        " ".to_owned()
    };
    let pretty = separator.contains('\n');
    let indent = separator.rsplit('\n').next().unwrap_or_default();
    let insert = format!(",{separator}{}", item.render(pretty, indent, unit));
    splice(text, last_end, last_end, &insert)
}

/// Remove item `index` of `container`, with the comma and whitespace that `append` would
/// have added with it; comments around it stay.
pub fn remove(text: &str, container: &Container, index: usize) -> String {
    let (start, end) = container.items[index];
    let n = container.items.len();
    if n == 1 {
        let before = &text[container.open_end..start];
        if !is_blank(before) {
            return splice(text, start, end, "");
        }
        // Undo the line break `append` adds into an inline empty container.
        let outer = line_indent(text, container.open_end - 1);
        let after = &text[end..container.close];
        let extra = format!("\n{outer}");
        let cut = match after.strip_prefix(&extra) {
            Some(rest) if !rest.contains('\n') && is_blank(rest) => extra.len(),
            _ => 0,
        };
        return splice(text, container.open_end, end + cut, "");
    }
    if index + 1 == n {
        let prev_end = container.items[index - 1].1;
        let gap = &text[prev_end..start];
        let Some(comma) = comma_in(gap) else {
            return splice(text, start, end, "");
        };
        let (pre, post) = (&gap[..comma], &gap[comma + 1..]);
        if is_blank(pre) && is_blank(post) {
            return splice(text, prev_end, end, "");
        }
        // Comments in the gap: drop the comma and the item with its own leading blanks.
        let blank_start = start - (post.len() - post.trim_end().len());
        let text = splice(text, blank_start, end, "");
        return splice(&text, prev_end + comma, prev_end + comma + 1, "");
    }
    let next_start = container.items[index + 1].0;
    let gap = &text[end..next_start];
    let Some(comma) = comma_in(gap) else {
        return splice(text, start, end, "");
    };
    let rest = &gap[comma + 1..];
    let blanks = rest.len() - rest.trim_start().len();
    if is_blank(&gap[..comma]) {
        return splice(text, start, end + comma + 1 + blanks, "");
    }
    // A comment before the comma stays; the comma and the item go.
    let text = splice(text, end + comma, end + comma + 1 + blanks, "");
    splice(&text, start, end, "")
}
