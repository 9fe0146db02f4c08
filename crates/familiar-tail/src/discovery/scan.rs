//! The bounded reads discovery needs: walking the watched directories for `*.jsonl` files,
//! a file's first records (for [`super::Matcher`] when the path cannot tell) and the
//! time of its last record (`familiar doctor`'s liveness). The record fields come from
//! [`familiar_transcript::head`], which owns the format.

use std::fs;
use std::io::{self, Read as _, Seek as _, SeekFrom};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::open_nonblocking;
use super::paths::{TranscriptInfo, describe};
use super::select::{Head, Matcher, Selector, Verdict};

/// How many complete lines [`read_head`] looks at for `cwd` and `sessionId`.
pub const HEAD_MAX_LINES: usize = 20;
/// How many bytes [`read_head`] reads at most.
pub const HEAD_MAX_BYTES: usize = 1 << 20;
/// How many bytes from the end [`last_record_time`] reads.
pub const TAIL_BYTES: u64 = 256 * 1024;
/// Deepest directory level walked below a root (`<project>/<sid>/subagents/x.jsonl` is 3).
pub(crate) const MAX_DEPTH: usize = 4;

/// Read the `cwd` and `sessionId` of a file's first records from the start of `bytes`
/// (complete lines only; at most [`HEAD_MAX_LINES`] lines).
pub fn read_head(bytes: &[u8]) -> Head {
    let mut head = Head::default();
    let mut lines = 0;
    let mut rest = bytes;
    while let Some(newline) = memchr::memchr(b'\n', rest) {
        let line = &rest[..newline];
        rest = &rest[newline + 1..];
        lines += 1;
        let fields = familiar_transcript::head::fields(line);
        head.cwd = head.cwd.or(fields.cwd);
        head.session_id = head.session_id.or(fields.session_id);
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
    discover_with(&Matcher::new(config_dir, selectors))
}

/// Every transcript `matcher` selects (with [`Matcher::agents`], Codex rollouts too).
pub fn discover_with(matcher: &Matcher) -> Vec<TranscriptInfo> {
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
        .filter_map(|line| familiar_transcript::head::timestamp_of(line))
        .filter_map(|ts| parse_timestamp(&ts))
        .max())
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_last_record_time_is_the_latest_timestamp_near_the_end() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        fs::write(
            &path,
            "{\"timestamp\":\"2026-02-11T21:29:00.366Z\"}\n{\"type\":\"summary\"}\n{\"timestamp\":\"2026-02-11T20:00:00Z\"}\n",
        )
        .expect("write");
        let last = last_record_time(&path).expect("readable");
        assert_eq!(last, parse_timestamp("2026-02-11T21:29:00.366Z"));
        fs::write(&path, "{\"type\":\"summary\"}\n").expect("write");
        assert_eq!(last_record_time(&path).expect("readable"), None);
    }
}
