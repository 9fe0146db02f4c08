//! The familiar's animation state machine, as plain data so it is tested without Bevy.
//!
//! Scripts ask for animations much faster than a person can read them (a burst of tool calls
//! arrives in the same frame). Each animation therefore has a priority and a minimum duration:
//! a request of higher priority interrupts at once, anything else waits (only the most important
//! pending request is kept) until the current animation has shown for its minimum time. After
//! its hold time an animation falls back to idle; a long quiet spell (or the tailer's `idle`
//! status) puts the familiar to sleep. `logic.rs` owns one [`AnimMachine`] per familiar; `view.rs`
//! turns [`AnimMachine::frame`] into a sprite-sheet index laid out by `sheet::SHEET`.

/// The familiar's animations, in sprite-sheet row order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Anim {
    Idle,
    Enter,
    /// Reading.
    Cast,
    /// Bash.
    Attack,
    Write,
    Think,
    /// Success.
    Victory,
    /// Error.
    Hurt,
    /// Rejected or interrupted.
    Blocked,
    /// Compaction (and sleep).
    Rest,
    /// Waiting for approval: a raised paw and a `!` bubble, held while the status lasts.
    Ask,
}

impl Anim {
    pub const ALL: [Anim; 11] = [
        Anim::Idle,
        Anim::Enter,
        Anim::Cast,
        Anim::Attack,
        Anim::Write,
        Anim::Think,
        Anim::Victory,
        Anim::Hurt,
        Anim::Blocked,
        Anim::Rest,
        Anim::Ask,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Anim::Idle => "idle",
            Anim::Enter => "enter",
            Anim::Cast => "cast",
            Anim::Attack => "attack",
            Anim::Write => "write",
            Anim::Think => "think",
            Anim::Victory => "victory",
            Anim::Hurt => "hurt",
            Anim::Blocked => "blocked",
            Anim::Rest => "rest",
            Anim::Ask => "ask",
        }
    }

    /// The name a script passes to `animate(name)`; a few event-kind aliases are accepted so
    /// `animate(ev.kind)`-style scripts work too.
    pub fn parse(name: &str) -> Option<Anim> {
        let name = name.trim().to_ascii_lowercase();
        Some(match name.as_str() {
            "idle" => Anim::Idle,
            "enter" | "session_start" => Anim::Enter,
            "cast" | "read" | "reading" => Anim::Cast,
            "attack" | "bash" => Anim::Attack,
            "write" | "writing" => Anim::Write,
            "think" | "thinking" => Anim::Think,
            "victory" | "success" => Anim::Victory,
            "hurt" | "error" => Anim::Hurt,
            "blocked" | "rejected" | "interrupted" => Anim::Blocked,
            "rest" | "sleep" | "compact" | "compact_boundary" => Anim::Rest,
            "ask" | "approval" | "waiting_for_approval" => Anim::Ask,
            _ => return None,
        })
    }

    /// Sprite-sheet row.
    pub fn row(self) -> usize {
        Anim::ALL.iter().position(|a| *a == self).unwrap_or(0)
    }

    /// Higher interrupts lower before its minimum duration is up.
    pub fn priority(self) -> u8 {
        match self {
            Anim::Idle => 0,
            Anim::Think => 1,
            Anim::Cast | Anim::Write | Anim::Attack => 2,
            Anim::Enter | Anim::Victory | Anim::Ask => 3,
            Anim::Rest | Anim::Blocked => 4,
            Anim::Hurt => 5,
        }
    }

    /// Shortest time on screen before a request of the same or lower priority may replace it.
    pub fn min_secs(self) -> f32 {
        match self {
            Anim::Idle => 0.0,
            Anim::Cast | Anim::Write => 0.6,
            Anim::Attack => 0.5,
            Anim::Think => 0.8,
            Anim::Enter | Anim::Hurt | Anim::Blocked | Anim::Ask => 0.8,
            Anim::Victory => 1.2,
            Anim::Rest => 2.0,
        }
    }

    /// How long it plays without new requests before falling back to idle.
    pub fn hold_secs(self) -> f32 {
        match self {
            Anim::Idle => f32::INFINITY,
            Anim::Cast | Anim::Write | Anim::Attack | Anim::Think => 2.0,
            Anim::Enter => 1.0,
            Anim::Hurt => 1.0,
            Anim::Blocked => 1.2,
            Anim::Victory => 1.6,
            Anim::Rest | Anim::Ask => 3.0,
        }
    }

    /// Whether the frames loop while the animation holds (the entrance plays once).
    pub fn loops(self) -> bool {
        self != Anim::Enter
    }
}

