//! One followed transcript: its byte offset, the partial-line buffer ([`LineSplitter`]), its
//! own [`Normalizer`], the fingerprint of its first line, and its timers. The [`crate::tailer`]
//! thread owns one [`FileTail`] per file and calls [`FileTail::poll`] whenever inotify (or the
//! poll loop) says the file may have changed; `poll` works out what happened (growth,
//! truncation, replacement, deletion) from the file itself, so a missed or doubled
//! notification never loses or repeats a line.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::time::{Duration, Instant, SystemTime};

use familiar_model::{Event, EventKind, Status};
use familiar_transcript::{
    Diagnostic, DiagnosticKind, Line, LineSplitter, Normalizer, NormalizerConfig,
};

use memchr::memmem;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::discovery::{TranscriptInfo, TranscriptKind, open_nonblocking, parse_timestamp};

/// Bytes of the first line kept as the file's fingerprint.
const FINGERPRINT_BYTES: usize = 4096;
/// Bytes read per `read` call.
const CHUNK: usize = 64 * 1024;

/// Where reading starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Emit everything from the first line (`--from-start`, or a file that appeared later).
    FromStart,
    /// Read the first `n` bytes only to learn the session state, emitting nothing for them.
    Silent(u64),
}

/// Why a file was read again from its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetReason {
    /// The file became shorter than what was already read.
    Truncated,
    /// Another file took its place (a different first line, or a different inode whose
    /// first line differs or which is shorter).
    Replaced,
}

/// Why a file cannot be followed (any more).
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("deleted")]
    Gone,
    #[error("not a regular file")]
    NotRegular,
    #[error("cannot read: {0}")]
    Unreadable(#[from] io::Error),
}

/// A subagent tied to the Task/Agent tool_use that spawned it, as the parent session's own
/// records tell: `progress` records of type `agent_progress` (`parentToolUseID`,
/// `data.agentId`) and the Task tool_result's `toolUseResult.agentId`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentLink {
    pub agent_id: String,
    pub tool_use_id: String,
}

/// The link a main-chain record reveals, if any. Most lines are rejected by two substring
/// searches; only candidates are parsed.
pub fn subagent_link(line: &[u8]) -> Option<SubagentLink> {
    #[derive(Deserialize)]
    struct Progress {
        #[serde(rename = "isSidechain")]
        is_sidechain: Option<bool>,
        #[serde(rename = "parentToolUseID")]
        parent_tool_use_id: Option<String>,
        data: Option<ProgressData>,
    }
    #[derive(Deserialize)]
    struct ProgressData {
        #[serde(rename = "type")]
        kind: Option<String>,
        #[serde(rename = "agentId")]
        agent_id: Option<String>,
    }
    #[derive(Deserialize)]
    struct ToolResult {
        #[serde(rename = "isSidechain")]
        is_sidechain: Option<bool>,
        #[serde(rename = "toolUseResult")]
        tool_use_result: Option<Box<RawValue>>,
        message: Option<Box<RawValue>>,
    }
    #[derive(Deserialize)]
    struct AgentResult {
        #[serde(rename = "agentId")]
        agent_id: Option<String>,
    }
    #[derive(Deserialize)]
    struct Message {
        content: Option<Box<RawValue>>,
    }
    #[derive(Deserialize)]
    struct Block {
        #[serde(rename = "type")]
        kind: Option<String>,
        tool_use_id: Option<String>,
    }
    memmem::find(line, b"\"agentId\"")?;
    if memmem::find(line, b"\"agent_progress\"").is_some() {
        let record: Progress = serde_json::from_slice(line).ok()?;
        let data = record.data?;
        if record.is_sidechain == Some(true) || data.kind.as_deref() != Some("agent_progress") {
            return None;
        }
        return Some(SubagentLink {
            agent_id: data.agent_id?,
            tool_use_id: record.parent_tool_use_id?,
        });
    }
    memmem::find(line, b"\"toolUseResult\"")?;
    let record: ToolResult = serde_json::from_slice(line).ok()?;
    if record.is_sidechain == Some(true) {
        return None;
    }
    let result: AgentResult = serde_json::from_str(record.tool_use_result?.get()).ok()?;
    let message: Message = serde_json::from_str(record.message?.get()).ok()?;
    let blocks: Vec<Block> = serde_json::from_str(message.content?.get()).ok()?;
    let tool_use_id = blocks
        .into_iter()
        .find(|block| block.kind.as_deref() == Some("tool_result"))?
        .tool_use_id?;
    Some(SubagentLink {
        agent_id: result.agent_id?,
        tool_use_id,
    })
}

