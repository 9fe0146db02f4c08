//! Diagnostics for script authors: compile errors, runtime errors and load-time warnings,
//! located as `script.rhai:LINE:COL` and rendered with a caret under the source line.
//!
//! [`crate::host`] turns Rhai's `ParseError`/`EvalAltResult` into [`ScriptDiagnostic`]s here;
//! the binary prints them (`familiar check`, `run`, `test`, `watch`). The rendered text is a
//! contract with users and is golden-tested, so change it deliberately. On a terminal it is
//! coloured ([`ScriptDiagnostic::coloured`]) like rustc's messages.
//!
//! Rendered here rather than by codespan-reporting, ariadne or miette (compared against the
//! goldens): they move the location to a second line (`--> file:3:5`), where this first line
//! `file:3:5: error: message` is what editors' quickfix and `grep` read, and Rhai gives a
//! position, not a span, so their underlines and labels would have nothing more to show.

use std::collections::HashMap;
use std::fmt;

use anstyle::{AnsiColor, Style};
use familiar_model::EventKind;
use familiar_model::text::{printable, printable_line};
use rhai::{EvalAltResult, ParseError, Position};

use crate::host::TIME_LIMIT;
use crate::sandbox::Limits;
use crate::script_event::EVENT_FIELDS;
use crate::timers::TIMER_FIELDS;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// Where a runtime error happened: which handler, for which event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeContext {
    /// Handler name (`on_error`, `init`, or `<top level>` for the script body).
    pub handler: String,
    /// The event being handled; `None` while loading (`init()` and the script body).
    pub event: Option<(EventKind, u64)>,
}

/// One located message about a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptDiagnostic {
    pub severity: Severity,
    /// File name of the script (or module) the position refers to, e.g. `default.rhai`.
    pub file: String,
    /// 1-based line and column, when known.
    pub line: Option<usize>,
    pub col: Option<usize>,
    pub message: String,
    pub runtime: Option<RuntimeContext>,
    /// The source line at `line`, for the caret excerpt.
    pub source_line: Option<String>,
    /// Extra lines printed as `= note: ...` (call chain, hints).
    pub notes: Vec<String>,
}

impl ScriptDiagnostic {
    pub fn warning(file: &str, source: &str, pos: Option<(usize, usize)>, message: String) -> Self {
        let mut diag = ScriptDiagnostic {
            severity: Severity::Warning,
            ..ScriptDiagnostic::plain_error(file, message)
        };
        if let Some((line, col)) = pos {
            diag.locate(source, line, col);
        }
        diag
    }

    /// An error with no position (I/O, a missing file).
    pub fn plain_error(file: &str, message: String) -> Self {
        ScriptDiagnostic {
            severity: Severity::Error,
            file: file.to_owned(),
            line: None,
            col: None,
            message,
            runtime: None,
            source_line: None,
            notes: Vec::new(),
        }
    }

    /// A compile (syntax or strict-variable) error.
    pub fn from_parse(file: &str, source: &str, err: &ParseError) -> Self {
        let mut diag = ScriptDiagnostic::plain_error(file, err.0.to_string());
        if let Some((line, col)) = split_pos(err.1) {
            diag.locate(source, line, col);
        }
        diag
    }

