//! The game state as ECS components and resources: one familiar per session with its mana,
//! progress, mark, speech, quest and animation; companions, floaters, the log strip. `feed`
//! changes them, `tick` ages them, the view draws them.

use std::collections::VecDeque;

use bevy::prelude::*;
use familiar_model::Status;

use crate::anim::AnimMachine;

/// A familiar: one per session.
#[derive(Component, Debug, Clone)]
pub struct Familiar {
    /// Session id (empty when the feed has none).
    pub session: String,
    pub label: String,
    /// Position in the row of familiars (0 = leftmost free slot when it arrived).
    pub slot: usize,
    /// `Time::elapsed_secs` of the last feed item for this session.
    pub last_active: f32,
}

/// Mana = context left. `used == None` means unknown, shown as such (never as empty).
#[derive(Component, Debug, Clone, PartialEq)]
pub struct Mana {
    pub used: Option<u64>,
    pub limit: u64,
    /// Fraction drawn on screen; follows [`Mana::fraction`] smoothly.
    pub shown: f32,
    pub compaction: Option<Compaction>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Compaction {
    pub pre: Option<u64>,
    pub post: Option<u64>,
    /// Seconds since it happened (the "pre → post" label shows for a while).
    pub age: f32,
}

/// Mana colour bands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManaBand {
    Plenty,
    Low,
    Critical,
    Unknown,
}

impl Default for Mana {
    fn default() -> Mana {
        Mana {
            used: None,
            limit: 200_000,
            shown: 1.0,
            compaction: None,
        }
    }
}

impl Mana {
    /// Tokens left, `None` when unknown.
    pub fn remaining(&self) -> Option<u64> {
        self.used.map(|u| self.limit.saturating_sub(u))
    }

    /// Remaining fraction in 0..=1, `None` when unknown.
    pub fn fraction(&self) -> Option<f32> {
        let remaining = self.remaining()?;
        if self.limit == 0 {
            return Some(0.0);
        }
        Some((remaining as f64 / self.limit as f64).clamp(0.0, 1.0) as f32)
    }

    pub fn band(&self) -> ManaBand {
        match self.fraction() {
            None => ManaBand::Unknown,
            Some(f) if f >= 0.5 => ManaBand::Plenty,
            Some(f) if f >= 0.2 => ManaBand::Low,
            Some(_) => ManaBand::Critical,
        }
    }

    /// Takes the session state an event carries (the session model's, never an estimate of
    /// the game's own).
    pub fn observe(&mut self, used: Option<u64>, limit: u64) {
        self.limit = limit;
        let was_unknown = self.used.is_none();
        self.used = used;
        // The first known value shows at once; later changes ease in.
        if was_unknown && let Some(f) = self.fraction() {
            self.shown = f;
        }
    }

    /// A compaction, for its "pre -> post" label; the bar itself follows the context the
    /// compaction event carries.
    pub fn compact(&mut self, pre: Option<u64>, post: Option<u64>) {
        let pre = pre.or(self.used);
        self.compaction = Some(Compaction {
            pre,
            post,
            age: 0.0,
        });
    }

    /// The bar's label, in tokens *left* like the bar's fill (mana is what is left) and the
    /// compaction note (`rest 48k -> 160k left`), and saying so: `152k left of 200k`, or
    /// `? left of 200k` when unknown. (Issue 14: it once said tokens used over a bar filled
    /// with what is left, and before that showed tokens left with nothing to say which.)
    pub fn label(&self) -> String {
        familiar_model::words::context_left(self.used, self.limit)
    }

    /// The compaction note, in tokens left before and after like the bar and its label:
    /// `rest 48k -> 160k left` (`?` for a side not known).
    pub fn rest_label(&self, c: Compaction) -> String {
        let left = |used: Option<u64>| {
            used.map(|u| tokens(self.limit.saturating_sub(u)))
                .unwrap_or_else(|| "?".into())
        };
        format!("rest {} -> {} left", left(c.pre), left(c.post))
    }

    /// Whether the "rest pre -> post" note still has something to say: for `secs` after a
    /// compaction, and no longer once the context is known again when the compaction did
    /// not say its size (the note's `?` would be stale).
    pub fn compaction_note(&self, secs: f32) -> Option<Compaction> {
        self.compaction
            .filter(|c| c.age < secs && (c.post.is_some() || self.used.is_none()))
    }
}

