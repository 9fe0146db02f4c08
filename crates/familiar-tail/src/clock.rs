//! The clock behind the tailer's timers (idle after 5 minutes, `waiting_for_input` after a
//! quiet text-only turn). It is injected so tests can move time forward instead of sleeping
//! for minutes; the tailer itself still wakes on real time (at least once per housekeeping
//! tick) to look at the clock.

use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// Source of time for the timers: a monotonic instant for deadlines and the wall time for the
/// `ts` of timer events and for the age of record timestamps.
pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> Instant;
    fn wall(&self) -> SystemTime;
}

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn wall(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that runs with real time plus an offset that tests push forward.
#[derive(Debug)]
pub struct ManualClock {
    offset: Mutex<Duration>,
}

impl ManualClock {
    pub fn new() -> ManualClock {
        ManualClock {
            offset: Mutex::new(Duration::ZERO),
        }
    }

    /// Move both the monotonic and the wall time forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut offset = self
            .offset
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        *offset += by;
    }

    fn offset(&self) -> Duration {
        *self
            .offset
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl Default for ManualClock {
    fn default() -> ManualClock {
        ManualClock::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        Instant::now() + self.offset()
    }

    fn wall(&self) -> SystemTime {
        SystemTime::now() + self.offset()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_forward_when_told() {
        let clock = ManualClock::new();
        let before = clock.now();
        clock.advance(Duration::from_secs(600));
        assert!(clock.now().duration_since(before) >= Duration::from_secs(600));
        let wall = clock.wall();
        assert!(
            wall.duration_since(SystemTime::now()).unwrap_or_default() >= Duration::from_secs(599)
        );
    }
}
