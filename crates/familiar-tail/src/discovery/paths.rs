//! What a transcript's path says: the two project-dir encodings, session or subagent, the
//! session and agent ids, and the subagent's `agent-<id>.meta.json`. Pure functions over paths,
//! except [`read_agent_type`]/[`describe`], which read the small meta file.

use std::ffi::OsStr;
use std::io::Read as _;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use serde::Deserialize;

use super::open_nonblocking;

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
    /// Where the session runs, when its place says and its records do not: a Gemini CLI
    /// session's project, from its project folder's `.project_root` ([`gemini_project_root`]).
    /// Filled by [`describe`].
    pub cwd: Option<String>,
}

/// Is `path` named as a transcript: `*.jsonl`, or a Gemini CLI session's `*.json` in its
/// `chats/` (the versions before 0.39)?
pub fn transcript_name(path: &Path) -> bool {
    let name = path.as_os_str().as_bytes();
    name.ends_with(b".jsonl") || (name.ends_with(b".json") && gemini_chat(path).is_some())
}

/// Classify a `*.jsonl` path, or a Gemini CLI session's `*.json` (the versions before 0.39
/// wrote one JSON document per session); `None` for anything else.
pub fn classify(path: &Path) -> Option<TranscriptInfo> {
    let name = path.file_name()?.to_str()?;
    let stem = match name.strip_suffix(".jsonl") {
        Some(stem) => stem,
        None => name
            .strip_suffix(".json")
            .filter(|_| gemini_chat(path).is_some())?,
    };
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
            .or_else(|| qwen_subagent(path).map(|(_, session)| session))
            .map(str::to_owned);
        return Some(TranscriptInfo {
            path: path.to_path_buf(),
            kind: TranscriptKind::Subagent,
            session_id,
            agent_id: Some(agent.to_owned()),
            agent_type: None,
            cwd: None,
        });
    }
    // Gemini CLI names a session `session-<minute>-<first 8 of its id>`: its records say the
    // whole id. A subagent's session is `chats/<parent session>/<its own id>.jsonl`.
    if gemini_chat(path).is_some()
        && let Some(parent) = path
            .parent()
            .filter(|dir| dir.file_name() != Some(OsStr::new("chats")))
            .and_then(Path::file_name)
            .and_then(OsStr::to_str)
    {
        return Some(TranscriptInfo {
            path: path.to_path_buf(),
            kind: TranscriptKind::Subagent,
            session_id: Some(parent.to_owned()),
            agent_id: Some(stem.to_owned()),
            agent_type: None,
            cwd: None,
        });
    }
    // Copilot CLI names its file `events.jsonl`: its folder is named after the session.
    if let Some(session) = copilot_session(path) {
        return Some(TranscriptInfo {
            path: path.to_path_buf(),
            kind: TranscriptKind::Session,
            session_id: Some(session.to_owned()),
            agent_id: None,
            agent_type: None,
            cwd: None,
        });
    }
    let session_id = match gemini_chat(path) {
        Some(_) if stem.starts_with("session-") => None,
        _ => Some(codex_session_id(stem).unwrap_or(stem).to_owned()),
    };
    Some(TranscriptInfo {
        path: path.to_path_buf(),
        kind: TranscriptKind::Session,
        session_id,
        agent_id: None,
        agent_type: None,
        cwd: None,
    })
}

/// The project folder of a Gemini CLI session file (`<gemini dir>/tmp/<project>/chats/
/// <session>.jsonl`, or a subagent's `chats/<parent session>/<id>.jsonl`): `<project>`, when
/// the path has that shape.
pub fn gemini_chat(path: &Path) -> Option<&Path> {
    let dir = path.parent()?;
    let chats = if dir.file_name() == Some(OsStr::new("chats")) {
        dir
    } else {
        dir.parent()
            .filter(|up| up.file_name() == Some(OsStr::new("chats")))?
    };
    let project = chats.parent()?;
    let tmp = project.parent()?;
    (tmp.file_name() == Some(OsStr::new("tmp"))).then_some(project)
}

/// The session id of a Copilot CLI session file (`<copilot dir>/session-state/<session id>/
/// events.jsonl`), when the path has that shape.
pub fn copilot_session(path: &Path) -> Option<&str> {
    if path.file_name() != Some(OsStr::new("events.jsonl")) {
        return None;
    }
    let folder = path.parent()?;
    let state = folder.parent()?;
    (state.file_name() == Some(OsStr::new("session-state")))
        .then(|| folder.file_name()?.to_str())
        .flatten()
        .filter(|id| !id.is_empty() && !id.starts_with('.'))
}

