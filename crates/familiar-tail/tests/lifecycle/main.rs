//! What happens to followed files over their life, against real files and real inotify.
//! Assertions are on lines and lifecycle messages (the tailer parses nothing).
//!
//! - [`backlog`]: the backlog at start and `--from-start`;
//! - [`generations`]: truncation and rewrite, replacement, deletion;
//! - [`appearing`]: new sessions and subagents, every project layout, directories that
//!   appear later, a file named at run time ([`familiar_tail::TailerHandle::follow`]);
//! - [`limits`]: over-long lines, unreadable entries, a full channel, stopping;
//! - [`bursts`]: many files appended at once, directories moved in and out;
//! - [`renames`]: a transcript renamed to another transcript name;
//! - [`resume`]: going on where an earlier tailer stopped;
//! - [`dormant`]: files not written for a while, read once written again.
//!
//! This file holds what they share.

#[path = "../common/mod.rs"]
mod common;

mod appearing;
mod backlog;
mod bursts;
mod dormant;
mod generations;
mod limits;
mod renames;
mod resume;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use familiar_tail::{OpenReason, Selector, TailMessage, TranscriptKind};

const SUBAGENT: &str = "v2.1.39-spotter-subagent-agent-a881341.jsonl";
const SHORT: &str = "v2.1.38-spotter-local-command-tool-errors.jsonl";
const SLASH: &str = "v2.1.38-spotter-slash-command-queue.jsonl";
const COMPACT: &str = "v2.0.67-erk-ci-compact-boundary-queue.jsonl";

fn opened_paths(messages: &[TailMessage]) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = messages
        .iter()
        .filter_map(|m| match m {
            TailMessage::Opened { path, .. } => Some(path.to_path_buf()),
            _ => None,
        })
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

fn modes() -> [(bool, &'static str); 2] {
    [(false, "inotify"), (true, "poll")]
}

fn config_for(env: &Env, poll: bool) -> familiar_tail::TailerConfig {
    let mut config = env.tailer_config(vec![Selector::All]);
    if poll {
        config.mode = poll_mode();
    }
    config
}
