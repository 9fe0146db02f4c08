//! Clocks for the host-side rate limit `once_per(key, seconds)`.
//!
//! The [`crate::ScriptHost`] asks its clock for the time once per event, before calling any
//! handler, and `once_per` compares against that reading. The clock is injectable so that:
//! a live watcher uses wall time ([`SystemClock`]), a dry run over a file (`familiar run`,
//! `familiar test`) uses the events' own timestamps ([`EventClock`], deterministic: the same
//! transcript always gives the same actions), and unit tests step time by hand
//! ([`ManualClock`]) instead of sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use familiar_model::Event;

/// A source of "now", in seconds on an arbitrary but monotonic-enough scale.
pub trait Clock: Send + Sync {
    /// The time at which `event` is being handled.
    fn now_secs(&self, event: &Event) -> f64;
}

/// Wall time since the clock was created; ignores the event.
#[derive(Debug, Clone)]
pub struct SystemClock {
    start: Instant,
}

impl SystemClock {
    pub fn new() -> SystemClock {
        SystemClock {
            start: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> SystemClock {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now_secs(&self, _event: &Event) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}

/// The event's own RFC 3339 timestamp (`ev.ts`). Events without a readable timestamp reuse
/// the last one seen, so a replay never goes back in time because of one odd record.
#[derive(Debug, Default)]
pub struct EventClock {
    /// Last timestamp seen, as f64 bits (an atomic so the clock stays `Sync`).
    last_bits: AtomicU64,
}

impl EventClock {
    pub fn new() -> EventClock {
        EventClock::default()
    }
}

/// Seconds since the epoch of an RFC 3339 timestamp (`None` before it or unreadable). The
/// last answer is kept per thread: the host asks twice per event (its timers, this clock),
/// and the events of one record share its timestamp.
pub(crate) fn rfc3339_secs(ts: &str) -> Option<f64> {
    thread_local! {
        static LAST: std::cell::RefCell<(String, Option<f64>)> =
            const { std::cell::RefCell::new((String::new(), None)) };
    }
    LAST.with_borrow_mut(|(last, secs)| {
        if last != ts {
            *secs = familiar_model::time::parse_timestamp_ms(ts)
                .filter(|ms| *ms >= 0)
                .map(|ms| ms as f64 / 1000.0);
            last.clear();
            last.push_str(ts);
        }
        *secs
    })
}

impl Clock for EventClock {
    fn now_secs(&self, event: &Event) -> f64 {
        let parsed = event.ts.as_deref().and_then(rfc3339_secs);
        match parsed {
            Some(secs) => {
                self.last_bits.store(secs.to_bits(), Ordering::Relaxed);
                secs
            }
            None => f64::from_bits(self.last_bits.load(Ordering::Relaxed)),
        }
    }
}

/// A clock set by hand, for tests. Clones share the same time.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    millis: Arc<AtomicU64>,
}

impl ManualClock {
    pub fn new() -> ManualClock {
        ManualClock::default()
    }

    pub fn set_secs(&self, secs: f64) {
        let millis = (secs.max(0.0) * 1000.0).round() as u64;
        self.millis.store(millis, Ordering::Relaxed);
    }

    pub fn advance_secs(&self, secs: f64) {
        let millis = (secs.max(0.0) * 1000.0).round() as u64;
        self.millis.fetch_add(millis, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now_secs(&self, _event: &Event) -> f64 {
        self.millis.load(Ordering::Relaxed) as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use familiar_model::EventKind;

    #[test]
    fn the_kept_timestamp_is_only_the_last_one_asked() {
        let a = "2026-02-10T10:00:02.000Z";
        let b = "2026-02-10T10:00:03.500Z";
        assert_eq!(rfc3339_secs(a), Some(1_770_717_602.0));
        assert_eq!(rfc3339_secs(a), Some(1_770_717_602.0));
        assert_eq!(rfc3339_secs(b), Some(1_770_717_603.5));
        assert_eq!(rfc3339_secs("not a time"), None);
        assert_eq!(rfc3339_secs(""), None);
        assert_eq!(rfc3339_secs(a), Some(1_770_717_602.0));
    }

    #[test]
    fn event_clock_reads_timestamps_and_keeps_the_last_one() {
        let clock = EventClock::new();
        let mut ev = Event::new(EventKind::Text, 1);
        ev.ts = Some("2025-06-02T18:46:51.500Z".into());
        let first = clock.now_secs(&ev);
        assert_eq!(first, 1_748_890_011.5);
        ev.ts = Some("2025-06-02T18:47:01.500Z".into());
        assert_eq!(clock.now_secs(&ev) - first, 10.0);
        ev.ts = None;
        assert_eq!(clock.now_secs(&ev) - first, 10.0);
        ev.ts = Some("not a time".into());
        assert_eq!(clock.now_secs(&ev) - first, 10.0);
    }

    #[test]
    fn manual_clock_is_shared_between_clones() {
        let clock = ManualClock::new();
        let other = clock.clone();
        let ev = Event::new(EventKind::Text, 1);
        clock.set_secs(5.0);
        other.advance_secs(2.5);
        assert_eq!(clock.now_secs(&ev), 7.5);
    }
}