/// What one [`FileTail::poll`] did.
#[derive(Debug, Default)]
pub struct Polled {
    /// The byte budget ran out before the end: poll again soon.
    pub more: bool,
    pub reset: Option<ResetReason>,
    pub bytes: u64,
    pub lines: u64,
    /// Subagent links first seen in this poll (session files only; warm-up lines included).
    pub links: Vec<SubagentLink>,
}

/// Fill in what a record left empty from the file's place: the session from the file name (or
/// the subagent's `<sessionId>/subagents/` dir) and, in a subagent transcript, the agent id
/// from `agent-<id>.jsonl`. Fields the records set are never changed.
pub fn tag(event: &mut Event, info: &TranscriptInfo) {
    if event.session.is_none() {
        event.session.clone_from(&info.session_id);
    }
    if event.agent.is_none() && info.kind == TranscriptKind::Subagent {
        event.agent.clone_from(&info.agent_id);
    }
}

/// One followed transcript.
#[derive(Debug)]
pub struct FileTail {
    pub info: TranscriptInfo,
    /// Set by the tailer once it sent the `Followed` message for this file.
    pub announced: bool,
    config: NormalizerConfig,
    file: Option<File>,
    identity: Option<(u64, u64)>,
    offset: u64,
    silent_until: u64,
    splitter: LineSplitter,
    normalizer: Normalizer,
    fingerprint: Option<Vec<u8>>,
    /// Clock time of the last complete line (or, after a silent read, of the last record).
    last_activity: Instant,
    last_kind: Option<EventKind>,
    lines_seen: u64,
    /// Agents whose link was already reported, and links found but not yet returned.
    linked: Vec<String>,
    new_links: Vec<SubagentLink>,
    idle_sent: bool,
    quiet_sent: bool,
    warmed: bool,
}

impl FileTail {
    pub fn new(
        info: TranscriptInfo,
        config: NormalizerConfig,
        start: Start,
        now: Instant,
    ) -> FileTail {
        let max_line = config.max_line_bytes;
        FileTail {
            info,
            announced: false,
            normalizer: Normalizer::new(config.clone()),
            config,
            file: None,
            identity: None,
            offset: 0,
            silent_until: match start {
                Start::FromStart => 0,
                Start::Silent(until) => until,
            },
            splitter: LineSplitter::new(max_line),
            fingerprint: None,
            last_activity: now,
            last_kind: None,
            lines_seen: 0,
            linked: Vec::new(),
            new_links: Vec::new(),
            idle_sent: false,
            quiet_sent: false,
            warmed: matches!(start, Start::FromStart | Start::Silent(0)),
        }
    }

    pub fn normalizer(&self) -> &Normalizer {
        &self.normalizer
    }

    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// `true` once the silent warm-up part has been read.
    pub fn warmed(&self) -> bool {
        self.warmed
    }

    /// The last complete line's number.
    pub fn last_line(&self) -> u64 {
        self.splitter.next_line_number().saturating_sub(1)
    }

    /// The status a watcher should see now: the normalizer's, or what a timer said since.
    pub fn status(&self) -> Status {
        if self.idle_sent {
            Status::Idle
        } else if self.quiet_sent {
            Status::WaitingForInput
        } else {
            self.normalizer.status()
        }
    }

