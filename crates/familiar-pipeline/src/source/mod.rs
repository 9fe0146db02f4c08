//! Where events come from. Every source feeds the one session model (`familiar-session`), so
//! every command sees the same events with the same fields (`ev.plan`, the first event's
//! `cwd`, `think` on `thinking` events, the status events):
//!
//! - [`recorded`]: a transcript file, stdin or the bundled demo, read to its end (`run`,
//!   `test`, `replay`, `demo`), the model's clock being each line's recorded time;
//! - [`live`]: the tailer's messages (`watch`, `sessions`), dated by the wall clock; and
//!   [`follow`], the live loop that also takes hooks, the CLI's session states, script
//!   reloads and Ctrl-C;
//! - [`remote`]: sessions on other machines over SSH (`watch --remote`, `familiar feed`);
//! - [`pace`]: how a replay spaces the recorded events in wall time (pure).

pub mod follow;
pub mod live;
pub mod pace;
pub mod recorded;
pub mod remote;

use std::time::SystemTime;

use familiar_model::Event;

/// What a source hands the stage: the session model's events, and the model's clock after
/// them, so the scripts' timers fire where the session timers do ([`crate::Stage::take`]).
#[derive(Debug, Clone, PartialEq)]
// Events are nearly all the traffic and move once each.
#[allow(clippy::large_enum_variant)]
pub enum Item {
    Event(Event),
    /// The model's time is now this.
    Tick(SystemTime),
}

/// What time the session model is told it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// The wall clock: live sessions, whose lines are written now.
    Wall,
    /// Each line's own recorded time (its record's `timestamp`,
    /// `familiar_session::ModelConfig::recorded_clock`): a transcript read after the fact,
    /// where the timers (a quiet turn, an idle session) must fire where they fired when it
    /// was written, however fast it is read.
    Recorded,
}
