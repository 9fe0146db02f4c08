//! What carries out actions: the [`Sink`] contract every sink keeps (`familiar-sink`'s
//! notifications, bell, NDJSON and programs, `familiar-audio`'s sounds, the game window), and
//! the [`FailureCounter`] they share: count each failure, log the first few at `warn` and the
//! rest at `debug`, so a sink that fails on every action does not flood the terminal.

use std::fmt::Display;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Action;

/// The same `sound(...)` asked again within this gap is played once (a burst of errors rings
/// once): the sound sink's rule, which `[sound] repeat_gap` in the config file changes.
pub const DEFAULT_SOUND_REPEAT_GAP: std::time::Duration = std::time::Duration::from_secs(3);

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

/// Failures logged at `warn` before the rest go to `debug`.
const LOUD_FAILURES: u64 = 5;

/// A shared, thread-safe failure count (sinks with worker threads clone it into them).
#[derive(Debug, Clone, Default)]
pub struct FailureCounter(Arc<AtomicU64>);

impl FailureCounter {
    pub fn new() -> FailureCounter {
        FailureCounter::default()
    }

    /// Count one failure of `sink` and log it.
    pub fn record(&self, sink: &str, error: &dyn Display) {
        let count = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        if count < LOUD_FAILURES {
            tracing::warn!(sink, "{error}");
        } else if count == LOUD_FAILURES {
            tracing::warn!(
                sink,
                "{error} (further failures of this sink are logged at debug level)"
            );
        } else {
            tracing::debug!(sink, "{error}");
        }
    }

    /// Count one failure that was already reported another way (e.g. a one-time warning).
    pub fn count_quietly(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}
