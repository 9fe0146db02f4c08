//! The reacting world as plain data, tested without Bevy: the sky's look for the local hour
//! and the weather, the weather that errors bring and success clears, and the particles of
//! the effects (a victory's confetti, an error's sparks, the motes of "think hard" and
//! "ultrathink").
//!
//! `logic::reactions` keeps a [`Weather`] and each familiar's effects from the session model's
//! events; `view::backdrop` and `view::effects` draw them through the functions here. The hour is
//! wall-clock local time read by the view (presentation, not session state), so [`sky`] is a
//! pure function of `(hour, gloom)`.

/// The scene of the work going on: the far hills dressed for it (`scenes.png`, drawn by
/// `view::scene_of_work`), chosen by the main agents' latest work ([`WorkScene::after`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WorkScene {
    /// The open hills: before any work, and once a turn is done.
    #[default]
    Open,
    /// Hills of books: reading or writing files.
    Library,
    /// A forge: running commands.
    Forge,
}

impl WorkScene {
    /// The scenes with an overlay, in their row order in `scenes.png`.
    pub const OVERLAID: [WorkScene; 2] = [WorkScene::Library, WorkScene::Forge];

    /// The scene after a main agent's event of `kind`: reading and writing make the library,
    /// a command the forge, a finished turn (success) the open hills again; anything else
    /// (thinking, a tool, a prompt) keeps the scene as it is.
    pub fn after(self, kind: familiar_model::EventKind) -> WorkScene {
        use familiar_model::EventKind;
        match kind {
            EventKind::Reading | EventKind::Writing => WorkScene::Library,
            EventKind::Bash => WorkScene::Forge,
            EventKind::Success => WorkScene::Open,
            _ => self,
        }
    }

    /// Its row in `scenes.png`, `None` for the open hills.
    pub fn row(self) -> Option<usize> {
        WorkScene::OVERLAID.iter().position(|s| *s == self)
    }
}

/// The phase of the day, in the row order of `sheet::SKY` (the backdrops).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    Night,
    Dawn,
    Day,
    Dusk,
}

impl Phase {
    pub const ALL: [Phase; 4] = [Phase::Night, Phase::Dawn, Phase::Day, Phase::Dusk];

    /// The phase at local `hour` (0..24, fractions allowed; wraps): dawn 5-8, day 8-17,
    /// dusk 17-20, night 20-5.
    pub fn at(hour: f32) -> Phase {
        let h = hour.rem_euclid(24.0);
        if !h.is_finite() || h < 5.0 {
            Phase::Night
        } else if h < 8.0 {
            Phase::Dawn
        } else if h < 17.0 {
            Phase::Day
        } else if h < 20.0 {
            Phase::Dusk
        } else {
            Phase::Night
        }
    }

    /// Index of its backdrop in `sheet::SKY`.
    pub fn index(self) -> usize {
        Phase::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }
}

/// How the sky looks: which backdrop, the light multiplied over it, its clouds and rain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkyLook {
    pub phase: Phase,
    /// Multiplied over the backdrop (1.0 = as drawn): weather darkens and greys it.
    pub light: [f32; 3],
    /// Clouds drifting over the sky, 0..=MAX_CLOUDS.
    pub clouds: usize,
    /// Dark rain clouds instead of light ones, and rain falling.
    pub rain: bool,
}

pub const MAX_CLOUDS: usize = 5;
/// Gloom from which it rains.
pub const RAIN_GLOOM: f32 = 0.5;

/// The sky for local `hour` and weather `gloom` (0 clear .. 1 storm).
pub fn sky(hour: f32, gloom: f32) -> SkyLook {
    let g = if gloom.is_finite() {
        gloom.clamp(0.0, 1.0)
    } else {
        0.0
    };
    // A storm greys the light towards slate, more by day (night is dark already).
    let phase = Phase::at(hour);
    let storm = match phase {
        Phase::Night => [0.70, 0.70, 0.78],
        _ => [0.55, 0.58, 0.68],
    };
    let light = [
        1.0 + (storm[0] - 1.0) * g,
        1.0 + (storm[1] - 1.0) * g,
        1.0 + (storm[2] - 1.0) * g,
    ];
    SkyLook {
        phase,
        light,
        clouds: (g * MAX_CLOUDS as f32).ceil() as usize,
        rain: g >= RAIN_GLOOM,
    }
}

/// The weather follows the work: each error clouds it over, a success clears it, and it
/// clears slowly by itself.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Weather {
    /// 0 clear .. 1 storm.
    pub gloom: f32,
    /// Seconds since a success cleared the sky, while its light shines.
    pub sunshine: Option<f32>,
}

/// How long a success's light shines.
pub const SUNSHINE_SECS: f32 = 2.5;
/// Seconds for a full storm to clear by itself.
pub const CLEAR_SECS: f32 = 90.0;

