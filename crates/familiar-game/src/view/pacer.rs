//! When the window draws while it animates (issue 31): the feed bridge's thread wakes the event
//! loop for each animation frame and for feed input, by this plan, while Bevy's own timer
//! waits far longer (`power`).
//!
//! Why the bridge and not Bevy's timer: Bevy's reactive mode waits `wait` from the last timed
//! frame, and a frame woken early (for input) neither moves that timer nor may change `wait`
//! without a further frame at once (a changed update mode makes Bevy 0.19 request a redraw,
//! which runs the app again). So with Bevy's timer at one animation frame, input could either
//! wait for the next animation frame (up to 62.5 ms: append → drawn frame p99 77 ms, above the
//! issue's 70 ms) or add a frame per item (at 3 sessions and 6 items a second, 7 of 27 frames a
//! second were such wake-ups). Woken only by the bridge, the loop draws exactly the frames
//! planned here:
//! - an animation frame every [`ANIMATION_FRAME`] while the window animates;
//! - for a burst of items arriving meanwhile, a frame no sooner than [`INPUT_FRAME_GAP`] after
//!   the frame before: it stands for the next animation frame, which then comes an animation
//!   frame after the one it replaced (no frame added; that one interval grows, to at most 1.5
//!   animation frames). Another burst before then gets a frame of its own, as far apart;
//! - while [`DENSE_INPUTS`] bursts came in the last [`DENSE_WINDOW`] (12 a second, three for
//!   every four animation frames), none of that: items wait for the next animation frame, as
//!   before. Counted over three seconds so that a pause of a second in a stream of items does
//!   not make it sparse again (`game-demo`'s ten sessions pause so every 11 s, and with a count
//!   over one second the first items after each pause got frames: 16.8 frames a second).
//!
//! So while input is sparse an item waits at most half an animation frame for its frame, and
//! frames are added only where two bursts come within one interval; dense input (ten sessions
//! replayed at 20 steps a second) adds almost none: without that rule the replay drew 27
//! frames a second instead of 16. Figures in docs/performance.md (`bench/frame_latency.py`,
//! `bench/game.sh`).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::power::ANIMATION_FRAME;

/// While the window animates, the soonest a frame drawn for feed input comes after the frame
/// before it: half an animation frame.
pub(crate) const INPUT_FRAME_GAP: Duration = Duration::from_micros(31_250);

/// Input is dense, and gets no frames of its own, while this many bursts of items came in the
/// last [`DENSE_WINDOW`].
pub(crate) const DENSE_INPUTS: usize = 36;

pub(crate) const DENSE_WINDOW: Duration = Duration::from_secs(3);

/// Items closer together than this are one burst (a transcript line's event and the actions
/// and progress it caused come back to back).
pub(crate) const BURST: Duration = Duration::from_millis(2);

/// The plan. Times are the bridge thread's `Instant`s; nothing here reads a clock.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Pacer {
    animating: bool,
    /// When the latest frame began (or was woken).
    last_frame: Option<Instant>,
    /// The next animation frame, while animating.
    due: Option<Instant>,
    /// A frame drawn for input stood for the animation frame due before `due`.
    stood_in: bool,
    /// A wake-up for input, waiting for [`INPUT_FRAME_GAP`] after the last frame.
    input_at: Option<Instant>,
    /// When the latest bursts of items began, within the last [`DENSE_WINDOW`] (at most
    /// [`DENSE_INPUTS`]).
    recent: VecDeque<Instant>,
    /// When the latest item came.
    last_item: Option<Instant>,
}

impl Pacer {
    /// What `power` said of the latest frame: when it began, and whether the window animates.
    pub(crate) fn frame(&mut self, began: Instant, animating: bool) {
        self.last_frame = Some(self.last_frame.map_or(began, |last| last.max(began)));
        if !animating {
            if let Some(due) = self.due.take() {
                // Items may have counted on that animation frame (dense input, or one due
                // before their own): they get a frame when it was due (none if the game took
                // them meanwhile).
                self.input_at = Some(self.input_at.map_or(due, |at| at.min(due)));
            }
            self.animating = false;
            self.stood_in = false;
        } else if !self.animating {
            self.animating = true;
            self.due = Some(began + ANIMATION_FRAME);
            self.stood_in = false;
        }
    }

