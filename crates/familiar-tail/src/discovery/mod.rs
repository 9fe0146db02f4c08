//! Discovery: where Claude Code keeps transcripts, what a path says about the transcript in it
//! (session or subagent, which session, which agent), and which transcripts a command-line
//! selector (`--project`, `--all`, `--session`, `--file`) means. The [`crate::tailer`] uses it
//! to decide what to watch and what to follow; `familiar doctor` uses it to list sessions.
//!
//! - [`paths`]: project-dir encodings, transcript classification, subagent meta files. Pure.
//! - [`select`]: selectors compiled into a [`Matcher`] that answers per path (and per file
//!   head, when the path alone cannot tell). Pure.
//! - [`scan`]: the small bounded reads: directory walks, a file's first records (`cwd`,
//!   `sessionId`) and last record time. The record fields are parsed by
//!   [`familiar_transcript::head`]; nothing here knows the record format.
//!
//! Codex rollouts live under [`codex_home`] (`$CODEX_HOME` or `~/.codex`):
//! `sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl`, placed in a project by the `cwd` of
//! their `session_meta` record, named after the UUID ([`Matcher::agents`] adds them).
//!
//! Gemini CLI sessions live under [`gemini_dir`] (`$GEMINI_CLI_HOME/.gemini` or `~/.gemini`):
//! `tmp/<project>/chats/session-<minute>-<id8>.jsonl` (0.61.0: append-only JSONL; earlier
//! versions' whole-JSON `.json` files are not read), placed in a project by the folder's
//! `.project_root` ([`Matcher::gemini`] adds them).
//!
//! Qwen Code sessions live under [`qwen_dir`] (`$QWEN_RUNTIME_DIR`, `$QWEN_HOME` or
//! `~/.qwen`): `projects/<project>/chats/<session id>.jsonl` (a subagent's
//! `projects/<project>/subagents/<session id>/agent-<id>.jsonl`), placed in a project by the
//! `cwd` of their records ([`Matcher::qwen`] adds them).
//!
//! GitHub Copilot CLI sessions live under [`copilot_dir`] (`$COPILOT_HOME` or `~/.copilot`):
//! `session-state/<session id>/events.jsonl`, placed in a project by the `cwd` of their
//! `session.start` ([`Matcher::copilot`] adds them).
//!
//! Layouts handled (all under the config dir, `$CLAUDE_CONFIG_DIR` or `~/.claude`):
//! - `projects/<encoded project>/<sessionId>.jsonl`, the project encoded either with the dash
//!   scheme (every byte that is not an ASCII letter or digit becomes `-`, which is lossy, so the
//!   records' own `cwd` settles collisions) or as base64url of the path;
//! - flat `projects/<sessionId>.jsonl` and anything under `sessions/`, matched by `cwd`;
//! - subagents: `<project>/<sessionId>/subagents/agent-<id>.jsonl` (with an optional
//!   `agent-<id>.meta.json` giving `agentType`), and legacy `<project>/agent-<id>.jsonl` whose
//!   session comes from its records. Inline sidechains (1.0.x) need nothing here: they live
//!   inside the main file.

pub mod paths;
pub mod scan;
pub mod select;

use std::fs;
use std::io;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use paths::{
    TranscriptInfo, TranscriptKind, base64url_decode, base64url_encode, classify, copilot_session,
    dash_encode, describe, gemini_chat, gemini_project_root, is_session_id, meta_path, qwen_chat,
    qwen_subagent, read_agent_type, transcript_name, transcript_of_meta,
};
pub use scan::{
    HEAD_MAX_BYTES, HEAD_MAX_LINES, TAIL_BYTES, discover, discover_with, last_record_time,
    parse_timestamp, read_head, read_head_of, read_head_until, walk,
};
pub use select::{Head, Matcher, Selector, Verdict, WatchRoot};

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

/// Why discovery could not answer.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error("no config dir: neither CLAUDE_CONFIG_DIR nor a home directory is set")]
    NoConfigDir,
    #[error("hook input is not JSON")]
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

/// The OpenAI Codex CLI's home: `$CODEX_HOME` when set and not empty, else `~/.codex`. Its
/// rollouts are `sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl`.
pub fn codex_home() -> Result<PathBuf, DiscoveryError> {
    if let Some(dir) = std::env::var_os("CODEX_HOME").filter(|dir| !dir.is_empty()) {
        let dir = PathBuf::from(dir);
        return Ok(std::path::absolute(&dir).unwrap_or(dir));
    }
    if let Some(base) = directories::BaseDirs::new() {
        return Ok(base.home_dir().join(".codex"));
    }
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(|home| PathBuf::from(home).join(".codex"))
        .ok_or(DiscoveryError::NoConfigDir)
}