pub use familiar_model::words::tokens;

/// Experience and level as a familiar shows them: the user's (`crate::progression::Profile`,
/// which `xp` actions add to), the same on every familiar; `level_up_age` plays on the
/// familiar that earned the level.
#[derive(Component, Debug, Clone, Default, PartialEq)]
pub struct Progress {
    pub xp: i64,
    pub level: u32,
    /// Seconds since the last level-up, while its effect plays.
    pub level_up_age: Option<f32>,
}

impl Progress {
    /// Total XP needed to reach `level` ([`crate::progression::xp_for_level`]: level 2 at
    /// 10, 3 at 80, 4 at 270, ...).
    pub fn xp_for_level(level: u32) -> i64 {
        crate::progression::xp_for_level(level)
    }

    pub fn level_for(xp: i64) -> u32 {
        crate::progression::level_for(xp)
    }

    /// Adds XP (negative amounts take some away, never below zero); true on a level-up.
    pub fn add(&mut self, amount: i64) -> bool {
        let before = self.level.max(1);
        self.xp = self.xp.saturating_add(amount).max(0);
        self.level = Progress::level_for(self.xp);
        if self.level > before {
            self.level_up_age = Some(0.0);
            true
        } else {
            false
        }
    }

    /// Progress within the current level, 0..1.
    pub fn fraction(&self) -> f32 {
        let lo = Progress::xp_for_level(self.level.max(1));
        let hi = Progress::xp_for_level(self.level.max(1) + 1);
        ((self.xp - lo) as f32 / (hi - lo).max(1) as f32).clamp(0.0, 1.0)
    }
}

/// What the session's plate says besides mana and XP: its project and branch (from the
/// session model's `cwd` and `git_branch`), and since when it has had its status: in the
/// events' own recorded time where they say it (a replay at 10x reads 10x), else the game
/// clock, set back by a snapshot's `duration_ms`.
#[derive(Component, Debug, Clone, Default, PartialEq)]
pub struct SessionInfo {
    /// The project's name (its directory's).
    pub project: Option<String>,
    /// Which agent CLI, when not Claude Code (the default, which plates do not name).
    pub agent: Option<familiar_model::AgentKind>,
    pub branch: Option<String>,
    /// The remote host the session runs on (`watch --remote`), and whether its link is down
    /// now (the plate says "reconnecting" instead of the status).
    pub host: Option<String>,
    pub reconnecting: bool,
    /// `Time::elapsed_secs` when the current status began (may be negative after a snapshot).
    pub status_since: f32,
    /// The recorded time (seconds since the epoch) of the event that began the status.
    pub status_since_ts: Option<f64>,
    /// The latest event's recorded time, and the game time it came at.
    pub last_ts: Option<(f64, f32)>,
}

impl SessionInfo {
    /// What a plate calls the session: its project, which agent and on which host
    /// (`app codex @devbox`). `agent_first` puts the agent before the project, for a compact
    /// plate whose end is cut: with several agents in one project, the agent is what tells
    /// the familiars apart.
    pub fn name(&self, agent_first: bool) -> Option<String> {
        let project = self.project.as_deref()?;
        let mut name = match self.agent {
            Some(agent) if agent_first => format!("{agent} {project}"),
            Some(agent) => format!("{project} {agent}"),
            None => project.to_owned(),
        };
        if let Some(host) = &self.host {
            name.push_str(" @");
            name.push_str(host);
        }
        Some(name)
    }

    /// How long the session has had its status at game time `now`: the recorded time from the
    /// event that began it to the latest event, plus the game time since that one came.
    pub fn held(&self, now: f32) -> f32 {
        match (self.status_since_ts, self.last_ts) {
            (Some(since), Some((last, seen_at))) => {
                ((last - since).max(0.0) as f32) + (now - seen_at).max(0.0)
            }
            _ => now - self.status_since,
        }
    }