    /// An item arrived at `now`; `first` when the game had taken every item before it (else a
    /// frame is planned already, or the game has yet to take them): plan its frame.
    pub(crate) fn item(&mut self, now: Instant, first: bool) {
        let burst = self
            .last_item
            .is_none_or(|last| now.saturating_duration_since(last) > BURST);
        self.last_item = Some(now);
        if burst {
            while self
                .recent
                .front()
                .is_some_and(|t| now.saturating_duration_since(*t) > DENSE_WINDOW)
                || self.recent.len() >= DENSE_INPUTS
            {
                self.recent.pop_front();
            }
            self.recent.push_back(now);
        }
        if !first {
            return;
        }
        if self.animating && self.recent.len() >= DENSE_INPUTS {
            return; // dense: the animation frame takes it
        }
        let at = match (self.animating, self.last_frame) {
            (true, Some(last)) => now.max(last + INPUT_FRAME_GAP),
            _ => now,
        };
        if self.due.is_some_and(|due| at >= due) {
            return; // the animation frame takes it
        }
        self.input_at = Some(self.input_at.map_or(at, |planned| planned.min(at)));
    }

    /// When the loop is to be woken next.
    pub(crate) fn next_wake(&self) -> Option<Instant> {
        match (self.due, self.input_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Time reached `now`: whether to wake the loop. `input_waiting` says whether the item a
    /// planned input frame was for is still in the channel (a frame in between, for a window
    /// event, may have taken it).
    pub(crate) fn fire(&mut self, now: Instant, input_waiting: bool) -> bool {
        if let Some(due) = self.due.filter(|due| now >= *due) {
            // An animation frame; it takes any input too. A late one restarts the beat.
            let next = due + ANIMATION_FRAME;
            self.due = Some(if now >= next {
                now + ANIMATION_FRAME
            } else {
                next
            });
            self.stood_in = false;
            self.input_at = None;
            self.last_frame = Some(now);
            return true;
        }
        if self.input_at.is_none_or(|at| now < at) {
            return false;
        }
        self.input_at = None;
        if !input_waiting {
            return false;
        }
        if let Some(due) = self.due.filter(|_| !self.stood_in) {
            self.due = Some(due + ANIMATION_FRAME);
            self.stood_in = true;
        }
        self.last_frame = Some(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pacer from `t0` and a way to name times in ms after it.
    fn at(t0: Instant, ms: f64) -> Instant {
        t0 + Duration::from_secs_f64(ms / 1000.0)
    }

    #[test]
    fn idle_input_wakes_the_loop_at_once() {
        let t0 = Instant::now();
        let mut pacer = Pacer::default();
        pacer.frame(t0, false);
        pacer.item(at(t0, 5.0), true);
        assert_eq!(pacer.next_wake(), Some(at(t0, 5.0)));
        assert!(pacer.fire(at(t0, 5.0), true));
        assert_eq!(pacer.next_wake(), None, "no animation frames while idle");
    }

    #[test]
    fn animation_frames_come_every_animation_frame() {
        let t0 = Instant::now();
        let mut pacer = Pacer::default();
        pacer.frame(t0, true);
        for n in 1..=3u32 {
            let due = t0 + ANIMATION_FRAME * n;
            assert_eq!(pacer.next_wake(), Some(due));
            assert!(!pacer.fire(due - Duration::from_millis(1), false));
            assert!(pacer.fire(due, false));
        }
        // A frame that says the window no longer animates ends them (but for a last look at
        // the channel when the next was due).
        pacer.frame(at(t0, 190.0), false);
        assert_eq!(pacer.next_wake(), Some(at(t0, 250.0)));
        assert!(!pacer.fire(at(t0, 250.0), false));
        assert_eq!(pacer.next_wake(), None);
    }

    #[test]
    fn input_frames_wait_half_an_animation_frame_and_stand_for_the_next() {
        let t0 = Instant::now();
        let mut pacer = Pacer::default();
        pacer.frame(t0, true);
        // Input 10 ms after a frame: its frame at 31.25 ms stands for the one due at 62.5.
        pacer.item(at(t0, 10.0), true);
        assert_eq!(pacer.next_wake(), Some(at(t0, 31.25)));
        assert!(pacer.fire(at(t0, 31.25), true));
        assert_eq!(pacer.next_wake(), Some(at(t0, 125.0)), "no frame added");
        // More input before then: a frame of its own, half an animation frame on.
        pacer.item(at(t0, 40.0), true);
        assert_eq!(pacer.next_wake(), Some(at(t0, 62.5)));
        assert!(pacer.fire(at(t0, 62.5), true));
        assert_eq!(pacer.next_wake(), Some(at(t0, 125.0)));
        assert!(pacer.fire(at(t0, 125.0), false));
        // Input late in an interval: at once, standing for the frame due 5 ms later.
        pacer.item(at(t0, 182.5), true);
        assert_eq!(pacer.next_wake(), Some(at(t0, 182.5)));
        assert!(pacer.fire(at(t0, 182.5), true));
        assert_eq!(pacer.next_wake(), Some(at(t0, 250.0)));
    }

    #[test]
    fn input_an_animation_frame_takes_gets_no_frame_of_its_own() {
        let t0 = Instant::now();
        let mut pacer = Pacer::default();
        pacer.frame(t0, true);
        assert!(pacer.fire(at(t0, 62.5), false));
        // Right after the animation frame: not before 62.5 + 31.25.
        pacer.item(at(t0, 63.0), true);
        assert_eq!(pacer.next_wake(), Some(at(t0, 93.75)));
        // Taken meanwhile by a frame for a window event: no wake-up for it.
        assert!(!pacer.fire(at(t0, 93.75), false));
        assert_eq!(pacer.next_wake(), Some(at(t0, 125.0)));
    }

    #[test]
    fn dense_input_waits_for_the_animation_frames() {
        let t0 = Instant::now();
        let mut pacer = Pacer::default();
        pacer.frame(t0, true);
        // Twenty bursts a second: which get frames of their own. Every other one comes before
        // the game took the one before: no frame of its own, but it counts.
        let mut own_frames = Vec::new();
        for n in 0..60u32 {
            let now = at(t0, f64::from(n) * 50.0);
            while let Some(wake) = pacer.next_wake().filter(|wake| *wake <= now) {
                pacer.fire(wake, true);
            }
            pacer.item(now, n % 2 == 0);
            if pacer.input_at.is_some() {
                own_frames.push(n);
            }
        }
        // Some, until 36 came within three seconds; then none.
        assert!(!own_frames.is_empty());
        assert!(
            own_frames.iter().all(|n| *n < 35),
            "frames for items {own_frames:?}"
        );
        // A pause of a second does not make it sparse again.
        let now = at(t0, 3950.0);
        while let Some(wake) = pacer.next_wake().filter(|wake| *wake <= now) {
            pacer.fire(wake, true);
        }
        pacer.item(now, true);
        assert_eq!(pacer.input_at, None);
        // Idle again: input wakes the loop at once, dense or not.
        pacer.frame(at(t0, 5000.0), false);
        while let Some(wake) = pacer.next_wake() {
            pacer.fire(wake, false);
        }
        pacer.item(at(t0, 5001.0), true);
        assert_eq!(pacer.next_wake(), Some(at(t0, 5001.0)));
    }

    #[test]
    fn items_counting_on_an_animation_frame_get_one_when_the_animation_stops() {
        let t0 = Instant::now();
        let mut pacer = Pacer::default();
        pacer.frame(t0, true);
        pacer.frame(at(t0, 40.0), true);
        // Due at 62.5, but not before 40 + 31.25: the animation frame is to take it.
        pacer.item(at(t0, 50.0), true);
        assert_eq!(pacer.next_wake(), Some(at(t0, 62.5)));
        // A frame (for a window event) says nothing animates any more.
        pacer.frame(at(t0, 55.0), false);
        assert_eq!(pacer.next_wake(), Some(at(t0, 62.5)));
        assert!(pacer.fire(at(t0, 62.5), true));
        assert_eq!(pacer.next_wake(), None);
        // Had that frame taken the item, no wake-up.
        pacer.frame(at(t0, 100.0), true);
        pacer.frame(at(t0, 140.0), true);
        pacer.item(at(t0, 150.0), true);
        assert_eq!(pacer.next_wake(), Some(at(t0, 162.5)));
        pacer.frame(at(t0, 155.0), false);
        assert!(!pacer.fire(at(t0, 162.5), false));
    }

    #[test]
    fn items_back_to_back_are_one_burst() {
        let t0 = Instant::now();
        let mut pacer = Pacer::default();
        pacer.frame(t0, true);
        // A line's event, its actions and progress: 30 items 0.1 ms apart, one burst.
        for n in 0..30u32 {
            pacer.item(at(t0, 1.0 + f64::from(n) * 0.1), n == 0);
        }
        assert_eq!(pacer.recent.len(), 1);
        assert_eq!(pacer.next_wake(), Some(at(t0, 31.25)));
    }

    #[test]
    fn a_late_animation_frame_restarts_the_beat() {
        let t0 = Instant::now();
        let mut pacer = Pacer::default();
        pacer.frame(t0, true);
        assert!(pacer.fire(at(t0, 200.0), false));
        assert_eq!(pacer.next_wake(), Some(at(t0, 262.5)));
    }
}
