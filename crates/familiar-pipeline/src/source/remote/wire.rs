//! The feed's wire format: one JSON object a line, what the remote tailer read (files opened,
//! numbered lines, removals, catching up), the remote hooks and the remote CLI's session
//! states, and a heartbeat. It carries lines, not events: the local session model turns them
//! into events, so a remote session's state has the one owner every session has, and a
//! reconnect resumes at a file's line ([`super::cursor`]), which events could not say.
//!
//! The first line of a stream is [`FeedLine::Hello`]; a reader that does not know its
//! [`FeedLine::Hello::feed`] number says so and reads no further.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use familiar_hook::HookInput;
use familiar_tail::status_files::StatusFileChange;
use familiar_tail::{Line, OpenReason, ResumePoint, TailMessage, TranscriptInfo, TranscriptKind};
use serde::{Deserialize, Serialize};

/// The feed format's number: a reader refuses any other (a stream from an older or newer
/// Familiar whose lines it might misread).
pub const FEED_VERSION: u32 = 1;

/// One line of a feed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedLine {
    /// First of every stream: the format, and the version of the Familiar that writes it.
    Hello {
        feed: u32,
        version: String,
    },
    Opened {
        path: String,
        generation: u32,
        reason: Reason,
        /// Device and inode: a reconnect resumes a file only if it is still this one.
        dev: u64,
        ino: u64,
        subagent: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent_type: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    Lines {
        path: String,
        generation: u32,
        backlog: bool,
        lines: Vec<WireLine>,
        /// `[offset, line]`: where reading stands after these lines, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resume: Option<(u64, u64)>,
    },
    TooLong {
        path: String,
        generation: u32,
        number: u64,
        len: u64,
        backlog: bool,
    },
    Meta {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent_type: Option<String>,
    },
    Removed {
        path: String,
        generation: u32,
    },
    CaughtUp,
    Problem {
        path: String,
        error: String,
    },
    /// A file set aside unread as dormant (sent only to a reader that asked for dormancy:
    /// [`super::cursor::Request::dormant_after_ms`]).
    Dormant {
        path: String,
        dev: u64,
        ino: u64,
        size: u64,
        selected: bool,
    },
    /// A hook of the remote CLI (its `familiar hook` reached the feed's socket).
    Hook(HookInput),
    /// A file of the remote CLI's sessions folder, written (its text) or gone.
    CliState {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// Nothing else to say for a while: the link is alive.
    Alive,
}

/// Why a file is followed from here (the tailer's [`OpenReason`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    Existing,
    Appeared,
    Truncated,
    Replaced,
    Renamed,
    Resumed,
}

/// One numbered line: its text, or, when it is not UTF-8, its bytes in hex (the local reader
/// reports it as the local tailer would).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WireLine {
    Text(u64, String),
    Bytes(u64, (), String),
}

impl WireLine {
    fn of(line: Line) -> WireLine {
        match String::from_utf8(line.bytes) {
            Ok(text) => WireLine::Text(line.number, text),
            Err(err) => WireLine::Bytes(line.number, (), hex(err.as_bytes())),
        }
    }

    fn into_line(self) -> Option<Line> {
        Some(match self {
            WireLine::Text(number, text) => Line {
                number,
                bytes: text.into_bytes(),
            },
            WireLine::Bytes(number, (), hex) => Line {
                number,
                bytes: unhex(&hex)?,
            },
        })
    }
}

/// What the feed's reader rebuilds from a line.
#[derive(Debug, Clone, PartialEq)]
// Tail messages are nearly all the traffic.
#[allow(clippy::large_enum_variant)]
pub enum Received {
    Hello { feed: u32, version: String },
    Tail(TailMessage),
    Hook(HookInput),
    CliState(StatusFileChange),
    Alive,
}

