//! Dormant transcripts: a file not written for [`TailerConfig::dormant_after`] when following
//! began is noted (its size, device and inode) but not read, not even its head. A heavy
//! user's year of sessions is thousands of files and gigabytes; reading each whole to learn
//! the state of sessions nobody runs any more is what made a start take seconds. A dormant
//! file wakes when it is written again, or when a hook names it: then it is read as if it
//! had existed at start (its last [`TailerConfig::prime_bytes`] up to its size then as
//! backlog, [`TailMessage::CaughtUp`] sent again after it) and followed from there, so the
//! session model learns its state first and tells only what is new.
//!
//! [`TailerConfig::dormant_after`]: super::TailerConfig::dormant_after
//! [`TailerConfig::prime_bytes`]: super::TailerConfig::prime_bytes
//! [`TailMessage::CaughtUp`]: crate::TailMessage::CaughtUp

use std::fs;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use super::run::{Found, Tailer};
use crate::TailMessage;
use crate::discovery::{TranscriptInfo, Verdict};
use crate::file::Start;

/// What a dormant file was when following began.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dormant {
    size: u64,
    identity: (u64, u64),
    /// Selected by its path alone (counted in [`crate::TailStatsSnapshot::dormant`]); the
    /// others need their records to say whether they are selected (a Codex rollout's `cwd`).
    counted: bool,
}

/// What to do with a path [`Tailer::consider`](super::run::Tailer) is looking at.
pub(super) enum Dormancy {
    /// Not dormant: decide as usual.
    No,
    /// Set aside (at start), or still dormant (unchanged since): nothing to read.
    Asleep,
    /// Dormant until now: follow it from this start.
    Woken(Start),
}

impl Tailer {
    /// Is `path` dormant (set aside now, at start, or earlier and unchanged since), or does
    /// it wake now? `force`: wake it even unchanged (a hook named it).
    pub(super) fn dormancy(
        &mut self,
        path: &Path,
        info: &TranscriptInfo,
        meta: &fs::Metadata,
        found: Found,
        force: bool,
    ) -> Dormancy {
        let identity = (meta.dev(), meta.ino());
        if let Some(dormant) = self.dormant.get(path).copied() {
            if !force && dormant.size == meta.len() && dormant.identity == identity {
                return Dormancy::Asleep;
            }
            self.dormant.remove(path);
            if dormant.counted {
                self.stats.dormant.fetch_sub(1, Ordering::Relaxed);
            }
            tracing::debug!("{} is written again: reading it", path.display());
            // Its backlog is read as the files' at start were, and then caught up again.
            self.catching_up = true;
            return Dormancy::Woken(self.woken((dormant.identity, dormant.size), meta));
        }
        let point = (self.config.resume.as_ref()).and_then(|points| points.get(path).copied());
        if let Some((identity_then, at)) = point.filter(|(_, at)| at.line == 0)
            && found == Found::AtStart
        {
            // Dormant when the earlier stream stopped: so still, unless written since.
            if identity_then == identity && meta.len() == at.offset {
                return self.set_aside(path, info, meta);
            }
            return Dormancy::Woken(self.woken((identity_then, at.offset), meta));
        }
        let Some(before) = self.dormant_before else {
            return Dormancy::No;
        };
        let written = meta.modified().unwrap_or(SystemTime::now());
        // A file the earlier stream read goes on from its point.
        if found != Found::AtStart || written >= before || point.is_some() {
            return Dormancy::No;
        }
        self.set_aside(path, info, meta)
    }

    /// Where a file dormant as `then` (device and inode, size) is read from, now that it is
    /// `meta`: what it held then as backlog, as at start, if it only grew; else all of it new
    /// (another file by now, or a shorter one).
    fn woken(&self, then: ((u64, u64), u64), meta: &fs::Metadata) -> Start {
        let (identity, size) = then;
        if identity == (meta.dev(), meta.ino()) && meta.len() >= size {
            Start::Existing {
                size,
                prime: Some(self.config.prime_bytes),
            }
        } else {
            Start::Appeared
        }
    }

    /// Note `path` as dormant, unread (unless its path alone turns it down).
    fn set_aside(&mut self, path: &Path, info: &TranscriptInfo, meta: &fs::Metadata) -> Dormancy {
        let counted = match self.matcher.decide(info, None) {
            Verdict::No => return Dormancy::No, // turned down by its path: no need to keep it
            Verdict::Yes => true,
            Verdict::NeedRecords => false,
        };
        if counted {
            super::bump(&self.stats.dormant, 1);
        }
        let identity = (meta.dev(), meta.ino());
        self.dormant.insert(
            path.to_path_buf(),
            Dormant {
                size: meta.len(),
                identity,
                counted,
            },
        );
        self.outbox.push_back(TailMessage::Dormant {
            path: Arc::from(path),
            identity,
            size: meta.len(),
            selected: counted,
        });
        Dormancy::Asleep
    }

    /// A hook named `path`: wake it and its subagents' files if they are dormant. `true` if
    /// any was.
    pub(super) fn wake_named(&mut self, path: &Path) -> bool {
        // Claude Code keeps a session's subagents under `<session>/subagents/`.
        let own_dir = path.with_extension("");
        let named: Vec<Arc<Path>> = self
            .dormant
            .keys()
            .filter(|dormant| &***dormant == path || dormant.starts_with(&own_dir))
            .cloned()
            .collect();
        for dormant in &named {
            self.consider_forced(dormant);
        }
        !named.is_empty()
    }

    /// Forget dormant files under a directory that went away.
    pub(super) fn forget_dormant_under(&mut self, dir: &Path) {
        let stats = &self.stats;
        self.dormant.retain(|file, dormant| {
            let keep = !file.starts_with(dir);
            if !keep && dormant.counted {
                stats.dormant.fetch_sub(1, Ordering::Relaxed);
            }
            keep
        });
    }
}
