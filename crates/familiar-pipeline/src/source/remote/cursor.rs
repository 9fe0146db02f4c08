//! Where a remote stream stands, kept on the local side, so that a reconnect resumes it with
//! nothing lost and nothing doubled (pure: messages in, messages to pass on out).
//!
//! Per remote file: its device and inode, the last point the feed said reading stood at, and
//! the last line passed on. A new feed is asked to go on from each file's point
//! ([`Cursor::request`], the remote tailer's [`familiar_tail::TailerConfig::resume`]); it may
//! send again lines after a point that were passed on already (a batch cut off before its
//! point arrived), which are dropped here by number. Before the first catch-up nothing is
//! resumed: those lines were backlog, and a fresh start reads them as backlog again.
//!
//! Files the feed set aside as dormant (not written for a day: `familiar_tail`'s
//! `TailerConfig::dormant_after`) are kept too, by size, and asked for at line 0: a new feed
//! keeps them dormant, or, if one was written while the link was down, reads it as a woken
//! one (its old lines backlog, the new ones events) instead of as a file all new.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use familiar_tail::{OpenReason, ResumePoint, TailMessage};
use serde::{Deserialize, Serialize};

/// Where one file's stream stopped: `[path, dev, ino, offset, line]`.
pub type FilePoint = (String, u64, u64, u64, u64);

/// What a feed is asked to do first: start afresh, or go on from these points.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// One point per file; `None`: a fresh start.
    pub resume: Option<Vec<FilePoint>>,
    /// Files not written for this long (ms) when the feed starts are dormant, read only once
    /// written again ([`familiar_tail::TailerConfig::dormant_after`]); `0`: none is. Absent
    /// (a Familiar from before dormancy asked, which would not know the feed's `dormant`
    /// lines): none is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dormant_after_ms: Option<u64>,
}

impl Request {
    /// The remote tailer's [`familiar_tail::TailerConfig::dormant_after`].
    pub fn dormant_after(&self) -> Option<std::time::Duration> {
        match self.dormant_after_ms {
            None | Some(0) => None,
            Some(ms) => Some(std::time::Duration::from_millis(ms)),
        }
    }

    /// Asks for `after` as [`Request::dormant_after`] gives it back.
    pub fn with_dormant_after(mut self, after: Option<std::time::Duration>) -> Request {
        self.dormant_after_ms = Some(after.map_or(0, |after| {
            u64::try_from(after.as_millis()).unwrap_or(u64::MAX).max(1)
        }));
        self
    }

    /// The remote tailer's resume points.
    pub fn resume_from(&self) -> Option<familiar_tail::ResumeFrom> {
        self.resume.as_ref().map(|files| {
            files
                .iter()
                .map(|(path, dev, ino, offset, line)| {
                    (
                        PathBuf::from(path),
                        (
                            (*dev, *ino),
                            ResumePoint {
                                offset: *offset,
                                line: *line,
                            },
                        ),
                    )
                })
                .collect()
        })
    }
}

#[derive(Debug, Clone)]
struct File {
    identity: (u64, u64),
    at: ResumePoint,
    /// The last line passed on in the current generation.
    passed: u64,
    /// Lines up to `passed` may come again (this generation was resumed).
    resumed: bool,
}

/// One remote's place, across its connections.
#[derive(Debug, Default)]
pub struct Cursor {
    files: HashMap<Arc<std::path::Path>, File>,
    caught_up: bool,
    /// Files of earlier connections not opened again in this one yet.
    unseen: HashSet<Arc<std::path::Path>>,
    /// Dormant files: device and inode, size.
    dormant: HashMap<Arc<std::path::Path>, ((u64, u64), u64)>,
    /// Dormant files of earlier connections not told of again in this one yet.
    unseen_dormant: HashSet<Arc<std::path::Path>>,
}

impl Cursor {
    /// What to ask the next connection's feed for.
    pub fn request(&self) -> Request {
        Request {
            resume: self.caught_up.then(|| {
                let mut files: Vec<_> = self
                    .files
                    .iter()
                    .map(|(path, file)| {
                        (
                            path.to_string_lossy().into_owned(),
                            file.identity.0,
                            file.identity.1,
                            file.at.offset,
                            file.at.line,
                        )
                    })
                    .chain(self.dormant.iter().map(|(path, ((dev, ino), size))| {
                        (path.to_string_lossy().into_owned(), *dev, *ino, *size, 0)
                    }))
                    .collect();
                files.sort();
                files
            }),
            dormant_after_ms: None,
        }
    }

    /// A new connection starts (after [`Cursor::request`] was sent).
    pub fn connecting(&mut self) {
        self.unseen = self.files.keys().cloned().collect();
        self.unseen_dormant = self.dormant.keys().cloned().collect();
    }

