//! What can stop a pipeline, each cause said once (the `{:#}` of a caller's `anyhow` adds
//! nothing: these carry their cause in their message, not as a `source`).

use std::io;

/// Why a pipeline could not start or went on no longer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The config file is invalid (its line is named).
    #[error("cannot load the config: {0}")]
    Config(familiar_config::ConfigError),
    /// A shipped script failed to load: a bug of this build, said as such.
    #[error("shipped script {name}: {cause}")]
    ShippedScript { name: String, cause: String },
    /// A user's script failed to load (its located diagnostic is in `cause`).
    #[error("{0}")]
    Script(String),
    /// An input could not be opened.
    #[error("cannot open {name}: {cause}")]
    Open { name: String, cause: io::Error },
    /// An input failed part-way (the events read before were handled).
    #[error("reading {name}: {cause}")]
    Read { name: String, cause: io::Error },
    /// None of an input's lines is a record.
    #[error(
        "not a transcript: {name}: none of its {bad} line(s) is a JSON record (JSONL, \
         stream-json or a JSON array expected)"
    )]
    NotATranscript { name: String, bad: u64 },
    /// A replay with nothing in it.
    #[error("{name} has no events to replay (is it a Claude Code or Codex transcript?)")]
    NoEvents { name: String },
    /// The live sources could not start, or stopped.
    #[error("{0}")]
    Live(String),
    /// Stdout could not be written (a full disk, `/dev/full`); a closed pipe is no error.
    #[error("cannot write to stdout: {0}")]
    Output(io::Error),
    /// The game window ended badly.
    #[error("the game window stopped ({0})")]
    Window(String),
}
