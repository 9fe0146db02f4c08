//! The feed bridge: a thread carries the pipeline's channel into the game and wakes the event
//! loop: for items at once while the window is idle, and while it animates for each animation
//! frame and for items as `pacer` plans ([`Pacing`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy::winit::{EventLoopProxyWrapper, WinitUserEvent};
use crossbeam_channel::{Receiver, Sender, TrySendError};

use super::pacer::Pacer;
use crate::GameFeed;
use crate::logic::FeedChannel;

/// Carries the pipeline's channel into the game and wakes the event loop when items arrive,
/// so a reactive (idle) window reacts at once instead of at its next timeout.
pub fn add_feed_bridge(app: &mut App, feed: Receiver<GameFeed>) {
    // Bounded like the pipeline's own channel, so a stalled window still pushes back on the
    // pipeline instead of the bridge buffering without end.
    let (tx, rx) = crossbeam_channel::bounded(BRIDGE_CAPACITY);
    let (pacing, poked) = Pacing::new();
    app.insert_resource(FeedChannel(rx))
        .insert_resource(pacing)
        .insert_resource(BridgeStart(Mutex::new(Some((feed, tx, poked)))))
        .add_systems(Startup, start_bridge);
}

pub(super) const BRIDGE_CAPACITY: usize = 4096;

/// What `power` tells the bridge thread of each frame: when it began and whether the window
/// animates (draws again within an animation frame), so that the bridge's [`Pacer`] wakes the
/// loop for the animation frames and plans the frames for input. Its presence is what tells
/// `power` to leave the animation frames to the bridge.
#[derive(Resource, Clone)]
pub(crate) struct Pacing(Arc<PacingState>);

pub(crate) struct PacingState {
    epoch: Instant,
    animating: AtomicBool,
    /// When the latest frame began, ns after `epoch`.
    frame_began: AtomicU64,
    /// Wakes the bridge thread when `animating` changes.
    poke: Sender<()>,
}

impl Pacing {
    pub(crate) fn new() -> (Pacing, Receiver<()>) {
        let (poke, poked) = crossbeam_channel::bounded(1);
        let state = PacingState {
            epoch: Instant::now(),
            animating: AtomicBool::new(false),
            frame_began: AtomicU64::new(0),
            poke,
        };
        (Pacing(Arc::new(state)), poked)
    }

    /// Called by `power` in every frame.
    pub(crate) fn frame(&self, began: Instant, animating: bool) {
        let ns = began.saturating_duration_since(self.0.epoch).as_nanos();
        self.0
            .frame_began
            .store(u64::try_from(ns).unwrap_or(u64::MAX), Ordering::SeqCst);
        if self.0.animating.swap(animating, Ordering::SeqCst) != animating {
            // Full means a poke is on its way already.
            let _ = self.0.poke.try_send(());
        }
    }

    pub(crate) fn animating(&self) -> bool {
        self.0.animating.load(Ordering::SeqCst)
    }

    /// The latest frame, as `power` told it.
    fn latest(&self) -> (Instant, bool) {
        let began = self.0.epoch + Duration::from_nanos(self.0.frame_began.load(Ordering::SeqCst));
        (began, self.animating())
    }
}

type Ends = (Receiver<GameFeed>, Sender<GameFeed>, Receiver<()>);

#[derive(Resource)]
pub(super) struct BridgeStart(Mutex<Option<Ends>>);

/// Dropped with the app, which stops the bridge thread.
#[derive(Resource)]
#[allow(dead_code)]
pub(super) struct BridgeStop(Sender<()>);

pub(super) fn start_bridge(
    mut commands: Commands,
    start: Res<BridgeStart>,
    pacing: Res<Pacing>,
    proxy: Option<Res<EventLoopProxyWrapper>>,
) {
    let Some((feed, tx, poked)) = start.0.lock().ok().and_then(|mut g| g.take()) else {
        return;
    };
    let proxy = proxy.map(|p| (**p).clone());
    let pacing = pacing.clone();
    let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(0);
    let spawned = std::thread::Builder::new()
        .name("familiar-game-feed".to_string())
        .spawn(move || {
            let ends = Bridge {
                feed: &feed,
                tx: &tx,
                stop: &stop_rx,
                poked: &poked,
                pacing: &pacing,
            };
            ends.carry(|| {
                if let Some(p) = &proxy {
                    let _ = p.send_event(WinitUserEvent::WakeUp);
                }
            });
        });
    match spawned {
        Ok(_) => commands.insert_resource(BridgeStop(stop_tx)),
        Err(e) => tracing::warn!("feed bridge thread did not start ({e}); polling instead"),
    }
}

/// What the bridge thread holds.
pub(super) struct Bridge<'a> {
    pub(super) feed: &'a Receiver<GameFeed>,
    pub(super) tx: &'a Sender<GameFeed>,
    pub(super) stop: &'a Receiver<()>,
    pub(super) poked: &'a Receiver<()>,
    pub(super) pacing: &'a Pacing,
}