    /// Read what is new, at most about `budget` bytes, through `scratch` (a read buffer
    /// shared by all files, so 200 followed files do not hold 200 buffers). Events (tagged)
    /// go to `out`, skipped lines to `diagnostics`.
    pub fn poll(
        &mut self,
        scratch: &mut Vec<u8>,
        at: &PollAt<'_>,
        out: &mut Vec<Event>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Result<Polled, FileError> {
        let PollAt {
            now,
            wall,
            timers,
            budget,
            check_path,
        } = *at;
        let mut polled = Polled::default();
        let first = out.len();
        // Only data changed (inotify said so): the held descriptor's fstat is enough and
        // spares the path lookup. Otherwise the path decides (deleted? another inode?).
        let meta = match self.file.as_ref() {
            Some(file) if !check_path => file.metadata()?,
            _ => fs::metadata(&self.info.path).map_err(not_found_is_gone)?,
        };
        if !meta.is_file() {
            return Err(FileError::NotRegular);
        }
        let mut size = meta.len();
        if self.identity != Some((meta.dev(), meta.ino())) {
            let file = open_nonblocking(&self.info.path).map_err(not_found_is_gone)?;
            let opened = file.metadata()?;
            if !opened.is_file() {
                return Err(FileError::NotRegular);
            }
            let replaced = self.identity.is_some();
            size = opened.len();
            self.identity = Some((opened.dev(), opened.ino()));
            self.file = Some(file);
            // A new inode with the same first line and at least as many bytes is the same
            // transcript rewritten (copied, or renamed over): carry on from the offset.
            if replaced && !(opened.len() >= self.offset && self.fingerprint_matches()?) {
                self.reset();
                polled.reset = Some(ResetReason::Replaced);
            }
        }
        if size < self.offset {
            self.reset();
            polled.reset = Some(ResetReason::Truncated);
        } else if !self.fingerprint_matches()? {
            self.reset();
            polled.reset = Some(ResetReason::Replaced);
        }
        let lines_before = self.lines_seen;
        if scratch.len() < CHUNK {
            scratch.resize(CHUNK, 0);
        }
        self.read_to_end(scratch, budget, &mut polled, out, diagnostics)?;
        polled.lines = self.lines_seen - lines_before;
        polled.links = std::mem::take(&mut self.new_links);
        if polled.lines > 0 && self.offset > self.silent_until {
            self.last_activity = now;
            self.idle_sent = false;
            self.quiet_sent = false;
        }
        if self.fingerprint.is_none() && self.offset > 0 {
            self.take_fingerprint()?;
        }
        if !self.warmed && self.offset >= self.silent_until {
            self.warmed = true;
            self.after_warm_up(now, wall, timers);
        }
        for event in &mut out[first..] {
            tag(event, &self.info);
        }
        Ok(polled)
    }

    fn read_to_end(
        &mut self,
        buf: &mut [u8],
        budget: u64,
        polled: &mut Polled,
        out: &mut Vec<Event>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Result<(), FileError> {
        let Some(file) = self.file.take() else {
            return Err(FileError::Gone);
        };
        let result = loop {
            if polled.bytes >= budget {
                polled.more = true;
                break Ok(());
            }
            let read = match file.read_at(buf, self.offset) {
                Ok(0) => break Ok(()),
                Ok(read) => read,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => break Err(FileError::Unreadable(err)),
            };
            let chunk = &buf[..read];
            // Lines whose newline lies before `silent_until` are read for state only.
            let silent = self
                .silent_until
                .saturating_sub(self.offset)
                .min(read as u64) as usize;
            if silent > 0 {
                self.feed(&chunk[..silent], true, out, diagnostics);
            }
            if silent < read {
                self.feed(&chunk[silent..], false, out, diagnostics);
            }
            self.offset += read as u64;
            polled.bytes += read as u64;
        };
        self.file = Some(file);
        result
    }

    fn feed(
        &mut self,
        bytes: &[u8],
        silent: bool,
        out: &mut Vec<Event>,
        diagnostics: &mut Vec<Diagnostic>,
    ) {
        let normalizer = &mut self.normalizer;
        let max_line = self.config.max_line_bytes as u64;
        let first = out.len();
        let mut lines = 0;
        let find_links = self.info.kind == TranscriptKind::Session;
        let (linked, new_links) = (&mut self.linked, &mut self.new_links);
        self.splitter.push(bytes, |line| {
            lines += 1;
            match line {
                Line::Complete { bytes, number } => {
                    if find_links
                        && let Some(link) = subagent_link(bytes)
                        && !linked.contains(&link.agent_id)
                    {
                        linked.push(link.agent_id.clone());
                        new_links.push(link);
                    }
                    if let Err(diagnostic) = normalizer.push_line(bytes, number, out) {
                        diagnostics.push(diagnostic);
                    }
                }
                Line::TooLong { len, number } => {
                    normalizer.skipped_line();
                    diagnostics.push(Diagnostic {
                        line: number,
                        kind: DiagnosticKind::TooLong { len, cap: max_line },
                    });
                }
            }
        });
        self.lines_seen += lines;
        if let Some(last) = out[first..].last() {
            self.last_kind = Some(last.kind);
        }
        if silent {
            out.truncate(first);
        }
    }

    /// After the silent read: date the last activity from the last record's timestamp, so a
    /// session that went quiet an hour ago counts as idle now rather than in five minutes.
    fn after_warm_up(&mut self, now: Instant, wall: SystemTime, timers: &Timers) {
        let age = self
            .normalizer
            .metrics()
            .last_ts
            .as_deref()
            .and_then(parse_timestamp)
            .and_then(|last| wall.duration_since(last).ok());
        let Some(age) = age else { return };
        self.last_activity = now.checked_sub(age).unwrap_or(now);
        if age >= timers.idle_after {
            self.idle_sent = true;
            self.quiet_sent = true;
        } else if age >= timers.quiet_after && self.quiet_pending() {
            self.quiet_sent = true;
        }
    }

    fn quiet_pending(&self) -> bool {
        self.last_kind == Some(EventKind::Text) && self.normalizer.status() == Status::Working
    }

    /// The next moment a timer may fire.
    pub fn next_deadline(&self, timers: &Timers) -> Option<Instant> {
        if self.lines_seen == 0 || !self.warmed {
            return None;
        }
        let quiet = (!self.quiet_sent && self.quiet_pending())
            .then(|| self.last_activity + timers.quiet_after);
        let idle = (!self.idle_sent).then(|| self.last_activity + timers.idle_after);
        quiet.into_iter().chain(idle).min()
    }

    /// A `status` event if a timer is due: `waiting_for_input` after a text-only turn went
    /// quiet, `idle` after a long time without records. At most one of each per quiet spell.
    pub fn due_status(&mut self, now: Instant, wall: SystemTime, timers: &Timers) -> Option<Event> {
        if self.lines_seen == 0 || !self.warmed {
            return None;
        }
        let quiet_for = now.saturating_duration_since(self.last_activity);
        let status = if !self.idle_sent && quiet_for >= timers.idle_after {
            self.idle_sent = true;
            self.quiet_sent = true;
            Status::Idle
        } else if !self.quiet_sent && self.quiet_pending() && quiet_for >= timers.quiet_after {
            self.quiet_sent = true;
            Status::WaitingForInput
        } else {
            return None;
        };
        let mut event = Event::new(EventKind::Status, self.last_line());
        event.session = self.normalizer.session().map(str::to_owned);
        event.sidechain = self.info.kind == TranscriptKind::Subagent;
        event.ts = Some(humantime::format_rfc3339_millis(wall).to_string());
        event.context_used = self.normalizer.context_used();
        event.context_limit = self.normalizer.context_limit();
        event.status = status;
        tag(&mut event, &self.info);
        Some(event)
    }

    fn reset(&mut self) {
        self.offset = 0;
        self.silent_until = 0;
        self.warmed = true;
        self.splitter.reset();
        self.normalizer = Normalizer::new(self.config.clone());
        self.fingerprint = None;
        self.last_kind = None;
        self.idle_sent = false;
        self.quiet_sent = false;
    }

    /// The first line (at most [`FINGERPRINT_BYTES`]), once it is complete or that long.
    fn take_fingerprint(&mut self) -> io::Result<()> {
        let Some(file) = self.file.as_ref() else {
            return Ok(());
        };
        let mut head = vec![0u8; FINGERPRINT_BYTES];
        let read = read_at_most(file, &mut head)?;
        head.truncate(read);
        if let Some(newline) = head.iter().position(|&byte| byte == b'\n') {
            head.truncate(newline + 1);
            self.fingerprint = Some(head);
        } else if read == FINGERPRINT_BYTES {
            self.fingerprint = Some(head);
        }
        Ok(())
    }

    fn fingerprint_matches(&self) -> io::Result<bool> {
        let (Some(fingerprint), Some(file)) = (self.fingerprint.as_ref(), self.file.as_ref())
        else {
            return Ok(true);
        };
        let mut head = [0u8; FINGERPRINT_BYTES];
        let head = &mut head[..fingerprint.len()];
        let read = read_at_most(file, head)?;
        Ok(read == fingerprint.len() && head == fingerprint.as_slice())
    }
}

/// Fill `buf` from the file's start as far as the file goes.
fn read_at_most(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read_at(&mut buf[filled..], filled as u64) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        }
    }
    Ok(filled)
}

