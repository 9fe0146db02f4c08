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

/// The first read of a head: a Claude Code record or a Codex `session_meta` (about 22 KiB,
/// with Codex's instructions) fits; each further read is 4× larger, up to [`HEAD_MAX_BYTES`].
const HEAD_FIRST_READ: usize = 64 << 10;

/// Read a file's head from disk (at most [`HEAD_MAX_BYTES`]): the same [`Head`] as
/// [`read_head`] on the first [`HEAD_MAX_BYTES`] bytes, read in steps that stop once it is
/// [`Head::exhausted`].
pub fn read_head_of(path: &Path) -> io::Result<Head> {
    read_head_until(path, &mut |_| false)
}

/// [`read_head_of`] that also stops as soon as `enough` says the head read so far settles
/// what the caller wants (a [`Matcher`] verdict, say). A head's fields are the first ones in
/// the file, so what a shorter read found does not change with more bytes: at start-up the
/// tailer reads about 64 KiB of each transcript it must place by its records, not a MiB.
pub fn read_head_until(path: &Path, enough: &mut dyn FnMut(&Head) -> bool) -> io::Result<Head> {
    let mut file = open_nonblocking(path)?;
    let mut bytes = Vec::new();
    let mut want = HEAD_FIRST_READ;
    loop {
        let asked = want - bytes.len();
        let got = (&mut file).take(asked as u64).read_to_end(&mut bytes)?;
        let mut head = read_head(&bytes);
        if head.cwd.is_none()
            && let Some(project) = super::paths::gemini_chat(path)
        {
            // A Gemini CLI session's records never say where it runs; its folder does.
            // Before 0.29 the folder is the directory's SHA-256: the session names files in it.
            head.cwd = super::paths::gemini_project_root(project)
                .or_else(|| super::paths::gemini_hash_root(project, &bytes));
            head.exhausted |= head.session_id.is_some();
        }
        if got < asked || bytes.len() >= HEAD_MAX_BYTES || head.exhausted || enough(&head) {
            return Ok(head);
        }
        want = (want * 4).min(HEAD_MAX_BYTES);
    }
}

/// Every `*.jsonl` under `root` (the root itself only when not `recursive`), depth-limited.
/// A symlink to a directory is followed (a project's sessions kept on another disk): the
/// depth limit bounds a link that loops. Unreadable directories go to `on_error`.
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
        let is_dir = entry
            .file_type()
            .is_ok_and(|kind| kind.is_dir() || (kind.is_symlink() && entry.path().is_dir()));
        if is_dir {
            if depth_left > 0 {
                subdirs.push(entry.path());
            }
        } else if name.as_bytes().ends_with(b".jsonl")
            || (name.as_bytes().ends_with(b".json") && super::paths::transcript_name(&entry.path()))
        {
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
                    Verdict::NeedRecords => match read_head_until(&path, &mut |head| {
                        matcher.decide(&info, Some(head)) != Verdict::NeedRecords
                    }) {
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

pub use familiar_model::time::parse_timestamp;

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

    /// Bytes this thread has read so far (`rchar` of `/proc/thread-self/io`): what a read
    /// cost, whatever other tests do at the same time.
    fn bytes_read_by_this_thread() -> u64 {
        let io = fs::read_to_string("/proc/thread-self/io").expect("/proc/thread-self/io");
        io.lines()
            .find_map(|line| line.strip_prefix("rchar: "))
            .and_then(|n| n.trim().parse().ok())
            .expect("an rchar line")
    }

    #[test]
    fn a_head_read_in_steps_is_the_head_of_the_first_mib() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut cases: Vec<Vec<u8>> = familiar_testkit::real_fixtures()
            .iter()
            .map(|path| fs::read(path).expect("read fixture"))
            .collect();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        for rollout in ["codex-0.169.0/main.jsonl", "codex-0.50.0/main.jsonl"] {
            cases.push(fs::read(root.join(rollout)).expect("read a Codex rollout"));
        }
        // The fields behind a first line longer than the first steps, or never.
        let long = format!(
            "{{\"type\":\"summary\",\"summary\":\"{}\"}}\n",
            "x".repeat(300 << 10)
        );
        cases.push(format!("{long}{{\"cwd\":\"/p\",\"sessionId\":\"s\"}}\n").into_bytes());
        cases.push(long.repeat(5).into_bytes());
        cases.push(format!("{long}{{\"cwd\":\"/p\"}}\n").into_bytes());
        for (n, bytes) in cases.iter().enumerate() {
            let path = dir.path().join(format!("{n}.jsonl"));
            fs::write(&path, bytes).expect("write");
            let whole = read_head(&bytes[..bytes.len().min(HEAD_MAX_BYTES)]);
            assert_eq!(read_head_of(&path).expect("readable"), whole, "case {n}");
            // Stopping once the cwd is known gives the same cwd.
            let early = read_head_until(&path, &mut |head| head.cwd.is_some()).expect("readable");
            assert_eq!(early.cwd, whole.cwd, "case {n}");
        }
    }

    /// Regression: every head was read as a whole MiB at start-up (a Codex rollout is placed
    /// in a project by its first record's `cwd`, so every rollout of every project was read
    /// a MiB deep); now only as far as the first records.
    #[test]
    fn a_head_is_read_only_as_far_as_it_needs() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("rollout.jsonl");
        let mut bytes = b"{\"cwd\":\"/p\",\"sessionId\":\"s\"}\n".to_vec();
        let filler = format!(
            "{{\"type\":\"summary\",\"summary\":\"{}\"}}\n",
            "y".repeat(1000)
        );
        while bytes.len() < 3 << 20 {
            bytes.extend_from_slice(filler.as_bytes());
        }
        fs::write(&path, &bytes).expect("write");
        let before = bytes_read_by_this_thread();
        let head = read_head_of(&path).expect("readable");
        let read = bytes_read_by_this_thread() - before;
        assert_eq!(head.cwd.as_deref(), Some("/p"));
        assert!(
            read <= 2 * HEAD_FIRST_READ as u64,
            "{read} bytes read for a head"
        );
        // A head whose fields never come is read to the MiB, not further.
        let path = dir.path().join("nothing.jsonl");
        fs::write(&path, filler.repeat(3000)).expect("write");
        let before = bytes_read_by_this_thread();
        let head = read_head_until(&path, &mut |_| false).expect("readable");
        let read = bytes_read_by_this_thread() - before;
        assert!(head.exhausted && head.cwd.is_none());
        assert!(
            read <= HEAD_MAX_BYTES as u64 + 4096,
            "{read} bytes read for a head"
        );
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