/// Gemini CLI's own dir: `.gemini` in `$GEMINI_CLI_HOME` when set and not empty (the CLI's
/// `homedir()`), else in the home directory. Its sessions are
/// `tmp/<project>/chats/session-*.jsonl`.
pub fn gemini_dir() -> Result<PathBuf, DiscoveryError> {
    if let Some(dir) = std::env::var_os("GEMINI_CLI_HOME").filter(|dir| !dir.is_empty()) {
        let dir = PathBuf::from(dir);
        return Ok(std::path::absolute(&dir).unwrap_or(dir).join(".gemini"));
    }
    if let Some(base) = directories::BaseDirs::new() {
        return Ok(base.home_dir().join(".gemini"));
    }
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(|home| PathBuf::from(home).join(".gemini"))
        .ok_or(DiscoveryError::NoConfigDir)
}

/// Qwen Code's runtime dir, where its sessions are (`projects/<project>/chats/<session
/// id>.jsonl`): `$QWEN_RUNTIME_DIR` when set and not empty, else its global dir, [`qwen_home`]
/// (Qwen Code 0.24.4's `Storage.getRuntimeBaseDir`).
pub fn qwen_dir() -> Result<PathBuf, DiscoveryError> {
    match std::env::var_os("QWEN_RUNTIME_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => Ok(qwen_resolve(&dir, home_dir().as_deref())),
        None => qwen_home(),
    }
}

/// Qwen Code's global dir, where its user settings are (`settings.json`): `$QWEN_HOME` when
/// set and not empty, else `~/.qwen` (Qwen Code 0.24.4's `Storage.getGlobalQwenDir`).
pub fn qwen_home() -> Result<PathBuf, DiscoveryError> {
    let home = home_dir();
    if let Some(dir) = std::env::var_os("QWEN_HOME").filter(|dir| !dir.is_empty()) {
        return Ok(qwen_resolve(&dir, home.as_deref()));
    }
    home.map(|home| home.join(".qwen"))
        .ok_or(DiscoveryError::NoConfigDir)
}

/// The user's home directory, if there is one.
fn home_dir() -> Option<PathBuf> {
    if let Some(base) = directories::BaseDirs::new() {
        return Some(base.home_dir().to_owned());
    }
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
}

/// A dir named in Qwen Code's environment, as it resolves it (its `Storage.resolvePath`): a
/// leading `~` (alone or before a `/`) is `home`, and a relative path is taken from the
/// current directory.
fn qwen_resolve(dir: &std::ffi::OsStr, home: Option<&Path>) -> PathBuf {
    let dir = Path::new(dir);
    let mut parts = dir.components();
    let expanded = match (parts.next(), home) {
        (Some(std::path::Component::Normal(first)), Some(home)) if first == "~" => {
            home.join(parts.as_path())
        }
        _ => dir.to_owned(),
    };
    std::path::absolute(&expanded).unwrap_or(expanded)
}

/// GitHub Copilot CLI's dir, where its sessions are (`session-state/<session id>/
/// events.jsonl`): `$COPILOT_HOME` when set and not empty, else `~/.copilot` (1.0.102's
/// `copilot help environment`).
pub fn copilot_dir() -> Result<PathBuf, DiscoveryError> {
    if let Some(dir) = std::env::var_os("COPILOT_HOME").filter(|dir| !dir.is_empty()) {
        let dir = PathBuf::from(dir);
        return Ok(std::path::absolute(&dir).unwrap_or(dir));
    }
    if let Some(base) = directories::BaseDirs::new() {
        return Ok(base.home_dir().join(".copilot"));
    }
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(|home| PathBuf::from(home).join(".copilot"))
        .ok_or(DiscoveryError::NoConfigDir)
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn qwen_dirs_resolve_a_tilde_and_a_relative_path_as_qwen_code_does() {
        let home = Path::new("/home/u");
        let resolve = |dir: &str| qwen_resolve(std::ffi::OsStr::new(dir), Some(home));
        assert_eq!(resolve("~"), PathBuf::from("/home/u"));
        assert_eq!(resolve("~/q/x"), PathBuf::from("/home/u/q/x"));
        assert_eq!(resolve("/abs/q"), PathBuf::from("/abs/q"));
        // Only a whole `~` is the home: `~user` and `a/~` are names.
        let cwd = std::env::current_dir().expect("cwd");
        assert_eq!(resolve("~user/q"), cwd.join("~user/q"));
        assert_eq!(resolve("q/~"), cwd.join("q/~"));
        assert_eq!(
            qwen_resolve(std::ffi::OsStr::new("~/q"), None),
            cwd.join("~/q")
        );
    }
}