impl FeedLine {
    /// The line for a tailer message.
    pub fn tail(message: TailMessage) -> FeedLine {
        let text = |path: &Path| path.to_string_lossy().into_owned();
        match message {
            TailMessage::Opened {
                path,
                info,
                generation,
                reason,
                identity,
            } => FeedLine::Opened {
                path: text(&path),
                generation,
                reason: match reason {
                    OpenReason::Existing => Reason::Existing,
                    OpenReason::Appeared => Reason::Appeared,
                    OpenReason::Truncated { .. } => Reason::Truncated,
                    OpenReason::Replaced => Reason::Replaced,
                    OpenReason::Renamed => Reason::Renamed,
                    OpenReason::Resumed => Reason::Resumed,
                },
                dev: identity.0,
                ino: identity.1,
                subagent: info.kind == TranscriptKind::Subagent,
                session_id: info.session_id,
                agent_id: info.agent_id,
                agent_type: info.agent_type,
                cwd: info.cwd,
            },
            TailMessage::Lines {
                path,
                generation,
                lines,
                backlog,
                resume,
            } => FeedLine::Lines {
                path: text(&path),
                generation,
                backlog,
                lines: lines.into_iter().map(WireLine::of).collect(),
                resume: resume.map(|at| (at.offset, at.line)),
            },
            TailMessage::TooLong {
                path,
                generation,
                number,
                len,
                backlog,
            } => FeedLine::TooLong {
                path: text(&path),
                generation,
                number,
                len,
                backlog,
            },
            TailMessage::Meta { path, agent_type } => FeedLine::Meta {
                path: text(&path),
                agent_type,
            },
            TailMessage::Removed { path, generation } => FeedLine::Removed {
                path: text(&path),
                generation,
            },
            TailMessage::CaughtUp => FeedLine::CaughtUp,
            TailMessage::Problem { path, error } => FeedLine::Problem {
                path: text(&path),
                error,
            },
            TailMessage::Dormant {
                path,
                identity,
                size,
                selected,
            } => FeedLine::Dormant {
                path: text(&path),
                dev: identity.0,
                ino: identity.1,
                size,
                selected,
            },
        }
    }

    /// The line for a change in the CLI's sessions folder.
    pub fn cli_state(change: StatusFileChange) -> FeedLine {
        match change {
            StatusFileChange::Written { path, bytes } => FeedLine::CliState {
                path: path.to_string_lossy().into_owned(),
                text: Some(String::from_utf8_lossy(&bytes).into_owned()),
            },
            StatusFileChange::Removed { path } => FeedLine::CliState {
                path: path.to_string_lossy().into_owned(),
                text: None,
            },
        }
    }

