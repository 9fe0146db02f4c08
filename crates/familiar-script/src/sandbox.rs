//! The sandbox every script runs in: resource [`Limits`], no `eval`, strict variables, and a
//! module resolver that only reads `.rhai` files inside the importing script's directory.
//!
//! [`crate::host`] builds its one `Engine` with `configure`. Imports are resolved when a
//! script is compiled (the AST is made self-contained), with the resolver's root set to that
//! script's directory; at run time the root is unset, so a dynamic import path cannot reach
//! the file system.

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rhai::module_resolvers::FileModuleResolver;
use rhai::{AST, Engine, EvalAltResult, Module, ModuleResolver, Position, Shared};

/// Resource limits of one handler call (and of loading a script).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Rhai operations per call; an endless loop stops here.
    pub max_operations: u64,
    /// Nested function calls; runaway recursion stops here.
    pub max_call_levels: usize,
    /// Expression nesting depth at compile time (global, inside functions).
    pub max_expr_depth: usize,
    pub max_fn_expr_depth: usize,
    /// Bytes in one string.
    pub max_string_size: usize,
    /// Elements in one array, entries in one map.
    pub max_array_size: usize,
    pub max_map_size: usize,
    /// Modules imported by one script.
    pub max_modules: usize,
    /// Wall-clock time of one call; a call doing too much work per event stops here, so the
    /// pipeline never stalls for long. Checked between operations, so one slow built-in call
    /// (a search through the longest string) can overrun it by its own duration.
    pub max_call_time: Duration,
    /// Nesting of arrays and maps kept in state or emitted (`a = [a]` in a loop): deeper data
    /// would overflow the stack of whatever walks it next (dropping it, printing it as JSON).
    pub max_data_depth: usize,
    /// Bytes in one script or module file. Rhai's compiler looks each variable use up among
    /// every function defined so far, so its time grows with size × functions: these two
    /// bounds keep a load (and a hot reload, which holds the pipeline) well under a second.
    pub max_script_bytes: usize,
    /// Functions defined in one script.
    pub max_functions: usize,
    /// Actions queued by one call (their text together is bounded by `max_string_size`).
    pub max_actions: usize,
    /// Bytes held by one script's state variables together (`store` included), counted as
    /// [`crate::bounded`] measures them; past it the largest is reset to `()`.
    pub max_state_bytes: usize,
    /// Bytes of one session's `ev.state` map.
    pub max_session_state_bytes: usize,
    /// Bytes of one script's `ev.state` maps of every session together: sessions come and go
    /// for as long as the watcher runs, each with its own map.
    pub max_all_session_state_bytes: usize,
    /// Timers one script has set and not yet fired or cancelled, and the longest name.
    pub max_timers: usize,
    pub max_timer_name_bytes: usize,
    /// Distinct `once_per` keys one script keeps, and the longest key.
    pub max_once_keys: usize,
    pub max_once_key_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_operations: 200_000,
            max_call_levels: 48,
            max_expr_depth: 64,
            max_fn_expr_depth: 48,
            // Runaway string building doubles quickly and stops here. Longer transcript text (a
            // tool's output, a pasted file) reaches scripts cut to it (`ev.text`): a mapping
            // needs its start, and each string a hostile script builds costs a watcher this.
            max_string_size: 1024 * 1024,
            max_array_size: 100_000,
            max_map_size: 100_000,
            max_modules: 32,
            max_call_time: Duration::from_millis(500),
            // serde_json reads at most 128 levels: whatever a script emits can be read back.
            max_data_depth: 128,
            // The shipped scripts are 4 KiB and a dozen functions.
            max_script_bytes: 256 * 1024,
            max_functions: 1000,
            max_actions: 1000,
            // Counters, names and small maps; a text kept per event fills it (and is told).
            max_state_bytes: 4 * 1024 * 1024,
            // As the store, which is saved.
            max_session_state_bytes: 1024 * 1024,
            // As a script's state variables.
            max_all_session_state_bytes: 4 * 1024 * 1024,
            max_timers: 1000,
            max_timer_name_bytes: 1024,
            max_once_keys: 10_000,
            max_once_key_bytes: 1024,
        }
    }
}

