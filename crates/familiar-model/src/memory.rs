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

/// A buffer at least this long is given back as soon as it is freed, not once the thread goes
/// idle: what follows it (a script's copy of a line's text, the rest of a record being read)
/// would come on top of it.
pub const RELEASE_AT_ONCE: u64 = 4 << 20;

/// One thread's bytes handled since it last gave memory back.
#[derive(Debug, Default)]
pub struct Reclaim {
    bytes: u64,
}

impl Reclaim {
    pub fn note(&mut self, bytes: u64) {
        self.bytes = self.bytes.saturating_add(bytes);
    }

    /// A buffer of `len` bytes was freed (a line handled, a big line's buffer moved): give
    /// memory back now if it was big ([`RELEASE_AT_ONCE`]). `true` if it did.
    /// What it handled still counts: the thread gives back again once idle (what was built
    /// from the line, such as its events, is freed later).
    pub fn freed(&mut self, len: u64) -> bool {
        self.note(len);
        freed(len)
    }

    /// The thread is idle: give memory back if [`RECLAIM_AFTER`] bytes passed since the last
    /// time. `true` if it did.
    pub fn idle(&mut self) -> bool {
        if self.bytes < RECLAIM_AFTER {
            return false;
        }
        self.bytes = 0;
        release();
        true
    }
}

/// A buffer of `len` bytes was freed on this thread, by a caller that keeps no [`Reclaim`] (a
/// command reading a file to its end): give memory back now if it was big
/// ([`RELEASE_AT_ONCE`]). `true` if it did.
pub fn freed(len: u64) -> bool {
    if len < RELEASE_AT_ONCE {
        return false;
    }
    release();
    true
}

fn release() {
    if let Some(release) = RELEASE.get() {
        release();
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

    #[test]
    fn a_big_buffer_is_given_back_at_once_and_again_when_idle() {
        let mut reclaim = Reclaim::default();
        assert!(!reclaim.freed(RELEASE_AT_ONCE - 1));
        assert!(reclaim.freed(RELEASE_AT_ONCE));
        // What was built from it is freed later: idle gives back again.
        assert!(reclaim.idle());
        assert!(!reclaim.idle(), "counted from zero again");
    }
}
