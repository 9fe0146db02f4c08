//! The built-in cues: short original chiptune scores for [`crate::synth`], named for the
//! moments a script plays them at (`sound("approval")`). Rendered once, on first use, and
//! shared by every playback. The table is what `docs/scripting.md` lists.

use std::sync::{Arc, OnceLock};

use crate::synth::{self, Note, Wave};

/// A built-in cue: its name in scripts, what it is for, and its score.
#[derive(Debug)]
pub struct Cue {
    pub name: &'static str,
    pub about: &'static str,
    pub score: &'static [Note],
}

const P12: Wave = Wave::Pulse(0.125);
const P25: Wave = Wave::Pulse(0.25);
const P50: Wave = Wave::Pulse(0.5);
const TRI: Wave = Wave::Triangle;
const NOISE: Wave = Wave::Noise;

// MIDI keys (C4 = 60, A4 = 69).
const C4: u8 = 60;
const E4: u8 = 64;
const F4: u8 = 65;
const FS4: u8 = 66;
const G4: u8 = 67;
const A4: u8 = 69;
const C5: u8 = 72;
const D5: u8 = 74;
const E5: u8 = 76;
const G5: u8 = 79;
const A5: u8 = 81;
const C6: u8 = 84;
const E6: u8 = 88;
const G6: u8 = 91;
const C7: u8 = 96;

const fn n(wave: Wave, at_ms: u32, ms: u32, key: u8, level: f32) -> Note {
    Note::key(wave, at_ms, ms, key, level)
}

/// Every built-in cue, in the order the docs list them.
pub const CUES: &[Cue] = &[
    Cue {
        name: "approval",
        about: "the agent waits for your approval: a rising fourth asked twice",
        score: &[
            n(P25, 0, 110, E5, 0.8),
            n(P25, 120, 200, A5, 0.8),
            n(TRI, 120, 200, A4, 0.5),
            n(P25, 360, 110, E5, 0.8),
            n(P25, 480, 220, A5, 0.8),
            n(TRI, 480, 220, A4, 0.5),
        ],
    },
    Cue {
        name: "input",
        about: "the agent waits for your next prompt: a soft two-note knock",
        score: &[
            n(TRI, 0, 100, G5, 0.9),
            n(P12, 0, 100, G5, 0.25),
            n(TRI, 110, 260, C6, 0.9),
            n(P12, 110, 260, C6, 0.25),
        ],
    },
    Cue {
        name: "done",
        about: "a turn finished: a quick major arpeggio up to a held octave",
        score: &[
            n(P25, 0, 70, C5, 0.8),
            n(P25, 75, 70, E5, 0.8),
            n(P25, 150, 70, G5, 0.8),
            n(P25, 225, 300, C6, 0.8),
            n(TRI, 0, 525, C4, 0.6),
        ],
    },
    Cue {
        name: "error",
        about: "a tool or the API failed: a noise hit and a buzzing fall",
        score: &[
            n(NOISE, 0, 70, 100, 0.6),
            n(P50, 0, 120, A4, 0.7),
            Note::key(P50, 130, 300, 68, 0.7).slide(330.0).wobble(0.3),
        ],
    },
    Cue {
        name: "rate_limit",
        about: "a usage limit: three slow falling notes, the last one wavering",
        score: &[
            n(P25, 0, 160, E5, 0.8),
            n(P25, 180, 160, D5, 0.8),
            Note::key(P25, 360, 400, C5, 0.8).wobble(0.3),
            n(TRI, 360, 400, C4, 0.6),
        ],
    },
    Cue {
        name: "level_up",
        about: "the familiar gained a level: a fast run up two octaves and a sparkle",
        score: &[
            n(P12, 0, 45, C5, 0.7),
            n(P12, 50, 45, E5, 0.7),
            n(P12, 100, 45, G5, 0.7),
            n(P12, 150, 45, C6, 0.7),
            n(P12, 200, 45, E6, 0.7),
            n(P12, 250, 45, G6, 0.7),
            Note::key(P12, 300, 250, C7, 0.6).wobble(0.15),
            Note::key(TRI, 0, 550, C5, 0.5).slide(523.25 * 2.0),
        ],
    },
    Cue {
        name: "subagent_in",
        about: "a subagent starts: a short upward swoop",
        score: &[
            Note::key(TRI, 0, 160, E4, 0.9).slide(990.0),
            Note::key(P12, 0, 160, E4, 0.2).slide(990.0),
        ],
    },
    Cue {
        name: "subagent_out",
        about: "a subagent finished: the same swoop downward",
        score: &[
            Note::key(TRI, 0, 160, 83, 0.9).slide(330.0),
            Note::key(P12, 0, 160, 83, 0.2).slide(330.0),
        ],
    },
    Cue {
        name: "fanfare",
        about: "a celebration (the git-push example): three short calls and a long note",
        score: &[
            n(P25, 0, 110, G4, 0.8),
            n(P25, 120, 110, G4, 0.8),
            n(P25, 240, 110, G4, 0.8),
            n(P25, 360, 450, C5, 0.8),
            n(TRI, 360, 450, C4, 0.6),
        ],
    },
    Cue {
        name: "sad_trombone",
        about: "a failure worth a laugh: four falling half steps, the last one sobbing",
        score: &[
            n(P50, 0, 280, G4, 0.7),
            n(P50, 300, 280, FS4, 0.7),
            n(P50, 600, 280, F4, 0.7),
            Note::key(P50, 900, 700, E4, 0.7).wobble(0.4),
        ],
    },
];

/// The names of every built-in cue, for messages.
pub fn names() -> Vec<&'static str> {
    CUES.iter().map(|cue| cue.name).collect()
}

/// The index of a built-in cue by name.
pub fn find(name: &str) -> Option<usize> {
    CUES.iter().position(|cue| cue.name == name)
}

/// The rendered samples (mono, [`synth::RATE`]) of the cue at `index` in [`CUES`].
pub fn samples(index: usize) -> Option<Arc<[f32]>> {
    static RENDERED: OnceLock<Vec<Arc<[f32]>>> = OnceLock::new();
    RENDERED
        .get_or_init(|| {
            CUES.iter()
                .map(|cue| Arc::from(synth::render(cue.score)))
                .collect()
        })
        .get(index)
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_s_cues_exist_with_distinct_names() {
        for name in [
            "approval",
            "input",
            "done",
            "error",
            "rate_limit",
            "level_up",
            "subagent_in",
            "subagent_out",
        ] {
            assert!(find(name).is_some(), "no cue {name}");
        }
        let mut all = names();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), CUES.len());
    }

    #[test]
    fn every_cue_is_short_audible_and_different_from_the_others() {
        let rendered: Vec<Arc<[f32]>> = (0..CUES.len()).map(|i| samples(i).expect("cue")).collect();
        for (cue, samples) in CUES.iter().zip(&rendered) {
            let seconds = samples.len() as f32 / synth::RATE as f32;
            assert!((0.1..=2.0).contains(&seconds), "{}: {seconds} s", cue.name);
            let rms = (samples.iter().map(|s| s * s).sum::<f32>() / samples.len() as f32).sqrt();
            assert!(rms > 0.05, "{}: rms {rms}", cue.name);
        }
        for i in 0..rendered.len() {
            for j in i + 1..rendered.len() {
                assert_ne!(
                    rendered[i], rendered[j],
                    "{} = {}",
                    CUES[i].name, CUES[j].name
                );
            }
        }
    }
}
