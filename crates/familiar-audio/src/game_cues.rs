//! The game's sounds: the familiar arriving, resting, winning, asking, blocked. Which one an
//! event calls for is chosen in the pipeline, from the event and the actions the scripts made
//! of it ([`GameCues`], pure), the same with a window or without; [`SharedAudio::cue`] plays
//! it through the same [`AudioSink`] as the scripts' `sound(...)` actions: one connection, one
//! warning when there is no server, the same volume, quiet hours and repeat gap, and `--mute`
//! or `[sound] enabled = false` silence both (no sink, no cue).
//!
//! No double sounds: a cue is skipped when a script played a sound for the same session in
//! the last [`AFTER_SCRIPT`] (the event that started the animation already rang), so the cues
//! voice what the scripts leave silent. Errors (`hurt`) have no cue sound: which errors ring is
//! the scripts' choice (the shipped one keeps your own rejections quiet).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use familiar_model::sink::Sink;
use familiar_model::{Action, ActionKind, Event, EventKind, Status};

use crate::{AudioOptions, AudioSink, Played};

/// A script's sound for a session silences that session's cues for this long: the event that
/// called for the cue, or one just before it, already rang.
pub const AFTER_SCRIPT: Duration = Duration::from_secs(3);

/// Which of the game's sounds each event calls for: one per session the first time it shows
/// (`enter`, its familiar arriving), `ask` when a session starts waiting for approval (the
/// familiar asks by itself), `rest` when it goes idle, and the voiced animations the scripts ask for (`animate` with
/// `victory`, `blocked`, `rest` or `ask`, and `rest()`). Work animations stay silent (a burst
/// of tools would be a drum roll), and so do errors (`hurt`): which ring is the scripts'
/// choice.
#[derive(Debug, Default)]
pub struct GameCues {
    arrived: HashSet<String>,
}

impl GameCues {
    /// The cues of `event` (none for a timer's actions) and of the `actions` made of it, in
    /// order, each with its session ("" when none), at most one of each per session.
    pub fn of(&mut self, event: Option<&Event>, actions: &[Action]) -> Vec<(String, &'static str)> {
        let mut cues: Vec<(String, &'static str)> = Vec::new();
        let mut add = |session: &str, cue: &'static str| {
            if !cues.iter().any(|(s, c)| s == session && *c == cue) {
                cues.push((session.to_owned(), cue));
            }
        };
        if let Some(event) = event
            && let Some(session) = event.session.as_deref()
            && event.agent.is_none()
            && !event.sidechain
        {
            if !self.arrived.contains(session) {
                self.arrived.insert(session.to_owned());
                add(session, "enter");
            }
            // The familiar asks by itself while its session waits for approval, and lies
            // down to rest when it goes idle.
            let entered = |status| {
                event.kind == EventKind::Status
                    && event.status == status
                    && event.previous_status != Some(status)
            };
            if entered(Status::WaitingForApproval) {
                add(session, "ask");
            }
            if entered(Status::Idle) {
                add(session, "rest");
            }
        }
        for action in actions {
            let session = action.session.as_deref().unwrap_or("");
            let cue = match &action.kind {
                ActionKind::Animate { name } => ["victory", "blocked", "rest", "ask"]
                    .into_iter()
                    .find(|cue| cue == name),
                ActionKind::Rest => Some("rest"),
                _ => None,
            };
            if let Some(cue) = cue {
                add(session, cue);
            }
        }
        cues
    }
}

/// The built-in cue a game sound plays, `None` for a silent one.
pub fn sound_for(cue: &str) -> Option<&'static str> {
    match cue {
        // A familiar (a session) arrives: the upward swoop.
        "enter" => Some("subagent_in"),
        // It sits down by the campfire after a compaction: the swoop downward.
        "rest" => Some("subagent_out"),
        "victory" => Some("done"),
        "ask" => Some("approval"),
        "blocked" => Some("rate_limit"),
        _ => None,
    }
}

/// What became of a cue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CueOutcome {
    /// Handed to the sound thread as this built-in cue.
    Played(&'static str),
    /// The animation has no sound.
    Silent,
    /// A script played a sound for this session within [`AFTER_SCRIPT`].
    AfterScript,
    /// Quiet hours, the repeat gap, or no sound thread.
    Skipped,
}

/// One [`AudioSink`] shared by the pipeline's fan-out (as a [`Sink`]) and the window's cues.
#[derive(Clone)]
pub struct SharedAudio(Arc<Mutex<AudioSink>>);

