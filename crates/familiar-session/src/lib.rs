//! The session model: the one owner of every session's state.
//!
//! The tailer (`familiar-tail`) turns files into numbered lines and says when a file is
//! opened, replaced or removed; a clock says what time it is; hooks say what Claude Code told
//! them. [`SessionModel::apply`] takes those [`Input`]s, one at a time, and returns the events
//! of `docs/events.md` plus, on demand, a [`SessionSnapshot`] of every session. Nothing else
//! keeps session state: the script stage, the sinks and the game read it from these events.
//!
//! - [`input`]: what goes in (lines, file lifecycle, ticks, hook signals).
//! - `file`: one followed transcript: its [`familiar_transcript::Normalizer`], the events held
//!   until its session is known, its timers.
//! - [`snapshot`]: what a session looks like now, and its `snapshot` event.
//! - `plan`: the plan changes of a session's main agent applied to its plan.
//! - `think`: the turn's thinking intensity (`think`), carried from its prompt onto its
//!   `thinking` events.
//! - [`timers`]: when quiet becomes `waiting_for_input` and silence becomes `idle`.
//! - `table`: the followed files by id, and which of them a tick must look at (changed by
//!   an input, or at a timer threshold), so a tick costs what is due, not every file.
//!
//! The model is pure: no files, threads or clock of its own. Time is whatever the last
//! [`Input::Tick`] said, so a test drives hours of timers in microseconds, and a replay can
//! drive them from the records' own timestamps.

mod file;
pub mod input;
mod model;
mod plan;
pub mod snapshot;
mod table;
mod think;
pub mod timers;

pub use input::{FileInfo, FileKind, Input, Output};
pub use model::{ModelConfig, SessionModel};
pub use snapshot::{SessionSnapshot, SubagentSnapshot};
pub use timers::Timers;
