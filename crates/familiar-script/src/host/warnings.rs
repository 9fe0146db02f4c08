//! Load-time warnings found in a script's text: near-miss handler names, wrong arities and
//! top-level imports. Part of [`crate::host`].

use super::known_handlers;
use crate::diag::{ScriptDiagnostic, find_fn};

/// Near-miss handler names and wrong arities.
pub(super) fn handler_warnings(
    file: &str,
    source: &str,
    functions: &[(String, Vec<String>)],
) -> Vec<ScriptDiagnostic> {
    let known = known_handlers();
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
                        find_fn(source, fname),
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
            find_fn(source, fname),
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
