//! Giving memory back after big work. The executable's allocator returns freed memory to the
//! system lazily, on a thread's next use of it: a thread that read one 50 MB record and then
//! sits idle keeps it all. The executable registers how to give it back ([`set_release`]);
//! each long-lived thread keeps a [`Reclaim`], notes the bytes it handles, and calls
//! [`Reclaim::idle`] when it goes idle, which releases once enough passed through.

use std::sync::OnceLock;

static RELEASE: OnceLock<fn()> = OnceLock::new();

/// Set once, by the executable, to its allocator's "return what is free" call.
pub fn set_release(release: fn()) {
    let _ = RELEASE.set(release);
}

/// Bytes handled after which an idle thread gives memory back.
pub const RECLAIM_AFTER: u64 = 1 << 20;

/// One thread's bytes handled since it last gave memory back.
#[derive(Debug, Default)]
pub struct Reclaim {
    bytes: u64,
}

impl Reclaim {
    pub fn note(&mut self, bytes: u64) {
        self.bytes = self.bytes.saturating_add(bytes);
    }

    /// The thread is idle: give memory back if [`RECLAIM_AFTER`] bytes passed since the last
    /// time. `true` if it did.
    pub fn idle(&mut self) -> bool {
        if self.bytes < RECLAIM_AFTER {
            return false;
        }
        self.bytes = 0;
        if let Some(release) = RELEASE.get() {
            release();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_gives_back_only_after_enough_bytes() {
        let mut reclaim = Reclaim::default();
        assert!(!reclaim.idle());
        reclaim.note(RECLAIM_AFTER - 1);
        assert!(!reclaim.idle());
        reclaim.note(1);
        assert!(reclaim.idle());
        assert!(!reclaim.idle(), "counted from zero again");
    }
}