/// The project folder of a Qwen Code session file (`<qwen dir>/projects/<project>/chats/
/// <session id>.jsonl`): `<project>`, when the path has that shape.
pub fn qwen_chat(path: &Path) -> Option<&Path> {
    let chats = path
        .parent()
        .filter(|dir| dir.file_name() == Some(OsStr::new("chats")))?;
    let project = chats.parent()?;
    let projects = project.parent()?;
    (projects.file_name() == Some(OsStr::new("projects"))).then_some(project)
}

/// The project folder and the parent session of a Qwen Code subagent's file
/// (`<qwen dir>/projects/<project>/subagents/<session id>/agent-<id>.jsonl`), when the path has
/// that shape.
pub fn qwen_subagent(path: &Path) -> Option<(&Path, &str)> {
    let name = path.file_name()?.to_str()?;
    if !(name.starts_with("agent-") && name.ends_with(".jsonl")) {
        return None;
    }
    let session_dir = path.parent()?;
    let session = session_dir.file_name()?.to_str()?;
    let subagents = session_dir
        .parent()
        .filter(|dir| dir.file_name() == Some(OsStr::new("subagents")))?;
    let project = subagents.parent()?;
    let projects = project.parent()?;
    (projects.file_name() == Some(OsStr::new("projects"))).then_some((project, session))
}

/// The directory a Gemini CLI project folder is for: the first line of its `.project_root`
/// (which the CLI writes beside `chats/`; `projects.json` maps the same directory to the
/// folder's name). Read at most 4 KiB; absent or empty → `None`.
pub fn gemini_project_root(project: &Path) -> Option<String> {
    let mut bytes = Vec::new();
    open_nonblocking(&project.join(".project_root"))
        .ok()?
        .take(4096)
        .read_to_end(&mut bytes)
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let root = text.lines().next()?.trim_end();
    root.starts_with('/').then(|| root.to_owned())
}