/// What went wrong, for the weather and the hurt effect (the session model's `error` kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trouble {
    /// A tool failed.
    Tool,
    /// The API failed (overloaded, rate limit, server error).
    Api,
}

impl Weather {
    /// An error: tool failures cloud the sky a little, API failures more.
    pub fn error(&mut self, trouble: Trouble) {
        let step = match trouble {
            Trouble::Tool => 0.2,
            Trouble::Api => 0.35,
        };
        self.gloom = (self.gloom + step).min(1.0);
        self.sunshine = None;
    }

    /// A success clears the sky at once, with a moment of light.
    pub fn success(&mut self) {
        self.gloom = 0.0;
        self.sunshine = Some(0.0);
    }

    /// Advances `dt` seconds.
    pub fn tick(&mut self, dt: f32) {
        let dt = dt.max(0.0);
        self.gloom = (self.gloom - dt / CLEAR_SECS).max(0.0);
        if let Some(age) = self.sunshine.as_mut() {
            *age += dt;
            if *age >= SUNSHINE_SECS {
                self.sunshine = None;
            }
        }
    }

    /// Whether something moves in the sky (rain falls, light shines): the window must draw
    /// at full rate. Clouds alone hold still.
    pub fn moving(&self) -> bool {
        self.gloom >= RAIN_GLOOM || self.sunshine.is_some()
    }
}

/// A one-off burst of particles around a familiar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Burst {
    /// A victory: confetti thrown up.
    Confetti,
    /// A tool error: red and gold sparks.
    Sparks,
    /// An API error: electric blue crackle.
    Crackle,
}

/// One particle to draw: offset from the familiar's centre in art pixels (y up), colour with
/// alpha, and its side in art pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Particle {
    pub x: f32,
    pub y: f32,
    pub color: [u8; 4],
    pub size: f32,
}

/// Particle slots a familiar keeps for its effects (the most any effect uses at once).
pub const PARTICLE_SLOTS: usize = 48;

impl Burst {
    /// How many particles it throws.
    pub fn count(self) -> usize {
        match self {
            Burst::Confetti => 20,
            Burst::Sparks => 10,
            Burst::Crackle => 14,
        }
    }

    /// How long it lasts, seconds.
    pub fn secs(self) -> f32 {
        match self {
            Burst::Confetti => 1.6,
            Burst::Sparks => 0.6,
            Burst::Crackle => 0.8,
        }
    }

    /// Particle `i` at `age` seconds, `None` once over (or past [`Burst::count`]).
    pub fn particle(self, i: usize, age: f32) -> Option<Particle> {
        if i >= self.count() || !(0.0..self.secs()).contains(&age) {
            return None;
        }
        let r = |k: u32| unit(i as u32 * 7 + k);
        let fade = 1.0 - age / self.secs();
        Some(match self {
            Burst::Confetti => {
                const COLORS: [[u8; 3]; 5] = [
                    [255, 214, 80],
                    [255, 110, 150],
                    [120, 230, 140],
                    [110, 190, 255],
                    [200, 150, 255],
                ];
                let vx = (r(1) - 0.5) * 60.0;
                let vy = 45.0 + r(2) * 45.0;
                let c = COLORS[i % COLORS.len()];
                Particle {
                    x: vx * age,
                    y: 6.0 + vy * age - 70.0 * age * age,
                    color: [c[0], c[1], c[2], (255.0 * fade.min(0.5) * 2.0) as u8],
                    size: 1.0 + (i % 2) as f32,
                }
            }
            Burst::Sparks | Burst::Crackle => {
                let a = std::f32::consts::TAU * (i as f32 + r(3) * 0.5) / self.count() as f32;
                let speed = 30.0 + r(4) * 25.0;
                let dist = speed * age;
                let (c, jitter) = if self == Burst::Sparks {
                    (
                        if i.is_multiple_of(2) {
                            [240, 64, 72]
                        } else {
                            [255, 214, 80]
                        },
                        0.0,
                    )
                } else {
                    // Crackle jumps about: it reads as electric, not as a spray.
                    let j = if ((age * 20.0) as usize + i).is_multiple_of(2) {
                        2.0
                    } else {
                        -2.0
                    };
                    (
                        if i.is_multiple_of(3) {
                            [255, 255, 255]
                        } else {
                            [120, 210, 255]
                        },
                        j,
                    )
                };
                Particle {
                    x: dist * a.cos() + jitter,
                    y: 2.0 + dist * a.sin(),
                    color: [c[0], c[1], c[2], (255.0 * fade) as u8],
                    size: 1.0 + ((i + 1) % 2) as f32,
                }
            }
        })
    }
}

