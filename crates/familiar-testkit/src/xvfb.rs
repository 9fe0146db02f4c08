//! Displays for window tests. [`start`] runs an `Xvfb` that picks a free display itself
//! (`-displayfd`) and says which once it is ready, so tests running in parallel never race
//! for a display number; [`display`] uses `DISPLAY` when set and starts one otherwise;
//! [`ensure_display`] also points `DISPLAY` at it, for test binaries holding a single test. A
//! window test never passes without rendering (Debian package `xvfb`; `xvfb-run -a cargo
//! test` works too).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// An Xvfb started by a test, stopped when dropped.
pub struct Xvfb {
    child: Child,
    /// Its display, `:N`.
    pub display: String,
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A new Xvfb on a free display, ready when this returns.
pub fn start() -> Xvfb {
    let mut child = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1024x768x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "Xvfb could not start ({e}): install the `xvfb` package or run the tests \
                 under `xvfb-run -a` with DISPLAY set"
            )
        });
    let mut line = String::new();
    let read = child
        .stdout
        .take()
        .map(|out| BufReader::new(out).read_line(&mut line));
    // Owned before the check, so a failing check still stops the server.
    let mut server = Xvfb {
        child,
        display: String::new(),
    };
    let n = line.trim();
    assert!(
        matches!(read, Some(Ok(_))) && !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()),
        "Xvfb started but reported no display ({read:?}, {line:?})"
    );
    server.display = format!(":{n}");
    server
}

/// The display to test on: `DISPLAY` if set, else a new Xvfb's (kept alive by the second
/// value for the test's length).
pub fn display() -> (String, Option<Xvfb>) {
    if let Some(d) = std::env::var_os("DISPLAY").filter(|d| !d.is_empty()) {
        return (d.to_string_lossy().into_owned(), None);
    }
    let server = start();
    (server.display.clone(), Some(server))
}

/// [`display`], with `DISPLAY` pointed at it. Call it before any thread of the test reads the
/// environment: it sets `DISPLAY`, so it is for test binaries holding a single test.
pub fn ensure_display() -> Option<Xvfb> {
    let (display, server) = display();
    // SAFETY: the caller is a test binary with a single test, setting the variable before
    // any thread of its own reads the environment.
    unsafe { std::env::set_var("DISPLAY", display) };
    server
}
