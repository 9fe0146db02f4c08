//! Discovery: where Claude Code keeps transcripts, what a path says about the transcript in it
//! (session or subagent, which session, which agent), and which transcripts a command-line
//! selector (`--project`, `--all`, `--session`, `--file`) means. Pure functions over paths plus
//! small bounded reads of a file's first records (`cwd`, `sessionId`) and last records
//! (liveness); the [`crate::tailer`] uses it to decide what to watch and what to follow.
//!
//! Layouts handled (all under the config dir, `$CLAUDE_CONFIG_DIR` or `~/.claude`):
//! - `projects/<encoded project>/<sessionId>.jsonl`, the project encoded either with the dash
//!   scheme (every byte that is not an ASCII letter or digit becomes `-`, which is lossy, so the
//!   records' own `cwd` settles collisions) or as base64url of the path;
//! - flat `projects/<sessionId>.jsonl` and anything under `sessions/`, matched by `cwd`;
//! - subagents: `<project>/<sessionId>/subagents/agent-<id>.jsonl` (with an optional
//!   `agent-<id>.meta.json` giving `agentType`), and legacy `<project>/agent-<id>.jsonl` whose
//!   session comes from its records. Inline sidechains (1.0.x) need nothing here: the
//!   normalizer keeps them apart inside the main file.

use std::ffi::OsStr;
use std::fs;
use std::io::{self, Read as _, Seek as _, SeekFrom};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use serde::Deserialize;

/// Open a file for reading without ever blocking: `O_NONBLOCK`, so a FIFO that slipped in
/// under a transcript's name (between a stat and the open) cannot hang the tailer. Also
/// `O_NOATIME` where allowed (our own files): a file being appended always has its atime
/// behind its mtime, so with `relatime` every read would otherwise write its inode.
pub fn open_nonblocking(path: &Path) -> io::Result<fs::File> {
    let open = |flags| {
        fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .open(path)
    };
    match open(libc::O_NONBLOCK | libc::O_NOATIME) {
        // O_NOATIME needs the file's owner (or CAP_FOWNER).
        Err(err) if err.raw_os_error() == Some(libc::EPERM) => open(libc::O_NONBLOCK),
        other => other,
    }
}

/// Sub-directory of the config dir holding one directory per project.
pub const PROJECTS_DIR: &str = "projects";
/// Sub-directory of the config dir that some versions use for flat session files.
pub const SESSIONS_DIR: &str = "sessions";
/// How many complete lines [`read_head`] looks at for `cwd` and `sessionId`.
pub const HEAD_MAX_LINES: usize = 20;
/// How many bytes [`read_head`] reads at most.
pub const HEAD_MAX_BYTES: usize = 1 << 20;
/// How many bytes from the end [`last_record_time`] reads.
pub const TAIL_BYTES: u64 = 256 * 1024;
/// Deepest directory level walked below a root (`<project>/<sid>/subagents/x.jsonl` is 3).
const MAX_DEPTH: usize = 4;

/// Why discovery could not answer.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error("no config dir: neither CLAUDE_CONFIG_DIR nor a home directory is set")]
    NoConfigDir,
    #[error("hook input is not JSON: {0}")]
    HookJson(#[from] serde_json::Error),
    #[error("hook input has no transcript_path")]
    NoTranscriptPath,
}

/// Claude Code's config dir: `$CLAUDE_CONFIG_DIR` when set and not empty, else `~/.claude`.
pub fn config_dir() -> Result<PathBuf, DiscoveryError> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|dir| !dir.is_empty()) {
        let dir = PathBuf::from(dir);
        return Ok(std::path::absolute(&dir).unwrap_or(dir));
    }
    if let Some(base) = directories::BaseDirs::new() {
        return Ok(base.home_dir().join(".claude"));
    }
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(|home| PathBuf::from(home).join(".claude"))
        .ok_or(DiscoveryError::NoConfigDir)
}

/// The dash encoding of a project path: every byte that is not an ASCII letter or digit
/// becomes `-` (`/home/u/my app.v2_x` → `-home-u-my-app-v2-x`). Lossy.
pub fn dash_encode(path: &Path) -> String {
    path.as_os_str()
        .as_bytes()
        .iter()
        .map(|&byte| {
            if byte.is_ascii_alphanumeric() {
                byte as char
            } else {
                '-'
            }
        })
        .collect()
}

