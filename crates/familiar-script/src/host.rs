//! [`ScriptHost`]: loads scripts in order, calls their handlers for each event, collects the
//! actions they queue, and reloads a script safely when its file changes.
//!
//! One Rhai `Engine` (configured by [`crate::sandbox`], with the getters of
//! [`crate::script_event`] and the functions of `actions`) serves every script. Each
//! script keeps its own compiled AST and its own `Scope`, which holds the script-level
//! variables: this is the Rhai book's "scriptable event handler with state" pattern. Loading a
//! script runs its body once (so `let count = 0;` at top level initialises state), then
//! `init()` if defined, then checks the whole script in strict-variables mode against the
//! resulting state, so a misspelled variable anywhere is a located load error.
//!
//! Reloading compiles and initialises the new version beside the old one and swaps only on
//! success: a broken edit leaves the old script running and returns the located error. State
//! does not survive a reload (the new code may define other variables); `init()` runs again.
//! `once_per` timers are kept by the host across reloads so an edit cannot cause a
//! notification storm.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use familiar_model::{Action, ActionKind, Event, EventKind};
use rhai::{AST, CallFnOptions, Dynamic, Engine, EvalAltResult, Scope};

use crate::actions::{self, Shared};
use crate::clock::{Clock, SystemClock};
use crate::diag::{RuntimeContext, ScriptDiagnostic, find_fn};
use crate::sandbox::{self, ImportRoot, Limits};
use crate::script_event::{self, ScriptEvent};

/// Name used in diagnostics for a script's top-level statements.
const TOP_LEVEL: &str = "<top level>";

/// How the host runs scripts.
#[derive(Clone)]
pub struct HostConfig {
    pub limits: Limits,
    /// Whether `run([...])` produces `run` actions (`--allow-run`). When false each call is
    /// reported as a warning and produces nothing.
    pub allow_run: bool,
    /// The time source of `once_per`.
    pub clock: Arc<dyn Clock>,
}

impl Default for HostConfig {
    fn default() -> HostConfig {
        HostConfig {
            limits: Limits::default(),
            allow_run: false,
            clock: Arc::new(SystemClock::new()),
        }
    }
}

impl std::fmt::Debug for HostConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostConfig")
            .field("limits", &self.limits)
            .field("allow_run", &self.allow_run)
            .finish_non_exhaustive()
    }
}

/// Why a script could not be loaded or reloaded.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("{}: cannot read script: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A compile error, or a runtime error in the script body or `init()`; rendered with its
    /// position and source excerpt.
    #[error("{0}")]
    Load(Box<ScriptDiagnostic>),
    #[error("{}: no script was loaded from this path", .0.display())]
    NotLoaded(PathBuf),
}

impl ScriptError {
    /// The located diagnostic, for load errors.
    pub fn diagnostic(&self) -> Option<&ScriptDiagnostic> {
        match self {
            ScriptError::Load(diag) => Some(diag),
            _ => None,
        }
    }
}

/// What `familiar check` prints about a loaded script.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadReport {
    /// File name of the script (`default.rhai`), the tag on its actions.
    pub script: String,
    /// Handlers Familiar will call: `init`, `on_event`, `on_<kind>`, in source order.
    pub handlers: Vec<String>,
    /// Other functions, as `name(params)`.
    pub functions: Vec<String>,
    /// Script-level state variables after `init()`, in declaration order.
    pub state: Vec<String>,
    /// Script-level constants (`const`).
    pub constants: Vec<String>,
    pub warnings: Vec<ScriptDiagnostic>,
}

/// Runtime errors of one handler of one script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCount {
    pub script: String,
    pub handler: String,
    pub count: u64,
}

/// One loaded script with its state.
struct Script {
    id: usize,
    name: String,
    path: Option<PathBuf>,
    compiled: Compiled,
    errors: BTreeMap<String, u64>,
    /// Errors already shown once: (handler, line, col, message).
    reported: HashSet<(String, Option<usize>, Option<usize>, String)>,
}