pub(crate) fn configure(engine: &mut Engine, limits: &Limits, root: &ImportRoot) {
    engine
        .set_max_operations(limits.max_operations)
        .set_max_call_levels(limits.max_call_levels)
        .set_max_expr_depths(limits.max_expr_depth, limits.max_fn_expr_depth)
        .set_max_string_size(limits.max_string_size)
        .set_max_array_size(limits.max_array_size)
        .set_max_map_size(limits.max_map_size)
        .set_max_modules(limits.max_modules)
        .set_strict_variables(true);
    // `eval` would compile text at run time, outside every check made at load.
    engine.disable_symbol("eval");
    // A handler returns at once and reads no clock: waiting would stall every event, hook
    // and reload (the call limit counts operations, not time asleep), and time is what
    // Familiar hands the scripts (`ev.ts_secs`, timers), the same in a dry run as live.
    engine.register_fn("sleep", |_: rhai::INT| -> Result<(), Box<EvalAltResult>> {
        Err(unavailable(
            "sleep",
            "a handler must return at once; `after(ms, name)` calls back later",
        ))
    });
    engine.register_fn(
        "sleep",
        |_: rhai::FLOAT| -> Result<(), Box<EvalAltResult>> {
            Err(unavailable(
                "sleep",
                "a handler must return at once; `after(ms, name)` calls back later",
            ))
        },
    );
    engine.register_fn("timestamp", || -> Result<(), Box<EvalAltResult>> {
        Err(unavailable(
            "timestamp",
            "scripts read time from their events (`ev.ts_secs`) and timers",
        ))
    });
    engine.set_module_resolver(SandboxResolver {
        root: root.clone(),
        max_bytes: limits.max_script_bytes as u64,
    });
}

/// The directory imports may read from, set by the host around each compile, and the files
/// imported during that compile (so a change to one can reload the scripts that use it).
#[derive(Debug, Clone, Default)]
pub(crate) struct ImportRoot(Arc<Mutex<RootState>>);

#[derive(Debug, Default)]
struct RootState {
    dir: Option<PathBuf>,
    imported: Vec<PathBuf>,
    /// The modules being loaded now, outermost first: a module met again on its own way in
    /// is an import cycle (which would recurse until the stack overflows).
    loading: Vec<PathBuf>,
}

/// Modules loading one inside another at most (a chain this deep is a mistake, not a design).
const MAX_IMPORT_DEPTH: usize = 16;

impl ImportRoot {
    /// Start (`Some`) or end (`None`) a compile; returns the files imported since the start.
    pub fn set(&self, dir: Option<PathBuf>) -> Vec<PathBuf> {
        let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        state.dir = dir;
        std::mem::take(&mut state.imported)
    }

    fn get(&self) -> Option<PathBuf> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).dir.clone()
    }

    fn record(&self, file: PathBuf) {
        let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !state.imported.contains(&file) {
            state.imported.push(file);
        }
    }

    /// `file` starts loading; `Err` names the cycle (or the depth) that forbids it.
    fn enter(&self, file: &Path) -> Result<(), String> {
        let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let name = |path: &Path| {
            path.file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        if let Some(at) = state.loading.iter().position(|f| f == file) {
            let chain: Vec<String> = state.loading[at..]
                .iter()
                .map(|f| name(f))
                .chain([name(file)])
                .collect();
            return Err(format!("an import cycle: {}", chain.join(" → ")));
        }
        if state.loading.len() >= MAX_IMPORT_DEPTH {
            return Err(format!("imports nested more than {MAX_IMPORT_DEPTH} deep"));
        }
        state.loading.push(file.to_owned());
        Ok(())
    }

    /// `file` finished loading (well or not).
    fn leave(&self, file: &Path) {
        let mut state = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(at) = state.loading.iter().rposition(|f| f == file) {
            state.loading.remove(at);
        }
    }
}

struct SandboxResolver {
    root: ImportRoot,
    /// A module file's size at most ([`Limits::max_script_bytes`]).
    max_bytes: u64,
}