fn not_found_is_gone(err: io::Error) -> FileError {
    if err.kind() == io::ErrorKind::NotFound {
        FileError::Gone
    } else {
        FileError::Unreadable(err)
    }
}

/// When and how a [`FileTail::poll`] runs.
#[derive(Debug, Clone, Copy)]
pub struct PollAt<'a> {
    pub now: Instant,
    pub wall: SystemTime,
    pub timers: &'a Timers,
    /// Bytes to read at most before returning ([`Polled::more`]).
    pub budget: u64,
    /// Stat the path (deleted? replaced by another inode?), not only the open file: needed
    /// unless the watcher reported nothing but data changes for this path.
    pub check_path: bool,
}

/// The two status timers.
#[derive(Debug, Clone, Copy)]
pub struct Timers {
    /// No records for this long → `idle` (default 5 minutes).
    pub idle_after: Duration,
    /// A text-only turn without a turn-end marker quiet for this long → `waiting_for_input`
    /// (default 5 seconds).
    pub quiet_after: Duration,
}

impl Default for Timers {
    fn default() -> Timers {
        Timers {
            idle_after: Duration::from_secs(300),
            quiet_after: Duration::from_secs(5),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::describe;
    use std::path::PathBuf;

    fn fixture(name: &str) -> Vec<u8> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/fixtures/real")
            .join(name);
        fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
    }

    fn first_lines(bytes: &[u8], n: usize) -> &[u8] {
        let end = bytes
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'\n')
            .nth(n - 1)
            .map(|(i, _)| i + 1)
            .expect("enough lines");
        &bytes[..end]
    }

