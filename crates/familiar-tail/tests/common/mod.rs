//! Helpers for the tailer's integration tests: a temporary Claude config dir, the real
//! transcripts of `shared/fixtures/real/`, the reference events (`normalize_bytes` plus the
//! tailer's documented tagging), and waiting for messages with generous timeouts (never
//! asserting how fast anything was).
#![allow(dead_code)]

use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use familiar_model::{Event, EventKind};
use familiar_tail::discovery::{self, dash_encode};
use familiar_tail::{Clock, Selector, TailMessage, TailerConfig, TailerHandle, WatchMode};
use familiar_transcript::{NormalizerConfig, normalize_bytes};

/// How long to wait for something that should happen (generous: a shared 2-core machine).
pub const WAIT: Duration = Duration::from_secs(10);

/// `shared/fixtures/real/` beside the clone (override with `FAMILIAR_REAL_FIXTURES`).
pub fn real_fixture_dir() -> PathBuf {
    let dir = std::env::var_os("FAMILIAR_REAL_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/real")
        });
    assert!(
        dir.is_dir(),
        "real transcripts not found at {} (set FAMILIAR_REAL_FIXTURES)",
        dir.display()
    );
    dir
}

pub fn real_fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(real_fixture_dir())
        .expect("read the real fixture dir")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 10,
        "expected the real transcripts, found {files:?}"
    );
    files
}

pub fn real(name: &str) -> Vec<u8> {
    let path = real_fixture_dir().join(name);
    fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The session id a real transcript's records carry (its first `sessionId`).
pub fn session_of(bytes: &[u8]) -> String {
    let head = discovery::read_head(&bytes[..bytes.len().min(1 << 20)]);
    head.session_id.expect("the fixture names its session")
}

/// A temporary Claude config dir (`<tmp>/claude`, not created until asked).
pub struct Env {
    pub tmp: tempfile::TempDir,
    pub config: PathBuf,
}

impl Env {
    pub fn new() -> Env {
        let tmp = tempfile::tempdir().expect("temp dir");
        let config = tmp.path().join("claude");
        Env { tmp, config }
    }

    /// `projects/<dash-encoded project>/`, created.
    pub fn project_dir(&self, project: &Path) -> PathBuf {
        let dir = self.config.join("projects").join(dash_encode(project));
        fs::create_dir_all(&dir).expect("create the project dir");
        dir
    }

    /// A tailer config on this dir; the status timers are pushed out of reach (tests of the
    /// timers set them and drive a [`familiar_tail::ManualClock`]), so a slow machine cannot
    /// slip a `status` event between the ones compared.
    pub fn tailer_config(&self, selectors: Vec<Selector>) -> TailerConfig {
        let mut config = TailerConfig::new(self.config.clone(), selectors);
        config.timers = familiar_tail::Timers {
            idle_after: Duration::from_secs(86_400),
            quiet_after: Duration::from_secs(86_400),
        };
        config
    }
}

pub fn poll_mode() -> WatchMode {
    WatchMode::Poll {
        interval: Duration::from_millis(50),
    }
}

pub fn with_clock(mut config: TailerConfig, clock: Arc<dyn Clock>) -> TailerConfig {
    config.clock = clock;
    config
}

pub fn start(config: TailerConfig) -> TailerHandle {
    familiar_tail::spawn(config).expect("start the tailer")
}

pub fn append(path: &Path, bytes: &[u8]) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open for append");
    file.write_all(bytes).expect("append");
}

/// What `familiar events` gives for these bytes, with the tailer's tagging for `path`.
pub fn reference(path: &Path, bytes: &[u8]) -> Vec<Event> {
    let info = discovery::describe(path).expect("a transcript path");
    let (mut events, _) = normalize_bytes(bytes, &NormalizerConfig::default());
    for event in &mut events {
        familiar_tail::tag(event, &info);
    }
    events
}

/// A record that yields one `summary` event carrying `text`: a marker after which nothing of
/// the earlier content may arrive (the tailer keeps per-file order).
pub fn sentinel(text: &str) -> Vec<u8> {
    format!("{{\"type\":\"summary\",\"summary\":\"{text}\",\"leafUuid\":\"sentinel\"}}\n")
        .into_bytes()
}

pub fn is_sentinel(event: &Event, text: &str) -> bool {
    event.kind == EventKind::Summary && event.text.as_deref() == Some(text)
}

/// Messages received until `stop` says so (the matching message included), or `None` if
/// `WAIT` passes without it.
pub fn until(
    handle: &TailerHandle,
    mut stop: impl FnMut(&TailMessage) -> bool,
) -> Option<Vec<TailMessage>> {
    let deadline = Instant::now() + WAIT;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let message = handle.receiver().recv_timeout(left).ok()?;
        let done = stop(&message);
        seen.push(message);
        if done {
            return Some(seen);
        }
    }
}

/// Events received up to (not including) the sentinel event with `text`.
pub fn events_until_sentinel(handle: &TailerHandle, text: &str) -> Vec<Event> {
    let messages = until(
        handle,
        |message| matches!(message, TailMessage::Event(event) if is_sentinel(event, text)),
    )
    .unwrap_or_else(|| panic!("sentinel {text:?} did not arrive within {WAIT:?}"));
    events(messages)
        .into_iter()
        .filter(|event| !is_sentinel(event, text))
        .collect()
}

pub fn events(messages: Vec<TailMessage>) -> Vec<Event> {
    messages
        .into_iter()
        .filter_map(|message| match message {
            TailMessage::Event(event) => Some(event),
            _ => None,
        })
        .collect()
}

/// Compare event lists with a readable first difference.
pub fn assert_same_events(got: &[Event], want: &[Event], what: &str) {
    for (index, (got, want)) in got.iter().zip(want).enumerate() {
        assert_eq!(got, want, "{what}: event {index} differs");
    }
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: {} events, expected {}",
        got.len(),
        want.len()
    );
}

/// Replace the `cwd` of every record (to place a real transcript in a project of ours).
pub fn with_cwd(bytes: &[u8], cwd: &Path) -> Vec<u8> {
    let text = std::str::from_utf8(bytes).expect("fixtures are UTF-8");
    let cwd_json = serde_json::to_string(&cwd.to_string_lossy()).expect("a JSON string");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\"cwd\":\"") {
        out.push_str(&rest[..at]);
        out.push_str("\"cwd\":");
        out.push_str(&cwd_json);
        let after = &rest[at + 7..];
        let end = after.find('"').expect("a closing quote");
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out.into_bytes()
}
