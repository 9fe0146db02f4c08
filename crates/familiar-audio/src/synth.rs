//! The small chiptune synthesizer the built-in cues are made with ([`crate::cues`] holds the
//! scores). Pure: a score in, mono `f32` samples at [`RATE`] out, the same every time.
//!
//! Voices are the classic sound-chip ones: pulse waves with a duty cycle, a triangle, and
//! noise from a 15-bit shift register. Each note has a short attack and release (no clicks),
//! an optional pitch slide and vibrato. The mix goes through a gentle one-pole low-pass (the
//! raw edges of a square wave are shrill in headphones) and is scaled to a common peak.

/// Sample rate of rendered cues.
pub const RATE: u32 = 48_000;

/// Peak level every cue is scaled to, before the user's volume (headroom for mixing).
pub const PEAK: f32 = 0.5;

/// The shape of a voice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wave {
    /// Pulse wave; the duty cycle is the high part of a period (0.125, 0.25, 0.5).
    Pulse(f32),
    Triangle,
    /// Noise from a 15-bit linear-feedback shift register clocked at the note's frequency.
    Noise,
}

/// One note of a score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Note {
    pub wave: Wave,
    /// Start, in milliseconds from the beginning of the cue.
    pub at_ms: u32,
    /// Length in milliseconds, release included.
    pub ms: u32,
    /// Pitch at the start, in Hz.
    pub hz: f32,
    /// Pitch at the end (a slide), in Hz; equal to `hz` for a steady note.
    pub to_hz: f32,
    /// Loudness of this voice, 0..1.
    pub level: f32,
    /// Vibrato depth in semitones (6 Hz), 0 for none.
    pub vibrato: f32,
}

impl Note {
    /// A steady note on a MIDI key (69 = A4 = 440 Hz).
    pub const fn key(wave: Wave, at_ms: u32, ms: u32, key: u8, level: f32) -> Note {
        let hz = key_hz(key);
        Note {
            wave,
            at_ms,
            ms,
            hz,
            to_hz: hz,
            level,
            vibrato: 0.0,
        }
    }

    /// The same note sliding to `to_hz` over its length.
    pub const fn slide(mut self, to_hz: f32) -> Note {
        self.to_hz = to_hz;
        self
    }

    /// The same note with vibrato.
    pub const fn wobble(mut self, semitones: f32) -> Note {
        self.vibrato = semitones;
        self
    }
}

/// Frequency of a MIDI key, equal temperament: 440 × 2^((key − 69) / 12).
pub const fn key_hz(key: u8) -> f32 {
    // Const fns cannot call powf: multiply up or down by semitone ratios from A4.
    const SEMITONE: f32 = 1.059_463_1;
    let mut hz = 440.0;
    let mut k = 69;
    while k < key {
        hz *= SEMITONE;
        k += 1;
    }
    while k > key {
        hz /= SEMITONE;
        k -= 1;
    }
    hz
}

const ATTACK_MS: f32 = 4.0;
const RELEASE_MS: f32 = 30.0;
/// Level a held note decays to after its attack (chip-like pluck).
const SUSTAIN: f32 = 0.6;
const DECAY_MS: f32 = 80.0;
const VIBRATO_HZ: f32 = 6.0;
/// Cutoff of the smoothing low-pass.
const LOWPASS_HZ: f32 = 5_000.0;

/// Render a score to mono samples at [`RATE`], peak-normalized to [`PEAK`].
pub fn render(notes: &[Note]) -> Vec<f32> {
    let end_ms = notes.iter().map(|n| n.at_ms + n.ms).max().unwrap_or(0);
    let mut out = vec![0.0f32; samples_for(end_ms)];
    for note in notes {
        add_note(&mut out, note);
    }
    lowpass(&mut out);
    let peak = out.iter().fold(0.0f32, |m, s| m.max(s.abs()));
    if peak > 0.0 {
        let gain = PEAK / peak;
        out.iter_mut().for_each(|s| *s *= gain);
    }
    out
}

fn samples_for(ms: u32) -> usize {
    (u64::from(ms) * u64::from(RATE) / 1000) as usize
}