    struct Case {
        _dir: tempfile::TempDir,
        path: PathBuf,
        tail: FileTail,
        scratch: Vec<u8>,
        t0: Instant,
        wall: SystemTime,
    }

    impl Case {
        fn new(content: &[u8], start: impl FnOnce(u64) -> Start) -> Case {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("s.jsonl");
            fs::write(&path, content).expect("write");
            let info = describe(&path).expect("a transcript");
            let t0 = Instant::now();
            let tail = FileTail::new(
                info,
                NormalizerConfig::default(),
                start(content.len() as u64),
                t0,
            );
            Case {
                _dir: dir,
                path,
                tail,
                scratch: Vec::new(),
                t0,
                wall: SystemTime::now(),
            }
        }

        fn poll(&mut self, at: Duration) -> Vec<Event> {
            let mut out = Vec::new();
            let mut diagnostics = Vec::new();
            let timers = Timers::default();
            let poll_at = PollAt {
                now: self.t0 + at,
                wall: self.wall + at,
                timers: &timers,
                budget: u64::MAX,
                check_path: true,
            };
            self.tail
                .poll(&mut self.scratch, &poll_at, &mut out, &mut diagnostics)
                .expect("poll");
            assert!(diagnostics.is_empty(), "{diagnostics:?}");
            out
        }

        fn due(&mut self, at: Duration) -> Option<Status> {
            self.tail
                .due_status(self.t0 + at, self.wall + at, &Timers::default())
                .map(|event| {
                    assert_eq!(event.kind, EventKind::Status);
                    event.status
                })
        }
    }

