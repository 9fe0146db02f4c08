//! Helpers for the tailer's integration tests: a temporary Claude config dir, the real
//! transcripts of `shared/fixtures/real/`, the lines a file holds, a checker of the message
//! stream's invariants, and waiting for messages with generous timeouts (never asserting
//! how fast anything was).
#![allow(dead_code)]

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use familiar_tail::discovery::{self, dash_encode};
use familiar_tail::{OpenReason, Selector, TailMessage, TailerConfig, TailerHandle, WatchMode};

/// How long to wait for something that should happen (generous: a shared 2-core machine).
pub const WAIT: Duration = Duration::from_secs(10);

/// Every real transcript (at least the ten the tests were written against).
pub fn real_fixtures() -> Vec<PathBuf> {
    let files = familiar_testkit::real_fixtures();
    assert!(
        files.len() >= 10,
        "expected the real transcripts, found {files:?}"
    );
    files
}

pub fn real(name: &str) -> Vec<u8> {
    let path = familiar_testkit::real_fixture(name);
    fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The session id a real transcript's records carry (its first `sessionId`).
pub fn session_of(bytes: &[u8]) -> String {
    let head = discovery::read_head(&bytes[..bytes.len().min(1 << 20)]);
    head.session_id.expect("the fixture names its session")
}

/// The complete lines of `bytes`, as the tailer sends them (no `\n`, no `\r` before it).
pub fn lines_of(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = bytes
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line).to_vec())
        .collect();
    lines.pop(); // after the last newline: unfinished (or empty)
    lines
}

/// Byte offset just after the `n`-th newline.
pub fn after_lines(bytes: &[u8], n: usize) -> usize {
    memchr_nth(bytes, n).expect("enough lines")
}

fn memchr_nth(bytes: &[u8], n: usize) -> Option<usize> {
    bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .nth(n.checked_sub(1)?)
        .map(|(i, _)| i + 1)
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

    pub fn tailer_config(&self, selectors: Vec<Selector>) -> TailerConfig {
        TailerConfig::new(self.config.clone(), selectors)
    }
}

