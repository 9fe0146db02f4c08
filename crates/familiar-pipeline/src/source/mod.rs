//! Where events come from. [`Source`] is the one type every command that runs scripts starts
//! from (`watch`, `replay`, `demo`, `run`, `test`), and [`Source::run`] the one way through
//! the [`Stage`]. Every kind of source feeds the one session model (`familiar-session`), so
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

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::SystemTime;

use familiar_model::{Event, ReplayControl};
use familiar_session::ModelConfig;

use crate::Error;
use crate::stage::Stage;
use crate::window::Front;

/// Where a run's lines come from.
pub enum Source {
    /// Sessions as they are written, this machine's and other hosts', until Ctrl-C, the
    /// window closing or stdout closing (`watch`).
    Live(follow::Following),
    /// A transcript read to its end: a file, stdin or the bundled demo.
    Recorded {
        transcript: recorded::Recorded,
        pace: Pace,
    },
}

/// How fast a recorded source is played.
pub enum Pace {
    /// As fast as it reads (`run`, `test`); the timers still fire at the recorded times.
    AsRead,
    /// By its own timestamps (`replay`, `demo`), at the speed and pause the window's keys set.
    Timestamps {
        pacing: pace::Pacing,
        control: ReplayControl,
    },
}

/// How a run went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ran {
    /// Script handler calls that failed.
    pub failures: u64,
    /// What a recorded source read (a live one has no end to count to).
    pub read: Option<recorded::Tally>,
}

impl Source {
    /// Every line through a session model of `model` and each event through `stage`, to the
    /// source's end or until the window closes, then the stage finished (notifications sent,
    /// stdout flushed). Stdout that could not be written is an error; a closed pipe is not.
    pub fn run(self, model: ModelConfig, stage: &mut Stage, front: &Front) -> Result<Ran, Error> {
        let read = match self {
            Source::Live(following) => {
                follow::follow(following, model, stage, front).map(|()| None)
            }
            Source::Recorded { transcript, pace } => {
                let mut pacer = match &pace {
                    Pace::AsRead => None,
                    Pace::Timestamps { pacing, control } => {
                        Some(pace::Pacer::new(*pacing, control))
                    }
                };
                transcript
                    .play(model, |item| {
                        if let (Some(pacer), Item::Event(event)) = (pacer.as_mut(), &item) {
                            pacer.wait_before(event, &mut pace::RealSleep);
                        }
                        if front.stop.is_set() {
                            // The window closed.
                            return ControlFlow::Break(());
                        }
                        // Stdout went away, or could not be written.
                        stage.take(item)
                    })
                    .map(Some)
            }
        };
        let failures = stage.finish();
        if let Some(err) = stage.output_error() {
            return Err(Error::Output(err));
        }
        Ok(Ran {
            failures,
            read: read?,
        })
    }
}

/// What a source hands the stage: the session model's events, and the model's clock after
/// them, so the scripts' timers fire where the session timers do ([`crate::Stage::take`]).
#[derive(Debug, Clone, PartialEq)]
// Events are nearly all the traffic and move once each.
#[allow(clippy::large_enum_variant)]
pub enum Item {
    /// An event, made shareable where it was made: it moves on by its pointer (an `Event` is
    /// 700 bytes, and went through half a dozen copies on its way), and the scripts read it
    /// where it is.
    Event(Arc<Event>),
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