    /// What the line says, in the tailer's and the hooks' own types; `None` for a line that
    /// cannot be (a `lines` entry whose hex is damaged).
    pub fn received(self) -> Option<Received> {
        let path = |text: String| -> Arc<Path> { Arc::from(PathBuf::from(text)) };
        Some(match self {
            FeedLine::Hello { feed, version } => Received::Hello { feed, version },
            FeedLine::Opened {
                path: at,
                generation,
                reason,
                dev,
                ino,
                subagent,
                session_id,
                agent_id,
                agent_type,
                cwd,
            } => Received::Tail(TailMessage::Opened {
                info: TranscriptInfo {
                    path: PathBuf::from(&at),
                    kind: if subagent {
                        TranscriptKind::Subagent
                    } else {
                        TranscriptKind::Session
                    },
                    session_id,
                    agent_id,
                    agent_type,
                    cwd,
                },
                path: path(at),
                generation,
                reason: match reason {
                    Reason::Existing => OpenReason::Existing,
                    Reason::Appeared => OpenReason::Appeared,
                    Reason::Truncated => OpenReason::Truncated { lost_bytes: 0 },
                    Reason::Replaced => OpenReason::Replaced,
                    Reason::Renamed => OpenReason::Renamed,
                    Reason::Resumed => OpenReason::Resumed,
                },
                identity: (dev, ino),
            }),
            FeedLine::Lines {
                path: at,
                generation,
                backlog,
                lines,
                resume,
            } => Received::Tail(TailMessage::Lines {
                path: path(at),
                generation,
                lines: lines
                    .into_iter()
                    .map(WireLine::into_line)
                    .collect::<Option<_>>()?,
                backlog,
                resume: resume.map(|(offset, line)| ResumePoint { offset, line }),
            }),
            FeedLine::TooLong {
                path: at,
                generation,
                number,
                len,
                backlog,
            } => Received::Tail(TailMessage::TooLong {
                path: path(at),
                generation,
                number,
                len,
                backlog,
            }),
            FeedLine::Meta {
                path: at,
                agent_type,
            } => Received::Tail(TailMessage::Meta {
                path: path(at),
                agent_type,
            }),
            FeedLine::Removed {
                path: at,
                generation,
            } => Received::Tail(TailMessage::Removed {
                path: path(at),
                generation,
            }),
            FeedLine::CaughtUp => Received::Tail(TailMessage::CaughtUp),
            FeedLine::Problem { path: at, error } => Received::Tail(TailMessage::Problem {
                path: PathBuf::from(at),
                error,
            }),
            FeedLine::Dormant {
                path: at,
                dev,
                ino,
                size,
                selected,
            } => Received::Tail(TailMessage::Dormant {
                path: path(at),
                identity: (dev, ino),
                size,
                selected,
            }),
            FeedLine::Hook(input) => Received::Hook(input),
            FeedLine::CliState { path: at, text } => Received::CliState(match text {
                Some(text) => StatusFileChange::Written {
                    path: PathBuf::from(at),
                    bytes: text.into_bytes(),
                },
                None => StatusFileChange::Removed {
                    path: PathBuf::from(at),
                },
            }),
            FeedLine::Alive => Received::Alive,
        })
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(message: TailMessage) -> TailMessage {
        let text = serde_json::to_string(&FeedLine::tail(message)).expect("serializes");
        assert!(!text.contains('\n'), "one line: {text}");
        let line: FeedLine = serde_json::from_str(&text).expect("parses");
        match line.received() {
            Some(Received::Tail(message)) => message,
            other => panic!("not a tail message: {other:?}"),
        }
    }

    #[test]
    fn lines_cross_byte_for_byte_whatever_they_hold() {
        let lines = vec![
            Line {
                number: 7,
                bytes: br#"{"type":"user","message":"a\nb \u2603"}"#.to_vec(),
            },
            Line {
                number: 8,
                bytes: b"\xff\xfe not UTF-8 \x00".to_vec(),
            },
            Line {
                number: 9,
                bytes: Vec::new(),
            },
        ];
        let message = TailMessage::Lines {
            path: Arc::from(Path::new("/home/u/.claude/projects/-p/s.jsonl")),
            generation: 2,
            lines,
            backlog: true,
            resume: Some(ResumePoint {
                offset: 120,
                line: 10,
            }),
        };
        assert_eq!(round_trip(message.clone()), message);
    }

    #[test]
    fn an_opened_file_keeps_what_discovery_learnt_and_its_identity() {
        let message = TailMessage::Opened {
            path: Arc::from(Path::new("/r/s/subagents/agent-a1.jsonl")),
            info: TranscriptInfo {
                path: PathBuf::from("/r/s/subagents/agent-a1.jsonl"),
                kind: TranscriptKind::Subagent,
                session_id: Some("s".into()),
                agent_id: Some("a1".into()),
                agent_type: Some("Explore".into()),
                cwd: None,
            },
            generation: 1,
            reason: OpenReason::Resumed,
            identity: (64769, 1234567),
        };
        assert_eq!(round_trip(message.clone()), message);
    }

    #[test]
    fn damaged_hex_is_refused_not_guessed() {
        let line: FeedLine = serde_json::from_str(
            r#"{"lines":{"path":"/p","generation":1,"backlog":false,"lines":[[1,null,"zz"]]}}"#,
        )
        .expect("parses");
        assert_eq!(line.received(), None);
    }
}
