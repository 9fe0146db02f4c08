//! `BellSink`: the terminal bell (BEL, `\x07`) for the actions that should catch the user's
//! ear; also the fallback of [`crate::NotifySink`] when no notification server answers. It
//! writes to stderr by default so an NDJSON stream on stdout stays clean.

use std::io::{self, Write};

use familiar_model::Action;

use crate::{FailureCounter, Sink};

const BEL: &[u8] = b"\x07";

/// Rings the bell on actions whose name (`notify`, `sound`, ...) it was told to ring for.
pub struct BellSink<W: Write + Send> {
    out: W,
    on: Vec<String>,
    failures: FailureCounter,
}

impl BellSink<io::Stderr> {
    /// The bell on stderr, for `notify` actions.
    pub fn stderr() -> BellSink<io::Stderr> {
        BellSink::new(io::stderr())
    }
}

impl<W: Write + Send> BellSink<W> {
    /// A bell that rings for `notify` actions.
    pub fn new(out: W) -> BellSink<W> {
        BellSink {
            out,
            on: vec!["notify".to_owned()],
            failures: FailureCounter::new(),
        }
    }

    /// Ring for these action names instead (see `ActionKind::name`).
    pub fn ringing_on(mut self, names: &[&str]) -> BellSink<W> {
        self.on = names.iter().map(|name| (*name).to_owned()).collect();
        self
    }

    /// Ring once now.
    pub fn ring(&mut self) -> io::Result<()> {
        self.out.write_all(BEL)?;
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write + Send> Sink for BellSink<W> {
    fn name(&self) -> &str {
        "bell"
    }

    fn handle(&mut self, action: &Action) {
        let name = action.kind.name();
        if !self.on.iter().any(|on| on == name) {
            return;
        }
        if let Err(err) = self.ring() {
            self.failures.record(
                "bell",
                &format_args!("cannot ring the terminal bell: {err}"),
            );
        }
    }

    fn failures(&self) -> u64 {
        self.failures.get()
    }
}