/// The base64url encoding of a project path (no padding), the lossless scheme.
pub fn base64url_encode(path: &Path) -> String {
    URL_SAFE_NO_PAD.encode(path.as_os_str().as_bytes())
}

/// The project path behind a base64url-encoded directory name (padded or not), when the name
/// decodes to an absolute path. Dash-encoded names do not: they would need a leading `/`.
pub fn base64url_decode(name: &str) -> Option<PathBuf> {
    let bytes = URL_SAFE_NO_PAD
        .decode(name)
        .or_else(|_| URL_SAFE.decode(name))
        .ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    (text.starts_with('/') && !text.contains('\0')).then(|| PathBuf::from(text))
}

/// Is the transcript a session's own file or a subagent's?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TranscriptKind {
    Session,
    Subagent,
}

/// What a transcript's path (and the subagent's meta file) tells about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptInfo {
    pub path: PathBuf,
    pub kind: TranscriptKind,
    /// From the file name (`<sessionId>.jsonl`) or a subagent's `<sessionId>/subagents/` dir;
    /// `None` for a legacy `agent-<id>.jsonl` (its records say).
    pub session_id: Option<String>,
    /// `<id>` of `agent-<id>.jsonl`.
    pub agent_id: Option<String>,
    /// `agentType` from `agent-<id>.meta.json`, when present.
    pub agent_type: Option<String>,
}

/// Classify a `*.jsonl` path; `None` for anything else.
pub fn classify(path: &Path) -> Option<TranscriptInfo> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".jsonl")?;
    if stem.is_empty() {
        return None;
    }
    if let Some(agent) = stem
        .strip_prefix("agent-")
        .filter(|agent| !agent.is_empty())
    {
        let parent = path.parent();
        let session_id = parent
            .filter(|dir| dir.file_name() == Some(OsStr::new("subagents")))
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .and_then(OsStr::to_str)
            .map(str::to_owned);
        return Some(TranscriptInfo {
            path: path.to_path_buf(),
            kind: TranscriptKind::Subagent,
            session_id,
            agent_id: Some(agent.to_owned()),
            agent_type: None,
        });
    }
    Some(TranscriptInfo {
        path: path.to_path_buf(),
        kind: TranscriptKind::Session,
        session_id: Some(stem.to_owned()),
        agent_id: None,
        agent_type: None,
    })
}

/// `agent-<id>.meta.json` beside a subagent transcript.
pub fn meta_path(transcript: &Path) -> Option<PathBuf> {
    let stem = transcript.file_name()?.to_str()?.strip_suffix(".jsonl")?;
    stem.starts_with("agent-")
        .then(|| transcript.with_file_name(format!("{stem}.meta.json")))
}

/// The transcript a meta file belongs to (`agent-x.meta.json` → `agent-x.jsonl`).
pub fn transcript_of_meta(meta: &Path) -> Option<PathBuf> {
    let stem = meta.file_name()?.to_str()?.strip_suffix(".meta.json")?;
    stem.starts_with("agent-")
        .then(|| meta.with_file_name(format!("{stem}.jsonl")))
}

/// `agentType` from a subagent's meta file (read at most 64 KiB; absent or odd → `None`).
pub fn read_agent_type(meta: &Path) -> Option<String> {
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "agentType")]
        agent_type: Option<String>,
    }
    let mut bytes = Vec::new();
    open_nonblocking(meta)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut bytes)
        .ok()?;
    serde_json::from_slice::<Meta>(&bytes).ok()?.agent_type
}

/// [`classify`] plus the subagent's `agentType` from its meta file.
pub fn describe(path: &Path) -> Option<TranscriptInfo> {
    let mut info = classify(path)?;
    if info.kind == TranscriptKind::Subagent {
        info.agent_type = meta_path(path).and_then(|meta| read_agent_type(&meta));
    }
    Some(info)
}

