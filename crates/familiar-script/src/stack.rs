//! A stack of its own for script calls, so that a script nesting data deep cannot overflow the
//! stack of the thread that drives the [`crate::ScriptHost`] (the program aborts on overflow).
//!
//! Rhai walks nested data recursively (measuring its size after every change, comparing,
//! printing, dropping it) at up to about 1 KB (release) to 8 KB (debug build) of stack per level,
//! and a call can nest data a few thousand levels deep before its time budget stops it: the
//! cost of each level grows with the depth, so 2,000 levels take about half a second. A
//! thread's stack is 2 MiB by default. So [`crate::host`] runs every call on a [`BigStack`]
//! of [`HANDLER_STACK`] bytes, mapped once per host with a guard page at each end; only the
//! pages a call touches are ever committed. Switching to it costs a few instructions, where
//! allocating a fresh stack per call (the `stacker` crate's way) cost about 50 µs.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// Size of the stack script calls run on.
pub const HANDLER_STACK: usize = 256 * 1024 * 1024;

/// An mmap'd stack with guard pages, owned by one host.
pub(crate) struct BigStack {
    mapping: *mut u8,
    len: usize,
    page: usize,
}

// SAFETY: the mapping is owned by this value alone and only used through `&mut self`.
unsafe impl Send for BigStack {}

impl BigStack {
    /// Map a stack of `size` bytes; `None` if the system refuses (the calls then run on the
    /// caller's stack, as before).
    pub fn new(size: usize) -> Option<BigStack> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
        let len = size.div_ceil(page).checked_add(2)?.checked_mul(page)?;
        // SAFETY: a fresh private anonymous mapping, checked below; nothing else refers to it.
        unsafe {
            let mapping = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            );
            if mapping == libc::MAP_FAILED {
                return None;
            }
            let stack = BigStack {
                mapping: mapping.cast(),
                len,
                page,
            };
            // Everything but the first and last page is usable: those stay guard pages.
            let usable = libc::mprotect(
                mapping.cast::<u8>().add(page).cast(),
                len - 2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
            );
            (usable == 0).then_some(stack)
        }
    }

    /// Run `f` on this stack. A panic in `f` is carried back and resumed on the caller's stack.
    pub fn run<R>(&mut self, f: impl FnOnce() -> R) -> R {
        let mut f = Some(f);
        let mut out = None;
        // SAFETY: the usable area is page-aligned, its size a multiple of the page size, and
        // `&mut self` keeps it from being used twice at once; the callback never unwinds (the
        // panic is caught inside and resumed outside).
        let panic = unsafe {
            psm::on_stack(
                self.mapping.add(self.page),
                self.len - 2 * self.page,
                || {
                    catch_unwind(AssertUnwindSafe(|| {
                        if let Some(f) = f.take() {
                            out = Some(f());
                        }
                    }))
                    .err()
                },
            )
        };
        if let Some(panic) = panic {
            resume_unwind(panic);
        }
        match out {
            Some(out) => out,
            None => unreachable!("the callback ran to completion"),
        }
    }
}

impl Drop for BigStack {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in `new`, no longer in use.
        unsafe {
            libc::munmap(self.mapping.cast(), self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(n: u64) -> u64 {
        // A frame that cannot be optimised away.
        let pad = std::hint::black_box([n; 64]);
        if n == 0 { 0 } else { 1 + depth(pad[0] - 1) }
    }

    #[test]
    fn recursion_far_past_a_test_threads_2_mib_runs_on_the_big_stack() {
        // About 100 MB of frames: a test thread's own 2 MiB would overflow and abort.
        let mut stack = BigStack::new(HANDLER_STACK).unwrap_or_else(|| panic!("no mmap"));
        assert_eq!(stack.run(|| depth(150_000)), 150_000);
        // Reused: the second call finds the same stack.
        assert_eq!(stack.run(|| depth(10)), 10);
    }

    #[test]
    fn a_panic_on_the_big_stack_comes_back_as_a_panic() {
        let mut stack = BigStack::new(1024 * 1024).unwrap_or_else(|| panic!("no mmap"));
        let caught = catch_unwind(AssertUnwindSafe(|| stack.run(|| panic!("inside"))));
        assert!(caught.is_err());
        assert_eq!(stack.run(|| 7), 7);
    }
}