/// The parts of a script that a reload replaces as one.
struct Compiled {
    source: String,
    dir: Option<PathBuf>,
    /// Canonical paths of the module files it imported (directly or not).
    imports: Vec<PathBuf>,
    ast: AST,
    scope: Scope<'static>,
    on_event: bool,
    /// `on_<kind>` defined, indexed like [`EventKind::ALL`].
    on_kind: [bool; EventKind::ALL.len()],
}

/// Loads scripts and maps events to actions. See the module documentation.
pub struct ScriptHost {
    engine: Engine,
    shared: Shared,
    root: ImportRoot,
    clock: Arc<dyn Clock>,
    limits: Limits,
    scripts: Vec<Script>,
    next_id: usize,
    handler_names: Vec<String>,
}

impl std::fmt::Debug for ScriptHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptHost")
            .field("scripts", &self.script_names())
            .finish_non_exhaustive()
    }
}

fn kind_index(kind: EventKind) -> usize {
    // `EventKind::ALL` lists the variants in declaration order.
    kind as usize
}

/// Every handler name Familiar calls, with its parameter count.
pub fn known_handlers() -> Vec<(String, usize)> {
    let mut names = vec![("init".to_owned(), 0), ("on_event".to_owned(), 1)];
    names.extend(
        EventKind::ALL
            .iter()
            .map(|kind| (format!("on_{}", kind.as_str()), 1)),
    );
    names
}

impl ScriptHost {
    pub fn new(config: HostConfig) -> ScriptHost {
        let shared = Shared::default();
        shared.lock().allow_run = config.allow_run;
        let root = ImportRoot::default();
        let mut engine = Engine::new();
        sandbox::configure(&mut engine, &config.limits, &root);
        script_event::register(&mut engine);
        actions::register(&mut engine, &shared);
        // `print` and `debug` become `log` actions, so they show in dry runs like any action.
        let s = shared.clone();
        engine.on_print(move |text| {
            s.lock().queue.push(ActionKind::Log {
                text: text.to_owned(),
            })
        });
        let s = shared.clone();
        engine.on_debug(move |text, _source, _pos| {
            s.lock().queue.push(ActionKind::Log {
                text: text.to_owned(),
            })
        });
        ScriptHost {
            engine,
            shared,
            root,
            clock: config.clock,
            limits: config.limits,
            scripts: Vec::new(),
            next_id: 0,
            handler_names: EventKind::ALL
                .iter()
                .map(|kind| format!("on_{}", kind.as_str()))
                .collect(),
        }
    }

    /// Allow or forbid `run([...])` from now on (e.g. after the config changed).
    pub fn set_allow_run(&mut self, allow: bool) {
        self.shared.lock().allow_run = allow;
    }

    /// File names of the loaded scripts, in call order.
    pub fn script_names(&self) -> Vec<String> {
        self.scripts.iter().map(|s| s.name.clone()).collect()
    }

    /// Load a script file and append it to the call order. Imports resolve inside its directory.
    pub fn load_file(&mut self, path: &Path) -> Result<LoadReport, ScriptError> {
        let source = read(path)?;
        let name = file_name(path);
        self.add(&name, source, Some(path))
    }

    /// Load a script from text (tests, benchmarks, embedded scripts). `dir` is where its
    /// imports resolve; `None` forbids imports.
    pub fn load_source(
        &mut self,
        name: &str,
        source: &str,
        dir: Option<&Path>,
    ) -> Result<LoadReport, ScriptError> {
        let id = self.next_id;
        let (compiled, report) = self.compile(id, name, source.to_owned(), dir)?;
        Ok(self.push(id, name, None, compiled, report))
    }

    fn add(
        &mut self,
        name: &str,
        source: String,
        path: Option<&Path>,
    ) -> Result<LoadReport, ScriptError> {
        let id = self.next_id;
        let dir = path.and_then(Path::parent);
        let (compiled, report) = self.compile(id, name, source, dir)?;
        Ok(self.push(id, name, path, compiled, report))
    }

