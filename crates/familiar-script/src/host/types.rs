//! The host's configuration ([`HostConfig`]), its errors ([`ScriptError`]) and what it reports
//! about scripts ([`LoadReport`], [`ErrorCount`]); re-exported by [`crate::host`].

use std::path::PathBuf;
use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::diag::ScriptDiagnostic;
use crate::sandbox::Limits;

/// How the host runs scripts.
#[derive(Clone)]
pub struct HostConfig {
    pub limits: Limits,
    /// Whether `run([...])` produces `run` actions (`--allow-run`). When false each call is
    /// reported as a warning and produces nothing.
    pub allow_run: bool,
    /// The time source of `once_per`.
    pub clock: Arc<dyn Clock>,
    /// Where each script's `store` is saved (`<dir>/<script name>.json`, see
    /// [`crate::store`]); `None` keeps stores in memory only (dry runs, tests, the demo).
    pub store_dir: Option<PathBuf>,
    /// The latest time the timers may be told (seconds since the epoch): a later one, from a
    /// record dated in the future (the year 9999, a wrong clock), is the record's mistake, not
    /// the present, and would hold every later timer until then. `None`: no bound.
    pub latest_time: Option<f64>,
}

impl Default for HostConfig {
    fn default() -> HostConfig {
        HostConfig {
            limits: Limits::default(),
            allow_run: false,
            clock: Arc::new(SystemClock::new()),
            store_dir: None,
            latest_time: None,
        }
    }
}

impl std::fmt::Debug for HostConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostConfig")
            .field("limits", &self.limits)
            .field("allow_run", &self.allow_run)
            .field("store_dir", &self.store_dir)
            .finish_non_exhaustive()
    }
}

/// Why a script could not be loaded or reloaded.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The I/O cause is part of the message, not a `source`: printed once.
    #[error("{}: cannot read script: {cause}", path.display())]
    Io {
        path: PathBuf,
        cause: std::io::Error,
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