    /// An event came at game time `now`, recorded at `ts` (seconds since the epoch), setting
    /// the status anew when `changed`.
    pub fn observe(&mut self, ts: Option<f64>, changed: bool, now: f32) {
        if changed {
            self.status_since = now;
            self.status_since_ts = ts;
        } else if let Some(ts) = ts.filter(|_| self.status_since_ts.is_none()) {
            // A status begun without a recorded time (a snapshot's, a first event's): what the
            // game clock has held it for, in the records' terms from here on.
            self.status_since_ts = Some(ts - f64::from((now - self.status_since).max(0.0)));
        }
        if let Some(ts) = ts {
            self.last_ts = Some((ts, now));
        }
    }
}

/// Status mark over the familiar's head.
#[derive(Component, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mark(pub Status);

impl Mark {
    /// `!` waiting for approval, `?` waiting for input.
    pub fn symbol(self) -> Option<char> {
        match self.0 {
            Status::WaitingForApproval => Some('!'),
            Status::WaitingForInput => Some('?'),
            _ => None,
        }
    }
}

/// Speech bubble from `say`.
#[derive(Component, Debug, Clone, Default, PartialEq)]
pub struct Speech(pub Option<(String, f32)>);

/// Quest banner text from `quest`.
#[derive(Component, Debug, Clone, Default, PartialEq)]
pub struct Quest(pub Option<String>);

/// The familiar's animation state.
#[derive(Component, Debug, Clone)]
pub struct Animation(pub AnimMachine);

/// A subagent companion beside its familiar.
#[derive(Component, Debug, Clone)]
pub struct Companion {
    pub owner: Entity,
    /// Id from `companion_spawn(id, kind)`.
    pub id: String,
    pub kind: String,
    /// Agent id of the subagent's own events, learnt from the first activity that does not
    /// match any id (the scripts name companions by tool-use id, transcripts by agent id).
    pub agent: Option<String>,
    /// Arrival order (first companion = 0), to bind agents oldest first.
    pub order: u64,
    pub age: f32,
    /// Seconds left of the working animation.
    pub busy: f32,
    /// Seconds since it started to leave.
    pub leaving: Option<f32>,
    /// Its own context (tokens used, limit), from its subagent's events: its small mana bar.
    pub context: Option<(u64, u64)>,
}

/// A companion walks in and out (`crate::ambience::companion_walk`).
pub const COMPANION_ENTER_SECS: f32 = crate::ambience::COMPANION_WALK_SECS;
pub const COMPANION_LEAVE_SECS: f32 = crate::ambience::COMPANION_WALK_SECS;

/// Counter behind [`Companion::order`].
#[derive(Resource, Debug, Default)]
pub(crate) struct CompanionSeq(pub(crate) u64);

/// A tool target floating up from the familiar (file name, command).
#[derive(Component, Debug, Clone)]
pub struct Floater {
    pub owner: Entity,
    pub text: String,
    pub age: f32,
}

pub const FLOATER_SECS: f32 = 1.8;

/// What the pipeline says of its own, in the middle of the scene: where it looks while no
/// session is there, and that a replay is over.
#[derive(Resource, Debug, Clone, Default, PartialEq)]
pub struct Notice {
    /// Where the pipeline looks for sessions (shown while there is none).
    pub waiting: Option<String>,
    /// The end of a replay or the demo, and what to do next.
    pub ended: Option<String>,
}

/// Custom `emit` actions and `log` lines, newest last.
#[derive(Resource, Debug, Clone, Default)]
pub struct LogStrip {
    pub lines: VecDeque<String>,
    /// Bumped on every change so the view redraws only then.
    pub version: u64,
}

impl LogStrip {
    pub(crate) fn push(&mut self, line: String, cap: usize) {
        self.lines.push_back(line);
        while self.lines.len() > cap.max(1) {
            self.lines.pop_front();
        }
        self.version += 1;
    }
}

/// Whether something on screen moves, so the window must draw at full rate.
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Activity {
    pub animating: bool,
}

/// The most recently active familiar (its quest shows in the banner).
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Focus(pub Option<Entity>);

/// The session the user clicked: its card shows in place of the plates until a click on
/// empty space or Esc.
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Selected(pub Option<Entity>);

/// Which bar the pointer is over (its exact figures show in a tooltip).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bar {
    Mana,
    Xp,
    /// The plate's first line (its project and branch, cut to fit): the tooltip says them
    /// whole, with the session's id.
    Name,
}

/// The bar under the pointer, with its familiar.
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hovered(pub Option<(Entity, Bar)>);
