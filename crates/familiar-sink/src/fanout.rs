//! `Fanout`: one sink that feeds several. A sink that panics is caught, logged and switched
//! off; the others carry on with the same action and every later one.

use std::panic::{AssertUnwindSafe, catch_unwind};

use familiar_model::Action;

use crate::Sink;

/// Several sinks fed in order with every action.
#[derive(Default)]
pub struct Fanout {
    entries: Vec<Entry>,
}

struct Entry {
    sink: Box<dyn Sink>,
    /// Set when the sink panicked: it is not called again.
    broken: bool,
    panics: u64,
}

/// How one sink of a [`Fanout`] fared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkReport {
    pub name: String,
    pub failures: u64,
    /// The sink panicked once and was switched off.
    pub broken: bool,
}

impl Fanout {
    pub fn new() -> Fanout {
        Fanout::default()
    }

    /// Add a sink; it receives actions after the ones added before it.
    pub fn push(&mut self, sink: impl Sink + 'static) {
        self.entries.push(Entry {
            sink: Box::new(sink),
            broken: false,
            panics: 0,
        });
    }

    /// Builder form of [`Fanout::push`].
    pub fn with(mut self, sink: impl Sink + 'static) -> Fanout {
        self.push(sink);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Failures per sink, for a summary at shutdown.
    pub fn report(&self) -> Vec<SinkReport> {
        self.entries
            .iter()
            .map(|entry| SinkReport {
                name: entry.sink.name().to_owned(),
                failures: entry.sink.failures() + entry.panics,
                broken: entry.broken,
            })
            .collect()
    }

    fn each(&mut self, mut call: impl FnMut(&mut dyn Sink)) {
        for entry in &mut self.entries {
            if entry.broken {
                continue;
            }
            // A sink is our own code, but a bug in one must not take the others down with it.
            let outcome = catch_unwind(AssertUnwindSafe(|| call(entry.sink.as_mut())));
            if outcome.is_err() {
                entry.broken = true;
                entry.panics += 1;
                tracing::error!(
                    sink = entry.sink.name(),
                    "sink panicked and is switched off; the other sinks carry on"
                );
            }
        }
    }
}

impl Sink for Fanout {
    fn name(&self) -> &str {
        "fanout"
    }

    fn handle(&mut self, action: &Action) {
        self.each(|sink| sink.handle(action));
    }

    fn flush(&mut self) {
        self.each(|sink| sink.flush());
    }

    fn failures(&self) -> u64 {
        self.entries
            .iter()
            .map(|entry| entry.sink.failures() + entry.panics)
            .sum()
    }
}
