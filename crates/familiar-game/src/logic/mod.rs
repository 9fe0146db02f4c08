//! Game logic as ECS components and systems, with no window and no rendering: what each
//! familiar is doing, its mana (context), XP, status marks, companions, speech, quest and the
//! log strip. `GameLogicPlugin` runs under `MinimalPlugins` in the tests; `view` reads the
//! same components to draw them. The feed ([`crate::GameFeed`]) comes in as [`FeedMessage`]s
//! (tests write them directly) or from the crossbeam channel in [`FeedChannel`], drained each
//! frame by [`ingest`].
//!
//! - `state`: the components and resources (familiar, mana, progress, marks, companions, ...);
//! - `doings`: what the agent is doing (plan, quest, last actions) and the panel's text;
//! - `feed`: [`ingest`] applies each event and action to them;
//! - `tick`: [`advance`] runs the timers;
//! - `text`: labels and the shortening of text for the screen;
//! - `reactions`: the weather and each familiar's effects;
//! - `xp`: the user's profile as the pipeline sends it ([`crate::progression::UserProfile`]),
//!   shown on every familiar's [`Progress`].

mod doings;
mod feed;
mod reactions;
mod state;
mod text;
mod tick;
mod xp;

use bevy::prelude::*;
use crossbeam_channel::Receiver;

use crate::GameFeed;

pub use doings::{
    Deed, Doings, card_figures, grouped, mana_figures, name_figures, panel_lines, plan_mark,
    shorten_end, shorten_middle, status_figures, xp_figures,
};
pub use feed::ingest;
pub use reactions::{AURA_SECS, Effects, SceneOfWork, WorldWeather, react};
pub use state::{
    Activity, Animation, Bar, COMPANION_ENTER_SECS, COMPANION_LEAVE_SECS, Compaction, Companion,
    FLOATER_SECS, Familiar, Floater, Focus, Hovered, LogStrip, Mana, ManaBand, Mark, Notice,
    Progress, Quest, Selected, SessionInfo, Speech, tokens,
};
pub use text::{codex_label, session_label};
pub use tick::advance;

/// One item of the feed, as a Bevy message.
#[derive(Message, Debug, Clone)]
pub struct FeedMessage(pub GameFeed);

/// The pipeline's channel, drained each frame (at most [`MAX_PER_FRAME`] items, so a replay
/// at high speed cannot stall a frame).
#[derive(Resource)]
pub struct FeedChannel(pub Receiver<GameFeed>);

pub const MAX_PER_FRAME: usize = 2_000;

/// Tunables of the scene.
#[derive(Resource, Debug, Clone)]
pub struct GameConfig {
    /// Familiars on screen at once; the least recently active one leaves for a new session.
    pub max_familiars: usize,
    /// Companions shown per familiar.
    pub max_companions: usize,
    /// Lines kept in the log strip.
    pub log_lines: usize,
}

impl Default for GameConfig {
    fn default() -> GameConfig {
        GameConfig {
            max_familiars: 4,
            max_companions: 5,
            log_lines: 4,
        }
    }
}

/// Logic only: feed, state machines, mana, XP, companions. No rendering.
pub struct GameLogicPlugin;

impl Plugin for GameLogicPlugin {
    fn build(&self, app: &mut App) {
        app.add_message::<FeedMessage>()
            .init_resource::<WorldWeather>()
            .init_resource::<SceneOfWork>()
            .init_resource::<GameConfig>()
            .init_resource::<LogStrip>()
            .init_resource::<Notice>()
            .init_resource::<Activity>()
            .init_resource::<Focus>()
            .init_resource::<Selected>()
            .init_resource::<Hovered>()
            .init_resource::<state::CompanionSeq>()
            .init_resource::<crate::progression::UserProfile>()
            .add_systems(Update, (ingest, advance, react).chain().in_set(LogicSet));
    }
}

/// The logic systems; view systems run after it.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub struct LogicSet;
