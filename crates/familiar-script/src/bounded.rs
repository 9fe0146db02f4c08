//! Bounded replacements for the Rhai built-ins whose result can be far larger than their input,
//! and the depth and size checks Rhai does not make.
//!
//! Rhai checks the size limits of [`crate::Limits`] on a value after it is built: `s.split("")`
//! on a 16 MiB string first builds 16 million strings (over 1 GB), then fails. The functions
//! registered here (`split`, `split_rev`, `to_chars`, `parse_json`) shadow the built-ins
//! with the same behaviour, but stop with the same size error as soon as the result would pass
//! the limit. [`crate::host`] calls [`register`] once; [`crate::script_event`] and `actions`
//! use [`check_json`] and [`too_deep`] for `ev.raw`, `emit` and the state kept between calls.

use rhai::{Array, Dynamic, Engine, EvalAltResult, INT, ImmutableString, Map, Position};

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
    register_growing(engine, limits);
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

/// `replace` and `to_json`, which Rhai checks only after building a result that can be far
/// larger than the limit (a 16 MiB string with every character replaced by a longer one; a
/// map holding one long string many times): here the result's size is known first.
fn register_growing(engine: &mut Engine, limits: &Limits) {
    let max = limit(limits.max_string_size);
    let depth = limits.max_data_depth;
    fn replaced(s: &str, find: &str, sub: &str, max: usize) -> RhaiResult<ImmutableString> {
        if find.is_empty() || sub.len() <= find.len() {
            return Ok(s.replace(find, sub).into());
        }
        let count = s.matches(find).count();
        let grown = count.saturating_mul(sub.len() - find.len());
        if s.len().saturating_add(grown) > max {
            return Err(string_too_large());
        }
        Ok(s.replace(find, sub).into())
    }
    engine.register_fn(
        "replace",
        move |s: &mut ImmutableString, find: ImmutableString, sub: ImmutableString| {
            *s = replaced(s, &find, &sub, max)?;
            Ok::<(), Box<EvalAltResult>>(())
        },
    );
    engine.register_fn(
        "replace",
        move |s: &mut ImmutableString, find: ImmutableString, sub: char| {
            *s = replaced(s, &find, sub.encode_utf8(&mut [0; 4]), max)?;
            Ok::<(), Box<EvalAltResult>>(())
        },
    );
    engine.register_fn(
        "replace",
        move |s: &mut ImmutableString, find: char, sub: ImmutableString| {
            *s = replaced(s, find.encode_utf8(&mut [0; 4]), &sub, max)?;
            Ok::<(), Box<EvalAltResult>>(())
        },
    );
    engine.register_fn(
        "replace",
        move |s: &mut ImmutableString, find: char, sub: char| {
            let (mut a, mut b) = ([0; 4], [0; 4]);
            *s = replaced(s, find.encode_utf8(&mut a), sub.encode_utf8(&mut b), max)?;
            Ok::<(), Box<EvalAltResult>>(())
        },
    );
    engine.register_fn("to_json", move |map: &mut Map| -> RhaiResult<String> {
        // Quotes and escapes are not counted: Rhai's own check after building catches the
        // rest, with the transient memory in proportion to the limit.
        match measure(&Dynamic::from_map(map.clone()), depth, max) {
            Shape::Fits(_) => Ok(rhai::format_map_as_json(map)),
            Shape::TooDeep => Err(Box::new(EvalAltResult::ErrorRuntime(
                format!("to_json: data nested more than {depth} levels deep").into(),
                Position::NONE,
            ))),
            Shape::TooLarge => Err(string_too_large()),
        }
    });
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

/// How a value measures against the limits (see [`measure`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Within both bounds, with its size in bytes.
    Fits(usize),
    /// Nested deeper than the depth bound.
    TooDeep,
    /// Larger than the size bound.
    TooLarge,
}

/// Bytes counted for a value that is not a string, a blob, an array or a map.
const SCALAR_BYTES: usize = 16;

/// A value's size as the limits count it: the bytes of its strings and blobs and map keys, and
/// [`SCALAR_BYTES`] for every other value (an element, a number). A string reached twice counts
/// twice, as it would when printed, saved or sent. Nesting is counted as by [`too_deep`]. The
/// walk stops as soon as it passes `max_bytes` or `max_depth`, so it costs at most the bounds,
/// whatever the data (a map of 100,000 references to one 16 MiB string is not summed whole).
pub(crate) fn measure(value: &Dynamic, max_depth: usize, max_bytes: usize) -> Shape {
    fn walk(value: &Dynamic, depth: usize, bounds: (usize, usize), total: &mut usize) -> Shape {
        let (max_depth, max_bytes) = bounds;
        let add = |total: &mut usize, n: usize| {
            *total = total.saturating_add(n);
            *total > max_bytes
        };
        if let Ok(array) = value.as_array_ref() {
            if depth > max_depth {
                return Shape::TooDeep;
            }
            for item in array.iter() {
                if add(total, SCALAR_BYTES) {
                    return Shape::TooLarge;
                }
                let shape = walk(item, depth + 1, bounds, total);
                if shape != Shape::Fits(0) {
                    return shape;
                }
            }
        } else if let Ok(map) = value.as_map_ref() {
            if depth > max_depth {
                return Shape::TooDeep;
            }
            for (key, item) in map.iter() {
                if add(total, key.len() + SCALAR_BYTES) {
                    return Shape::TooLarge;
                }
                let shape = walk(item, depth + 1, bounds, total);
                if shape != Shape::Fits(0) {
                    return shape;
                }
            }
        } else if let Ok(text) = value.as_immutable_string_ref() {
            if add(total, text.len()) {
                return Shape::TooLarge;
            }
        } else if let Ok(blob) = value.as_blob_ref() {
            if add(total, blob.len()) {
                return Shape::TooLarge;
            }
        } else if add(total, SCALAR_BYTES) {
            return Shape::TooLarge;
        }
        // (`Fits(0)` is the walk's "go on"; the total is the caller's.)
        Shape::Fits(0)
    }
    let mut total = 0;
    match walk(value, 1, (max_depth, max_bytes), &mut total) {
        Shape::Fits(_) => Shape::Fits(total),
        other => other,
    }
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
