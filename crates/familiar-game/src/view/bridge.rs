//! The feed bridge: a thread carries the pipeline's channel into the game and wakes the event
//! loop when items arrive, unless `power` says a frame is due soon anyway ([`FrameSoon`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use bevy::prelude::*;
use bevy::winit::{EventLoopProxyWrapper, WinitUserEvent};
use crossbeam_channel::{Receiver, Sender};

use crate::GameFeed;
use crate::logic::FeedChannel;

/// Carries the pipeline's channel into the game and wakes the event loop when items arrive,
/// so a reactive (idle) window reacts at once instead of at its next timeout.
pub fn add_feed_bridge(app: &mut App, feed: Receiver<GameFeed>) {
    // Bounded like the pipeline's own channel, so a stalled window still pushes back on the
    // pipeline instead of the bridge buffering without end.
    let (tx, rx) = crossbeam_channel::bounded(BRIDGE_CAPACITY);
    app.insert_resource(FeedChannel(rx))
        .insert_resource(FrameSoon::default())
        .insert_resource(BridgeStart(Mutex::new(Some((feed, tx)))))
        .add_systems(Startup, start_bridge);
}

pub(super) const BRIDGE_CAPACITY: usize = 4096;

/// Set by `power` while the window draws at its animation rate: the next frame comes within
/// one animation frame, so a wake-up per feed item would only add frames (at 3 sessions and 6
/// items a second, 7 of 27 frames a second were wake-ups). `power` clears it before it lets
/// the window sleep longer, and then looks at the channel, so no item waits for a long timer.
#[derive(Resource, Clone, Default)]
pub(crate) struct FrameSoon(pub(crate) Arc<AtomicBool>);

impl FrameSoon {
    pub(crate) fn get(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    pub(crate) fn set(&self, soon: bool) {
        self.0.store(soon, Ordering::SeqCst);
    }
}

#[derive(Resource)]
pub(super) struct BridgeStart(Mutex<Option<(Receiver<GameFeed>, Sender<GameFeed>)>>);

/// Dropped with the app, which stops the bridge thread.
#[derive(Resource)]
#[allow(dead_code)]
pub(super) struct BridgeStop(Sender<()>);

pub(super) fn start_bridge(
    mut commands: Commands,
    start: Res<BridgeStart>,
    soon: Res<FrameSoon>,
    proxy: Option<Res<EventLoopProxyWrapper>>,
) {
    let Some((feed, tx)) = start.0.lock().ok().and_then(|mut g| g.take()) else {
        return;
    };
    let proxy = proxy.map(|p| (**p).clone());
    let soon = soon.clone();
    let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(0);
    let spawned = std::thread::Builder::new()
        .name("familiar-game-feed".to_string())
        .spawn(move || {
            loop {
                crossbeam_channel::select! {
                    recv(feed) -> item => {
                        let Ok(item) = item else { break };
                        // Wake the loop only when the game had drained everything: otherwise a
                        // wake-up is already on its way.
                        let was_empty = tx.is_empty();
                        if tx.send(item).is_err() {
                            break;
                        }
                        if was_empty && !soon.get() && let Some(p) = &proxy {
                            let _ = p.send_event(WinitUserEvent::WakeUp);
                        }
                    }
                    recv(stop_rx) -> _ => break,
                }
            }
        });
    match spawned {
        Ok(_) => commands.insert_resource(BridgeStop(stop_tx)),
        Err(e) => tracing::warn!("feed bridge thread did not start ({e}); polling instead"),
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
}
