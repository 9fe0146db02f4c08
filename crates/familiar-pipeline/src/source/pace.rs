//! Replay timing, pure: [`RecordedTime`] reads the gaps between records from their
//! timestamps, and a [`Pacer`] turns each gap into waiting time for the current speed and
//! longest pause, waiting through an injected [`Sleep`] (tests use a fake one, never a real
//! sleep) and reading pause and speed from [`ReplayControl`] at every tick.

#[cfg(test)]
use std::ops::ControlFlow;
use std::time::{Duration, SystemTime};

use familiar_model::{Event, ReplayControl};

/// Longest wait between two events, in waiting time (`None` = real time, no limit).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pacing {
    pub max_gap: Option<Duration>,
}

/// Recorded time since the previous event, one event at a time: zero for the first, for
/// events without a timestamp, for events of the same record, and when the clock went
/// backwards.
#[derive(Debug, Default)]
pub struct RecordedTime {
    last: Option<SystemTime>,
}

impl RecordedTime {
    pub fn gap_before(&mut self, event: &Event) -> Duration {
        let Some(at) = event.ts.as_deref().and_then(parse_ts) else {
            return Duration::ZERO;
        };
        let gap = self
            .last
            .and_then(|last| at.duration_since(last).ok())
            .unwrap_or_default();
        if self.last.is_none_or(|last| at > last) {
            self.last = Some(at);
        }
        gap
    }
}

/// [`RecordedTime`] over a whole slice.
#[cfg(test)]
pub fn recorded_gaps(events: &[Event]) -> Vec<Duration> {
    let mut time = RecordedTime::default();
    events.iter().map(|event| time.gap_before(event)).collect()
}

fn parse_ts(ts: &str) -> Option<SystemTime> {
    familiar_model::time::parse_timestamp(ts)
}

/// Waiting time for a recorded gap at a speed, capped by the pacing (what a [`Pacer`] waits
/// when nothing changes mid-gap).
#[cfg(test)]
pub fn wall_wait(gap: Duration, speed: f64, pacing: Pacing) -> Duration {
    let scaled = gap.div_f64(sane_speed(speed));
    match pacing.max_gap {
        Some(max) => scaled.min(max),
        None => scaled,
    }
}

fn sane_speed(speed: f64) -> f64 {
    if speed.is_finite() && speed > 0.0 {
        speed
    } else {
        1.0
    }
}

/// Waiting, as the pacer does it: real sleeps in the binary, a fake in tests. (Not a clock:
/// the only clock of session state is the session model's.)
pub trait Sleep {
    fn sleep(&mut self, duration: Duration);
}

/// Real sleeps.
pub struct RealSleep;