/// Motes around a familiar that thinks hard (`think` 2) or ultrathinks (3): how many.
/// Plain thinking (1, or none) has none: the think animation says it.
pub fn aura_count(think: u8) -> usize {
    match think {
        0 | 1 => 0,
        2 => 10,
        _ => 26,
    }
}

/// Mote `i` of the aura of `think` at `t` seconds: motes rise around the head in a loop,
/// pale blue for "think hard", more, bigger and golden-violet for "ultrathink".
pub fn aura_particle(think: u8, i: usize, t: f32) -> Option<Particle> {
    let n = aura_count(think);
    if i >= n {
        return None;
    }
    let r = |k: u32| unit(i as u32 * 13 + k);
    let period = 1.6 + r(1) * 0.8;
    let phase = ((t / period) + r(2)).fract();
    let ultra = think >= 3;
    let width = if ultra { 22.0 } else { 16.0 };
    let x = (r(3) - 0.5) * 2.0 * width + (phase * 6.0 + r(4) * 6.0).sin() * 2.0;
    let y = 4.0 + phase * if ultra { 30.0 } else { 22.0 };
    // Fade in and out over the loop.
    let alpha = (phase * (1.0 - phase) * 4.0).clamp(0.0, 1.0);
    let color = if ultra {
        if i.is_multiple_of(3) {
            [200, 150, 255]
        } else {
            [255, 230, 120]
        }
    } else {
        [150, 205, 255]
    };
    let peak = if ultra { 255.0 } else { 170.0 };
    Some(Particle {
        x,
        y,
        color: [color[0], color[1], color[2], (peak * alpha) as u8],
        size: if ultra { 1.0 + (i % 2) as f32 } else { 1.0 },
    })
}

/// Seconds a companion takes to walk in, or out.
pub const COMPANION_WALK_SECS: f32 = 1.2;
/// Seconds of the puff in which a companion appears (at the start of its walk in) or vanishes
/// (at the end of its walk out).
const PUFF_SECS: f32 = 0.3;

/// Where a companion is on its walk in or out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Walk {
    /// 0 at its place beside the familiar .. 1 at the edge of the scene it comes from.
    pub away: f32,
    /// Frame (0..4) of the puff it appears or vanishes in, while it does.
    pub puff: Option<usize>,
}

/// A companion of `age` seconds, leaving for `leaving` seconds if it is: it appears in a
/// puff a little way off, walks in, works beside the familiar, then walks off and vanishes.
pub fn companion_walk(age: f32, leaving: Option<f32>) -> Walk {
    let ease = |t: f32| {
        let t = t.clamp(0.0, 1.0);
        t * t * (3.0 - 2.0 * t)
    };
    let frame = |t: f32| ((t / PUFF_SECS) * 4.0).clamp(0.0, 3.0) as usize;
    if let Some(left) = leaving {
        let walk = COMPANION_WALK_SECS - PUFF_SECS;
        let vanish = left - walk;
        Walk {
            away: ease(left / walk),
            puff: (vanish >= 0.0).then(|| 3 - frame(vanish)),
        }
    } else if age < PUFF_SECS {
        Walk {
            away: 1.0,
            puff: Some(frame(age)),
        }
    } else {
        Walk {
            away: 1.0 - ease((age - PUFF_SECS) / (COMPANION_WALK_SECS - PUFF_SECS)),
            puff: None,
        }
    }
}

/// A deterministic pseudo-random value in 0..1 for `seed` (particles look scattered but
/// the same on every run, so screenshots compare).
fn unit(seed: u32) -> f32 {
    let mut x = seed.wrapping_mul(0x9E37_79B9) ^ 0x85EB_CA6B;
    x ^= x >> 15;
    x = x.wrapping_mul(0x2C1B_3C6D);
    x ^= x >> 12;
    (x & 0xFFFF) as f32 / 65_536.0
}

#[cfg(test)]
mod work_scene_tests {
    use super::*;
    use familiar_model::EventKind;

    #[test]
    fn the_scene_follows_the_work_and_opens_when_a_turn_is_done() {
        let s = WorkScene::default();
        assert_eq!(s, WorkScene::Open);
        let s = s.after(EventKind::Reading);
        assert_eq!(s, WorkScene::Library);
        // Thinking and other tools keep the scene.
        assert_eq!(s.after(EventKind::Thinking), WorkScene::Library);
        assert_eq!(s.after(EventKind::Tool), WorkScene::Library);
        let s = s.after(EventKind::Bash);
        assert_eq!(s, WorkScene::Forge);
        assert_eq!(s.after(EventKind::Writing), WorkScene::Library);
        assert_eq!(s.after(EventKind::Success), WorkScene::Open);
        assert_eq!(WorkScene::Open.row(), None);
        assert_eq!(WorkScene::Forge.row(), Some(1));
    }
}