    /// One message of the feed; what to pass on to the session model goes to `out`.
    pub fn pass(&mut self, message: TailMessage, out: &mut Vec<TailMessage>) {
        match message {
            TailMessage::Opened {
                ref path,
                reason,
                identity,
                ..
            } => {
                self.unseen.remove(path);
                self.unseen_dormant.remove(path);
                self.dormant.remove(path);
                if reason == OpenReason::Resumed
                    && let Some(file) = self.files.get_mut(path)
                    && file.identity == identity
                {
                    // The model has this file's state already: it goes on as if never cut.
                    file.resumed = true;
                    return;
                }
                self.files.insert(
                    Arc::clone(path),
                    File {
                        identity,
                        at: ResumePoint { offset: 0, line: 1 },
                        passed: 0,
                        resumed: false,
                    },
                );
                out.push(message);
            }
            TailMessage::Lines {
                path,
                generation,
                mut lines,
                backlog,
                resume,
            } => {
                if let Some(file) = self.files.get_mut(&path) {
                    if file.resumed {
                        lines.retain(|line| line.number > file.passed);
                    }
                    if let Some(last) = lines.last() {
                        file.passed = last.number;
                    }
                    if let Some(at) = resume {
                        file.at = at;
                    }
                }
                if !lines.is_empty() {
                    out.push(TailMessage::Lines {
                        path,
                        generation,
                        lines,
                        backlog,
                        resume,
                    });
                }
            }
            TailMessage::Removed { ref path, .. } => {
                self.files.remove(path);
                self.unseen.remove(path);
                out.push(message);
            }
            TailMessage::Dormant {
                ref path,
                identity,
                size,
                ..
            } => {
                self.unseen_dormant.remove(path);
                self.dormant.insert(Arc::clone(path), (identity, size));
                out.push(message); // for `sessions` to count
            }
            TailMessage::CaughtUp => {
                // What earlier connections followed and this one found no more: gone
                // while the link was down.
                let mut gone: Vec<_> = self.unseen.drain().collect();
                gone.sort();
                for path in gone {
                    self.files.remove(&path);
                    out.push(TailMessage::Removed {
                        path,
                        generation: 0,
                    });
                }
                // Dormant ones gone meanwhile: the model never knew them.
                for path in self.unseen_dormant.drain() {
                    self.dormant.remove(&path);
                }
                self.caught_up = true;
                out.push(message);
            }
            other => out.push(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use familiar_tail::{Line, TranscriptInfo, TranscriptKind};

    use super::*;

    fn opened(path: &str, reason: OpenReason, ino: u64) -> TailMessage {
        TailMessage::Opened {
            path: Arc::from(Path::new(path)),
            info: TranscriptInfo {
                path: PathBuf::from(path),
                kind: TranscriptKind::Session,
                session_id: Some("s".into()),
                agent_id: None,
                agent_type: None,
                cwd: None,
            },
            generation: 1,
            reason,
            identity: (1, ino),
        }
    }

    fn lines(path: &str, numbers: std::ops::RangeInclusive<u64>, at: Option<u64>) -> TailMessage {
        TailMessage::Lines {
            path: Arc::from(Path::new(path)),
            generation: 1,
            lines: numbers
                .map(|number| Line {
                    number,
                    bytes: format!("line {number}").into_bytes(),
                })
                .collect(),
            backlog: false,
            resume: at.map(|line| ResumePoint {
                offset: line * 10,
                line,
            }),
        }
    }

    fn numbers(out: &[TailMessage]) -> Vec<u64> {
        out.iter()
            .flat_map(|message| match message {
                TailMessage::Lines { lines, .. } => lines.iter().map(|l| l.number).collect(),
                _ => Vec::new(),
            })
            .collect()
    }

    #[test]
    fn nothing_is_resumed_before_the_first_catch_up() {
        let mut cursor = Cursor::default();
        let mut out = Vec::new();
        cursor.pass(opened("/a", OpenReason::Existing, 1), &mut out);
        cursor.pass(lines("/a", 1..=3, Some(4)), &mut out);
        assert_eq!(cursor.request(), Request::default());
        cursor.pass(TailMessage::CaughtUp, &mut out);
        assert_eq!(
            cursor.request().resume,
            Some(vec![("/a".to_owned(), 1, 1, 40, 4)])
        );
    }

    #[test]
    fn lines_sent_again_after_a_point_are_dropped_and_the_resumed_open_is_not_passed_on() {
        let mut cursor = Cursor::default();
        let mut out = Vec::new();
        cursor.pass(opened("/a", OpenReason::Existing, 1), &mut out);
        cursor.pass(lines("/a", 1..=3, Some(4)), &mut out);
        cursor.pass(TailMessage::CaughtUp, &mut out);
        // Lines 4-6 arrive in a batch cut off before its point; then the link drops.
        cursor.pass(lines("/a", 4..=6, None), &mut out);
        out.clear();
        cursor.connecting();
        cursor.pass(opened("/a", OpenReason::Resumed, 1), &mut out);
        cursor.pass(lines("/a", 4..=8, Some(9)), &mut out);
        cursor.pass(TailMessage::CaughtUp, &mut out);
        assert_eq!(numbers(&out), [7, 8]);
        assert!(
            !out.iter()
                .any(|message| matches!(message, TailMessage::Opened { .. }))
        );
        assert_eq!(
            cursor.request().resume,
            Some(vec![("/a".to_owned(), 1, 1, 90, 9)])
        );
    }

    #[test]
    fn a_file_gone_while_the_link_was_down_is_removed_and_a_new_one_passed_whole() {
        let mut cursor = Cursor::default();
        let mut out = Vec::new();
        cursor.pass(opened("/a", OpenReason::Existing, 1), &mut out);
        cursor.pass(opened("/b", OpenReason::Existing, 2), &mut out);
        cursor.pass(TailMessage::CaughtUp, &mut out);
        out.clear();
        cursor.connecting();
        // `/b` is another file now: read whole.
        cursor.pass(opened("/b", OpenReason::Existing, 3), &mut out);
        cursor.pass(lines("/b", 1..=2, Some(3)), &mut out);
        cursor.pass(TailMessage::CaughtUp, &mut out);
        assert_eq!(numbers(&out), [1, 2]);
        let removed: Vec<_> = out
            .iter()
            .filter_map(|message| match message {
                TailMessage::Removed { path, .. } => Some(path.to_path_buf()),
                _ => None,
            })
            .collect();
        assert_eq!(removed, [PathBuf::from("/a")]);
        assert_eq!(
            cursor.request().resume,
            Some(vec![("/b".to_owned(), 1, 3, 30, 3)])
        );
    }

    fn dormant(path: &str, ino: u64, size: u64) -> TailMessage {
        TailMessage::Dormant {
            path: Arc::from(Path::new(path)),
            identity: (1, ino),
            size,
            selected: true,
        }
    }

    #[test]
    fn dormant_files_are_asked_for_at_line_0_until_opened_or_gone() {
        let mut cursor = Cursor::default();
        let mut out = Vec::new();
        cursor.pass(opened("/a", OpenReason::Existing, 1), &mut out);
        cursor.pass(dormant("/old", 2, 500), &mut out);
        cursor.pass(dormant("/older", 3, 700), &mut out);
        cursor.pass(TailMessage::CaughtUp, &mut out);
        assert_eq!(
            cursor.request().resume,
            Some(vec![
                ("/a".to_owned(), 1, 1, 0, 1),
                ("/old".to_owned(), 1, 2, 500, 0),
                ("/older".to_owned(), 1, 3, 700, 0),
            ])
        );
        // Next connection: `/old` was written meanwhile (opened), `/older` deleted (never
        // told of again).
        out.clear();
        cursor.connecting();
        cursor.pass(opened("/a", OpenReason::Resumed, 1), &mut out);
        cursor.pass(opened("/old", OpenReason::Existing, 2), &mut out);
        cursor.pass(TailMessage::CaughtUp, &mut out);
        assert_eq!(
            cursor.request().resume,
            Some(vec![
                ("/a".to_owned(), 1, 1, 0, 1),
                ("/old".to_owned(), 1, 2, 0, 1),
            ])
        );
        assert!(
            !out.iter()
                .any(|message| matches!(message, TailMessage::Removed { .. })),
            "a dormant file gone is nothing to the model: {out:?}"
        );
    }

    #[test]
    fn dormancy_is_asked_for_only_by_a_familiar_that_reads_its_lines() {
        let old = Request::default();
        assert_eq!(old.dormant_after(), None, "an older Familiar's request");
        let day = std::time::Duration::from_secs(86_400);
        let asked = Request::default().with_dormant_after(Some(day));
        let text = serde_json::to_string(&asked).unwrap_or_default();
        let back: Request = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(back.dormant_after(), Some(day));
        let all = Request::default().with_dormant_after(None);
        assert_eq!(all.dormant_after(), None);
        assert_eq!(
            serde_json::to_string(&Request::default()).unwrap_or_default(),
            r#"{"resume":null}"#,
            "what an older feed reads"
        );
    }
}