/// The transcript a hook names: `transcript_path` in the JSON a hook gets on stdin.
pub fn transcript_path_from_hook(json: &str) -> Result<PathBuf, DiscoveryError> {
    #[derive(Deserialize)]
    struct Hook {
        transcript_path: Option<String>,
    }
    let hook: Hook = serde_json::from_str(json)?;
    hook.transcript_path
        .filter(|path| !path.is_empty())
        .map(PathBuf::from)
        .ok_or(DiscoveryError::NoTranscriptPath)
}

/// Which transcripts to follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// Every transcript under the config dir.
    All,
    /// The sessions of the project at this directory (by any encoding or by `cwd`).
    Project(PathBuf),
    /// One session (and its subagents).
    Session(String),
    /// One file, wherever it is (a hook's `transcript_path`), and its `subagents/` dir.
    File(PathBuf),
}

/// A directory to watch, recursively or not.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WatchRoot {
    pub path: PathBuf,
    pub recursive: bool,
}

/// First records of a file: what [`Matcher`] needs when the path alone cannot tell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    pub cwd: Option<String>,
    pub session_id: Option<String>,
    /// `true` once enough was read that a missing field will not turn up.
    pub exhausted: bool,
}

/// Read the `cwd` and `sessionId` of a file's first records from the start of `bytes`
/// (complete lines only; at most [`HEAD_MAX_LINES`] lines).
pub fn read_head(bytes: &[u8]) -> Head {
    #[derive(Deserialize)]
    struct Envelope {
        cwd: Option<String>,
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
        #[serde(rename = "session_id")]
        session_id_snake: Option<String>,
    }
    let mut head = Head::default();
    let mut lines = 0;
    let mut rest = bytes;
    while let Some(newline) = rest.iter().position(|&byte| byte == b'\n') {
        let line = &rest[..newline];
        rest = &rest[newline + 1..];
        lines += 1;
        if let Ok(envelope) = serde_json::from_slice::<Envelope>(line) {
            head.cwd = head.cwd.or(envelope.cwd);
            head.session_id = head
                .session_id
                .or(envelope.session_id)
                .or(envelope.session_id_snake);
        }
        if (head.cwd.is_some() && head.session_id.is_some()) || lines >= HEAD_MAX_LINES {
            head.exhausted = true;
            break;
        }
    }
    if bytes.len() >= HEAD_MAX_BYTES {
        head.exhausted = true;
    }
    head
}

/// Read a file's head from disk (at most [`HEAD_MAX_BYTES`]).
pub fn read_head_of(path: &Path) -> io::Result<Head> {
    let mut bytes = Vec::new();
    open_nonblocking(path)?
        .take(HEAD_MAX_BYTES as u64)
        .read_to_end(&mut bytes)?;
    Ok(read_head(&bytes))
}

/// Answer of [`Matcher::decide`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Yes,
    No,
    /// The path cannot tell: look at the file's first records ([`Head`]).
    NeedRecords,
}

/// Selectors compiled against one config dir.
#[derive(Debug, Clone)]
pub struct Matcher {
    projects: PathBuf,
    sessions: PathBuf,
    selectors: Vec<Compiled>,
}

#[derive(Debug, Clone)]
enum Compiled {
    All,
    Project {
        /// The directory as given and canonicalized (deduplicated).
        dirs: Vec<PathBuf>,
        dash: Vec<String>,
        base64: Vec<String>,
    },
    Session(String),
    File {
        path: PathBuf,
        /// `<dir>/<stem>/subagents`: the subagents of a followed session file.
        subagents: PathBuf,
    },
}

/// Where a path lies relative to the config dir.
enum Place<'a> {
    /// `projects/<name>/...` with `name`.
    InProject(&'a str),
    /// Directly in `projects/`, or anywhere under `sessions/`.
    Flat,
    Elsewhere,
}

