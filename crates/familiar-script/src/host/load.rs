//! Loading: compile a script, run its body and `init()`, check it strictly, and (re)place it
//! in the host's call order. Part of [`crate::host`].

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use familiar_model::EventKind;
use rhai::{CallFnOptions, Dynamic, EvalAltResult, Map, Scope};

use super::warnings::{handler_warnings, helpers_using_state, top_level_imports};
use super::{
    Compiled, LoadReport, Script, ScriptError, ScriptHost, TOP_LEVEL, kind_index, known_handlers,
};
use crate::bounded;
use crate::diag::{RuntimeContext, ScriptDiagnostic, fn_positions};
use crate::sandbox::Limits;
use crate::store::{STORE, Store};

impl ScriptHost {
    /// Start the wall-clock budget of one call.
    fn start_budget(&self) {
        self.shared.lock().deadline = Some(Instant::now() + self.limits.max_call_time);
    }

    /// Load a script file and append it to the call order. Imports resolve inside its directory.
    pub fn load_file(&mut self, path: &Path) -> Result<LoadReport, ScriptError> {
        let source = read(path, &self.limits)?;
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
        let (store, map) = Store::open(self.store_dir.as_deref(), name);
        let (compiled, report) = self.compile(id, name, source.to_owned(), dir, map)?;
        Ok(self.push(id, name, None, compiled, report, store))
    }

    fn add(
        &mut self,
        name: &str,
        source: String,
        path: Option<&Path>,
    ) -> Result<LoadReport, ScriptError> {
        let id = self.next_id;
        let dir = path.and_then(Path::parent);
        let (store, map) = Store::open(self.store_dir.as_deref(), name);
        let (compiled, report) = self.compile(id, name, source, dir, map)?;
        Ok(self.push(id, name, path, compiled, report, store))
    }