/// Seconds of idle breathing before the familiar holds still (low power).
pub const CALM_AFTER: f32 = 8.0;

/// One familiar's animation state.
#[derive(Debug, Clone, PartialEq)]
pub struct AnimMachine {
    current: Anim,
    /// Seconds since `current` started.
    elapsed: f32,
    pending: Option<Anim>,
    sleeping: bool,
    /// Seconds of idle so far (a familiar idle for a while holds still).
    idle_for: f32,
    /// The session went idle while an animation played: sleep once it is over.
    sleep_requested: bool,
    /// The session waits for approval: when nothing else plays, the familiar asks.
    asking: bool,
    /// Counts what changes the animation on screen (starts, sleep, asking), so
    /// [`AnimMachine::take_started`] reports each start once.
    generation: u32,
    /// `generation` when `take_started` last looked.
    reported: Option<u32>,
}

impl Default for AnimMachine {
    fn default() -> AnimMachine {
        AnimMachine::new()
    }
}

impl AnimMachine {
    /// A machine that starts with the entrance. It falls asleep only when told
    /// ([`AnimMachine::sleep`]): the session model decides when a session is idle, and the
    /// game keeps no clock of its own for that.
    pub fn new() -> AnimMachine {
        AnimMachine {
            current: Anim::Enter,
            elapsed: 0.0,
            pending: None,
            sleeping: false,
            idle_for: 0.0,
            sleep_requested: false,
            asking: false,
            generation: 0,
            reported: None,
        }
    }

    /// A machine already asleep, for a session that was idle before the window opened (no
    /// entrance: it was there all along).
    pub fn asleep() -> AnimMachine {
        AnimMachine {
            current: Anim::Idle,
            sleeping: true,
            ..AnimMachine::new()
        }
    }

    /// The animation on screen (sleep shows as `Rest`; idle while waiting for approval shows
    /// as `Ask`).
    pub fn current(&self) -> Anim {
        if self.sleeping {
            Anim::Rest
        } else if self.asking && self.current == Anim::Idle {
            Anim::Ask
        } else {
            self.current
        }
    }

    /// The session waits for approval (`true`) or no longer does: between other animations
    /// the familiar holds up its paw under a `!` until the status changes.
    pub fn ask(&mut self, asking: bool) {
        if asking && self.sleeping {
            self.sleeping = false;
            self.start(Anim::Idle);
        }
        if asking {
            self.sleep_requested = false;
        }
        if self.asking != asking && self.current == Anim::Idle {
            self.generation += 1;
        }
        self.asking = asking;
    }

    pub fn asking(&self) -> bool {
        self.asking
    }

    /// The animation that started on screen since the last call, if any (the one showing
    /// now: of a burst within one frame only the last counts): its burst of particles starts.
    pub fn take_started(&mut self) -> Option<Anim> {
        if self.reported == Some(self.generation) {
            return None;
        }
        self.reported = Some(self.generation);
        Some(self.current())
    }

    pub fn pending(&self) -> Option<Anim> {
        self.pending
    }

    pub fn sleeping(&self) -> bool {
        self.sleeping
    }

    pub fn elapsed(&self) -> f32 {
        self.elapsed
    }

    /// Idle for a while (or asleep): the familiar holds still, so the window may wake only
    /// for timers. Before that it breathes at the idle animation's rate.
    pub fn calm(&self) -> bool {
        self.sleeping
            || (self.current == Anim::Idle && self.pending.is_none() && self.idle_for >= CALM_AFTER)
    }