fn add_note(out: &mut [f32], note: &Note) {
    let start = samples_for(note.at_ms);
    let len = samples_for(note.ms);
    let rate = RATE as f32;
    let mut phase = 0.0f32;
    let mut lfsr: u16 = 1;
    let mut noise = 1.0f32;
    for i in 0..len {
        let Some(slot) = out.get_mut(start + i) else {
            break;
        };
        let t = i as f32 / rate;
        let progress = i as f32 / len as f32;
        // Exponential slide: equal musical steps per unit of time.
        let mut hz = note.hz * (note.to_hz / note.hz).powf(progress);
        if note.vibrato > 0.0 {
            let bend = note.vibrato * (std::f32::consts::TAU * VIBRATO_HZ * t).sin();
            hz *= (bend / 12.0).exp2();
        }
        let previous = phase;
        phase = (phase + hz / rate).fract();
        let value = match note.wave {
            Wave::Pulse(duty) => {
                if phase < duty {
                    1.0
                } else {
                    -1.0
                }
            }
            Wave::Triangle => 1.0 - 4.0 * (phase - 0.5).abs(),
            Wave::Noise => {
                // One shift per period, as the NES noise channel does.
                if phase < previous {
                    let bit = (lfsr ^ (lfsr >> 1)) & 1;
                    lfsr = (lfsr >> 1) | (bit << 14);
                    noise = if lfsr & 1 == 1 { 1.0 } else { -1.0 };
                }
                noise
            }
        };
        *slot += value * note.level * envelope(i as f32 * 1000.0 / rate, note.ms as f32);
    }
}

/// Attack, decay to the sustain level, release at the end: 0..1.
fn envelope(ms: f32, length_ms: f32) -> f32 {
    let attack = (ms / ATTACK_MS).min(1.0);
    let decay = if ms < ATTACK_MS {
        1.0
    } else {
        SUSTAIN + (1.0 - SUSTAIN) * (-(ms - ATTACK_MS) / DECAY_MS).exp()
    };
    let release = ((length_ms - ms) / RELEASE_MS).clamp(0.0, 1.0);
    attack * decay * release
}

fn lowpass(samples: &mut [f32]) {
    let dt = 1.0 / RATE as f32;
    let rc = 1.0 / (std::f32::consts::TAU * LOWPASS_HZ);
    let alpha = dt / (rc + dt);
    let mut state = 0.0f32;
    for sample in samples {
        state += alpha * (*sample - state);
        *sample = state;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a4_is_440_hz_and_octaves_double() {
        assert!((key_hz(69) - 440.0).abs() < 0.01);
        assert!((key_hz(81) - 880.0).abs() < 0.05);
        assert!((key_hz(57) - 220.0).abs() < 0.05);
    }

    #[test]
    fn a_note_renders_its_length_at_its_pitch_peaking_at_the_common_level() {
        let samples = render(&[Note::key(Wave::Pulse(0.5), 0, 200, 69, 1.0)]);
        assert_eq!(samples.len(), RATE as usize / 5);
        let peak = samples.iter().fold(0.0f32, |m, s| m.max(s.abs()));
        assert!((peak - PEAK).abs() < 1e-4, "peak {peak}");
        // 440 Hz square: 88 upward zero crossings in 0.2 s (give or take the edges).
        let ups = samples
            .windows(2)
            .filter(|w| w[0] < 0.0 && w[1] >= 0.0)
            .count();
        assert!((86..=90).contains(&ups), "{ups} crossings");
    }

    #[test]
    fn notes_start_and_end_without_a_click() {
        let samples = render(&[Note::key(Wave::Pulse(0.5), 0, 100, 60, 1.0)]);
        assert!(samples[0].abs() < 0.05 && samples[samples.len() - 1].abs() < 0.05);
    }

    #[test]
    fn a_slide_glides_from_its_start_pitch_to_its_target() {
        let note = Note::key(Wave::Triangle, 0, 500, 57, 1.0).slide(880.0);
        let samples = render(&[note]);
        let ups = |part: &[f32]| {
            part.windows(2)
                .filter(|w| w[0] < 0.0 && w[1] >= 0.0)
                .count()
        };
        // First 100 ms: 220 → 252 Hz; last 100 ms: 666 → 880 Hz (exponential glide).
        let first = ups(&samples[..4_800]);
        let last = ups(&samples[samples.len() - 4_800..]);
        assert!((20..=27).contains(&first), "{first} crossings at the start");
        assert!((68..=80).contains(&last), "{last} crossings at the end");
    }
}