    fn push(
        &mut self,
        id: usize,
        name: &str,
        path: Option<&Path>,
        compiled: Compiled,
        mut report: LoadReport,
        store: Store,
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
            store,
        });
        report
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
        let source = read(path, &self.limits)?;
        let id = self.scripts[index].id;
        let name = self.scripts[index].name.clone();
        // The store outlives the reload: the new version starts with the old one's.
        let map = current_store(&self.scripts[index].compiled.scope);
        let (compiled, report) = self.compile(id, &name, source, path.parent(), map)?;
        {
            // Timers and per-session state belong to the old version's state.
            let mut state = self.shared.lock();
            state.timers.forget(id);
            state.forget_session_state(id);
        }
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

    /// Compile, run the body and `init()`, check strictly; nothing is kept on error.
    fn compile(
        &mut self,
        id: usize,
        name: &str,
        source: String,
        dir: Option<&Path>,
        store: Map,
    ) -> Result<(Compiled, LoadReport), ScriptError> {
        self.on_big_stack(|host| host.compile_here(id, name, source, dir, store))
    }

    fn compile_here(
        &mut self,
        id: usize,
        name: &str,
        source: String,
        dir: Option<&Path>,
        store: Map,
    ) -> Result<(Compiled, LoadReport), ScriptError> {
        let load_error = |diag: ScriptDiagnostic| ScriptError::Load(Box::new(diag));
        let dir = dir.map(|d| {
            if d.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                d.to_path_buf()
            }
        });
        let limits = &self.limits;
        let module_source = |module: &str| module_text(dir.as_deref(), module, limits);
        let top_level = RuntimeContext {
            handler: TOP_LEVEL.into(),
            event: None,
        };

        // Compiling takes time in size × functions (see `Limits::max_script_bytes`): count
        // them in the text before paying for it.
        let positions = fn_positions(&source);
        if let Some(too_big) = too_big(&source, positions.len(), &self.limits) {
            return Err(load_error(ScriptDiagnostic::plain_error(name, too_big)));
        }

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
            state.origin = None;
            state.queue.clear();
            state.refusals.clear();
        }
        // The body initialises the state variables; `store` is there before it runs.
        let mut scope = Scope::new();
        scope.push(STORE, store);
        self.start_budget();
        let body = self.engine.run_ast_with_scope(&mut scope, &ast);
        self.shared.lock().deadline = None;
        body.map_err(|err| {
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
        if let Some(too_big) = too_big(&source, functions.len(), &self.limits) {
            return Err(load_error(ScriptDiagnostic::plain_error(name, too_big)));
        }
        // Rhai keeps functions in a hash map; list them in source order.
        functions.sort_by_key(|(fname, _)| {
            positions
                .get(fname.as_str())
                .map_or((usize::MAX, 0), |at| (at.line, at.col))
        });
        let has = |fname: &str, arity: usize| {
            functions
                .iter()
                .any(|(n, params)| n == fname && params.len() == arity)
        };
        if has("init", 0) {
            let options = CallFnOptions::new().eval_ast(false).rewind_scope(false);
            self.start_budget();
            let init =
                self.engine
                    .call_fn_with_options::<Dynamic>(options, &mut scope, &ast, "init", ());
            self.shared.lock().deadline = None;
            let _ignored = init.map_err(|err| {
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

        let max_depth = self.limits.max_data_depth;
        if let Some((var, ..)) = scope
            .iter_raw()
            .find(|(_, _, value)| bounded::too_deep(value, max_depth))
        {
            return Err(load_error(ScriptDiagnostic::plain_error(
                name,
                format!(
                    "state variable `{var}` holds data nested more than {max_depth} levels deep"
                ),
            )));
        }

        // Pass 2, strict: every variable must be a local, a parameter or a state variable.
        self.engine
            .compile_with_scope(&scope, &source)
            .map_err(|err| load_error(ScriptDiagnostic::from_parse(name, &source, &err)))?;

        let mut warnings = handler_warnings(name, &source, &functions, &positions);
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
        let mut stores = 0;
        for (var, is_constant, _) in scope.iter_raw() {
            if var == STORE {
                // Familiar's own variable, not the script's state.
                stores += 1;
                if stores == 1 {
                    continue;
                }
            }
            if is_constant {
                constants.insert(0, var.to_owned());
            } else {
                state.insert(0, var.to_owned());
            }
        }
        let helper_names: Vec<String> = functions
            .iter()
            .filter(|(fname, params)| {
                !fname.starts_with("anon$")
                    && !known
                        .iter()
                        .any(|(k, arity)| k == fname && *arity == params.len())
            })
            .map(|(fname, _)| fname.clone())
            .collect();
        if stores > 1 || !scope.get(STORE).is_some_and(Dynamic::is_map) {
            warnings.push(ScriptDiagnostic::warning(
                name,
                &source,
                None,
                "`store` is the map Familiar keeps between runs, but this script declares \
                 or assigns its own: nothing in it will be kept; rename the variable"
                    .into(),
            ));
        }
        let mut visible: Vec<String> = state.iter().chain(&constants).cloned().collect();
        visible.push(STORE.to_owned());
        warnings.extend(helpers_using_state(
            &self.engine,
            name,
            &source,
            &helper_names,
            &visible,
            &positions,
        ));
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
            on_timer: has("on_timer", 1),
            on_kind,
        };
        Ok((compiled, report))
    }
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

pub(super) fn module_text(
    dir: Option<&Path>,
    module: &str,
    limits: &Limits,
) -> Option<(String, String)> {
    let mut path = if Path::new(module).is_absolute() {
        PathBuf::from(module)
    } else {
        dir?.join(module)
    };
    path.set_extension("rhai");
    let text = read(&path, limits).ok()?;
    Some((file_name(&path), text))
}

/// The `store` map in a loaded script's scope (empty if the script broke it).
fn current_store(scope: &Scope) -> Map {
    scope
        .get(STORE)
        .and_then(|value| value.read_lock::<Map>().map(|map| map.clone()))
        .unwrap_or_default()
}

/// A script's text, from a regular file of bounded size only: a FIFO would block the
/// pipeline, a symlink to `/dev/zero` fill memory.
fn read(path: &Path, limits: &Limits) -> Result<String, ScriptError> {
    let io = |cause| ScriptError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let bytes = familiar_save::read_regular(path, limits.max_script_bytes as u64).map_err(io)?;
    String::from_utf8(bytes).map_err(|_| {
        io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ))
    })
}

/// Why a script is refused before compiling, if it is: too long, or too many functions.
fn too_big(source: &str, functions: usize, limits: &Limits) -> Option<String> {
    if source.len() > limits.max_script_bytes {
        Some(format!(
            "the script is {} bytes long, more than the {} a script may have; split it into \
             modules",
            source.len(),
            limits.max_script_bytes
        ))
    } else if functions > limits.max_functions {
        Some(format!(
            "the script defines {functions} functions, more than the {} a script may have",
            limits.max_functions
        ))
    } else {
        None
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}