impl Matcher {
    pub fn new(config_dir: &Path, selectors: &[Selector]) -> Matcher {
        let selectors = selectors
            .iter()
            .map(|selector| match selector {
                Selector::All => Compiled::All,
                Selector::Project(dir) => {
                    let mut dirs = vec![absolute(dir)];
                    if let Ok(canonical) = fs::canonicalize(dir)
                        && !dirs.contains(&canonical)
                    {
                        dirs.push(canonical);
                    }
                    let dash = dirs.iter().map(|dir| dash_encode(dir)).collect();
                    let base64 = dirs
                        .iter()
                        .flat_map(|dir| {
                            let bytes = dir.as_os_str().as_bytes();
                            [URL_SAFE_NO_PAD.encode(bytes), URL_SAFE.encode(bytes)]
                        })
                        .collect();
                    Compiled::Project { dirs, dash, base64 }
                }
                Selector::Session(id) => Compiled::Session(id.clone()),
                Selector::File(path) => {
                    let path = absolute(path);
                    let stem = path
                        .file_name()
                        .and_then(OsStr::to_str)
                        .and_then(|name| name.strip_suffix(".jsonl"))
                        .unwrap_or_default()
                        .to_owned();
                    let subagents = path.with_file_name(stem).join("subagents");
                    Compiled::File { path, subagents }
                }
            })
            .collect();
        Matcher {
            projects: config_dir.join(PROJECTS_DIR),
            sessions: config_dir.join(SESSIONS_DIR),
            selectors,
        }
    }

    /// The directories to watch for these selectors.
    pub fn roots(&self) -> Vec<WatchRoot> {
        let mut roots: Vec<WatchRoot> = Vec::new();
        let mut add = |root: WatchRoot| {
            if let Some(existing) = roots.iter_mut().find(|r| r.path == root.path) {
                existing.recursive |= root.recursive;
            } else {
                roots.push(root);
            }
        };
        for selector in &self.selectors {
            match selector {
                Compiled::All | Compiled::Project { .. } | Compiled::Session(_) => {
                    for dir in [&self.projects, &self.sessions] {
                        add(WatchRoot {
                            path: dir.clone(),
                            recursive: true,
                        });
                    }
                }
                Compiled::File { path, subagents } => {
                    if let Some(parent) = path.parent() {
                        add(WatchRoot {
                            path: parent.to_path_buf(),
                            recursive: false,
                        });
                    }
                    add(WatchRoot {
                        path: subagents.clone(),
                        recursive: false,
                    });
                }
            }
        }
        roots
    }

    fn place<'p>(&self, path: &'p Path) -> Place<'p> {
        if let Ok(rest) = path.strip_prefix(&self.projects) {
            let mut components = rest.components();
            let first = components.next();
            return match (first, components.next()) {
                (Some(Component::Normal(name)), Some(_)) => {
                    name.to_str().map_or(Place::Elsewhere, Place::InProject)
                }
                (Some(_), None) => Place::Flat,
                _ => Place::Elsewhere,
            };
        }
        if path.starts_with(&self.sessions) {
            return Place::Flat;
        }
        Place::Elsewhere
    }

    /// Does a transcript belong to the selection? `head` is `None` until its first records
    /// have been read; with a head the answer is `NeedRecords` only while the head is not
    /// [`Head::exhausted`] and lacks the field that decides.
    pub fn decide(&self, info: &TranscriptInfo, head: Option<&Head>) -> Verdict {
        let mut verdict = Verdict::No;
        for selector in &self.selectors {
            match self.decide_one(selector, info, head) {
                Verdict::Yes => return Verdict::Yes,
                Verdict::NeedRecords => verdict = Verdict::NeedRecords,
                Verdict::No => {}
            }
        }
        verdict
    }

    fn decide_one(
        &self,
        selector: &Compiled,
        info: &TranscriptInfo,
        head: Option<&Head>,
    ) -> Verdict {
        let path = info.path.as_path();
        let place = self.place(path);
        match selector {
            Compiled::All => match place {
                Place::Elsewhere => Verdict::No,
                _ => Verdict::Yes,
            },
            Compiled::File {
                path: file,
                subagents,
            } => {
                if path == file
                    || (info.kind == TranscriptKind::Subagent && path.parent() == Some(subagents))
                {
                    Verdict::Yes
                } else {
                    Verdict::No
                }
            }
            Compiled::Session(id) => {
                if matches!(place, Place::Elsewhere) {
                    return Verdict::No;
                }
                match info.session_id.as_deref() {
                    Some(session) => bool_verdict(session == id),
                    // A legacy `agent-<id>.jsonl`: its records name the session.
                    None => match head {
                        None => Verdict::NeedRecords,
                        Some(head) => match head.session_id.as_deref() {
                            Some(session) => bool_verdict(session == id),
                            None if head.exhausted => Verdict::No,
                            None => Verdict::NeedRecords,
                        },
                    },
                }
            }
            Compiled::Project { dirs, dash, base64 } => {
                let cwd_matches = |cwd: &str| {
                    let cwd = Path::new(cwd);
                    dirs.iter().any(|dir| cwd == dir || cwd.starts_with(dir))
                };
                match place {
                    Place::Elsewhere => Verdict::No,
                    Place::InProject(name) if base64.iter().any(|b| b == name) => Verdict::Yes,
                    Place::InProject(name) if dash.iter().any(|d| d == name) => {
                        // The dash encoding is lossy (`/a/b.c` and `/a/b-c` share a dir): the
                        // first `cwd` tells the two apart; no `cwd` at all → trust the dir.
                        match head {
                            None => Verdict::NeedRecords,
                            Some(head) => match head.cwd.as_deref() {
                                Some(cwd) => bool_verdict(cwd_matches(cwd)),
                                None if head.exhausted => Verdict::Yes,
                                None => Verdict::NeedRecords,
                            },
                        }
                    }
                    Place::InProject(_) => Verdict::No,
                    Place::Flat => match head {
                        None => Verdict::NeedRecords,
                        Some(head) => match head.cwd.as_deref() {
                            Some(cwd) => bool_verdict(cwd_matches(cwd)),
                            None if head.exhausted => Verdict::No,
                            None => Verdict::NeedRecords,
                        },
                    },
                }
            }
        }
    }
}

