//! A real PulseAudio server for tests and benchmarks: `pulseaudio` with one null sink (`t`) in
//! a private runtime directory, and a recorder of that sink's monitor through `parec`. Needs
//! the Debian packages `pulseaudio` and `pulseaudio-utils` (`.ci/run` installs them).
//! Shared by `familiar-audio`'s tests and latency benchmark and the binary's tests (feature
//! `pulse`).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Sample rate of the recording (the issue's `parec` command).
pub const RECORD_RATE: usize = 44_100;

pub struct PulseServer {
    dir: tempfile::TempDir,
    child: Child,
}

impl PulseServer {
    /// Start the server and wait (at most 10 s) until its socket answers.
    pub fn start() -> PulseServer {
        let dir = tempfile::tempdir().expect("runtime dir");
        let child = Command::new("pulseaudio")
            .args([
                "-n",
                "--daemonize=no",
                "--exit-idle-time=-1",
                "--disable-shm",
                "--load=module-null-sink sink_name=t",
                "--load=module-native-protocol-unix auth-anonymous=1",
            ])
            .env("XDG_RUNTIME_DIR", dir.path())
            .env("HOME", dir.path())
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("DISPLAY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pulseaudio runs (apt-get install pulseaudio pulseaudio-utils)");
        let server = PulseServer { dir, child };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !server.answers() {
            assert!(
                Instant::now() < deadline,
                "pulseaudio did not start within 10 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    fn answers(&self) -> bool {
        self.pactl(&["info"])
            .is_some_and(|out| out.contains("Default Sink: t"))
    }

    /// Run `pactl` against this server; its stdout when it succeeded.
    pub fn pactl(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("pactl")
            .args(args)
            .env("XDG_RUNTIME_DIR", self.dir.path())
            .env("HOME", self.dir.path())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The private `XDG_RUNTIME_DIR` (for child processes).
    pub fn runtime_dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("pulse/native")
    }

    /// Start recording the null sink's monitor; waits until the first samples arrive.
    pub fn record(&self) -> Recording {
        let mut child = Command::new("parec")
            .args([
                "-d",
                "t.monitor",
                "--raw",
                "--format=s16le",
                "--rate=44100",
                "--channels=2",
                "--latency-msec=5",
            ])
            .env("XDG_RUNTIME_DIR", self.dir.path())
            .env("HOME", self.dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("parec runs (apt-get install pulseaudio-utils)");
        let mut stdout = child.stdout.take().expect("parec stdout");
        let chunks: Arc<Mutex<Vec<Chunk>>> = Arc::default();
        let sink = Arc::clone(&chunks);
        std::thread::spawn(move || {
            let mut buffer = [0u8; 1024];
            while let Ok(n) = stdout.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                let samples = buffer[..n - n % 2]
                    .chunks_exact(2)
                    .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0)
                    .collect();
                let mut chunks = sink.lock().unwrap_or_else(|p| p.into_inner());
                chunks.push(Chunk {
                    at: Instant::now(),
                    samples,
                });
            }
        });
        let recording = Recording { child, chunks };
        let deadline = Instant::now() + Duration::from_secs(10);
        while recording.chunks().is_empty() {
            assert!(
                Instant::now() < deadline,
                "parec recorded nothing within 10 s"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        recording
    }
}

impl Drop for PulseServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Samples as they arrived from `parec`, with their arrival time.
#[derive(Debug, Clone)]
pub struct Chunk {
    pub at: Instant,
    /// Interleaved stereo, -1..1.
    pub samples: Vec<f32>,
}

pub struct Recording {
    child: Child,
    chunks: Arc<Mutex<Vec<Chunk>>>,
}

/// Louder than this (RMS of a chunk) counts as sound; the null sink's silence is exactly 0.
pub const AUDIBLE: f32 = 0.005;

impl Recording {
    pub fn chunks(&self) -> Vec<Chunk> {
        self.chunks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// RMS of everything that arrived between `from` and `to`.
    pub fn rms_between(&self, from: Instant, to: Instant) -> f32 {
        let chunks = self.chunks();
        let samples: Vec<f32> = chunks
            .iter()
            .filter(|c| c.at >= from && c.at < to)
            .flat_map(|c| c.samples.iter().copied())
            .collect();
        rms(&samples)
    }

    /// Arrival time of the first chunk after `from` that is audible.
    pub fn first_sound_after(&self, from: Instant) -> Option<Instant> {
        // Polled in a tight loop by the benchmark: look under the lock, newest chunks only.
        let chunks = self.chunks.lock().unwrap_or_else(|p| p.into_inner());
        let start = chunks.partition_point(|c| c.at < from);
        chunks[start..]
            .iter()
            .find(|c| rms(&c.samples) > AUDIBLE)
            .map(|c| c.at)
    }

    /// Arrival time of the last audible chunk.
    pub fn last_sound(&self) -> Option<Instant> {
        self.chunks()
            .iter()
            .rev()
            .find(|c| rms(&c.samples) > AUDIBLE)
            .map(|c| c.at)
    }

    /// Seconds of audible audio (by sample count, so independent of arrival jitter).
    pub fn audible_seconds(&self) -> f32 {
        let frames: usize = self
            .chunks()
            .iter()
            .filter(|c| rms(&c.samples) > AUDIBLE)
            .map(|c| c.samples.len() / 2)
            .sum();
        frames as f32 / RECORD_RATE as f32
    }

    /// Every sample recorded so far, interleaved stereo.
    pub fn samples(&self) -> Vec<f32> {
        self.chunks().into_iter().flat_map(|c| c.samples).collect()
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn rms(samples: &[f32]) -> f32 {
    if samples.is_empty() {
        return 0.0;
    }
    (samples.iter().map(|s| s * s).sum::<f32>() / samples.len() as f32).sqrt()
}