    /// A runtime error. `module_source` returns the text of an imported module's file by the
    /// name Rhai reports, so errors inside modules get their own excerpt.
    pub fn from_eval(
        file: &str,
        source: &str,
        err: &EvalAltResult,
        runtime: RuntimeContext,
        limits: &Limits,
        module_source: &dyn Fn(&str) -> Option<(String, String)>,
    ) -> Self {
        let mut notes = Vec::new();
        let mut current = err;
        let mut cur_file = file.to_owned();
        let mut cur_source: Option<String> = None;
        loop {
            match current {
                EvalAltResult::ErrorInFunctionCall(name, src, inner, pos) => {
                    notes.push(match split_pos(*pos) {
                        Some((l, c)) => {
                            format!("in function '{name}', called at {cur_file}:{l}:{c}")
                        }
                        None => format!("in function '{name}'"),
                    });
                    // A function from an imported module: its body is in the module's file.
                    if !src.is_empty()
                        && src != file
                        && let Some((mod_file, mod_source)) = module_source(src)
                    {
                        cur_file = mod_file;
                        cur_source = Some(mod_source);
                    }
                    current = inner;
                }
                EvalAltResult::ErrorInModule(name, inner, pos) => {
                    notes.push(match split_pos(*pos) {
                        Some((l, c)) => {
                            format!("in module '{name}', imported at {cur_file}:{l}:{c}")
                        }
                        None => format!("in module '{name}'"),
                    });
                    if let Some((mod_file, mod_source)) = module_source(name) {
                        cur_file = mod_file;
                        cur_source = Some(mod_source);
                    }
                    current = inner;
                }
                _ => break,
            }
        }
        let pos = current.position();
        let mut message = current.to_string();
        if !pos.is_none() {
            let suffix = format!(" ({pos})");
            if let Some(stripped) = message.strip_suffix(&suffix) {
                message = stripped.to_owned();
            }
        }
        match current {
            EvalAltResult::ErrorTerminated(token, _) if token.to_string() == TIME_LIMIT => {
                message = format!(
                    "Time limit exceeded: more than {} ms in one call (an endless loop, or too \
                     much work for one event?)",
                    limits.max_call_time.as_millis()
                )
            }
            EvalAltResult::ErrorDotExpr(text, _) => {
                if let Some(better) = unknown_field(text) {
                    message = better;
                }
            }
            EvalAltResult::ErrorTooManyOperations(_) => {
                message = format!(
                    "{message}: more than {} in one call (an endless loop?)",
                    limits.max_operations
                )
            }
            EvalAltResult::ErrorStackOverflow(_) => {
                message = format!(
                    "{message}: more than {} nested function calls (runaway recursion?)",
                    limits.max_call_levels
                )
            }
            EvalAltResult::ErrorDataTooLarge(what, _) => {
                let limit = if what.contains("string") {
                    format!("{} bytes", limits.max_string_size)
                } else if what.contains("array") {
                    format!("{} elements", limits.max_array_size)
                } else {
                    format!("{} entries", limits.max_map_size)
                };
                message = format!("{message} (limit {limit})");
            }
            _ => {}
        }
        if let EvalAltResult::ErrorFunctionNotFound(signature, _) = current {
            let called = signature.split(" (").next().unwrap_or_default();
            let best = crate::actions::FUNCTIONS
                .iter()
                .map(|f| (strsim::damerau_levenshtein(called, f), f))
                .min_by_key(|(d, _)| *d);
            if let Some((distance, name)) = best
                && distance <= 2
                && distance > 0
            {
                notes.push(format!("did you mean `{name}`?"));
            }
        }
        if let EvalAltResult::ErrorModuleNotFound(..) = current
            && runtime.event.is_some()
        {
            notes.push(
                "import inside the function that uses the module (handlers do not see top-level \
                 imports), with a string literal path"
                    .into(),
            );
        }
        // A thrown value can be a whole tool output: keep the message readable.
        if message.chars().count() > MAX_MESSAGE_CHARS {
            message = message.chars().take(MAX_MESSAGE_CHARS).collect::<String>() + "…";
        }
        let handler = runtime.handler.clone();
        let mut diag = ScriptDiagnostic::plain_error(&cur_file, message);
        diag.runtime = Some(runtime);
        diag.notes = notes;
        let source = cur_source.as_deref().unwrap_or(source);
        // Limit errors lose their position on the way out of Rhai; point at the handler.
        if let Some((line, col)) = split_pos(pos).or_else(|| find_fn(source, &handler)) {
            diag.locate(source, line, col);
        }
        diag
    }

    fn locate(&mut self, source: &str, line: usize, col: usize) {
        self.line = Some(line);
        self.col = Some(col);
        self.source_line = source
            .lines()
            .nth(line.saturating_sub(1))
            .map(|text| text.trim_end().to_owned());
    }

    /// The first line of the rendering, `file:line:col: severity: message`. Control characters
    /// (and newlines) in the message are shown escaped: it can quote transcript text.
    pub fn headline(&self) -> String {
        self.headline_in(&Styles::PLAIN)
    }