fn bool_verdict(yes: bool) -> Verdict {
    if yes { Verdict::Yes } else { Verdict::No }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Every `*.jsonl` under `root` (the root itself only when not `recursive`), depth-limited,
/// not following directory symlinks. Unreadable directories go to `on_error`.
pub fn walk(
    root: &Path,
    recursive: bool,
    on_file: &mut dyn FnMut(PathBuf),
    on_error: &mut dyn FnMut(&Path, io::Error),
) {
    walk_at(
        root,
        if recursive { MAX_DEPTH } else { 0 },
        on_file,
        on_error,
    );
}

fn walk_at(
    dir: &Path,
    depth_left: usize,
    on_file: &mut dyn FnMut(PathBuf),
    on_error: &mut dyn FnMut(&Path, io::Error),
) {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return,
        Err(err) => return on_error(dir, err),
    };
    let mut subdirs = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if is_dir {
            if depth_left > 0 {
                subdirs.push(entry.path());
            }
        } else if name.as_bytes().ends_with(b".jsonl") {
            on_file(entry.path());
        }
    }
    subdirs.sort();
    for subdir in subdirs {
        walk_at(&subdir, depth_left - 1, on_file, on_error);
    }
}

/// The transcripts the selectors mean right now (a one-shot scan, no watching).
pub fn discover(config_dir: &Path, selectors: &[Selector]) -> Vec<TranscriptInfo> {
    let matcher = Matcher::new(config_dir, selectors);
    let mut found = Vec::new();
    for root in matcher.roots() {
        walk(
            &root.path,
            root.recursive,
            &mut |path| {
                if found.iter().any(|info: &TranscriptInfo| info.path == path) {
                    return;
                }
                let Some(info) = describe(&path) else { return };
                let verdict = match matcher.decide(&info, None) {
                    Verdict::NeedRecords => match read_head_of(&path) {
                        Ok(mut head) => {
                            head.exhausted = true;
                            matcher.decide(&info, Some(&head))
                        }
                        Err(_) => Verdict::No,
                    },
                    verdict => verdict,
                };
                if verdict == Verdict::Yes {
                    found.push(info);
                }
            },
            &mut |dir, err| tracing::warn!("cannot list {}: {err}", dir.display()),
        );
    }
    found
}

/// Parse a record timestamp (RFC 3339, as the CLI writes them).
pub fn parse_timestamp(ts: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(ts.trim()).ok()
}

