//! A real agent CLI in an interactive session in a pseudo-terminal (`script(1)` of util-linux;
//! every real-CLI suite's interactive run): keys in, the screen kept as plain
//! text (escape sequences dropped) for waiting on what the CLI shows and for failure messages.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct Terminal {
    child: Child,
    keys: ChildStdin,
    screen: Arc<Mutex<Vec<u8>>>,
}

impl Terminal {
    /// Runs `bin` with `args` in a 120×40 terminal (`TERM=xterm-256color`), in `dir`, with
    /// `env` only (and `PATH`).
    pub fn start(bin: &Path, args: &[&str], dir: &Path, env: &[(&str, &std::ffi::OsStr)]) -> Self {
        let quote = |text: &str| format!("'{}'", text.replace('\'', r"'\''"));
        let mut command = format!(
            "stty cols 120 rows 40; exec {}",
            quote(&bin.to_string_lossy())
        );
        for arg in args {
            command.push(' ');
            command.push_str(&quote(arg));
        }
        let mut script = Command::new("script");
        script
            .args(["-qfec", &command, "/dev/null"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TERM", "xterm-256color")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (key, value) in env {
            script.env(key, value);
        }
        let mut child = script.spawn().expect("script(1) from util-linux");
        let keys = child.stdin.take().expect("stdin");
        let mut out = child.stdout.take().expect("stdout");
        let screen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend_from_slice(&buf[..n]);
            }
        });
        Terminal {
            child,
            keys,
            screen,
        }
    }

    /// Types `text`, then Enter (apart: Ink reads a pasted line and its Enter apart only
    /// when they arrive apart).
    pub fn type_line(&mut self, text: &str) {
        self.keys.write_all(text.as_bytes()).expect("type");
        self.keys.flush().expect("flush keys");
        std::thread::sleep(Duration::from_millis(500));
        self.enter();
    }

    /// Sends `bytes` as typed (an arrow key's escape sequence).
    pub fn key(&mut self, bytes: &[u8]) {
        self.keys.write_all(bytes).expect("key");
        self.keys.flush().expect("flush keys");
    }

    pub fn enter(&mut self) {
        self.keys.write_all(b"\r").expect("enter");
        self.keys.flush().expect("flush keys");
    }

    /// Has the screen shown `text` so far (spaces left out on both sides: Ink moves the cursor
    /// instead of writing spaces)?
    pub fn shows(&self, text: &str) -> bool {
        self.plain()
            .replace(' ', "")
            .contains(&text.replace(' ', ""))
    }

    /// Waits until `done` (at most `limit`), failing with `what` and the screen.
    pub fn wait(&self, what: &str, limit: Duration, mut done: impl FnMut(&Terminal) -> bool) {
        let deadline = Instant::now() + limit;
        while !done(self) {
            assert!(
                Instant::now() < deadline,
                "{what}: not within {limit:?}; screen: {}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Waits for the CLI to end (at most `limit`), failing with the screen.
    pub fn wait_end(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while !matches!(self.child.try_wait(), Ok(Some(_))) {
            assert!(
                Instant::now() < deadline,
                "the CLI did not end within {limit:?}; screen: {}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Everything shown, escape sequences dropped.
    fn plain(&self) -> String {
        let bytes = self
            .screen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let text = String::from_utf8_lossy(&bytes);
        let mut plain = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                match chars.peek() {
                    // CSI: up to a letter.
                    Some('[') => {
                        for c in chars.by_ref() {
                            if c.is_ascii_alphabetic() || c == '~' {
                                break;
                            }
                        }
                    }
                    // OSC: up to BEL or ST.
                    Some(']') => {
                        while let Some(c) = chars.next() {
                            if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                                break;
                            }
                        }
                    }
                    _ => {
                        chars.next();
                    }
                }
            } else if !c.is_control() || c == '\n' {
                plain.push(c);
            }
        }
        plain
    }

    /// The last 3,000 characters shown (for failure messages).
    pub fn screen(&self) -> String {
        let plain = self.plain();
        let start = plain.len().saturating_sub(3000);
        plain[plain.ceil_char_boundary(start)..].to_owned()
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
