//! The sound sink: carries out the `sound(...)` actions that scripts emit by playing them on
//! the desktop's sound server (PulseAudio, or PipeWire through its pulse layer).
//!
//! Scripts (`familiar-script`) queue `Sound { name }` actions; the binary feeds every action
//! to the sinks of `familiar-sink` through one fan-out, and [`AudioSink`] is one of them. A
//! name is a built-in cue ([`cues`], rendered by the project's own [`synth`]) or a file beside
//! the script ([`resolve`], decoded by [`decode`]). [`AudioSink::handle`] only decides (quiet
//! hours, the repeat gap, the path rules) and hands the sound to a worker thread, which owns
//! the connection ([`pulse`]) and plays each sound as its own stream, so overlapping sounds
//! mix in the server. No server, no device, a broken file: one warning naming what is
//! missing, counted as a failure; the pipeline carries on and later sounds try again.

pub mod cues;
pub mod decode;
pub mod game_cues;
pub mod pulse;
pub mod resolve;
pub mod synth;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use familiar_model::sink::{FailureCounter, Sink};
use familiar_model::time::QuietHours;
use familiar_model::{Action, ActionKind};
use futures::StreamExt as _;
use futures::channel::mpsc;
use futures::stream::FuturesUnordered;

pub use game_cues::{CueOutcome, GameCues, SharedAudio};
pub use pulse::{ServerError, ServerInfo, probe};
pub use resolve::{ResolveError, ScriptDirs, Source};

/// How long [`Sink::flush`] waits for sounds still playing.
const FLUSH_LIMIT: Duration = Duration::from_secs(10);
/// After a failed connection, the next attempt waits at least this long.
const RECONNECT_AFTER: Duration = Duration::from_secs(5);

/// How the sink plays.
#[derive(Debug, Clone)]
pub struct AudioOptions {
    /// 0.0 (silent) to 1.0 (the cues' full level).
    pub volume: f32,
    /// Local times with no sound.
    pub quiet_hours: Option<QuietHours>,
    /// The same sound asked again within this gap is skipped.
    pub repeat_gap: Duration,
    /// Where the loaded scripts live, for their sound files.
    pub script_dirs: ScriptDirs,
    /// The server's socket; `None` finds it from the environment ([`pulse::socket_from_env`]).
    pub socket: Option<PathBuf>,
}

impl Default for AudioOptions {
    fn default() -> AudioOptions {
        AudioOptions {
            volume: 0.8,
            quiet_hours: None,
            repeat_gap: familiar_model::sink::DEFAULT_SOUND_REPEAT_GAP,
            script_dirs: ScriptDirs::default(),
            socket: None,
        }
    }
}

/// Skips a sound asked again within the gap (a burst of errors rings once).
#[derive(Debug, Default)]
pub struct Throttle {
    gap: Duration,
    last: HashMap<Source, Instant>,
}

impl Throttle {
    pub fn new(gap: Duration) -> Throttle {
        Throttle {
            gap,
            last: HashMap::new(),
        }
    }

    /// Whether `source` may play at `now`; if so, `now` is its last time.
    pub fn allow(&mut self, source: &Source, now: Instant) -> bool {
        if let Some(last) = self.last.get(source)
            && now.saturating_duration_since(*last) < self.gap
        {
            return false;
        }
        self.last.insert(source.clone(), now);
        true
    }
}

/// Minutes after local midnight now (UTC when the time zone is unknown).
pub fn local_minute() -> u16 {
    let now = jiff::ZonedDateTime::now();
    (now.hour() as u16) * 60 + now.minute() as u16
}

enum Request {
    Play { source: Source, name: String },
    Flush(std::sync::mpsc::Sender<()>),
}

/// Plays `sound` actions; see the crate docs.
pub struct AudioSink {
    options: AudioOptions,
    throttle: Throttle,
    requests: mpsc::UnboundedSender<Request>,
    failures: FailureCounter,
    /// Problems already told (each is told once, then only counted).
    told: HashSet<String>,
    /// Sounds handed to the worker, for tests and benchmarks.
    sent: u64,
    /// When a script's sound was last handed over, by session ("" when unknown): the window's
    /// cues stay quiet after it (`game_cues`).
    script_sounds: HashMap<String, Instant>,
}