/// The latest record timestamp among a file's last [`TAIL_BYTES`]: liveness comes from the
/// records, not from the file's mtime (a starting session can append sidecar lines, such as
/// a `summary` without timestamp, to old transcripts).
pub fn last_record_time(path: &Path) -> io::Result<Option<SystemTime>> {
    #[derive(Deserialize)]
    struct Stamp<'a> {
        #[serde(borrow)]
        timestamp: Option<std::borrow::Cow<'a, str>>,
    }
    let mut file = open_nonblocking(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(TAIL_BYTES).read_to_end(&mut bytes)?;
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if start > 0 && !lines.is_empty() {
        lines.remove(0); // cut in the middle
    }
    Ok(lines
        .iter()
        .filter_map(|line| serde_json::from_slice::<Stamp<'_>>(line).ok())
        .filter_map(|stamp| stamp.timestamp.as_deref().and_then(parse_timestamp))
        .max())
}

/// Is a session live: did it write a record within `window` of `now`?
pub fn is_live(last_record: Option<SystemTime>, now: SystemTime, window: Duration) -> bool {
    last_record.is_some_and(|last| {
        now.duration_since(last)
            .map(|age| age <= window)
            .unwrap_or(true) // a record from the future (clock skew): live
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dash_encoding_replaces_every_non_alphanumeric_byte() {
        assert_eq!(
            dash_encode(Path::new("/home/u/my app.v2_x")),
            "-home-u-my-app-v2-x"
        );
        assert_eq!(dash_encode(Path::new("/tmp/é")), "-tmp---");
    }

    #[test]
    fn base64url_round_trips_and_rejects_dash_names() {
        let path = Path::new("/home/u/my app.v2_x");
        let encoded = base64url_encode(path);
        assert!(!encoded.contains('='));
        assert_eq!(base64url_decode(&encoded).as_deref(), Some(path));
        assert_eq!(base64url_decode(&dash_encode(path)), None);
    }

    #[test]
    fn classify_tells_sessions_from_subagents() {
        let session = classify(Path::new("/c/projects/-p/abc.jsonl")).expect("a transcript");
        assert_eq!(session.kind, TranscriptKind::Session);
        assert_eq!(session.session_id.as_deref(), Some("abc"));

        let sub = classify(Path::new("/c/projects/-p/abc/subagents/agent-a88.jsonl"))
            .expect("a subagent transcript");
        assert_eq!(sub.kind, TranscriptKind::Subagent);
        assert_eq!(sub.session_id.as_deref(), Some("abc"));
        assert_eq!(sub.agent_id.as_deref(), Some("a88"));

        let legacy = classify(Path::new("/c/projects/-p/agent-a88.jsonl")).expect("legacy");
        assert_eq!(legacy.kind, TranscriptKind::Subagent);
        assert_eq!(legacy.session_id, None);

        assert_eq!(
            classify(Path::new("/c/projects/-p/agent-a88.meta.json")),
            None
        );
        assert_eq!(classify(Path::new("/c/projects/-p/.jsonl")), None);
    }

    #[test]
    fn meta_paths_pair_with_their_transcripts() {
        let transcript = Path::new("/s/subagents/agent-x1.jsonl");
        let meta = meta_path(transcript).expect("a subagent has a meta path");
        assert_eq!(meta, Path::new("/s/subagents/agent-x1.meta.json"));
        assert_eq!(transcript_of_meta(&meta).as_deref(), Some(transcript));
    }

    #[test]
    fn hook_input_names_the_transcript() {
        let json = r#"{"session_id":"s","transcript_path":"/x/y.jsonl","hook_event_name":"Stop"}"#;
        assert_eq!(
            transcript_path_from_hook(json).ok(),
            Some(PathBuf::from("/x/y.jsonl"))
        );
        assert!(matches!(
            transcript_path_from_hook(r#"{"session_id":"s"}"#),
            Err(DiscoveryError::NoTranscriptPath)
        ));
        assert!(transcript_path_from_hook("not json").is_err());
    }

    #[test]
    fn project_matching_uses_cwd_to_settle_dash_collisions() {
        let config = Path::new("/cfg");
        let matcher = Matcher::new(config, &[Selector::Project(PathBuf::from("/a/b.c"))]);
        let info = classify(Path::new("/cfg/projects/-a-b-c/s1.jsonl")).expect("transcript");
        assert_eq!(matcher.decide(&info, None), Verdict::NeedRecords);
        let mine = Head {
            cwd: Some("/a/b.c".into()),
            session_id: None,
            exhausted: false,
        };
        let other = Head {
            cwd: Some("/a/b-c".into()),
            ..mine.clone()
        };
        assert_eq!(matcher.decide(&info, Some(&mine)), Verdict::Yes);
        assert_eq!(matcher.decide(&info, Some(&other)), Verdict::No);

        let b64 = format!(
            "/cfg/projects/{}/s2.jsonl",
            base64url_encode(Path::new("/a/b.c"))
        );
        let info = classify(Path::new(&b64)).expect("transcript");
        assert_eq!(matcher.decide(&info, None), Verdict::Yes);

        let flat = classify(Path::new("/cfg/projects/s3.jsonl")).expect("transcript");
        assert_eq!(matcher.decide(&flat, Some(&mine)), Verdict::Yes);
        assert_eq!(matcher.decide(&flat, Some(&other)), Verdict::No);

        let elsewhere = classify(Path::new("/cfg/projects/-x/s4.jsonl")).expect("transcript");
        assert_eq!(matcher.decide(&elsewhere, None), Verdict::No);
    }

    #[test]
    fn session_and_file_selectors() {
        let config = Path::new("/cfg");
        let matcher = Matcher::new(config, &[Selector::Session("s1".into())]);
        let main = classify(Path::new("/cfg/projects/-p/s1.jsonl")).expect("transcript");
        let sub = classify(Path::new("/cfg/projects/-p/s1/subagents/agent-a.jsonl")).expect("t");
        let other = classify(Path::new("/cfg/projects/-p/s2.jsonl")).expect("transcript");
        let legacy = classify(Path::new("/cfg/projects/-p/agent-b.jsonl")).expect("transcript");
        assert_eq!(matcher.decide(&main, None), Verdict::Yes);
        assert_eq!(matcher.decide(&sub, None), Verdict::Yes);
        assert_eq!(matcher.decide(&other, None), Verdict::No);
        assert_eq!(matcher.decide(&legacy, None), Verdict::NeedRecords);
        let head = Head {
            cwd: None,
            session_id: Some("s1".into()),
            exhausted: false,
        };
        assert_eq!(matcher.decide(&legacy, Some(&head)), Verdict::Yes);

        let matcher = Matcher::new(config, &[Selector::File(PathBuf::from("/x/s9.jsonl"))]);
        let file = classify(Path::new("/x/s9.jsonl")).expect("transcript");
        let sub = classify(Path::new("/x/s9/subagents/agent-q.jsonl")).expect("transcript");
        let other = classify(Path::new("/x/s8.jsonl")).expect("transcript");
        assert_eq!(matcher.decide(&file, None), Verdict::Yes);
        assert_eq!(matcher.decide(&sub, None), Verdict::Yes);
        assert_eq!(matcher.decide(&other, None), Verdict::No);
        assert_eq!(
            matcher.roots(),
            [
                WatchRoot {
                    path: "/x".into(),
                    recursive: false
                },
                WatchRoot {
                    path: "/x/s9/subagents".into(),
                    recursive: false
                }
            ]
        );
    }

    #[test]
    fn head_reads_cwd_and_session_from_first_records() {
        let bytes = b"{\"type\":\"summary\",\"summary\":\"x\"}\n{\"cwd\":\"/p\",\"sessionId\":\"s\"}\n{\"cwd\":\"/q\"";
        let head = read_head(bytes);
        assert_eq!(head.cwd.as_deref(), Some("/p"));
        assert_eq!(head.session_id.as_deref(), Some("s"));
        assert!(head.exhausted);
        let partial = read_head(b"{\"type\":\"summary\"}\n{\"cwd\":");
        assert_eq!(partial, Head::default());
    }

    #[test]
    fn liveness_comes_from_record_timestamps() {
        let now = parse_timestamp("2026-02-11T21:30:00.000Z").expect("valid timestamp");
        let recent = parse_timestamp("2026-02-11T21:29:00.366Z");
        let old = parse_timestamp("2026-02-11T20:00:00Z");
        let window = Duration::from_secs(300);
        assert!(is_live(recent, now, window));
        assert!(!is_live(old, now, window));
        assert!(!is_live(None, now, window));
    }
}
