//! Scenes: the game put in a given state from a fixed feed, for screenshots that are the same
//! run after run (`tests/screens.rs` compares them with reference images; `game-demo --scene
//! NAME` shows one). A [`Scene`] is a list of [`Cue`]s (feed items delivered at a given frame,
//! as [`FeedMessage`]s, so no thread's timing decides in which frame an item lands), a fixed
//! game-time step per frame (Bevy's `TimeUpdateStrategy::ManualDuration`), a fixed local time
//! of day ([`crate::clock::LocalClock`]) and the frame to capture. `run_game` also compiles
//! render pipelines synchronously for a scene, so nothing is missing from the captured frame
//! because a shader was still compiling.
//!
//! - `catalogue`: the scenes themselves (one per animation state, the approval wait, a party,
//!   a 1M-token session, the rest after compaction).

mod catalogue;

use std::collections::VecDeque;
use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;

use crate::GameFeed;
use crate::clock::TimeOfDay;
use crate::logic::{FeedMessage, LogicSet};

pub use catalogue::{NAMES, scene};

/// Game time per frame in scenes: 20 frames a second, the rate the window animates at.
pub const STEP: Duration = Duration::from_millis(50);

/// Feed items delivered at the start of one frame (frames count from 1).
#[derive(Debug, Clone)]
pub struct Cue {
    pub frame: u32,
    pub items: Vec<GameFeed>,
}

/// A deterministic run of the game, for a screenshot.
#[derive(Debug, Clone)]
pub struct Scene {
    pub name: &'static str,
    /// Game time per frame.
    pub step: Duration,
    /// What the view sees as the local time of day.
    pub local_time: TimeOfDay,
    /// The seed of anything random the view draws ([`crate::clock::Seed`]).
    pub seed: u64,
    pub cues: Vec<Cue>,
    /// The frame whose picture is captured.
    pub capture_frame: u32,
}

/// Plays a scene's cues at their frames, with time advancing by its step each frame.
pub(crate) struct ScenePlugin {
    pub(crate) scene: Scene,
}

#[derive(Resource)]
struct Player {
    frame: u32,
    cues: VecDeque<Cue>,
}

impl Plugin for ScenePlugin {
    fn build(&self, app: &mut App) {
        let mut cues = self.scene.cues.clone();
        cues.sort_by_key(|c| c.frame);
        app.insert_resource(TimeUpdateStrategy::ManualDuration(self.scene.step))
            .insert_resource(Player {
                frame: 0,
                cues: cues.into(),
            })
            .add_systems(Update, play.before(LogicSet));
    }
}

fn play(mut player: ResMut<Player>, mut feed: MessageWriter<FeedMessage>) {
    player.frame += 1;
    let frame = player.frame;
    while player.cues.front().is_some_and(|c| c.frame <= frame) {
        if let Some(cue) = player.cues.pop_front() {
            feed.write_batch(cue.items.into_iter().map(FeedMessage));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::{Familiar, GameLogicPlugin};

    /// The same scene, run twice headless, ends in the same state: cues land in their frames
    /// and time advances by the step, whatever the machine's speed.
    #[test]
    fn a_scene_plays_its_cues_at_their_frames() {
        let run = |frames: u32| {
            let mut app = App::new();
            app.add_plugins(MinimalPlugins)
                .add_plugins(GameLogicPlugin)
                .add_plugins(ScenePlugin {
                    scene: scene("party").unwrap_or_else(|| panic!("no party scene")),
                });
            for _ in 0..frames {
                app.update();
                std::thread::sleep(Duration::from_millis(1));
            }
            let mut q = app.world_mut().query::<&Familiar>();
            let mut sessions: Vec<String> =
                q.iter(app.world()).map(|f| f.session.clone()).collect();
            sessions.sort();
            let elapsed = app.world().resource::<Time>().elapsed();
            (sessions, elapsed)
        };
        let (none, _) = run(0);
        assert!(none.is_empty());
        let (three, elapsed) = run(5);
        assert_eq!(three.len(), 3, "{three:?}");
        // The first update only starts the clock.
        assert_eq!(elapsed, STEP * 4);
    }

    #[test]
    fn every_named_scene_exists_and_captures_after_its_last_cue() {
        for name in NAMES {
            let s = scene(name).unwrap_or_else(|| panic!("scene {name} missing"));
            assert_eq!(s.name, *name);
            let last = s.cues.iter().map(|c| c.frame).max().unwrap_or(0);
            assert!(
                s.capture_frame > last,
                "{name}: capture before its last cue"
            );
        }
        assert!(scene("no such scene").is_none());
    }
}