/// Whether [`AudioSink::play`] handed the sound to the sound thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Played {
    Sent,
    Not,
}

impl AudioSink {
    /// Start the worker, which renders the cues and connects at once, so the first sound
    /// plays without waiting for either (a missing server is told now, not at the first cue).
    pub fn new(options: AudioOptions) -> AudioSink {
        let (requests, receiver) = mpsc::unbounded();
        let failures = FailureCounter::new();
        let worker = Worker {
            gain: options.volume.clamp(0.0, 1.0),
            socket: options.socket.clone(),
            client: None,
            last_attempt: None,
            files: HashMap::new(),
            told: HashSet::new(),
            failures: failures.clone(),
        };
        let spawned = std::thread::Builder::new()
            .name("familiar-audio".into())
            .spawn(move || worker.run(receiver));
        if let Err(err) = spawned {
            tracing::warn!(
                sink = "sound",
                "cannot start the sound thread: {err}; no sound"
            );
        }
        AudioSink {
            throttle: Throttle::new(options.repeat_gap),
            options,
            requests,
            failures,
            told: HashSet::new(),
            sent: 0,
            script_sounds: HashMap::new(),
        }
    }

    /// Sounds handed to the worker so far (after quiet hours, path rules and the repeat gap).
    pub fn sent(&self) -> u64 {
        self.sent
    }

    fn tell(&mut self, problem: String) {
        tell(&mut self.told, &self.failures, problem);
    }

    /// When a script's sound for `session` was last handed over.
    pub(crate) fn script_sound_at(&self, session: &str) -> Option<Instant> {
        self.script_sounds.get(session).copied()
    }

    /// Play `name` (a built-in cue, or a file beside `script`) unless quiet hours, the path
    /// rules or the repeat gap say no.
    pub(crate) fn play(&mut self, name: &str, script: &str) -> Played {
        if let Some(hours) = self.options.quiet_hours
            && hours.contains(local_minute())
        {
            tracing::debug!(sink = "sound", "{name}: quiet hours ({hours})");
            return Played::Not;
        }
        let source = match resolve::resolve(name, script, &self.options.script_dirs) {
            Ok(source) => source,
            Err(err) => {
                self.tell(err.to_string());
                return Played::Not;
            }
        };
        if !self.throttle.allow(&source, Instant::now()) {
            tracing::debug!(
                sink = "sound",
                "{name}: played less than the repeat gap ago"
            );
            return Played::Not;
        }
        let request = Request::Play {
            source,
            name: name.to_owned(),
        };
        if self.requests.unbounded_send(request).is_ok() {
            self.sent += 1;
            Played::Sent
        } else {
            Played::Not
        }
    }
}

/// Warn about a problem the first time, count it every time.
fn tell(told: &mut HashSet<String>, failures: &FailureCounter, problem: String) {
    failures.count_quietly();
    if told.insert(problem.clone()) {
        tracing::warn!(sink = "sound", "{problem}");
    } else {
        tracing::debug!(sink = "sound", "{problem}");
    }
}

impl Sink for AudioSink {
    fn name(&self) -> &str {
        "sound"
    }

    fn handle(&mut self, action: &Action) {
        let ActionKind::Sound { name } = &action.kind else {
            return;
        };
        if self.play(name, &action.script) == Played::Sent {
            let session = action.session.clone().unwrap_or_default();
            self.script_sounds.insert(session, Instant::now());
        }
    }

    /// Wait (at most 10 s) until every sound handed over has finished playing.
    fn flush(&mut self) {
        let (done, wait) = std::sync::mpsc::channel();
        if self.requests.unbounded_send(Request::Flush(done)).is_ok() {
            let _ = wait.recv_timeout(FLUSH_LIMIT);
        }
    }

    fn failures(&self) -> u64 {
        self.failures.get()
    }
}

/// The sound thread: owns the connection, decodes files, starts one stream per sound.
struct Worker {
    gain: f32,
    socket: Option<PathBuf>,
    client: Option<(pulseaudio::Client, String)>,
    last_attempt: Option<Instant>,
    /// Decoded files by path, with the modification time they were decoded at.
    files: HashMap<PathBuf, (Option<SystemTime>, pulse::Clip)>,
    told: HashSet<String>,
    failures: FailureCounter,
}

type Playing = std::pin::Pin<Box<dyn Future<Output = Result<(), ServerError>>>>;