    const SUBAGENT: &str = "v2.1.39-spotter-subagent-agent-a881341.jsonl";

    #[test]
    fn a_quiet_text_only_turn_waits_for_input_then_goes_idle() {
        let sub = fixture(SUBAGENT);
        let mut case = Case::new(first_lines(&sub, 2), |_| Start::FromStart);
        let events = case.poll(Duration::ZERO);
        assert_eq!(events.last().map(|e| e.kind), Some(EventKind::Text));
        assert_eq!(case.due(Duration::from_secs(4)), None);
        assert_eq!(
            case.tail.next_deadline(&Timers::default()),
            Some(case.t0 + Duration::from_secs(5))
        );
        assert_eq!(
            case.due(Duration::from_secs(6)),
            Some(Status::WaitingForInput)
        );
        assert_eq!(
            case.due(Duration::from_secs(7)),
            None,
            "once per quiet spell"
        );
        assert_eq!(case.tail.status(), Status::WaitingForInput);
        assert_eq!(case.due(Duration::from_secs(301)), Some(Status::Idle));
        assert_eq!(case.due(Duration::from_secs(900)), None);
        assert_eq!(case.tail.next_deadline(&Timers::default()), None);
    }

    #[test]
    fn a_pending_tool_use_is_not_a_quiet_turn() {
        let sub = fixture(SUBAGENT);
        let mut case = Case::new(first_lines(&sub, 3), |_| Start::FromStart);
        let events = case.poll(Duration::ZERO);
        assert_ne!(events.last().map(|e| e.kind), Some(EventKind::Text));
        assert_eq!(case.due(Duration::from_secs(60)), None);
        assert_eq!(case.due(Duration::from_secs(300)), Some(Status::Idle));

        // New lines reset the timers.
        let mut file = fs::OpenOptions::new()
            .append(true)
            .open(&case.path)
            .expect("open");
        std::io::Write::write_all(
            &mut file,
            &first_lines(&sub, 4)[first_lines(&sub, 3).len()..],
        )
        .expect("append");
        case.poll(Duration::from_secs(400));
        assert_ne!(case.tail.status(), Status::Idle);
        assert_eq!(case.due(Duration::from_secs(600)), None);
        assert_eq!(case.due(Duration::from_secs(701)), Some(Status::Idle));
    }

    #[test]
    fn a_silent_warm_up_of_an_old_session_starts_idle_and_emits_nothing() {
        let sub = fixture(SUBAGENT);
        let mut case = Case::new(&sub, Start::Silent);
        assert!(case.poll(Duration::ZERO).is_empty());
        assert!(case.tail.warmed());
        assert_eq!(case.tail.last_line(), 10);
        // Its records are from February 2026: long idle by any clock this test runs on.
        assert_eq!(case.tail.status(), Status::Idle);
        assert_eq!(case.due(Duration::from_secs(1)), None);
        assert_eq!(case.tail.next_deadline(&Timers::default()), None);
    }

    #[test]
    fn subagent_links_come_from_progress_and_tool_results() {
        let progress = br#"{"isSidechain":false,"type":"progress","parentToolUseID":"toolu_1","data":{"type":"agent_progress","agentId":"a1"}}"#;
        assert_eq!(
            subagent_link(progress),
            Some(SubagentLink {
                agent_id: "a1".into(),
                tool_use_id: "toolu_1".into()
            })
        );
        let result = br#"{"isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"done"}]},"toolUseResult":{"status":"completed","agentId":"a2"}}"#;
        assert_eq!(
            subagent_link(result).map(|link| (link.agent_id, link.tool_use_id)),
            Some(("a2".into(), "toolu_2".into()))
        );
        let sidechain = br#"{"isSidechain":true,"agentId":"a3","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_3","content":"x"}]},"toolUseResult":{"agentId":"a3"}}"#;
        assert_eq!(subagent_link(sidechain), None);
        assert_eq!(subagent_link(b"{\"type\":\"user\"}"), None);
    }
}
