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
mod failures;
mod fanout;
mod ndjson;
mod notify;
mod run;

pub use bell::BellSink;
pub use failures::FailureCounter;
pub use familiar_model::{Action, ActionKind, Urgency};
pub use fanout::{Fanout, SinkReport};
pub use ndjson::NdjsonSink;
pub use notify::{
    NotifyOptions, NotifySink, ProbeError, ServerInfo, probe_notification_server, probe_session_bus,
};
pub use run::{ChildOutput, RunOutcome, RunPolicy, RunSink};

/// Something that carries out actions.
///
/// `handle` never fails outward: a sink that cannot do its job logs why through `tracing`,
/// counts the failure (see [`Sink::failures`]) and returns, so one broken output (no
/// notification daemon, a closed pipe, a missing program) never stops the pipeline.
pub trait Sink: Send {
    /// Short name for logs and reports (`notify`, `bell`, `ndjson`, `run`).
    fn name(&self) -> &str;

    /// Carry out one action, or ignore it when it is not for this sink.
    fn handle(&mut self, action: &Action);

    /// Wait until every action handed over so far has been carried out (queued notifications
    /// sent, started programs finished or killed). Called at shutdown, and by tests.
    fn flush(&mut self) {}

    /// Failures so far; each was logged when it happened.
    fn failures(&self) -> u64 {
        0
    }
}

impl<S: Sink + ?Sized> Sink for Box<S> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn handle(&mut self, action: &Action) {
        (**self).handle(action);
    }
    fn flush(&mut self) {
        (**self).flush();
    }
    fn failures(&self) -> u64 {
        (**self).failures()
    }
}
