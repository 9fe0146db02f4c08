//! The failure counter every sink shares: count each failure, log the first few at `warn` and
//! the rest at `debug`, so a sink that fails on every action does not flood the terminal.

use std::fmt::Display;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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