    fn push(
        &mut self,
        id: usize,
        name: &str,
        path: Option<&Path>,
        compiled: Compiled,
        mut report: LoadReport,
    ) -> LoadReport {
        if self.scripts.iter().any(|s| s.name == name) {
            report.warnings.push(ScriptDiagnostic::warning(
                name,
                "",
                None,
                format!(
                    "another loaded script is also named {name}: their actions carry the same \
                     tag; rename one to tell them apart"
                ),
            ));
        }
        self.next_id += 1;
        self.scripts.push(Script {
            id,
            name: name.to_owned(),
            path: path.map(Path::to_path_buf),
            compiled,
            errors: BTreeMap::new(),
            reported: HashSet::new(),
        });
        report
    }

    /// Whether a loaded script may read `ev.raw`, so the caller knows to keep the original
    /// records (`NormalizerConfig::keep_raw`). Conservative: any script whose text mentions
    /// `raw` counts.
    pub fn uses_raw(&self) -> bool {
        self.scripts
            .iter()
            .any(|s| s.compiled.source.contains("raw"))
    }

    /// Hot reload: compile and initialise the file's new text; on success replace the loaded
    /// script of that path (state reset, `init()` run again), on error keep the old one running
    /// and return the located error.
    pub fn reload(&mut self, path: &Path) -> Result<LoadReport, ScriptError> {
        let index = self
            .scripts
            .iter()
            .position(|s| s.path.as_deref().is_some_and(|p| same_file(p, path)))
            .ok_or_else(|| ScriptError::NotLoaded(path.to_path_buf()))?;
        let source = read(path)?;
        let id = self.scripts[index].id;
        let name = self.scripts[index].name.clone();
        let (compiled, report) = self.compile(id, &name, source, path.parent())?;
        let script = &mut self.scripts[index];
        script.compiled = compiled;
        script.errors.clear();
        script.reported.clear();
        Ok(report)
    }

    /// Reload after the files in `changed` changed (as reported by [`crate::ScriptWatcher`]):
    /// a changed script is reloaded, and so is every script that imports a changed module
    /// (imports are embedded at load). Other files are ignored. Returns each reloaded
    /// script's path with its outcome.
    pub fn reload_changed(
        &mut self,
        changed: &[PathBuf],
    ) -> Vec<(PathBuf, Result<LoadReport, ScriptError>)> {
        let mut targets: Vec<PathBuf> = Vec::new();
        for path in changed {
            let canonical = path.canonicalize().ok();
            for script in &self.scripts {
                let Some(script_path) = &script.path else {
                    continue;
                };
                let imports_it = canonical
                    .as_ref()
                    .is_some_and(|c| script.compiled.imports.contains(c));
                if (imports_it || same_file(script_path, path)) && !targets.contains(script_path) {
                    targets.push(script_path.clone());
                }
            }
        }
        targets
            .into_iter()
            .map(|p| {
                let result = self.reload(&p);
                (p, result)
            })
            .collect()
    }

    /// Paths of the scripts loaded from files (what a watcher should watch).
    pub fn script_paths(&self) -> Vec<PathBuf> {
        self.scripts.iter().filter_map(|s| s.path.clone()).collect()
    }

    /// Runtime errors so far, per script and handler (including repeats not re-reported).
    pub fn error_counts(&self) -> Vec<ErrorCount> {
        self.scripts
            .iter()
            .flat_map(|s| {
                s.errors.iter().map(|(handler, count)| ErrorCount {
                    script: s.name.clone(),
                    handler: handler.clone(),
                    count: *count,
                })
            })
            .collect()
    }

