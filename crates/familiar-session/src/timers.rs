//! The two status timers, as pure functions of elapsed time.
//!
//! A transcript says when a turn ends only sometimes: a text-only answer with no turn-end
//! marker is the agent waiting for its user, and a session whose file stops growing goes idle.
//! The model measures both against its own ticks ([`crate::Input::Tick`]).

use std::time::Duration;

use familiar_model::{EventKind, Status};

/// When quiet becomes `waiting_for_input`, and silence `idle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timers {
    /// No records for this long → `idle` (default 5 minutes).
    pub idle_after: Duration,
    /// A text-only turn without a turn-end marker quiet for this long → `waiting_for_input`
    /// (default 5 seconds).
    pub quiet_after: Duration,
}

impl Default for Timers {
    fn default() -> Timers {
        Timers {
            idle_after: Duration::from_secs(300),
            quiet_after: Duration::from_secs(5),
        }
    }
}

/// What a timer says about a transcript quiet for `quiet_for`, whose last event was
/// `last_kind` and whose records leave it in `status`; `None` when no timer applies (yet).
pub fn timer_status(
    timers: &Timers,
    quiet_for: Duration,
    last_kind: Option<EventKind>,
    status: Status,
) -> Option<Status> {
    if quiet_for >= timers.idle_after {
        Some(Status::Idle)
    } else if quiet_for >= timers.quiet_after
        && last_kind == Some(EventKind::Text)
        && status == Status::Working
    {
        Some(Status::WaitingForInput)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quiet_text_turn_waits_then_idles() {
        let timers = Timers::default();
        let text = Some(EventKind::Text);
        let at = Duration::from_secs;
        assert_eq!(timer_status(&timers, at(4), text, Status::Working), None);
        assert_eq!(
            timer_status(&timers, at(5), text, Status::Working),
            Some(Status::WaitingForInput)
        );
        assert_eq!(
            timer_status(&timers, at(300), text, Status::Working),
            Some(Status::Idle)
        );
    }

    #[test]
    fn a_pending_tool_use_only_idles() {
        let timers = Timers::default();
        let tool = Some(EventKind::Bash);
        let at = Duration::from_secs;
        assert_eq!(timer_status(&timers, at(60), tool, Status::Working), None);
        assert_eq!(
            timer_status(
                &timers,
                at(60),
                Some(EventKind::Text),
                Status::WaitingForApproval
            ),
            None
        );
        assert_eq!(
            timer_status(&timers, at(301), tool, Status::Working),
            Some(Status::Idle)
        );
    }
}