/// The error of a function scripts may not call.
fn unavailable(name: &str, why: &str) -> Box<EvalAltResult> {
    format!("`{name}` is not available to scripts: {why}").into()
}

fn not_found(path: &str, why: &str, pos: Position) -> Box<EvalAltResult> {
    Box::new(EvalAltResult::ErrorModuleNotFound(
        format!("{path} ({why})"),
        pos,
    ))
}

impl SandboxResolver {
    /// The resolver for `path` if it names a file inside the root, with that file's canonical
    /// path, else the reason why not.
    fn checked(
        &self,
        path: &str,
        pos: Position,
    ) -> Result<(FileModuleResolver, PathBuf), Box<EvalAltResult>> {
        let Some(root) = self.root.get() else {
            return Err(not_found(
                path,
                "imports must be string literals resolved when the script loads",
                pos,
            ));
        };
        let relative = Path::new(path);
        let escapes = relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir));
        if escapes {
            return Err(not_found(
                path,
                "imports are relative paths inside the script's directory",
                pos,
            ));
        }
        let mut file = root.join(relative);
        file.set_extension("rhai");
        // Symlinks could still point outside: compare canonical paths.
        let (Ok(canonical_root), Ok(canonical_file)) = (root.canonicalize(), file.canonicalize())
        else {
            return Err(not_found(path, "no such file", pos));
        };
        if !canonical_file.starts_with(&canonical_root) {
            return Err(not_found(path, "outside the script's directory", pos));
        }
        // Rhai's resolver reads the file whole: a FIFO would block the load, a device fill
        // memory. (The file's size is checked again when it is compiled.)
        match canonical_file.metadata() {
            Ok(meta) if !meta.is_file() => {
                return Err(not_found(path, "not a regular file", pos));
            }
            Ok(meta) if meta.len() > self.max_bytes => {
                let why = format!("larger than {} bytes", self.max_bytes);
                return Err(not_found(path, &why, pos));
            }
            Ok(_) => {}
            Err(_) => return Err(not_found(path, "no such file", pos)),
        }
        self.root.record(canonical_file.clone());
        let mut inner = FileModuleResolver::new_with_path(root);
        inner.enable_cache(false);
        Ok((inner, canonical_file))
    }

    /// Load `file` with `load`, unless that closes an import cycle: then the chain is the
    /// error, where a recursion would have overflowed the stack.
    fn guarded<T>(
        &self,
        file: &Path,
        path: &str,
        pos: Position,
        load: impl FnOnce() -> Result<T, Box<EvalAltResult>>,
    ) -> Result<T, Box<EvalAltResult>> {
        // Not a "module not found": Rhai would take that for a resolver passing the path on,
        // and say only "Module not found", without the chain.
        self.root.enter(file).map_err(|why| {
            Box::new(EvalAltResult::ErrorRuntime(
                format!("cannot import {path}: {why}").into(),
                pos,
            ))
        })?;
        let loaded = load();
        self.root.leave(file);
        loaded
    }
}

impl ModuleResolver for SandboxResolver {
    fn resolve(
        &self,
        engine: &Engine,
        source: Option<&str>,
        path: &str,
        pos: Position,
    ) -> Result<Shared<Module>, Box<EvalAltResult>> {
        let (inner, file) = self.checked(path, pos)?;
        self.guarded(&file, path, pos, || {
            inner.resolve(engine, source, path, pos)
        })
    }

    fn resolve_ast(
        &self,
        engine: &Engine,
        source: Option<&str>,
        path: &str,
        pos: Position,
    ) -> Option<Result<AST, Box<EvalAltResult>>> {
        match self.checked(path, pos) {
            Ok((inner, file)) => {
                let mut unresolved = false;
                let loaded = self.guarded(&file, path, pos, || {
                    match inner.resolve_ast(engine, source, path, pos) {
                        Some(result) => result,
                        None => {
                            unresolved = true;
                            Err(not_found(path, "not resolved", pos))
                        }
                    }
                });
                (!unresolved).then_some(loaded)
            }
            Err(err) => Some(Err(err)),
        }
    }
}