    /// Seconds until the machine changes by itself (falls back to idle, or asleep).
    pub fn next_change(&self) -> f32 {
        if self.sleeping {
            f32::INFINITY
        } else if self.current == Anim::Idle {
            if self.sleep_requested {
                0.0
            } else if self.idle_for < CALM_AFTER {
                CALM_AFTER - self.idle_for
            } else {
                f32::INFINITY
            }
        } else {
            (self.current.hold_secs() - self.elapsed).max(0.0)
        }
    }

    /// Idle or asleep: nothing moves much, so the window may drop to a low frame rate.
    pub fn settled(&self) -> bool {
        self.sleeping || (self.current == Anim::Idle && self.pending.is_none())
    }

    /// A script asked for `anim`.
    pub fn request(&mut self, anim: Anim) {
        self.sleep_requested = false;
        if self.sleeping {
            // Anything wakes the familiar at once.
            self.sleeping = false;
            self.start(anim);
            return;
        }
        let cur = self.current;
        if cur == Anim::Idle || self.elapsed >= cur.min_secs() || anim.priority() > cur.priority() {
            self.start(anim);
        } else if anim == cur {
            // Same animation again: keep playing it, and hold it longer.
            self.elapsed = self.elapsed.min(cur.min_secs());
        } else {
            let keep_old = self.pending.is_some_and(|p| p.priority() > anim.priority());
            if !keep_old {
                self.pending = Some(anim);
            }
        }
    }

    /// Falls asleep (the session model said the agent is idle): now, or once the current
    /// animation is over.
    pub fn sleep(&mut self) {
        if !self.sleeping && self.current.priority() <= Anim::Idle.priority() {
            self.sleeping = true;
            self.elapsed = 0.0;
            self.generation += 1;
        } else if !self.sleeping {
            self.sleep_requested = true;
        }
    }

    /// Wakes without a new animation (the agent started working again).
    pub fn wake(&mut self) {
        self.sleep_requested = false;
        if self.sleeping {
            self.sleeping = false;
            self.start(Anim::Idle);
        }
    }

    fn start(&mut self, anim: Anim) {
        self.generation += 1;
        self.current = anim;
        self.elapsed = 0.0;
        self.pending = None;
        if anim != Anim::Idle {
            self.idle_for = 0.0;
        }
    }

    /// Advances time by `dt` seconds.
    pub fn tick(&mut self, dt: f32) {
        let dt = dt.max(0.0);
        self.elapsed += dt;
        if self.sleeping {
            return;
        }
        let cur = self.current;
        if let Some(next) = self.pending
            && self.elapsed >= cur.min_secs()
        {
            self.start(next);
            return;
        }
        if self.elapsed >= cur.hold_secs() {
            self.start(Anim::Idle);
            return;
        }
        if cur == Anim::Idle {
            self.idle_for += dt;
            if self.sleep_requested {
                self.sleep_requested = false;
                self.sleeping = true;
                self.elapsed = 0.0;
                self.generation += 1;
            }
        }
    }