    /// Run every script's handlers for `event`: `on_event` first, then `on_<kind>`, script by
    /// script in load order. Actions are appended to `actions`; runtime errors and refused
    /// `run` calls to `diagnostics` (each distinct error once; repeats are only counted).
    pub fn handle(
        &mut self,
        event: &Event,
        actions: &mut Vec<Action>,
        diagnostics: &mut Vec<ScriptDiagnostic>,
    ) {
        let index = kind_index(event.kind);
        if !self
            .scripts
            .iter()
            .any(|s| s.compiled.on_event || s.compiled.on_kind[index])
        {
            return;
        }
        let now = self.clock.now_secs(event);
        let script_event = ScriptEvent::new(event.clone());
        for script in &mut self.scripts {
            let (wants_all, wants_kind) =
                (script.compiled.on_event, script.compiled.on_kind[index]);
            if !wants_all && !wants_kind {
                continue;
            }
            {
                let mut state = self.shared.lock();
                state.script_id = script.id;
                state.now = now;
            }
            if wants_all {
                call_handler(
                    &self.engine,
                    &self.shared,
                    &self.limits,
                    script,
                    "on_event",
                    &script_event,
                    diagnostics,
                );
            }
            if wants_kind {
                call_handler(
                    &self.engine,
                    &self.shared,
                    &self.limits,
                    script,
                    &self.handler_names[index],
                    &script_event,
                    diagnostics,
                );
            }
            let mut state = self.shared.lock();
            for kind in state.queue.drain(..) {
                actions.push(Action {
                    kind,
                    script: script.name.clone(),
                    session: event.session.clone(),
                    agent: event.agent.clone(),
                    line: event.line,
                    event: event.kind,
                });
            }
        }
    }

    /// [`ScriptHost::handle`] returning fresh vectors.
    pub fn handle_event(&mut self, event: &Event) -> (Vec<Action>, Vec<ScriptDiagnostic>) {
        let mut actions = Vec::new();
        let mut diagnostics = Vec::new();
        self.handle(event, &mut actions, &mut diagnostics);
        (actions, diagnostics)
    }

    /// Compile, run the body and `init()`, check strictly; nothing is kept on error.
    fn compile(
        &mut self,
        id: usize,
        name: &str,
        source: String,
        dir: Option<&Path>,
    ) -> Result<(Compiled, LoadReport), ScriptError> {
        let load_error = |diag: ScriptDiagnostic| ScriptError::Load(Box::new(diag));
        let dir = dir.map(|d| {
            if d.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                d.to_path_buf()
            }
        });
        let module_source = |module: &str| module_text(dir.as_deref(), module);
        let top_level = RuntimeContext {
            handler: TOP_LEVEL.into(),
            event: None,
        };

        // Pass 1, lenient: functions may use script-level variables that do not exist yet.
        // Imports are resolved now, inside the script's directory, and embedded in the AST.
        let _ = self.root.set(dir.clone());
        self.engine.set_strict_variables(false);
        let compiled = self
            .engine
            .compile_into_self_contained(&Scope::new(), &source);
        self.engine.set_strict_variables(true);
        let imports = self.root.set(None);
        let mut ast = compiled.map_err(|mut err| {
            // Imports resolved at compile time carry no position: find the import in the text.
            if let EvalAltResult::ErrorModuleNotFound(message, pos) = &mut *err
                && pos.is_none()
                && let Some((line, col)) = find_import(&source, message)
            {
                *pos = rhai::Position::new(line, col);
            }
            load_error(match *err {
                EvalAltResult::ErrorParsing(ref kind, pos) => ScriptDiagnostic::from_parse(
                    name,
                    &source,
                    &rhai::ParseError(Box::new(kind.clone()), pos),
                ),
                ref other => ScriptDiagnostic::from_eval(
                    name,
                    &source,
                    other,
                    top_level.clone(),
                    &self.limits,
                    &module_source,
                ),
            })
        })?;
        ast.set_source(name);

        {
            let mut state = self.shared.lock();
            state.script_id = id;
            state.queue.clear();
            state.refusals.clear();
        }
        // The body initialises the state variables.
        let mut scope = Scope::new();
        self.engine
            .run_ast_with_scope(&mut scope, &ast)
            .map_err(|err| {
                load_error(ScriptDiagnostic::from_eval(
                    name,
                    &source,
                    &err,
                    top_level.clone(),
                    &self.limits,
                    &module_source,
                ))
            })?;

