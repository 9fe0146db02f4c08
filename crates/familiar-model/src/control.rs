//! Replay control shared between the game window (keys) and the replay driver (timing), so
//! neither depends on the other: plain atomics behind an `Arc`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Pause flag and speed factor of a replay. Speed is stored in thousandths.
#[derive(Debug, Clone)]
pub struct ReplayControl {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    paused: AtomicBool,
    speed_milli: AtomicU32,
}

impl ReplayControl {
    pub fn new(speed: f64) -> ReplayControl {
        let control = ReplayControl {
            inner: Arc::new(Inner {
                paused: AtomicBool::new(false),
                speed_milli: AtomicU32::new(1000),
            }),
        };
        control.set_speed(speed);
        control
    }

    pub fn paused(&self) -> bool {
        self.inner.paused.load(Ordering::Relaxed)
    }

    pub fn set_paused(&self, paused: bool) {
        self.inner.paused.store(paused, Ordering::Relaxed);
    }

    pub fn toggle_pause(&self) {
        self.inner.paused.fetch_xor(true, Ordering::Relaxed);
    }

    pub fn speed(&self) -> f64 {
        f64::from(self.inner.speed_milli.load(Ordering::Relaxed)) / 1000.0
    }

    /// Clamped to 0.01×..1000×.
    pub fn set_speed(&self, speed: f64) {
        let clamped = if speed.is_finite() {
            speed.clamp(0.01, 1000.0)
        } else {
            1.0
        };
        self.inner
            .speed_milli
            .store((clamped * 1000.0).round() as u32, Ordering::Relaxed);
    }
}

impl Default for ReplayControl {
    fn default() -> ReplayControl {
        ReplayControl::new(1.0)
    }
}
