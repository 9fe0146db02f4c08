//! The local wall-clock time the view may show (time-of-day lighting, scenes by the hour),
//! behind one resource so captures can fix it: [`LocalClock`] reads the system's local time,
//! unless a [`crate::scene::Scene`] fixed it for a screenshot that must be the same run after
//! run. Game time (animations, timers) is Bevy's `Time`, which scenes drive by a fixed step.

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
    }
}