        let mut functions: Vec<(String, Vec<String>)> = ast
            .iter_functions()
            .map(|f| {
                (
                    f.name.to_owned(),
                    f.params.iter().map(|p| (*p).to_owned()).collect(),
                )
            })
            .collect();
        // Rhai keeps functions in a hash map; list them in source order.
        functions.sort_by_key(|(fname, _)| find_fn(&source, fname).unwrap_or((usize::MAX, 0)));
        let has = |fname: &str, arity: usize| {
            functions
                .iter()
                .any(|(n, params)| n == fname && params.len() == arity)
        };
        if has("init", 0) {
            let options = CallFnOptions::new().eval_ast(false).rewind_scope(false);
            let _ignored: Dynamic = self
                .engine
                .call_fn_with_options(options, &mut scope, &ast, "init", ())
                .map_err(|err| {
                    load_error(ScriptDiagnostic::from_eval(
                        name,
                        &source,
                        &err,
                        RuntimeContext {
                            handler: "init".into(),
                            event: None,
                        },
                        &self.limits,
                        &module_source,
                    ))
                })?;
        }

        // Pass 2, strict: every variable must be a local, a parameter or a state variable.
        self.engine
            .compile_with_scope(&scope, &source)
            .map_err(|err| load_error(ScriptDiagnostic::from_parse(name, &source, &err)))?;

        let mut warnings = handler_warnings(name, &source, &functions);
        for (line, col) in top_level_imports(&source) {
            warnings.push(ScriptDiagnostic::warning(
                name,
                &source,
                Some((line, col)),
                "handlers do not see modules imported at the top level; move this import into \
                 the functions that use it"
                    .into(),
            ));
        }
        {
            let mut state = self.shared.lock();
            let dropped = state.queue.len() + state.refusals.len();
            state.queue.clear();
            state.refusals.clear();
            if dropped > 0 {
                warnings.push(ScriptDiagnostic::warning(
                    name,
                    &source,
                    None,
                    format!(
                        "{dropped} action(s) queued while loading were dropped: actions need an \
                         event (use on_session_start for a greeting)"
                    ),
                ));
            }
        }

        let known = known_handlers();
        let mut handlers = Vec::new();
        let mut helpers = Vec::new();
        for (fname, params) in &functions {
            if known
                .iter()
                .any(|(k, arity)| k == fname && *arity == params.len())
            {
                handlers.push(fname.clone());
            } else if !fname.starts_with("anon$") {
                // (Closures are compiled to `anon$…` functions: not the author's names.)
                helpers.push(format!("{fname}({})", params.join(", ")));
            }
        }
        let mut on_kind = [false; EventKind::ALL.len()];
        for kind in EventKind::ALL {
            on_kind[kind_index(kind)] = has(&format!("on_{}", kind.as_str()), 1);
        }
        // The scope lists variables last-declared first.
        let mut state = Vec::new();
        let mut constants = Vec::new();
        for (var, is_constant, _) in scope.iter_raw() {
            if is_constant {
                constants.insert(0, var.to_owned());
            } else {
                state.insert(0, var.to_owned());
            }
        }
        let report = LoadReport {
            script: name.to_owned(),
            handlers,
            constants,
            functions: helpers,
            state,
            warnings,
        };
        let compiled = Compiled {
            source,
            dir,
            imports,
            ast,
            scope,
            on_event: has("on_event", 1),
            on_kind,
        };
        Ok((compiled, report))
    }
}