impl Bridge<'_> {
    /// Items from the feed into the game in order until the game is gone or the app stops,
    /// calling `wake` whenever the loop is to draw a frame. The feed's end (a replay's) ends
    /// the items, not the animation frames: the window stays open on its last scene.
    pub(super) fn carry(&self, wake: impl Fn()) {
        let mut pacer = Pacer::default();
        let ended = crossbeam_channel::never();
        let mut feed = self.feed;
        loop {
            let (began, animating) = self.pacing.latest();
            pacer.frame(began, animating);
            let timer = pacer
                .next_wake()
                .map_or_else(crossbeam_channel::never, crossbeam_channel::at);
            crossbeam_channel::select! {
                recv(feed) -> item => {
                    let Ok(item) = item else {
                        feed = &ended;
                        continue;
                    };
                    // Plan a frame only when the game had taken everything: otherwise one is
                    // on its way.
                    let was_empty = self.tx.is_empty();
                    match self.tx.try_send(item) {
                        Ok(()) => {}
                        Err(TrySendError::Full(item)) => {
                            // The game is behind: let it take some while this waits.
                            wake();
                            if self.tx.send(item).is_err() {
                                break;
                            }
                        }
                        Err(TrySendError::Disconnected(_)) => break,
                    }
                    pacer.item(Instant::now(), was_empty);
                }
                recv(timer) -> _ => {}
                recv(self.poked) -> poke => {
                    if poke.is_err() {
                        break; // the app is gone
                    }
                }
                recv(self.stop) -> _ => break,
            }
            let now = Instant::now();
            if pacer.next_wake().is_some_and(|at| at <= now) && pacer.fire(now, !self.tx.is_empty())
            {
                wake();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::logic::{Familiar, Mana};

    #[test]
    fn the_bridge_carries_the_feed_without_a_window() {
        use familiar_model::{Event, EventKind};
        let mut app = App::new();
        app.add_plugins(MinimalPlugins)
            .add_plugins(crate::GameLogicPlugin);
        let (tx, rx) = crossbeam_channel::bounded(8);
        add_feed_bridge(&mut app, rx);
        let mut ev = Event::new(EventKind::Text, 1);
        ev.session = Some("bridged".into());
        ev.context_used = Some(20_000);
        // More items than either channel holds: the bridge must keep draining.
        let sender = std::thread::spawn(move || {
            (0..BRIDGE_CAPACITY + 100).all(|_| tx.send(GameFeed::Event(ev.clone())).is_ok())
        });
        let mut seen = false;
        // Polls (up to ~20 s on a loaded machine); normally done in a few updates.
        for _ in 0..10_000 {
            app.update();
            let mut q = app.world_mut().query::<(&Familiar, &Mana)>();
            seen = q
                .iter(app.world())
                .any(|(f, m)| f.session == "bridged" && m.remaining() == Some(180_000));
            if seen && sender.is_finished() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(seen, "the bridged event never arrived");
        assert!(sender.join().unwrap_or(false), "the sender was cut off");
    }

    /// The bridge thread alone, with `pacing` as `power` sets it: the feed's sender, what the
    /// bridge carried, and when it woke the loop.
    fn spawn_bridge(
        pacing: &Pacing,
        poked: Receiver<()>,
    ) -> (Sender<GameFeed>, Receiver<GameFeed>, Receiver<Instant>) {
        let (feed_tx, feed) = crossbeam_channel::bounded(8);
        let (tx, rx) = crossbeam_channel::bounded(8);
        let (woke_tx, woke) = crossbeam_channel::bounded(64);
        let thread_pacing = pacing.clone();
        std::thread::spawn(move || {
            // Held for the thread's life: nothing asks it to stop.
            let (_stop_tx, stop) = crossbeam_channel::bounded::<()>(0);
            let bridge = Bridge {
                feed: &feed,
                tx: &tx,
                stop: &stop,
                poked: &poked,
                pacing: &thread_pacing,
            };
            bridge.carry(|| {
                let _ = woke_tx.send(Instant::now());
            });
        });
        (feed_tx, rx, woke)
    }

    /// When the bridge woke the loop for one item.
    fn wake_for_one_item(pacing: &Pacing, poked: Receiver<()>) -> Instant {
        let (feed_tx, rx, woke) = spawn_bridge(pacing, poked);
        assert!(feed_tx.send(GameFeed::Quit).is_ok());
        let woken = woke
            .recv_timeout(Duration::from_secs(20))
            .expect("the bridge woke the loop");
        assert!(rx.try_recv().is_ok(), "the item was carried");
        woken
    }

    #[test]
    fn while_animating_input_wakes_the_loop_half_an_animation_frame_after_the_last_frame() {
        let (pacing, poked) = Pacing::new();
        let frame = Instant::now();
        pacing.frame(frame, true);
        let woken = wake_for_one_item(&pacing, poked);
        // A lower bound only: never earlier, however slow the machine.
        assert!(
            woken >= frame + super::super::pacer::INPUT_FRAME_GAP,
            "woken {:?} after the frame",
            woken - frame
        );
    }

    #[test]
    fn the_animation_frames_go_on_after_the_feed_ends() {
        // A replay's window stays open on its last scene once the feed ends, and must still
        // draw while something moves there.
        let (pacing, poked) = Pacing::new();
        let (feed_tx, _carried, woke) = spawn_bridge(&pacing, poked);
        drop(feed_tx);
        pacing.frame(Instant::now(), true);
        for n in 0..3 {
            assert!(
                woke.recv_timeout(Duration::from_secs(20)).is_ok(),
                "animation frame {n} after the feed ended"
            );
        }
    }

    #[test]
    fn while_idle_input_wakes_the_loop() {
        let (pacing, poked) = Pacing::new();
        pacing.frame(Instant::now(), false);
        wake_for_one_item(&pacing, poked);
    }
}