/// The directory of a Gemini CLI project folder named after its SHA-256 (the versions before
/// 0.29: `tmp/<sha256 of the directory>/`, no `.project_root`): a directory that
/// `projects.json` knows (the CLI writes it from 0.29 on, and moves the folder of a project it
/// runs in again), else one of the absolute paths in `text` (the session's own bytes: tool
/// calls name files in their project), or one of their ancestors, whose hash it is.
pub fn gemini_hash_root(project: &Path, text: &[u8]) -> Option<String> {
    let hash = project.file_name()?.to_str()?;
    if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let matches = |dir: &str| {
        use sha2::Digest as _;
        let digest = sha2::Sha256::digest(dir.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        hex.eq_ignore_ascii_case(hash)
    };
    let registry = project
        .parent()
        .and_then(Path::parent)
        .map(|gemini| gemini.join("projects.json"));
    if let Some(known) = registry.and_then(|path| read_projects(&path))
        && let Some(root) = known.into_iter().find(|dir| matches(dir))
    {
        return Some(root);
    }
    // The absolute paths the session names (at most a few hundred looked at).
    let text = String::from_utf8_lossy(text);
    for quoted in text.split('"').skip(1).step_by(2).take(2000) {
        if !quoted.starts_with('/') || quoted.contains('\\') || quoted.len() > 4096 {
            continue;
        }
        let mut dir = Some(Path::new(quoted));
        while let Some(candidate) = dir.and_then(Path::to_str) {
            if candidate.len() > 1 && matches(candidate.trim_end_matches('/')) {
                return Some(candidate.trim_end_matches('/').to_owned());
            }
            dir = dir.and_then(Path::parent);
        }
    }
    None
}

/// The directories `projects.json` maps to folder names (`{"projects": {dir: name}}`; read at
/// most 1 MiB).
fn read_projects(path: &Path) -> Option<Vec<String>> {
    #[derive(Deserialize)]
    struct Registry {
        projects: std::collections::BTreeMap<String, serde_json::Value>,
    }
    let mut bytes = Vec::new();
    open_nonblocking(path)
        .ok()?
        .take(1 << 20)
        .read_to_end(&mut bytes)
        .ok()?;
    let registry: Registry = serde_json::from_slice(&bytes).ok()?;
    Some(registry.projects.into_keys().collect())
}

/// The session id in a Codex rollout's name, `rollout-<timestamp>-<uuid>`: its last 36
/// characters when they are a UUID (8-4-4-4-12 hex digits).
fn codex_session_id(stem: &str) -> Option<&str> {
    let rest = stem.strip_prefix("rollout-")?;
    let id = rest.get(rest.len().checked_sub(36)?..)?;
    is_session_id(id).then_some(id)
}

/// Is `text` shaped like the session ids both CLIs use (a UUID: 8-4-4-4-12 hex digits)?
/// Claude Code names a session's file after its id; a file named otherwise (a copy, a file
/// given by hand) says nothing about its session to the session model: its records do.
pub fn is_session_id(text: &str) -> bool {
    let groups: Vec<usize> = text.split('-').map(str::len).collect();
    let hex = text.chars().all(|c| c == '-' || c.is_ascii_hexdigit());
    hex && groups == [8, 4, 4, 4, 12]
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

/// [`classify`] plus the subagent's `agentType` from its meta file, and a Gemini CLI session's
/// project from its project folder.
pub fn describe(path: &Path) -> Option<TranscriptInfo> {
    let mut info = classify(path)?;
    if info.kind == TranscriptKind::Subagent {
        info.agent_type = meta_path(path).and_then(|meta| read_agent_type(&meta));
    }
    if let Some(project) = gemini_chat(path) {
        info.cwd = gemini_project_root(project).or_else(|| {
            let mut head = Vec::new();
            let file = open_nonblocking(path).ok()?;
            file.take(1 << 20).read_to_end(&mut head).ok()?;
            gemini_hash_root(project, &head)
        });
    }
    Some(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_gemini_session_in_a_hash_folder_is_placed_by_the_hash_of_its_directory() {
        let dir = tempfile::tempdir().expect("temp dir");
        // sha256("/tmp/familiar-gemini/project"), as Gemini CLI 0.28.2 named its folder.
        let hash = "f6390b1bb223ad06d6c61b04dc5222ccc8fe1ded968d551ff09bada12feca4bd";
        let chats = dir.path().join(".gemini/tmp").join(hash).join("chats");
        std::fs::create_dir_all(&chats).expect("mkdir");
        let session = chats.join("session-2026-11-28T08-11-91e7128d.json");
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/gemini-0.28.2/main.json"
        );
        std::fs::copy(fixture, &session).expect("copy");
        assert!(transcript_name(&session));
        assert!(!transcript_name(&dir.path().join(".gemini/settings.json")));
        // The file names files of its project (`/tmp/familiar-gemini/project/a.txt`).
        let info = describe(&session).expect("a Gemini CLI session");
        assert_eq!(info.cwd.as_deref(), Some("/tmp/familiar-gemini/project"));
        assert_eq!(info.session_id, None, "its records say");
        // A session that names no file: `projects.json` knows the directory, or nobody does.
        std::fs::write(
            &session,
            "{\n  \"sessionId\": \"s\",\n  \"messages\": []\n}",
        )
        .expect("write");
        assert_eq!(describe(&session).expect("a session").cwd, None);
        std::fs::write(
            dir.path().join(".gemini/projects.json"),
            r#"{"projects": {"/elsewhere": "elsewhere", "/tmp/familiar-gemini/project": "project"}}"#,
        )
        .expect("projects.json");
        assert_eq!(
            describe(&session).expect("a session").cwd.as_deref(),
            Some("/tmp/familiar-gemini/project")
        );
    }

    #[test]
    fn a_gemini_session_is_placed_by_its_project_folder() {
        let dir =
            std::env::temp_dir().join(format!("familiar-gemini-paths-{}", std::process::id()));
        let chats = dir.join(".gemini/tmp/my-app/chats");
        std::fs::create_dir_all(&chats).expect("mkdir");
        std::fs::write(
            dir.join(".gemini/tmp/my-app/.project_root"),
            "/home/u/my app",
        )
        .expect("write");
        let session = chats.join("session-2026-11-28T02-01-6435cd03.jsonl");
        let info = describe(&session).expect("a transcript");
        assert_eq!(info.kind, TranscriptKind::Session);
        assert_eq!(
            info.session_id, None,
            "the name holds 8 characters of the id"
        );
        assert_eq!(info.cwd.as_deref(), Some("/home/u/my app"));
        let subagent = chats.join("6435cd03-7822-42c5-8604-c04e4df1a206/56cd6550.jsonl");
        assert_eq!(
            gemini_chat(&subagent),
            Some(dir.join(".gemini/tmp/my-app").as_path())
        );
        let info = describe(&subagent).expect("a subagent's transcript");
        assert_eq!(info.kind, TranscriptKind::Subagent);
        assert_eq!(
            info.session_id.as_deref(),
            Some("6435cd03-7822-42c5-8604-c04e4df1a206")
        );
        assert_eq!(info.agent_id.as_deref(), Some("56cd6550"));
        assert_eq!(info.cwd.as_deref(), Some("/home/u/my app"));
        // Its logs are no session; nor is a Claude Code transcript.
        assert_eq!(
            gemini_chat(&dir.join(".gemini/tmp/my-app/logs/session-x.jsonl")),
            None
        );
        assert_eq!(
            gemini_chat(Path::new("/h/.claude/projects/-a/s.jsonl")),
            None
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_copilot_session_is_its_folders_events_file() {
        let path = Path::new(
            "/h/.copilot/session-state/a59f8f81-7352-43fd-96e6-3e4569a13695/events.jsonl",
        );
        assert_eq!(
            copilot_session(path),
            Some("a59f8f81-7352-43fd-96e6-3e4569a13695")
        );
        let info = classify(path).unwrap();
        assert_eq!(info.kind, TranscriptKind::Session);
        assert_eq!(
            info.session_id.as_deref(),
            Some("a59f8f81-7352-43fd-96e6-3e4569a13695")
        );
        assert_eq!(
            copilot_session(Path::new("/h/.copilot/session-state/s/other.jsonl")),
            None
        );
        assert_eq!(
            copilot_session(Path::new("/h/.copilot/logs/events.jsonl")),
            None
        );
    }

    #[test]
    fn a_qwen_session_is_its_project_folders_chat_named_after_its_id() {
        let path = Path::new(
            "/h/.qwen/projects/-home-u-app/chats/6b8f0dbb-a458-4c86-b9f5-fd758f695f7e.jsonl",
        );
        assert_eq!(
            qwen_chat(path),
            Some(Path::new("/h/.qwen/projects/-home-u-app"))
        );
        let info = classify(path).expect("a session");
        assert_eq!(info.kind, TranscriptKind::Session);
        assert_eq!(
            info.session_id.as_deref(),
            Some("6b8f0dbb-a458-4c86-b9f5-fd758f695f7e")
        );
        // Its subagents' files are its subagents': `subagents/<session>/agent-<id>.jsonl`.
        let subagent = Path::new(
            "/h/.qwen/projects/-home-u-app/subagents/6b8f/agent-general-purpose-c1.jsonl",
        );
        assert_eq!(qwen_chat(subagent), None);
        assert_eq!(
            qwen_subagent(subagent),
            Some((Path::new("/h/.qwen/projects/-home-u-app"), "6b8f"))
        );
        let info = classify(subagent).expect("a subagent");
        assert_eq!(info.kind, TranscriptKind::Subagent);
        assert_eq!(info.session_id.as_deref(), Some("6b8f"));
        assert_eq!(info.agent_id.as_deref(), Some("general-purpose-c1"));
        assert_eq!(qwen_subagent(path), None);
        assert_eq!(qwen_chat(Path::new("/h/.claude/projects/-a/s.jsonl")), None);
    }

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
    fn a_codex_rollout_is_named_after_its_session() {
        let rollout = classify(Path::new(
            "/h/.codex/sessions/2026/11/23/rollout-2026-11-23T16-21-59-01a20936-daa5-7031-9c10-cb9fc41a4f8e.jsonl",
        ))
        .expect("a transcript");
        assert_eq!(rollout.kind, TranscriptKind::Session);
        assert_eq!(
            rollout.session_id.as_deref(),
            Some("01a20936-daa5-7031-9c10-cb9fc41a4f8e")
        );
        // Not a UUID at the end: the whole stem, as for any other file.
        let odd = classify(Path::new("/h/rollout-notes.jsonl")).expect("a transcript");
        assert_eq!(odd.session_id.as_deref(), Some("rollout-notes"));
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
}