fn call_handler(
    engine: &Engine,
    shared: &Shared,
    limits: &Limits,
    script: &mut Script,
    handler: &str,
    event: &ScriptEvent,
    diagnostics: &mut Vec<ScriptDiagnostic>,
) {
    let options = CallFnOptions::new().eval_ast(false);
    let result = engine.call_fn_with_options::<Dynamic>(
        options,
        &mut script.compiled.scope,
        &script.compiled.ast,
        handler,
        (event.clone(),),
    );
    report_refusals(script, shared, handler, event.event(), diagnostics);
    let Err(err) = result else { return };
    *script.errors.entry(handler.to_owned()).or_insert(0) += 1;
    let compiled = &script.compiled;
    let ev = event.event();
    let dir = compiled.dir.clone();
    let mut diag = ScriptDiagnostic::from_eval(
        &script.name,
        &compiled.source,
        &err,
        RuntimeContext {
            handler: handler.to_owned(),
            event: Some((ev.kind, ev.line)),
        },
        limits,
        &|module| module_text(dir.as_deref(), module),
    );
    // Rhai functions cannot see the caller's variables: only handlers, called by the host
    // with the script's scope, see state. Say so when a helper trips over it.
    if let EvalAltResult::ErrorVariableNotFound(var, _) = err.unwrap_inner()
        && matches!(*err, EvalAltResult::ErrorInFunctionCall(..))
        && compiled.scope.contains(var)
    {
        diag.notes.push(format!(
            "'{var}' is a script-level variable: only handlers see state; pass it to the \
             function as an argument and return the new value"
        ));
    }
    let key = (
        handler.to_owned(),
        diag.line,
        diag.col,
        diag.message.clone(),
    );
    if script.reported.insert(key) {
        diagnostics.push(diag);
    }
}

/// Warn about `run` calls refused during one handler call, once per call site.
fn report_refusals(
    script: &mut Script,
    shared: &Shared,
    handler: &str,
    event: &Event,
    diagnostics: &mut Vec<ScriptDiagnostic>,
) {
    let refusals: Vec<_> = shared.lock().refusals.drain(..).collect();
    for refusal in refusals {
        let pos = refusal.position;
        let mut diag = ScriptDiagnostic::warning(
            &script.name,
            &script.compiled.source,
            pos.line().map(|l| (l, pos.position().unwrap_or(1))),
            format!(
                "run({}) refused: running programs is not allowed (use --allow-run)",
                serde_json::to_string(&refusal.argv).unwrap_or_default()
            ),
        );
        diag.runtime = Some(RuntimeContext {
            handler: handler.to_owned(),
            event: Some((event.kind, event.line)),
        });
        let key = (
            handler.to_owned(),
            diag.line,
            diag.col,
            "run refused".to_owned(),
        );
        if script.reported.insert(key) {
            diagnostics.push(diag);
        }
    }
}

/// Near-miss handler names and wrong arities.
fn handler_warnings(
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
fn top_level_imports(source: &str) -> Vec<(usize, usize)> {
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

/// Where `import "<path>"` is, for a "Module not found: <path> (why)" message.
fn find_import(source: &str, message: &str) -> Option<(u16, u16)> {
    let path = message.split(" (").next()?;
    let quoted = format!("\"{path}\"");
    source.lines().enumerate().find_map(|(index, line)| {
        let at = line.find(&quoted)?;
        let before = line[..at].trim_end();
        if !before.ends_with("import") {
            return None;
        }
        let col = line[..at].chars().count() + 1;
        Some((u16::try_from(index + 1).ok()?, u16::try_from(col).ok()?))
    })
}

fn module_text(dir: Option<&Path>, module: &str) -> Option<(String, String)> {
    let mut path = if Path::new(module).is_absolute() {
        PathBuf::from(module)
    } else {
        dir?.join(module)
    };
    path.set_extension("rhai");
    let text = std::fs::read_to_string(&path).ok()?;
    Some((file_name(&path), text))
}

fn read(path: &Path) -> Result<String, ScriptError> {
    std::fs::read_to_string(path).map_err(|source| ScriptError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::ScriptHost;

    /// The host moves into the thread that runs the pipeline.
    #[test]
    fn the_host_can_move_between_threads() {
        fn assert_send<T: Send + 'static>() {}
        assert_send::<ScriptHost>();
    }
}
