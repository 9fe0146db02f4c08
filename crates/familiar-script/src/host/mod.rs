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
//! notification storm, and so is the `store` map ([`crate::store`]), which is also saved to
//! disk between runs when [`HostConfig::store_dir`] says where.
//!
//! The parts: this file (the host and its loaded scripts), [`types`] (configuration, errors and
//! reports, re-exported here), `load` (compiling, loading and reloading), `call` (calling
//! handlers for an event) and `warnings` (load-time warnings found in the source text).

mod call;
mod load;
pub mod types;
mod warnings;

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use std::time::Instant;

use familiar_model::EventKind;
use rhai::{AST, Dynamic, Engine, Scope};

use crate::actions::{self, Shared};
use crate::clock::Clock;
use crate::sandbox::{self, ImportRoot, Limits};
use crate::stack::{BigStack, HANDLER_STACK};
use crate::{bounded, script_event, store, timers};

pub use types::{ErrorCount, HostConfig, LoadReport, ScriptError};

/// Name used in diagnostics for a script's top-level statements.
const TOP_LEVEL: &str = "<top level>";

/// The token a call stopped by its wall-clock budget ends with (`ErrorTerminated`).
pub(crate) const TIME_LIMIT: &str = "time limit";

/// One loaded script with its state.
struct Script {
    id: usize,
    name: String,
    path: Option<PathBuf>,
    compiled: Compiled,
    errors: BTreeMap<String, u64>,
    /// Errors already shown once: (handler, line, col, message).
    reported: HashSet<(String, Option<usize>, Option<usize>, String)>,
    /// Where its `store` variable is kept between runs.
    store: store::Store,
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
    on_timer: bool,
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
    /// Where calls run (see [`crate::stack`]); `None` if it could not be mapped.
    stack: Option<BigStack>,
    /// Where scripts' stores are saved ([`HostConfig::store_dir`]).
    store_dir: Option<PathBuf>,
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
    let mut names = vec![
        ("init".to_owned(), 0),
        ("on_event".to_owned(), 1),
        ("on_timer".to_owned(), 1),
    ];
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
        shared.lock().timers.latest = config.latest_time;
        let root = ImportRoot::default();
        let mut engine = Engine::new();
        sandbox::configure(&mut engine, &config.limits, &root);
        bounded::register(&mut engine, &config.limits);
        let depth = config.limits.max_data_depth;
        script_event::register(&mut engine, &shared, depth);
        actions::register(&mut engine, &shared, depth);
        timers::register(&mut engine, &shared, depth);
        // The wall-clock budget of a call. Reading the time costs about as much as a few
        // operations, so look every 64.
        let s = shared.clone();
        engine.on_progress(move |operations| {
            if operations % 64 != 0 {
                return None;
            }
            let deadline = s.lock().deadline?;
            (Instant::now() >= deadline).then(|| Dynamic::from(TIME_LIMIT))
        });
        // `print` and `debug` become `log` actions, so they show in dry runs like any action.
        let s = shared.clone();
        engine.on_print(move |text| s.lock().queue.push_log(text));
        let s = shared.clone();
        engine.on_debug(move |text, _source, _pos| s.lock().queue.push_log(text));
        {
            let limits = &config.limits;
            let mut state = shared.lock();
            state.queue.max = (limits.max_actions, limits.max_string_size);
            state.bounds = crate::actions::KeptBounds {
                session_state_bytes: limits.max_session_state_bytes,
                all_session_state_bytes: limits.max_all_session_state_bytes,
                timers: limits.max_timers,
                timer_name_bytes: limits.max_timer_name_bytes,
                once_keys: limits.max_once_keys,
                once_key_bytes: limits.max_once_key_bytes,
            };
        }
        ScriptHost {
            engine,
            shared,
            root,
            clock: config.clock,
            limits: config.limits,
            store_dir: config.store_dir,
            scripts: Vec::new(),
            next_id: 0,
            stack: BigStack::new(HANDLER_STACK),
            handler_names: EventKind::ALL
                .iter()
                .map(|kind| format!("on_{}", kind.as_str()))
                .collect(),
        }
    }

    /// Run `f` on the host's own stack (see [`crate::stack`]).
    fn on_big_stack<R>(&mut self, f: impl FnOnce(&mut ScriptHost) -> R) -> R {
        match self.stack.take() {
            Some(mut stack) => {
                let out = stack.run(|| f(self));
                self.stack = Some(stack);
                out
            }
            None => f(self),
        }
    }

    /// The user's total XP, as the owner of the profile (the pipeline's `Stage`) has it now:
    /// what `progress()` reads.
    pub fn set_user_xp(&mut self, xp: i64) {
        self.shared.lock().user_xp = xp.max(0);
    }

    /// Allow or forbid `run([...])` from now on (e.g. after the config changed).
    pub fn set_allow_run(&mut self, allow: bool) {
        self.shared.lock().allow_run = allow;
    }

    /// File names of the loaded scripts, in call order.
    pub fn script_names(&self) -> Vec<String> {
        self.scripts.iter().map(|s| s.name.clone()).collect()
    }

    /// Whether a loaded script may read `ev.raw`, so the caller knows to keep the original
    /// records (`NormalizerConfig::keep_raw`, a copy of every line). Conservative: a script
    /// (or a module it imports) whose text has `.raw` or `"raw"` in it counts, a mere word
    /// "raw" in a comment does not.
    pub fn uses_raw(&self) -> bool {
        let reads_raw = |text: &str| {
            text.contains(".raw") || text.contains("\"raw\"") || text.contains("'raw'")
        };
        self.scripts.iter().any(|s| {
            reads_raw(&s.compiled.source)
                || s.compiled.imports.iter().any(|module| {
                    familiar_save::read_regular(module, self.limits.max_script_bytes as u64)
                        .is_ok_and(|text| reads_raw(&String::from_utf8_lossy(&text)))
                })
        })
    }

    /// Paths of the scripts loaded from files (what a watcher should watch).
    pub fn script_paths(&self) -> Vec<PathBuf> {
        self.scripts.iter().filter_map(|s| s.path.clone()).collect()
    }

    /// Save every script's `store` that changed since it was last saved (the host also does
    /// this when dropped). Failures are logged, once per run of failures.
    pub fn save_stores(&mut self) {
        for script in &mut self.scripts {
            let value = script.compiled.scope.get(store::STORE);
            script.store.save_now(value, &script.name);
        }
    }

    /// Save the stores that changed, each at most once a second (a store kept in memory only
    /// costs nothing).
    pub fn save_stores_soon(&mut self) {
        for script in &mut self.scripts {
            let value = script.compiled.scope.get(store::STORE);
            script.store.save_soon(value, &script.name);
        }
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
}

impl Drop for ScriptHost {
    fn drop(&mut self) {
        self.save_stores();
    }
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