    /// Frame of the current animation for a row of `frames` frames at `fps`.
    pub fn frame(&self, frames: u32, fps: f32) -> u32 {
        let frames = frames.max(1);
        let n = (self.elapsed * fps).max(0.0) as u32;
        if self.current().loops() {
            n % frames
        } else {
            n.min(frames - 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settled_machine() -> AnimMachine {
        let mut m = AnimMachine::new();
        m.tick(2.0);
        assert_eq!(m.current(), Anim::Idle);
        m
    }

    #[test]
    fn names_round_trip() {
        for a in Anim::ALL {
            assert_eq!(Anim::parse(a.name()), Some(a));
        }
        assert_eq!(Anim::parse("Bash"), Some(Anim::Attack));
        assert_eq!(Anim::parse("dance"), None);
    }

    #[test]
    fn starts_with_the_entrance_then_idles() {
        let mut m = AnimMachine::new();
        assert_eq!(m.current(), Anim::Enter);
        m.tick(0.5);
        assert_eq!(m.current(), Anim::Enter);
        m.tick(0.6);
        assert_eq!(m.current(), Anim::Idle);
    }

    #[test]
    fn a_burst_waits_for_the_minimum_duration() {
        let mut m = settled_machine();
        m.request(Anim::Cast);
        m.tick(0.1);
        m.request(Anim::Write);
        assert_eq!(m.current(), Anim::Cast, "same priority must not cut in");
        assert_eq!(m.pending(), Some(Anim::Write));
        m.tick(0.3);
        assert_eq!(m.current(), Anim::Cast);
        m.tick(0.3);
        assert_eq!(m.current(), Anim::Write);
    }

    #[test]
    fn higher_priority_interrupts_at_once() {
        let mut m = settled_machine();
        m.request(Anim::Cast);
        m.tick(0.1);
        m.request(Anim::Hurt);
        assert_eq!(m.current(), Anim::Hurt);
        m.request(Anim::Think);
        assert_eq!(m.current(), Anim::Hurt, "lower priority waits");
        m.tick(0.9);
        assert_eq!(m.current(), Anim::Think);
    }

    #[test]
    fn the_most_important_pending_request_wins() {
        let mut m = settled_machine();
        m.request(Anim::Victory);
        m.request(Anim::Cast);
        m.request(Anim::Enter);
        m.request(Anim::Think);
        assert_eq!(m.pending(), Some(Anim::Enter));
    }

    #[test]
    fn falls_back_to_idle_after_the_hold() {
        let mut m = settled_machine();
        m.request(Anim::Attack);
        m.tick(1.9);
        assert_eq!(m.current(), Anim::Attack);
        m.tick(0.2);
        assert_eq!(m.current(), Anim::Idle);
    }

    #[test]
    fn sleeps_only_when_told_and_wakes_on_request() {
        let mut m = AnimMachine::new();
        m.tick(1.1);
        for _ in 0..600 {
            m.tick(1.0);
        }
        assert!(!m.sleeping(), "no clock of its own puts it to sleep");
        m.request(Anim::Cast);
        m.sleep();
        assert!(!m.sleeping(), "the cast finishes first");
        for _ in 0..5 {
            m.tick(1.0);
        }
        assert!(m.sleeping());
        assert_eq!(m.current(), Anim::Rest);
        m.request(Anim::Cast);
        assert!(!m.sleeping());
        assert_eq!(m.current(), Anim::Cast);
    }

    #[test]
    fn calms_down_after_a_while_idle() {
        let mut m = settled_machine();
        assert!(!m.calm(), "breathes first");
        assert!((m.next_change() - CALM_AFTER).abs() < 1.0);
        m.tick(CALM_AFTER);
        assert!(m.calm());
        m.request(Anim::Think);
        assert!(!m.calm());
        assert!((m.next_change() - 2.0).abs() < 1e-3);
    }

    #[test]
    fn frames_loop_or_stop() {
        let mut m = settled_machine();
        m.request(Anim::Cast);
        m.tick(0.6); // 4.8 frames at 8 fps
        assert_eq!(m.frame(4, 8.0), 0);
        let mut e = AnimMachine::new();
        e.tick(0.9);
        assert_eq!(e.frame(6, 8.0), 5, "the entrance holds its last frame");
    }

    #[test]
    fn asking_shows_between_animations_and_each_start_is_reported_once() {
        let mut m = settled_machine();
        m.take_started();
        m.ask(true);
        assert_eq!(m.current(), Anim::Ask);
        assert_eq!(m.take_started(), Some(Anim::Ask));
        assert_eq!(m.take_started(), None, "once");
        m.request(Anim::Victory);
        assert_eq!(m.current(), Anim::Victory);
        m.request(Anim::Cast);
        assert_eq!(m.take_started(), Some(Anim::Victory), "the one on screen");
        m.tick(3.0);
        m.tick(3.0);
        assert_eq!(m.current(), Anim::Ask);
        m.ask(false);
        assert_eq!(m.current(), Anim::Idle);
    }
}
