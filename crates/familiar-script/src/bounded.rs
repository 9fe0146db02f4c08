//! Bounded replacements for the Rhai built-ins whose result can be far larger than their input,
//! and the depth and size checks Rhai does not make.
//!
//! Rhai checks the size limits of [`crate::Limits`] on a value after it is built: `s.split("")`
//! on a 16 MiB string first builds 16 million strings (over 1 GB), then fails. The functions
//! registered here (`split`, `split_rev`, `to_chars`, `parse_json`) shadow the built-ins
//! with the same behaviour, but stop with the same size error as soon as the result would pass
//! the limit. [`crate::host`] calls [`register`] once; [`crate::script_event`] and `actions`
//! use [`check_json`] and [`too_deep`] for `ev.raw`, `emit` and the state kept between calls.

use rhai::{Array, Dynamic, Engine, EvalAltResult, INT, ImmutableString, Position};

use crate::sandbox::Limits;

type RhaiResult<T> = Result<T, Box<EvalAltResult>>;

/// Rhai's own error for an array over the limit, so the message and the rendering match.
pub(crate) fn array_too_large() -> Box<EvalAltResult> {
    Box::new(EvalAltResult::ErrorDataTooLarge(
        "Size of array/BLOB".into(),
        Position::NONE,
    ))
}

pub(crate) fn string_too_large() -> Box<EvalAltResult> {
    Box::new(EvalAltResult::ErrorDataTooLarge(
        "Length of string".into(),
        Position::NONE,
    ))
}

/// Rhai's convention: a limit of 0 means none.
fn limit(value: usize) -> usize {
    if value == 0 { usize::MAX } else { value }
}

/// Collect pieces into an array, failing at the first piece over `max` instead of after all.
fn collect<'a>(pieces: impl Iterator<Item = &'a str>, max: usize) -> RhaiResult<Array> {
    let mut array = Array::new();
    for piece in pieces {
        if array.len() >= max {
            return Err(array_too_large());
        }
        array.push(Dynamic::from(ImmutableString::from(piece)));
    }
    Ok(array)
}

fn segments(n: INT) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

fn whole(string: &ImmutableString) -> Array {
    vec![Dynamic::from(string.clone())]
}

/// Register the bounded functions. Functions registered on the engine take precedence over
/// Rhai's packages, so scripts call these under the usual names.
pub(crate) fn register(engine: &mut Engine, limits: &Limits) {
    let max = limit(limits.max_array_size);
    // The guards below mirror Rhai's own implementations (rhai 1.x `string_more.rs`), so a
    // script sees the same results as before, only bounded.
    engine.register_fn("split", move |s: ImmutableString| -> RhaiResult<Array> {
        if s.is_empty() {
            return Ok(whole(&s));
        }
        collect(s.split_whitespace(), max)
    });
    engine.register_fn(
        "split",
        move |s: ImmutableString, d: ImmutableString| -> RhaiResult<Array> {
            if s.is_empty() || (!d.is_empty() && !s.contains(d.as_str())) {
                return Ok(whole(&s));
            }
            collect(s.split(d.as_str()), max)
        },
    );
    engine.register_fn(
        "split",
        move |s: ImmutableString, d: ImmutableString, n: INT| -> RhaiResult<Array> {
            if n <= 1 || s.is_empty() || (!d.is_empty() && !s.contains(d.as_str())) {
                return Ok(whole(&s));
            }
            collect(s.splitn(segments(n), d.as_str()), max)
        },
    );
    engine.register_fn(
        "split",
        move |s: ImmutableString, d: char| -> RhaiResult<Array> {
            if s.is_empty() || !s.contains(d) {
                return Ok(whole(&s));
            }
            collect(s.split(d), max)
        },
    );
    engine.register_fn(
        "split",
        move |s: ImmutableString, d: char, n: INT| -> RhaiResult<Array> {
            if n <= 1 || s.is_empty() || !s.contains(d) {
                return Ok(whole(&s));
            }
            collect(s.splitn(segments(n), d), max)
        },
    );
    engine.register_fn(
        "split_rev",
        move |s: ImmutableString, d: ImmutableString| -> RhaiResult<Array> {
            if s.is_empty() || (!d.is_empty() && !s.contains(d.as_str())) {
                return Ok(whole(&s));
            }
            collect(s.rsplit(d.as_str()), max)
        },
    );
    engine.register_fn(
        "split_rev",
        move |s: ImmutableString, d: ImmutableString, n: INT| -> RhaiResult<Array> {
            if n <= 1 || s.is_empty() || (!d.is_empty() && !s.contains(d.as_str())) {
                return Ok(whole(&s));
            }
            collect(s.rsplitn(segments(n), d.as_str()), max)
        },
    );
    engine.register_fn(
        "split_rev",
        move |s: ImmutableString, d: char| -> RhaiResult<Array> {
            if s.is_empty() || !s.contains(d) {
                return Ok(whole(&s));
            }
            collect(s.rsplit(d), max)
        },
    );
    engine.register_fn(
        "split_rev",
        move |s: ImmutableString, d: char, n: INT| -> RhaiResult<Array> {
            if n <= 1 || s.is_empty() || !s.contains(d) {
                return Ok(whole(&s));
            }
            collect(s.rsplitn(segments(n), d), max)
        },
    );
    engine.register_fn("to_chars", move |s: ImmutableString| -> RhaiResult<Array> {
        if s.chars().count() > max {
            return Err(array_too_large());
        }
        Ok(s.chars().map(Dynamic::from_char).collect())
    });
    let json_limits = limits.clone();
    engine.register_fn(
        "parse_json",
        move |text: ImmutableString| -> RhaiResult<Dynamic> {
            check_json(&text, &json_limits)?;
            serde_json::from_str::<Dynamic>(&text).map_err(|err| {
                Box::new(EvalAltResult::ErrorRuntime(
                    format!("parse_json: {err}").into(),
                    Position::NONE,
                ))
            })
        },
    );
}

/// Refuse JSON text whose parsed value would pass the limits, before parsing it: the strings
/// inside would be longer than the string limit in total, or it holds more values than arrays
/// and maps may. (Rhai checks the exact sizes afterwards; this only keeps the transient memory
/// of parsing in proportion to the limits.)
pub(crate) fn check_json(text: &str, limits: &Limits) -> RhaiResult<()> {
    let (mut in_string, mut escaped) = (false, false);
    let (mut string_bytes, mut values) = (0usize, 0usize);
    for byte in text.bytes() {
        if in_string {
            string_bytes += 1;
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b',' | b'[' | b'{' => values += 1,
                _ => {}
            }
        }
    }
    if string_bytes > limit(limits.max_string_size) {
        return Err(string_too_large());
    }
    if values > limit(limits.max_array_size).saturating_add(limit(limits.max_map_size)) {
        return Err(array_too_large());
    }
    Ok(())
}

/// Whether `value` nests arrays and maps more than `max` levels deep (`[]` is one level).
/// The walk stops one level past `max`, so its own recursion is bounded by the limit, not by
/// the data.
pub(crate) fn too_deep(value: &Dynamic, max: usize) -> bool {
    fn walk(value: &Dynamic, depth: usize, max: usize) -> bool {
        if let Ok(array) = value.as_array_ref() {
            depth > max || array.iter().any(|v| walk(v, depth + 1, max))
        } else if let Ok(map) = value.as_map_ref() {
            depth > max || map.values().any(|v| walk(v, depth + 1, max))
        } else {
            false
        }
    }
    walk(value, 1, max)
}
