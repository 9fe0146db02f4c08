//! What varies from run to run, behind resources a [`crate::scene::Scene`] fixes for a
//! screenshot that must be the same run after run: [`LocalClock`], the local wall-clock time
//! the view may show (time-of-day lighting, scenes by the hour), and [`Seed`], the seed of
//! anything random it draws (particles, weather). Game time (animations, timers) is Bevy's
//! `Time`, which scenes drive by a fixed step.

use bevy::prelude::*;

/// A time of day, local to the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimeOfDay {
    pub hour: u8,
    pub minute: u8,
}

impl TimeOfDay {
    /// The system's local time of day (UTC if the time zone is unknown).
    pub fn local() -> TimeOfDay {
        let now = jiff::ZonedDateTime::now();
        TimeOfDay {
            hour: now.hour().clamp(0, 23) as u8,
            minute: now.minute().clamp(0, 59) as u8,
        }
    }

    /// Hours since midnight, with the minutes as a fraction (0.0 ..< 24.0).
    pub fn hours(self) -> f32 {
        f32::from(self.hour) + f32::from(self.minute) / 60.0
    }
}

/// Where the view reads "now" from. Read it through [`LocalClock::now`], never from the system
/// directly, so screenshot tests stay deterministic.
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LocalClock {
    /// Fixed by a scene; `None` follows the system's clock.
    pub fixed: Option<TimeOfDay>,
}

impl LocalClock {
    pub fn now(&self) -> TimeOfDay {
        self.fixed.unwrap_or_else(TimeOfDay::local)
    }
}

/// The seed for anything random the view draws: seed every generator from it (never from the
/// system), so a scene's particles fall the same way each run.
#[derive(Resource, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seed(pub u64);

impl Seed {
    /// A seed of this run: fixed by a scene, else from the clock.
    pub fn for_run(fixed: Option<u64>) -> Seed {
        Seed(fixed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_clock_wins_over_the_system() {
        let noon = TimeOfDay {
            hour: 12,
            minute: 30,
        };
        assert_eq!(LocalClock { fixed: Some(noon) }.now(), noon);
        assert_eq!(noon.hours(), 12.5);
        let system = LocalClock::default().now();
        assert!(system.hour < 24 && system.minute < 60, "{system:?}");
        assert_eq!(Seed::for_run(Some(14)), Seed(14));
    }
}
