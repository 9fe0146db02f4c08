//! The sink stage outside the game: what carries out the [`Action`]s that scripts emit.
//!
//! `familiar-transcript` and the tailer produce events, `familiar-script` maps them to actions,
//! and this crate's sinks act on those actions: desktop notifications over the D-Bus session bus
//! ([`NotifySink`]), the terminal bell ([`BellSink`]), NDJSON lines for headless mode and pipes
//! ([`NdjsonSink`]) and programs run with `run([argv...])` when the user allowed it
//! ([`RunSink`]). The game window is one more sink, living in `familiar-game`. A [`Fanout`] feeds
//! several sinks; a sink that fails logs through `tracing`, counts the failure and never stops
//! the others or the pipeline, which is why [`Sink::handle`] returns nothing.

mod bell;
mod fanout;
mod ndjson;
mod notify;
mod run;

pub use bell::BellSink;
// The contract lives with the vocabulary (`familiar_model::sink`): sinks outside this crate
// (sound, the window) keep it without depending on this one.
pub use familiar_model::sink::{FailureCounter, Sink};
pub use familiar_model::{Action, ActionKind, Urgency};
pub use fanout::{Fanout, SinkReport};
pub use ndjson::NdjsonSink;
pub use notify::{
    NotifyOptions, NotifySink, ProbeError, ServerInfo, probe_notification_server, probe_session_bus,
};
pub use run::{ChildOutput, RunOutcome, RunPolicy, RunSink};
