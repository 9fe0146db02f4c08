//! Load-time warnings found in a script's text: near-miss handler names, wrong arities,
//! top-level imports and helper functions that use state. Part of [`crate::host`].

use std::collections::HashMap;

use rhai::{Engine, ParseErrorType, Position};

use super::known_handlers;
use crate::diag::{FnAt, ScriptDiagnostic};

/// Near-miss handler names and wrong arities.
pub(super) fn handler_warnings(
    file: &str,
    source: &str,
    functions: &[(String, Vec<String>)],
    positions: &HashMap<&str, FnAt>,
) -> Vec<ScriptDiagnostic> {
    let known = known_handlers();
    let find_fn = |name: &str| positions.get(name).map(|at| (at.line, at.col));
    let mut warnings = Vec::new();
    for (fname, params) in functions {
        if let Some((_, arity)) = known.iter().find(|(k, _)| k == fname) {
            if *arity != params.len() {
                let other_is_right = functions
                    .iter()
                    .any(|(n, p)| n == fname && p.len() == *arity);
                if !other_is_right {
                    let expected = if *arity == 0 {
                        "no parameters".to_owned()
                    } else {
                        "1 parameter (the event)".to_owned()
                    };
                    warnings.push(ScriptDiagnostic::warning(
                        file,
                        source,
                        find_fn(fname),
                        format!(
                            "handler `{fname}` takes {expected} but is defined with {}; \
                             it will never be called",
                            params.len()
                        ),
                    ));
                }
            }
            continue;
        }
        let best = known
            .iter()
            .map(|(k, _)| (strsim::damerau_levenshtein(fname, k), k))
            .min_by_key(|(d, _)| *d);
        let message = match best {
            Some((distance, suggestion)) if distance <= 2 => {
                format!("`{fname}` is not a handler Familiar calls; did you mean `{suggestion}`?")
            }
            _ if fname.starts_with("on_") => format!(
                "`{fname}` looks like a handler but no event kind is called `{}`; it will \
                 only run when another function calls it",
                &fname[3..]
            ),
            _ => continue,
        };
        warnings.push(ScriptDiagnostic::warning(
            file,
            source,
            find_fn(fname),
            message,
        ));
    }
    // Rhai lists functions in no useful order; source order reads best.
    warnings.sort_by_key(|w| (w.line, w.col));
    warnings
}

/// Positions of `import` statements outside any function (brace depth 0), found in the text.
pub(super) fn top_level_imports(source: &str) -> Vec<(usize, usize)> {
    let mut depth: i64 = 0;
    let mut found = Vec::new();
    for (index, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        let trimmed = code.trim_start();
        if depth == 0 && trimmed.starts_with("import ") {
            found.push((index + 1, code.len() - trimmed.len() + 1));
        }
        depth += code.matches('{').count() as i64 - code.matches('}').count() as i64;
    }
    found
}

/// Helper functions (not handlers) that use a script-level variable: Rhai functions see only
/// their parameters, so such a helper compiles but fails with "Variable not found" when it
/// runs. Each helper's own text is compiled on its own, in strict mode and without the state,
/// its positions shifted to stay those of the file; the first variable it cannot see is
/// reported if it is a state variable or constant. (Compiling each helper's text alone, not
/// the whole file with the rest blanked, keeps loading linear in the script's size.)
pub(super) fn helpers_using_state(
    engine: &Engine,
    file: &str,
    source: &str,
    helpers: &[String],
    state: &[String],
    positions: &HashMap<&str, FnAt>,
) -> Vec<ScriptDiagnostic> {
    let mut warnings = Vec::new();
    for helper in helpers {
        let Some(at) = positions.get(helper.as_str()) else {
            continue;
        };
        let Some((text, first_line)) = only_function(source, at) else {
            continue;
        };
        let Err(err) = engine.compile(&text) else {
            continue;
        };
        let ParseErrorType::VariableUndefined(var) = &*err.0 else {
            continue;
        };
        if !state.contains(var) {
            continue;
        }
        let pos = shifted(err.1, first_line);
        warnings.push(ScriptDiagnostic::warning(
            file,
            source,
            pos,
            format!(
                "helper `{helper}` uses the script-level variable `{var}`, which functions \
                 cannot see: it fails when `{helper}` runs; pass `{var}` as an argument and \
                 return the new value"
            ),
        ));
    }
    warnings
}

/// The text of `fn name(...) { ... }` alone, led by spaces so that its first line's columns
/// are the file's, with the file's line it starts on; `None` if its extent cannot be found.
fn only_function(source: &str, at: &FnAt) -> Option<(String, usize)> {
    let fn_at = source[..at.byte].rfind("fn")?;
    let open = at.byte + source[at.byte..].find('{')?;
    let close = block_end(source.as_bytes(), open)?;
    let line_start = source[..fn_at].rfind('\n').map_or(0, |n| n + 1);
    let indent = source[line_start..fn_at].chars().count();
    let first_line = at.line - source[fn_at..at.byte].matches('\n').count();
    let mut text = " ".repeat(indent);
    text.push_str(&source[fn_at..=close]);
    Some((text, first_line))
}

/// A position in a function's own text, as the file's (1-based line and column).
fn shifted(pos: Position, first_line: usize) -> Option<(usize, usize)> {
    let line = pos.line()?;
    Some((line + first_line - 1, pos.position().unwrap_or(1)))
}

/// Index of the `}` closing the `{` at `open`, skipping strings, characters and comments
/// (backtick strings' `${...}` are code again).
fn block_end(src: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    // Open backtick strings whose `${` we are inside, as the brace depth they started at.
    let mut interpolations: Vec<usize> = Vec::new();
    let mut i = open;
    while i < src.len() {
        match src[i] {
            b'{' => depth += 1,
            b'}' => {
                if interpolations.last() == Some(&depth) {
                    interpolations.pop();
                    i = skip_backtick(src, i + 1, &mut interpolations, depth)?;
                    continue;
                }
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'"' | b'\'' => {
                let quote = src[i];
                i += 1;
                while i < src.len() && src[i] != quote {
                    i += if src[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'`' => {
                i = skip_backtick(src, i + 1, &mut interpolations, depth)?;
                continue;
            }
            b'/' if src.get(i + 1) == Some(&b'/') => {
                while i < src.len() && src[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if src.get(i + 1) == Some(&b'*') => {
                let mut nesting = 0usize;
                while i + 1 < src.len() {
                    if src[i] == b'/' && src[i + 1] == b'*' {
                        nesting += 1;
                        i += 1;
                    } else if src[i] == b'*' && src[i + 1] == b'/' {
                        nesting -= 1;
                        i += 1;
                        if nesting == 0 {
                            break;
                        }
                    }
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Skip the text of a backtick string from `i` to its closing backtick (returning the index
/// after it), or to a `${` (returning the index after it, with the interpolation recorded).
fn skip_backtick(
    src: &[u8],
    mut i: usize,
    interpolations: &mut Vec<usize>,
    depth: usize,
) -> Option<usize> {
    while i < src.len() {
        match src[i] {
            b'`' => return Some(i + 1),
            b'$' if src.get(i + 1) == Some(&b'{') => {
                interpolations.push(depth);
                return Some(i + 2);
            }
            _ => i += 1,
        }
    }
    None
}
