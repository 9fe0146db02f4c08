//! The game window's animation cues, played as built-in cues: the window reports each
//! animation that starts on screen with its cue (`familiar_model::WindowReport::Cue`, named by
//! `familiar_game::anim::Anim::cue`), and `familiar` hands it to [`SharedAudio::cue`], which
//! plays it through the same [`AudioSink`] as the scripts' `sound(...)` actions: one
//! connection, one warning when there is no server, the same volume, quiet hours and repeat
//! gap, and `--mute` or `[sound] enabled = false` silence both (no sink, no cue).
//!
//! No double sounds: a cue is skipped when a script played a sound for the same session in
//! the last [`AFTER_SCRIPT`] (the event that started the animation already rang), so the cues
//! voice what the scripts leave silent. Errors (`hurt`) have no cue sound: which errors ring is
//! the scripts' choice (the shipped one keeps your own rejections quiet).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use familiar_model::Action;
use familiar_model::sink::Sink;

use crate::{AudioOptions, AudioSink, Played};

/// A script's sound for a session silences that session's cues for this long: an animation
/// starts on screen within a frame of its event, or after the animation before it (3 s at
/// most).
pub const AFTER_SCRIPT: Duration = Duration::from_secs(3);

/// The built-in cue an animation's cue plays, `None` for a silent one.
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

    /// Play the sound of the window's `cue` for `session` ("" when unknown), unless a script
    /// already rang for that session (see the module docs).
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
        match sink.play(name, "window") {
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
}
