//! The transform stage of Familiar: user Rhai scripts turn normalized events into actions.
//!
//! `familiar-transcript` produces [`familiar_model::Event`]s; a [`ScriptHost`] loads scripts in
//! order (the shipped `default.rhai`, then the user's), calls their handlers (`on_event`,
//! `on_<kind>`, `init`) for each event, and returns the [`familiar_model::Action`]s they queued,
//! each tagged with the script's file name and the causing event's session state. The sinks
//! (stdout, desktop notifications, the game) carry the actions out; nothing here does I/O
//! beyond reading script files.
//!
//! Modules: [`host`] (loading, calling, hot reload), [`script_event`] (the `Event` type scripts
//! see), `actions` (the functions scripts call), [`sandbox`] (limits and imports), [`diag`]
//! (located, rendered errors), [`clock`] (time for `once_per`), [`timers`] (`after`, `every`,
//! `on_timer`, per-session state), `bounded` (built-ins that stop at the limits while building),
//! [`store`] (the `store` map a script keeps across runs), [`stack`] (the stack calls run on) and [`watch`] (file watching for hot reload). The reference for script authors is `docs/scripting.md`.

mod actions;
mod bounded;
pub mod clock;
pub mod diag;
pub mod host;
pub mod sandbox;
pub mod script_event;
pub mod stack;
pub mod store;
pub mod timers;
pub mod watch;

pub use clock::{Clock, EventClock, ManualClock, SystemClock};
pub use diag::{RuntimeContext, ScriptDiagnostic, Severity};
pub use host::{ErrorCount, HostConfig, LoadReport, ScriptError, ScriptHost, known_handlers};
pub use sandbox::Limits;
pub use script_event::EVENT_FIELDS;
pub use stack::HANDLER_STACK;
pub use timers::TIMER_FIELDS;
pub use watch::ScriptWatcher;

/// The example scripts (`scripts/examples/`), built in so a user who installed the binary can
/// read and copy them (`familiar scripts NAME`): `(file name, source)`. Not loaded.
pub const EXAMPLES: [(&str, &str); 3] = [
    (
        "context-warning.rhai",
        include_str!("../../../scripts/examples/context-warning.rhai"),
    ),
    (
        "git-push-sound.rhai",
        include_str!("../../../scripts/examples/git-push-sound.rhai"),
    ),
    (
        "tool-counter.rhai",
        include_str!("../../../scripts/examples/tool-counter.rhai"),
    ),
];

/// The shipped scripts, built in so the binary works without a `scripts/` directory:
/// `(file name, source)`, in the order they load. Load with [`ScriptHost::load_source`].
pub const SHIPPED: [(&str, &str); 2] = [
    (
        "default.rhai",
        include_str!("../../../scripts/default.rhai"),
    ),
    (
        "notify-errors.rhai",
        include_str!("../../../scripts/notify-errors.rhai"),
    ),
];