    fn headline_in(&self, styles: &Styles) -> String {
        let mut out = printable_line(&self.file).into_owned();
        if let Some(line) = self.line {
            out.push_str(&format!(":{line}"));
            if let Some(col) = self.col {
                out.push_str(&format!(":{col}"));
            }
        }
        let (severity, style) = match self.severity {
            Severity::Error => ("error", styles.error),
            Severity::Warning => ("warning", styles.warning),
        };
        let location = styles.location;
        let mut out = format!("{location}{out}:{location:#} {style}{severity}");
        if let Some(rt) = &self.runtime {
            out.push_str(&format!(" in {}", rt.handler));
            if let Some((kind, line)) = rt.event {
                out.push_str(&format!(" (event {kind} from line {line})"));
            }
        }
        out.push_str(&format!(":{style:#} "));
        out.push_str(&printable_line(&self.message));
        out
    }

    /// The same text as `Display`, in the colours of rustc's and clap's messages (severity in
    /// red or yellow, gutter in blue), for a terminal. Print it through a stream that strips
    /// them when stderr is not one (`anstream`).
    pub fn coloured(&self) -> impl fmt::Display + '_ {
        Coloured(self)
    }

    fn render(&self, f: &mut fmt::Formatter<'_>, styles: &Styles) -> fmt::Result {
        f.write_str(&self.headline_in(styles))?;
        let gutter = self.line.map_or(1, |l| l.to_string().len());
        let pad = " ".repeat(gutter);
        let bar = format!("{}|{:#}", styles.gutter, styles.gutter);
        if let (Some(line), Some(text)) = (self.line, &self.source_line) {
            let text = printable(text);
            let number = format!("{}{line}{:#}", styles.gutter, styles.gutter);
            write!(f, "\n{pad} {bar}\n{number} {bar} {text}\n{pad} {bar} ")?;
            // Reuse the line's own tabs so the caret lines up in any terminal.
            let col = self.col.unwrap_or(1).saturating_sub(1);
            let lead: String = text
                .chars()
                .take(col)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            let caret = match self.severity {
                Severity::Error => styles.error,
                Severity::Warning => styles.warning,
            };
            write!(f, "{lead}{caret}^{caret:#}")?;
        }
        for note in &self.notes {
            let eq = format!("{}={:#}", styles.gutter, styles.gutter);
            let label = format!("{}note{:#}", styles.location, styles.location);
            write!(f, "\n{pad} {eq} {label}: {}", printable_line(note))?;
        }
        Ok(())
    }
}

/// How each part of a diagnostic looks; [`Styles::PLAIN`] adds nothing.
struct Styles {
    error: Style,
    warning: Style,
    location: Style,
    gutter: Style,
}

impl Styles {
    const PLAIN: Styles = Styles {
        error: Style::new(),
        warning: Style::new(),
        location: Style::new(),
        gutter: Style::new(),
    };
    const COLOURED: Styles = Styles {
        error: AnsiColor::Red.on_default().bold(),
        warning: AnsiColor::Yellow.on_default().bold(),
        location: Style::new().bold(),
        gutter: AnsiColor::Blue.on_default().bold(),
    };
}

struct Coloured<'a>(&'a ScriptDiagnostic);

impl fmt::Display for Coloured<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.render(f, &Styles::COLOURED)
    }
}

impl fmt::Display for ScriptDiagnostic {
    /// ```text
    /// notify.rhai:12:5: error in on_error (event error from line 42): Variable not found: cuont
    ///    |
    /// 12 |     cuont += 1;
    ///    |     ^
    ///    = note: in function 'helper', called at notify.rhai:20:5
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.render(f, &Styles::PLAIN)
    }
}

/// Longest message kept, in characters.
const MAX_MESSAGE_CHARS: usize = 500;

/// Rhai's "Unknown property 'targte' - a getter is not registered for type 'Event'" in the
/// words of the docs, with the nearest field name.
fn unknown_field(text: &str) -> Option<String> {
    let rest = text.strip_prefix("Unknown property '")?;
    let (prop, rest) = rest.split_once('\'')?;
    let (what, fields) = if rest.ends_with("type 'Event'") {
        ("the event", EVENT_FIELDS)
    } else if rest.ends_with("type 'Timer'") {
        ("the timer", TIMER_FIELDS)
    } else {
        return None;
    };
    let best = fields
        .iter()
        .map(|f| (strsim::damerau_levenshtein(prop, f), *f))
        .min_by_key(|(d, _)| *d);
    Some(match best {
        Some((distance, field)) if distance <= 2 || (distance <= 3 && prop.len() > 6) => {
            format!("{what} has no field `{prop}`; did you mean `{field}`?")
        }
        _ => format!(
            "{what} has no field `{prop}` (its fields: {})",
            fields.join(", ")
        ),
    })
}

