//! What the `familiar` binary and the `familiar-window` executable say to each other over
//! pipes, one JSON object a line (NDJSON): the window is its own process so that headless
//! commands never load Bevy, and a crash in a GPU driver cannot take the tailer down.
//!
//! `familiar` writes [`WindowFeed`] lines on the window's stdin (the session model's events
//! and the scripts' actions, in order; the end of the input ends the feed), and reads
//! [`WindowReport`] lines from its stdout: first whether a window can open at all, then the
//! replay's pause and speed whenever the window's keys change them, and the sound cue of each
//! animation that starts.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::{Action, Event};

/// One item of the feed, `{"event":{...}}` or `{"action":{...}}`.
// Events are large, but each item is written once and dropped.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowFeed {
    /// An event of the session model: the only source of session state. Shared with the
    /// stage and the scripts, not copied for the window (serialized as the event itself).
    Event(Arc<Event>),
    /// An action from the scripts.
    Action(Action),
    /// No session yet: where the pipeline looks for one (the window says it while its scene is
    /// empty).
    Waiting { looked_in: String },
    /// The replay (or the demo) is over, and what to do next (shown until the window closes).
    Ended { text: String },
    /// The user's progression (XP, level, unlocks), first at the start and then whenever
    /// the scripts' `xp` actions changed it: the window shows it, it never counts XP itself.
    Progress(crate::progression::ProgressUpdate),
    /// The link to a remote host (`watch --remote`) is up, or down (being tried again, or
    /// given up): its sessions' plates say so.
    Remote { host: String, connected: bool },
}

/// One line from the window process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowReport {
    /// A window can open (display, X server, GPU adapter): the feed may start.
    Ready,
    /// No window can open here, and why (one line, for the user); the process then exits.
    Unavailable { reason: String },
    /// The replay's pause or speed changed (space, `+`/`-` in the window).
    Replay { paused: bool, speed: f64 },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ActionKind, EventKind, Status};

    fn round_trip<T: Serialize + for<'de> Deserialize<'de>>(value: &T) -> (String, T) {
        let line = serde_json::to_string(value).expect("serializes");
        let back = serde_json::from_str(&line).expect("parses back");
        (line, back)
    }

    #[test]
    fn feed_items_cross_the_pipe_unchanged() {
        let mut event = Event::new(EventKind::Snapshot, 12);
        event.session = Some("s1".to_owned());
        event.context_used = Some(77_334);
        event.status = Status::WaitingForInput;
        event.cwd = Some("/home/u/spotter".to_owned());
        let action = Action {
            kind: ActionKind::Emit {
                name: "hello".to_owned(),
                data: serde_json::from_str(r#"{"n":1,"nested":{"a":[true]}}"#).expect("map"),
            },
            script: "default.rhai".to_owned(),
            session: Some("s1".to_owned()),
            agent: Some("a7".to_owned()),
            line: 12,
            event: EventKind::Bash,
        };
        for item in [
            WindowFeed::Event(Arc::new(event)),
            WindowFeed::Action(action),
            WindowFeed::Waiting {
                looked_in: "~/.claude/projects/-home-u-app (for ~/app)".to_owned(),
            },
            WindowFeed::Ended {
                text: "The demo is over.\nRun `familiar`.".to_owned(),
            },
            WindowFeed::Progress(progress_update()),
        ] {
            let (line, back) = round_trip(&item);
            assert!(!line.contains('\n'), "one line: {line}");
            assert_eq!(back, item, "{line}");
        }
    }

    fn progress_update() -> crate::progression::ProgressUpdate {
        let mut profile = crate::progression::Profile::default();
        let gain = profile.add(12);
        crate::progression::ProgressUpdate {
            profile,
            level_up: gain.level_up_from.map(|from| crate::progression::LevelUp {
                from,
                session: Some("s1".to_owned()),
            }),
            unlocked: gain.unlocked.iter().map(|u| u.id.to_owned()).collect(),
        }
    }

    #[test]
    fn reports_cross_the_pipe_unchanged() {
        for report in [
            WindowReport::Ready,
            WindowReport::Unavailable {
                reason: "no GPU driver".to_owned(),
            },
            WindowReport::Replay {
                paused: true,
                speed: 2.5,
            },
        ] {
            let (line, back) = round_trip(&report);
            assert_eq!(back, report, "{line}");
        }
        assert_eq!(
            serde_json::to_string(&WindowReport::Ready).expect("serializes"),
            r#""ready""#
        );
    }
}