impl SharedAudio {
    pub fn new(options: AudioOptions) -> SharedAudio {
        SharedAudio(Arc::new(Mutex::new(AudioSink::new(options))))
    }

    fn sink(&self) -> MutexGuard<'_, AudioSink> {
        // A panic elsewhere while holding it leaves the sink usable: it holds no invariant a
        // half-done call could break.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Play the game's `cue` ([`GameCues`]) for `session` ("" when unknown), unless a script
    /// rang for that session in the last [`AFTER_SCRIPT`] (the same event already did).
    pub fn cue(&self, session: &str, cue: &str) -> CueOutcome {
        let Some(name) = sound_for(cue) else {
            return CueOutcome::Silent;
        };
        let mut sink = self.sink();
        if sink
            .script_sound_at(session)
            .is_some_and(|at| at.elapsed() < AFTER_SCRIPT)
        {
            return CueOutcome::AfterScript;
        }
        match sink.play(name, "game") {
            Played::Sent => CueOutcome::Played(name),
            Played::Not => CueOutcome::Skipped,
        }
    }

    /// Sounds handed to the sound thread so far (scripts' and cues').
    pub fn sent(&self) -> u64 {
        self.sink().sent()
    }
}

impl Sink for SharedAudio {
    fn name(&self) -> &str {
        "sound"
    }

    fn handle(&mut self, action: &Action) {
        self.sink().handle(action);
    }

    fn flush(&mut self) {
        self.sink().flush();
    }

    fn failures(&self) -> u64 {
        self.sink().failures()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_voiced_animation_plays_a_built_in_cue() {
        for cue in ["enter", "rest", "victory", "ask", "blocked"] {
            let name = sound_for(cue).unwrap_or_else(|| panic!("{cue} is silent"));
            assert!(crate::cues::find(name).is_some(), "{cue} -> {name}");
        }
        // The scripts decide which errors ring.
        assert_eq!(sound_for("hurt"), None);
        assert_eq!(sound_for("cast"), None);
    }

    fn event(kind: EventKind, session: &str) -> Event {
        let mut event = Event::new(kind, 1);
        event.session = Some(session.to_owned());
        event
    }

    fn action(kind: ActionKind, session: &str) -> Action {
        Action {
            kind,
            script: "default.rhai".to_owned(),
            session: Some(session.to_owned()),
            agent: None,
            line: 1,
            event: EventKind::Success,
        }
    }

    #[test]
    fn a_session_enters_once_then_its_voiced_animations_sound() {
        let mut cues = GameCues::default();
        let start = event(EventKind::SessionStart, "s1");
        assert_eq!(cues.of(Some(&start), &[]), [("s1".to_owned(), "enter")]);
        let prompt = event(EventKind::Prompt, "s1");
        assert_eq!(cues.of(Some(&prompt), &[]), []);
        let success = event(EventKind::Success, "s1");
        let won = [
            action(
                ActionKind::Animate {
                    name: "victory".into(),
                },
                "s1",
            ),
            action(
                ActionKind::Animate {
                    name: "cast".into(),
                },
                "s1",
            ),
            action(ActionKind::Rest, "s1"),
            action(
                ActionKind::Animate {
                    name: "rest".into(),
                },
                "s1",
            ),
        ];
        assert_eq!(
            cues.of(Some(&success), &won),
            [("s1".to_owned(), "victory"), ("s1".to_owned(), "rest")]
        );
        // Errors are the scripts' to ring; a subagent's events bring no familiar in.
        let hurt = [action(
            ActionKind::Animate {
                name: "hurt".into(),
            },
            "s1",
        )];
        assert_eq!(cues.of(Some(&event(EventKind::Error, "s1")), &hurt), []);
        let mut sub = event(EventKind::Reading, "s2");
        sub.agent = Some("a1".into());
        sub.sidechain = true;
        assert_eq!(cues.of(Some(&sub), &[]), []);
    }

    #[test]
    fn a_session_asks_when_it_starts_waiting_for_approval() {
        let mut cues = GameCues::default();
        let mut waiting = event(EventKind::Status, "s1");
        waiting.status = Status::WaitingForApproval;
        waiting.previous_status = Some(Status::Working);
        assert_eq!(
            cues.of(Some(&waiting), &[]),
            [("s1".to_owned(), "enter"), ("s1".to_owned(), "ask")]
        );
        // Still waiting (a hook after the sessions file): no second ask.
        waiting.previous_status = Some(Status::WaitingForApproval);
        assert_eq!(cues.of(Some(&waiting), &[]), []);
    }
}