fn split_pos(pos: Position) -> Option<(usize, usize)> {
    let line = pos.line()?;
    Some((line, pos.position().unwrap_or(1)))
}

/// Where a function's name stands in the text: 1-based line and column, and its byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FnAt {
    pub line: usize,
    pub col: usize,
    pub byte: usize,
}

/// Every `fn name(` in the text, each name at its first place, in one pass (Rhai's public
/// function metadata carries no position). Loading looks up every function here instead of
/// searching the text once per function, which made loading grow with the square of its size.
pub(crate) fn fn_positions(source: &str) -> HashMap<&str, FnAt> {
    let mut found = HashMap::new();
    let mut line_start = 0;
    for (index, line) in source.split_inclusive('\n').enumerate() {
        let mut offset = 0;
        while let Some(at) = line[offset..].find("fn ") {
            let fn_at = offset + at;
            offset = fn_at + 3;
            let before_ok = !line[..fn_at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            let after = line[offset..].trim_start();
            let name_start = line.len() - after.len();
            let name_len = after
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let name = &after[..name_len];
            if before_ok && !name.is_empty() && after[name_len..].trim_start().starts_with('(') {
                found.entry(name).or_insert(FnAt {
                    line: index + 1,
                    col: line[..name_start].chars().count() + 1,
                    byte: line_start + name_start,
                });
            }
        }
        line_start += line.len();
    }
    found
}

/// Position of the name in `fn name(` (1-based line, column); see [`fn_positions`].
pub(crate) fn find_fn(source: &str, name: &str) -> Option<(usize, usize)> {
    fn_positions(source).get(name).map(|at| (at.line, at.col))
}

#[cfg(test)]
mod tests {
    use super::find_fn;

    proptest::proptest! {
        /// In a script of functions, comments and statements in any order, every function is
        /// found where it was written (its first definition), whatever stands around it.
        #[test]
        fn every_function_is_found_where_it_was_written(
            pieces in proptest::collection::vec((0u8..4, 0usize..6, 0usize..3), 1..40),
        ) {
            let mut source = String::new();
            let mut want: std::collections::HashMap<String, (usize, usize)> =
                std::collections::HashMap::new();
            for (kind, name, indent) in pieces {
                let name = format!("f_{name}");
                let pad = " ".repeat(indent);
                match kind {
                    0 => {
                        let line = source.matches('\n').count() + 1;
                        want.entry(name.clone()).or_insert((line, indent + 4));
                        source.push_str(&format!("{pad}fn {name}(a) {{ a }}\n"));
                    }
                    1 => source.push_str(&format!("{pad}// {name}(a) is not a function\n")),
                    2 => source.push_str(&format!("{pad}let x{name} = {name}_fn(1);\n")),
                    _ => source.push_str(&format!("{pad}fn_{name}(2);\n")),
                }
            }
            let found = super::fn_positions(&source);
            for (name, at) in &want {
                let got = found.get(name.as_str()).map(|f| (f.line, f.col));
                proptest::prop_assert_eq!(got, Some(*at), "{}", source);
            }
            proptest::prop_assert_eq!(found.len(), want.len(), "{}", source);
        }
    }

    #[test]
    fn find_fn_locates_the_name() {
        let src = "let x = 1;\n\nfn on_eror(ev) {\n}\n  fn  helper (a) {}\nfn on_error2(ev) {}\n";
        assert_eq!(find_fn(src, "on_eror"), Some((3, 4)));
        assert_eq!(find_fn(src, "helper"), Some((5, 7)));
        assert_eq!(find_fn(src, "on_error"), None);
        assert_eq!(find_fn(src, "on_event"), None);
        assert_eq!(find_fn(src, "on_error2"), Some((6, 4)));
        let at = super::fn_positions(src);
        assert_eq!(&src[at["helper"].byte..][..6], "helper");
        assert_eq!(at.len(), 3);
    }
}
