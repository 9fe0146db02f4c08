//! A display for window tests: with `DISPLAY` unset, [`ensure_display`] starts an `Xvfb` on a
//! free display number and points `DISPLAY` at it, so a window test never passes without
//! rendering (Debian package `xvfb`; `xvfb-run -a cargo test` works too).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An Xvfb started by a test, stopped when dropped.
pub struct Xvfb(Child);

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The display to test on: `DISPLAY` if set (`None`), or an Xvfb started here, to keep
/// alive for the test's length. Call it before any thread of the test reads the environment:
/// it sets `DISPLAY`, so it is for test binaries holding a single test.
pub fn ensure_display() -> Option<Xvfb> {
    if std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()) {
        return None;
    }
    let n = (90..400)
        .find(|n| {
            !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
                && !Path::new(&format!("/tmp/.X{n}-lock")).exists()
        })
        .unwrap_or_else(|| panic!("no free X display number"));
    let child = Command::new("Xvfb")
        .args([
            &format!(":{n}"),
            "-screen",
            "0",
            "1024x768x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "DISPLAY is not set and Xvfb could not start ({e}): install the `xvfb` package \
                 or run the tests under `xvfb-run -a`"
            )
        });
    let server = Xvfb(child);
    let socket = PathBuf::from(format!("/tmp/.X11-unix/X{n}"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "Xvfb :{n} never came up");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: the caller is a test binary with a single test, setting the variable before
    // any thread of its own reads the environment.
    unsafe { std::env::set_var("DISPLAY", format!(":{n}")) };
    Some(server)
}
