//! `NdjsonSink`: each action as one JSON line (the `familiar run` format,
//! `{"action":"animate","name":"attack","script":...}`), flushed at once so the output can be
//! piped live into `jq`. Headless mode writes it to stdout.

use std::io::{self, Write};

use familiar_model::Action;

use crate::{FailureCounter, Sink};

/// Writes actions as NDJSON to any writer, flushing after each line.
pub struct NdjsonSink<W: Write + Send> {
    out: W,
    failures: FailureCounter,
    /// The reader went away (`| head`): stop writing, quietly.
    closed: bool,
    line: Vec<u8>,
}

impl NdjsonSink<io::Stdout> {
    /// Actions on standard output.
    pub fn stdout() -> NdjsonSink<io::Stdout> {
        NdjsonSink::new(io::stdout())
    }
}

impl<W: Write + Send> NdjsonSink<W> {
    pub fn new(out: W) -> NdjsonSink<W> {
        NdjsonSink {
            out,
            failures: FailureCounter::new(),
            closed: false,
            line: Vec::with_capacity(256),
        }
    }

    /// `true` once the reader closed the pipe; the caller may stop the pipeline then.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    fn write(&mut self, action: &Action) -> io::Result<()> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, action)?;
        self.line.push(b'\n');
        self.out.write_all(&self.line)?;
        self.out.flush()
    }
}

impl<W: Write + Send> Sink for NdjsonSink<W> {
    fn name(&self) -> &str {
        "ndjson"
    }

    fn handle(&mut self, action: &Action) {
        if self.closed {
            return;
        }
        match self.write(action) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                tracing::debug!("NDJSON reader closed the pipe; no more action lines");
            }
            Err(err) => self.failures.record(
                "ndjson",
                &format_args!("cannot write an action line: {err}"),
            ),
        }
    }

    fn failures(&self) -> u64 {
        self.failures.get()
    }
}