pub fn poll_mode() -> WatchMode {
    WatchMode::Poll {
        interval: Duration::from_millis(50),
    }
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

/// A line no fixture holds: a marker after which nothing of the earlier content may arrive
/// (the tailer keeps per-path order).
pub fn marker(text: &str) -> Vec<u8> {
    format!("{{\"type\":\"summary\",\"summary\":\"{text}\",\"leafUuid\":\"marker\"}}\n")
        .into_bytes()
}

pub fn is_marker(line: &[u8], text: &str) -> bool {
    line == &marker(text)[..marker(text).len() - 1]
}

/// Any line made by [`marker`].
pub fn is_any_marker(line: &[u8]) -> bool {
    line.ends_with(b"\"leafUuid\":\"marker\"}")
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

pub fn until_caught_up(handle: &TailerHandle) -> Vec<TailMessage> {
    until(handle, |m| matches!(m, TailMessage::CaughtUp)).expect("CaughtUp within the wait")
}

/// Messages up to the `Lines` that holds the marker line `text`.
pub fn until_marker(handle: &TailerHandle, text: &str) -> Vec<TailMessage> {
    until(handle, |m| match m {
        TailMessage::Lines { lines, .. } => lines.iter().any(|l| is_marker(&l.bytes, text)),
        _ => false,
    })
    .unwrap_or_else(|| panic!("marker {text:?} did not arrive within {WAIT:?}"))
}

/// One line as received, with its generation and backlog flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Got {
    pub generation: u32,
    pub number: u64,
    pub bytes: Vec<u8>,
    pub backlog: bool,
}

/// What one path received, checked against the contract while collected: `Opened` before
/// the lines of its generation, generations rising, line numbers consecutive within a
/// generation, nothing after `Removed` but a new `Opened`.
#[derive(Debug, Default, Clone)]
pub struct Stream {
    pub opened: Vec<(u32, OpenReason)>,
    pub lines: Vec<Got>,
    pub removed: Vec<u32>,
    pub too_long: Vec<(u32, u64, u64)>,
    pub meta: Vec<Option<String>>,
    open: Option<u32>,
    next_number: u64,
}

impl Stream {
    /// A slice of messages may begin after the `Opened` of the generation it continues.
    fn continuing(&mut self, generation: u32) {
        if self.open.is_none() && self.opened.is_empty() && self.removed.is_empty() {
            self.open = Some(generation);
        }
    }
}

impl Stream {
    /// Lines of a generation, without markers.
    pub fn lines_of_generation(&self, generation: u32) -> Vec<Vec<u8>> {
        self.lines
            .iter()
            .filter(|l| l.generation == generation && !is_any_marker(&l.bytes))
            .map(|l| l.bytes.clone())
            .collect()
    }

    pub fn last_generation(&self) -> u32 {
        self.opened.last().map_or(0, |(g, _)| *g)
    }
}

/// Collect messages per path, asserting the ordering contract.
pub fn collect(messages: &[TailMessage]) -> HashMap<PathBuf, Stream> {
    let mut streams: HashMap<PathBuf, Stream> = HashMap::new();
    for message in messages {
        match message {
            TailMessage::Opened {
                path,
                info,
                generation,
                reason,
                ..
            } => {
                assert_eq!(info.path.as_path(), &**path);
                let stream = streams.entry(path.to_path_buf()).or_default();
                assert!(
                    *generation > stream.last_generation(),
                    "{}: generation {generation} after {}",
                    path.display(),
                    stream.last_generation()
                );
                stream.opened.push((*generation, *reason));
                stream.open = Some(*generation);
                stream.next_number = 0;
            }
            TailMessage::Lines {
                path,
                generation,
                lines,
                backlog,
                resume,
            } => {
                // Reading stands just past the last line sent.
                if let (Some(resume), Some(last)) = (resume, lines.last()) {
                    assert_eq!(resume.line, last.number + 1, "{}", path.display());
                }
                let stream = streams.entry(path.to_path_buf()).or_default();
                stream.continuing(*generation);
                assert_eq!(
                    stream.open,
                    Some(*generation),
                    "{}: lines of generation {generation} while {:?} is open",
                    path.display(),
                    stream.open
                );
                assert!(!lines.is_empty(), "an empty Lines message");
                for line in lines {
                    if stream.next_number != 0 {
                        assert_eq!(
                            line.number,
                            stream.next_number,
                            "{}: line numbers are consecutive",
                            path.display()
                        );
                    }
                    stream.next_number = line.number + 1;
                    stream.lines.push(Got {
                        generation: *generation,
                        number: line.number,
                        bytes: line.bytes.clone(),
                        backlog: *backlog,
                    });
                }
            }
            TailMessage::TooLong {
                path,
                generation,
                number,
                len,
                ..
            } => {
                let stream = streams.entry(path.to_path_buf()).or_default();
                stream.continuing(*generation);
                assert_eq!(stream.open, Some(*generation));
                if stream.next_number != 0 {
                    assert_eq!(*number, stream.next_number);
                }
                stream.next_number = number + 1;
                stream.too_long.push((*generation, *number, *len));
            }
            TailMessage::Removed { path, generation } => {
                let stream = streams.entry(path.to_path_buf()).or_default();
                stream.continuing(*generation);
                assert_eq!(stream.open, Some(*generation), "{}", path.display());
                stream.removed.push(*generation);
                stream.open = None;
            }
            TailMessage::Meta { path, agent_type } => {
                let stream = streams.entry(path.to_path_buf()).or_default();
                assert!(
                    stream.open.is_some() || stream.opened.is_empty(),
                    "Meta of a removed path"
                );
                stream.meta.push(agent_type.clone());
            }
            TailMessage::CaughtUp | TailMessage::Problem { .. } | TailMessage::Dormant { .. } => {}
        }
    }
    streams
}

/// The stream of one path.
pub fn stream_of(messages: &[TailMessage], path: &Path) -> Stream {
    collect(messages).remove(path).unwrap_or_default()
}

/// Compare line lists with a readable first difference.
pub fn assert_same_lines(got: &[Vec<u8>], want: &[Vec<u8>], what: &str) {
    for (index, (got, want)) in got.iter().zip(want).enumerate() {
        assert!(
            got == want,
            "{what}: line {} differs:\n got {}\nwant {}",
            index + 1,
            String::from_utf8_lossy(&got[..got.len().min(200)]),
            String::from_utf8_lossy(&want[..want.len().min(200)])
        );
    }
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: {} lines, expected {}",
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