impl Worker {
    fn run(mut self, mut requests: mpsc::UnboundedReceiver<Request>) {
        // Render every cue now, not when the first one is asked for.
        let _ = cues::samples(0);
        self.ensure_client();
        futures::executor::block_on(async move {
            let mut playing: FuturesUnordered<Playing> = FuturesUnordered::new();
            let mut waiting = Vec::new();
            loop {
                futures::select! {
                    request = requests.next() => match request {
                        Some(Request::Play { source, name }) => {
                            if let Some(future) = self.start(&source, &name) {
                                playing.push(future);
                            }
                        }
                        Some(Request::Flush(done)) => waiting.push(done),
                        None => break,
                    },
                    outcome = playing.select_next_some() => {
                        if let Err(err) = outcome {
                            if matches!(err, ServerError::Lost(_)) {
                                self.client = None;
                            }
                            tell(&mut self.told, &self.failures, err.to_string());
                        }
                    },
                }
                if playing.is_empty() {
                    for done in waiting.drain(..) {
                        let _ = done.send(());
                    }
                }
            }
            // The sink is gone: let what is playing finish.
            while playing.next().await.is_some() {}
        });
    }

    fn ensure_client(&mut self) -> Option<(pulseaudio::Client, String)> {
        if let Some(client) = &self.client {
            return Some(client.clone());
        }
        let now = Instant::now();
        if self
            .last_attempt
            .is_some_and(|last| now.duration_since(last) < RECONNECT_AFTER)
        {
            self.failures.count_quietly();
            return None;
        }
        self.last_attempt = Some(now);
        let connected = match &self.socket {
            Some(socket) => Ok(socket.clone()),
            None => pulse::socket_from_env(),
        }
        .and_then(|socket| {
            let client = pulse::connect(&socket)?;
            Ok((client, socket.display().to_string()))
        });
        match connected {
            Ok(client) => {
                tracing::debug!(
                    sink = "sound",
                    "connected to the sound server at {}",
                    client.1
                );
                self.client = Some(client.clone());
                Some(client)
            }
            Err(err) => {
                tell(
                    &mut self.told,
                    &self.failures,
                    format!("{err}; sounds are off until it is there"),
                );
                None
            }
        }
    }

    fn clip(&mut self, source: &Source) -> Option<pulse::Clip> {
        match source {
            Source::Cue(index) => Some(pulse::Clip {
                samples: cues::samples(*index)?,
                channels: 1,
                rate: synth::RATE,
            }),
            Source::File(path) => {
                let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
                if let Some((when, clip)) = self.files.get(path)
                    && *when == modified
                {
                    return Some(clip.clone());
                }
                match decode::decode(path) {
                    Ok(pcm) => {
                        let clip = pulse::Clip {
                            samples: pcm.samples.into(),
                            channels: pcm.channels,
                            rate: pcm.rate,
                        };
                        self.files.insert(path.clone(), (modified, clip.clone()));
                        Some(clip)
                    }
                    Err(err) => {
                        let problem = format!("cannot play {}: {err}", path.display());
                        tell(&mut self.told, &self.failures, problem);
                        None
                    }
                }
            }
        }
    }

    fn start(&mut self, source: &Source, name: &str) -> Option<Playing> {
        let clip = self.clip(source)?;
        let (client, socket) = self.ensure_client()?;
        let asked = Instant::now();
        let name = name.to_owned();
        let started = move || {
            tracing::debug!(
                sink = "sound",
                "{name}: stream started {:.1} ms after it was asked",
                asked.elapsed().as_secs_f64() * 1000.0
            );
        };
        Some(Box::pin(pulse::play(
            client, clip, self.gain, socket, started,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_sound_within_the_gap_is_skipped_and_others_are_not() {
        let mut throttle = Throttle::new(Duration::from_secs(3));
        let t0 = Instant::now();
        let error = Source::Cue(3);
        let done = Source::Cue(2);
        assert!(throttle.allow(&error, t0));
        assert!(!throttle.allow(&error, t0 + Duration::from_millis(100)));
        assert!(throttle.allow(&done, t0 + Duration::from_millis(100)));
        assert!(!throttle.allow(&error, t0 + Duration::from_millis(2_999)));
        assert!(throttle.allow(&error, t0 + Duration::from_secs(3)));
    }
}