impl Sleep for RealSleep {
    fn sleep(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// Longest single sleep, so pause and speed changes take effect quickly.
pub const TICK: Duration = Duration::from_millis(50);

/// Waits before each event of a replay as its recorded gap, the current speed and the pacing
/// say; while paused, waits in ticks. Fed one event at a time, so a replay streams its input.
pub struct Pacer<'a> {
    pacing: Pacing,
    control: &'a ReplayControl,
    time: RecordedTime,
}

impl<'a> Pacer<'a> {
    pub fn new(pacing: Pacing, control: &'a ReplayControl) -> Pacer<'a> {
        Pacer {
            pacing,
            control,
            time: RecordedTime::default(),
        }
    }

    pub fn wait_before(&mut self, event: &Event, clock: &mut dyn Sleep) {
        // Recorded time still to wait. Each tick re-reads the speed and uses up `step × speed`
        // of it, so a speed change mid-gap applies to the rest of the gap; the longest pause
        // clips what is left to `max_gap × speed` (clipping is idempotent, so it holds
        // across ticks).
        let mut left = self.time.gap_before(event);
        loop {
            if self.control.paused() {
                clock.sleep(TICK);
                continue;
            }
            let speed = sane_speed(self.control.speed());
            if let Some(max) = self.pacing.max_gap {
                left = left.min(max.mul_f64(speed));
            }
            let wait = left.div_f64(speed);
            // Done, or only float dust left (which would cost an extra, needless tick).
            if wait < Duration::from_micros(1) {
                break;
            }
            let step = wait.min(TICK);
            clock.sleep(step);
            left = left.saturating_sub(step.mul_f64(speed));
        }
    }
}

/// Play `events` in order through a [`Pacer`]. `on_event` gets each event and may stop the
/// replay (`ControlFlow::Break`, e.g. stdout closed). Returns how many events were played.
#[cfg(test)]
pub fn drive(
    events: &[Event],
    pacing: Pacing,
    control: &ReplayControl,
    clock: &mut dyn Sleep,
    mut on_event: impl FnMut(&Event) -> ControlFlow<()>,
) -> usize {
    let mut pacer = Pacer::new(pacing, control);
    for (played, event) in events.iter().enumerate() {
        pacer.wait_before(event, clock);
        if on_event(event).is_break() {
            return played;
        }
    }
    events.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use familiar_model::EventKind;

    fn at(ts: Option<&str>) -> Event {
        let mut event = Event::new(EventKind::Text, 1);
        event.ts = ts.map(str::to_owned);
        event
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// A clock that only adds up what it was asked to sleep, and can act at a given tick.
    struct FakeClock<F: FnMut(usize)> {
        slept: Vec<Duration>,
        on_tick: F,
    }

    impl<F: FnMut(usize)> Sleep for FakeClock<F> {
        fn sleep(&mut self, duration: Duration) {
            self.slept.push(duration);
            (self.on_tick)(self.slept.len());
        }
    }

    fn total(slept: &[Duration]) -> Duration {
        slept.iter().sum()
    }

    /// Equal to the microsecond: the driver splits gaps with float arithmetic.
    fn assert_close(actual: Duration, expected: Duration) {
        let diff = actual.abs_diff(expected);
        assert!(
            diff < Duration::from_micros(1),
            "{actual:?} != {expected:?}"
        );
    }

    #[test]
    fn gaps_come_from_record_timestamps() {
        let events = [
            at(Some("2025-08-10T12:00:00.000Z")),
            at(Some("2025-08-10T12:00:01.500Z")),
            at(Some("2025-08-10T12:00:01.500Z")), // same record
            at(None),
            at(Some("2025-08-10T12:10:01.500Z")),
            at(Some("2025-08-10T12:05:00.000Z")), // clock went backwards
            at(Some("2025-08-10T12:10:02.000Z")),
            at(Some("not a time")),
        ];
        assert_eq!(
            recorded_gaps(&events),
            vec![
                Duration::ZERO,
                secs(1.5),
                Duration::ZERO,
                Duration::ZERO,
                secs(600.0),
                Duration::ZERO,
                secs(0.5),
                Duration::ZERO
            ]
        );
    }

    #[test]
    fn wall_wait_scales_and_caps() {
        let compressed = Pacing {
            max_gap: Some(secs(2.0)),
        };
        let realtime = Pacing { max_gap: None };
        assert_eq!(wall_wait(secs(1.0), 1.0, compressed), secs(1.0));
        assert_eq!(wall_wait(secs(600.0), 1.0, compressed), secs(2.0));
        assert_eq!(wall_wait(secs(3.0), 2.0, compressed), secs(1.5));
        assert_eq!(wall_wait(secs(1.0), 0.5, compressed), secs(2.0));
        assert_eq!(wall_wait(secs(600.0), 1.0, realtime), secs(600.0));
        assert_eq!(wall_wait(secs(1.0), f64::NAN, realtime), secs(1.0));
    }

    fn transcript() -> Vec<Event> {
        vec![
            at(Some("2025-08-10T12:00:00Z")),
            at(Some("2025-08-10T12:00:01Z")),
            at(Some("2025-08-10T13:00:01Z")),
            at(Some("2025-08-10T13:00:01.200Z")),
        ]
    }

    #[test]
    fn drive_waits_the_compressed_gaps_and_plays_every_event_in_order() {
        let events = transcript();
        let mut clock = FakeClock {
            slept: Vec::new(),
            on_tick: |_| {},
        };
        let mut seen = Vec::new();
        let played = drive(
            &events,
            Pacing {
                max_gap: Some(secs(2.0)),
            },
            &ReplayControl::new(1.0),
            &mut clock,
            |event| {
                seen.push(event.ts.clone());
                ControlFlow::Continue(())
            },
        );
        assert_eq!(played, 4);
        assert_eq!(
            seen,
            events.iter().map(|e| e.ts.clone()).collect::<Vec<_>>()
        );
        // 1 s + 2 s (an hour, capped) + 0.2 s, in ticks of at most 50 ms.
        assert_close(total(&clock.slept), secs(3.2));
        assert!(clock.slept.iter().all(|d| *d <= TICK));
    }

    #[test]
    fn drive_in_realtime_at_double_speed() {
        let events = transcript();
        let mut clock = FakeClock {
            slept: Vec::new(),
            on_tick: |_| {},
        };
        drive(
            &events[..2],
            Pacing { max_gap: None },
            &ReplayControl::new(2.0),
            &mut clock,
            |_| ControlFlow::Continue(()),
        );
        assert_close(total(&clock.slept), secs(0.5));
    }

    #[test]
    fn a_speed_change_mid_gap_applies_to_the_rest_of_it() {
        let events = &transcript()[..2]; // one gap of 1 s
        let control = ReplayControl::new(1.0);
        let handle = control.clone();
        let mut clock = FakeClock {
            slept: Vec::new(),
            // After 0.5 s (10 ticks) the user doubles the speed: 0.5 s recorded left → 0.25 s.
            on_tick: move |tick| {
                if tick == 10 {
                    handle.set_speed(2.0);
                }
            },
        };
        drive(
            events,
            Pacing { max_gap: None },
            &control,
            &mut clock,
            |_| ControlFlow::Continue(()),
        );
        assert_close(total(&clock.slept), secs(0.75));
        assert_eq!(clock.slept.len(), 15);
    }

    #[test]
    fn pause_holds_the_replay_without_using_up_the_gap() {
        let events = &transcript()[..2];
        let control = ReplayControl::new(1.0);
        let handle = control.clone();
        let mut clock = FakeClock {
            slept: Vec::new(),
            // Paused at tick 4 for 30 ticks.
            on_tick: move |tick| match tick {
                4 => handle.set_paused(true),
                34 => handle.set_paused(false),
                _ => {}
            },
        };
        let played = drive(
            events,
            Pacing { max_gap: None },
            &control,
            &mut clock,
            |_| ControlFlow::Continue(()),
        );
        assert_eq!(played, 2);
        // 1 s of gap (20 ticks) plus 30 paused ticks.
        assert_eq!(clock.slept.len(), 50);
        assert_close(total(&clock.slept), secs(1.0) + TICK * 30);
    }

    #[test]
    fn the_stage_can_stop_the_replay() {
        let events = transcript();
        let mut clock = FakeClock {
            slept: Vec::new(),
            on_tick: |_| {},
        };
        let mut count = 0;
        let played = drive(
            &events,
            Pacing {
                max_gap: Some(Duration::ZERO),
            },
            &ReplayControl::new(1.0),
            &mut clock,
            |_| {
                count += 1;
                if count == 2 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
        assert_eq!(played, 1);
        assert_eq!(count, 2);
        assert!(clock.slept.is_empty());
    }
}
