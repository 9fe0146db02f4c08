//! A file that is one JSON document, rewritten whole on every change (Gemini CLI's sessions
//! before 0.39, `chats/session-*.json`: pretty-printed, no trailing newline, truncated and
//! written again in place by `fs.writeFileSync`). Lines mean nothing in it, so it is not split:
//! every time it changes and holds a whole JSON document again, the document is sent as line 1
//! of a new generation ([`OpenReason::Truncated`], nothing lost). The session model goes on
//! from what was told of the generation before (`Normalizer::continue_from`), so only what is
//! new is told. A document read half-written (the CLI truncates before it writes) is not sent:
//! the write that completes it brings another poll.

use std::hash::{Hash as _, Hasher as _};
use std::io;
use std::os::unix::fs::FileExt as _;
use std::path::Path;
use std::sync::Arc;

use super::{FileError, FileTail, Polled};
use crate::message::{Line, OpenReason, ResumePoint, TailMessage};

/// Is `path` followed as one whole document (a `.json` file: discovery selects no other)?
/// Asked on every read: the bytes of the name, not `Path::extension` (which walks the path's
/// components), with the same answer for a file's path.
pub(super) fn is_whole(path: &Path) -> bool {
    let bytes = path.as_os_str().as_encoded_bytes();
    let name = bytes.rsplit(|&b| b == b'/').next().unwrap_or(bytes);
    // `.json` alone is a hidden file's name, without an extension.
    name.len() > ".json".len() && name.ends_with(b".json")
}

impl FileTail {
    /// Read the whole document if it changed since it was last sent, and send it (as a new
    /// generation after the first).
    pub(super) fn read_whole(
        &mut self,
        polled: &mut Polled,
        out: &mut Vec<TailMessage>,
    ) -> Result<(), FileError> {
        let Some(open) = self.open.as_mut() else {
            return Ok(());
        };
        let file = open.file()?;
        let size = file.metadata()?.len();
        if size > self.max_line_bytes as u64 {
            if self.whole_sent != Some(u64::MAX) {
                self.whole_sent = Some(u64::MAX);
                polled.too_long += 1;
                tracing::warn!(
                    "{}: a document of {size} bytes is over the {}-byte cap; skipped",
                    self.path.display(),
                    self.max_line_bytes
                );
                out.push(TailMessage::TooLong {
                    path: Arc::clone(&self.path),
                    generation: self.generation,
                    number: 1,
                    len: size,
                    backlog: open.backlog_until > 0,
                });
            }
            return Ok(());
        }
        let mut bytes = vec![0; size as usize];
        let mut filled = 0;
        while filled < bytes.len() {
            match file.read_at(&mut bytes[filled..], filled as u64) {
                Ok(0) => break,
                Ok(read) => filled += read,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(FileError::Unreadable(err)),
            }
        }
        bytes.truncate(filled);
        polled.bytes += filled as u64;
        // Half-written (or empty: truncated, not yet written again): wait for the rest.
        if serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_err() {
            return Ok(());
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        bytes.hash(&mut hasher);
        let digest = hasher.finish();
        if self.whole_sent == Some(digest) {
            return Ok(());
        }
        let backlog = open.backlog_until > 0;
        if self.whole_sent.is_some() {
            self.generation += 1;
            polled.generations += 1;
            out.push(TailMessage::Opened {
                path: Arc::clone(&self.path),
                info: super::info_of(&self.path, &self.described),
                generation: self.generation,
                reason: OpenReason::Truncated { lost_bytes: 0 },
                identity: open.identity,
            });
        }
        self.whole_sent = Some(digest);
        open.offset = filled as u64;
        open.seen_size = filled as u64;
        open.backlog_until = 0;
        open.catch_up_until = 0;
        polled.lines += 1;
        let trimmed = bytes.trim_ascii().to_vec();
        out.push(TailMessage::Lines {
            path: Arc::clone(&self.path),
            generation: self.generation,
            lines: vec![Line {
                number: 1,
                bytes: trimmed,
            }],
            backlog,
            resume: Some(ResumePoint {
                offset: filled as u64,
                line: 2,
            }),
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_whole_document_is_told_by_its_name_as_path_extension_tells_it() {
        for path in [
            "/h/.gemini/tmp/p/chats/session-1.json",
            "/h/.claude/projects/p/s.jsonl",
            "/h/.json",
            "/h/a.json.bak",
            "a.json",
            "json",
            "/h/x.JSON",
            "/h/dir.json/s.jsonl",
        ] {
            let path = std::path::Path::new(path);
            assert_eq!(
                super::is_whole(path),
                path.extension().is_some_and(|ext| ext == "json"),
                "{}",
                path.display()
            );
        }
    }

    use super::super::{FileTail, Start};
    use crate::discovery::describe;
    use crate::message::TailMessage;

    fn documents(out: &[TailMessage]) -> Vec<(u32, String)> {
        out.iter()
            .filter_map(|message| match message {
                TailMessage::Lines {
                    generation, lines, ..
                } => Some(
                    lines
                        .iter()
                        .map(|line| (*generation, String::from_utf8_lossy(&line.bytes).into()))
                        .collect::<Vec<_>>(),
                ),
                _ => None,
            })
            .flatten()
            .collect()
    }

    #[test]
    fn a_document_rewritten_whole_is_sent_whole_once_per_change() {
        let dir = tempfile::tempdir().expect("temp dir");
        let chats = dir.path().join(".gemini/tmp/0123abcd/chats");
        std::fs::create_dir_all(&chats).expect("mkdir");
        let path = chats.join("session-2026-11-28T08-11-91e7128d.json");
        let first = "{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": []\n}";
        std::fs::write(&path, first).expect("write");
        let info = describe(&path).expect("a Gemini CLI session");
        let mut tail = FileTail::new(info, Start::Appeared, 0, 1 << 20);
        let mut scratch = Vec::new();
        let mut out = Vec::new();
        tail.poll(&mut scratch, u64::MAX, true, &mut out)
            .expect("poll");
        assert_eq!(documents(&out), [(1, first.to_owned())]);
        // Nothing changed: nothing sent.
        out.clear();
        tail.poll(&mut scratch, u64::MAX, true, &mut out)
            .expect("poll");
        assert!(documents(&out).is_empty());
        // Truncated, half-written: nothing yet; then whole: a new generation.
        std::fs::write(&path, "{\n  \"sessionId\": \"s\",\n").expect("write");
        tail.poll(&mut scratch, u64::MAX, true, &mut out)
            .expect("poll");
        assert!(documents(&out).is_empty());
        let second = first.replace("[]", "[{\"id\": \"m\"}]");
        std::fs::write(&path, &second).expect("write");
        tail.poll(&mut scratch, u64::MAX, true, &mut out)
            .expect("poll");
        assert_eq!(documents(&out), [(2, second)]);
    }
}
