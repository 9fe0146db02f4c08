//! Game logic as ECS components and systems, with no window and no rendering: what each
//! familiar is doing, its mana (context), XP, status marks, companions, speech, quest and the
//! log strip. `GameLogicPlugin` runs under `MinimalPlugins` in the tests; `view.rs` reads the
//! same components to draw them. The feed ([`crate::GameFeed`]) comes in as [`FeedMessage`]s
//! (tests write them directly) or from the crossbeam channel in [`FeedChannel`], drained each
//! frame by [`ingest`].

use std::collections::VecDeque;

use bevy::prelude::*;
use crossbeam_channel::Receiver;
use familiar_model::{Action, ActionKind, AgentKind, Event, EventKind, Status};

use crate::GameFeed;
use crate::anim::{Anim, AnimMachine};

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

    /// Compact label: `150k/200k`, or `?/200k` when unknown.
    pub fn label(&self) -> String {
        match self.remaining() {
            Some(r) => format!("{}/{}", tokens(r), tokens(self.limit)),
            None => format!("?/{}", tokens(self.limit)),
        }
    }
}

/// `153_400` → `153k`, `1_200_000` → `1.2M`.
pub fn tokens(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    } else if n >= 1_000 {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

/// Experience and level, from `xp` actions.
#[derive(Component, Debug, Clone, Default, PartialEq)]
pub struct Progress {
    pub xp: i64,
    pub level: u32,
    /// Seconds since the last level-up, while its effect plays.
    pub level_up_age: Option<f32>,
}

impl Progress {
    /// Total XP needed to reach `level` (level 1 at 0, 2 at 100, 3 at 300, 4 at 600, ...).
    pub fn xp_for_level(level: u32) -> i64 {
        let l = i64::from(level.max(1));
        50 * l * (l - 1)
    }

    pub fn level_for(xp: i64) -> u32 {
        let mut level = 1;
        while level < 999 && xp >= Progress::xp_for_level(level + 1) {
            level += 1;
        }
        level
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
}

pub const COMPANION_ENTER_SECS: f32 = 0.5;
pub const COMPANION_LEAVE_SECS: f32 = 0.5;

/// Counter behind [`Companion::order`].
#[derive(Resource, Debug, Default)]
struct CompanionSeq(u64);

/// A tool target floating up from the familiar (file name, command).
#[derive(Component, Debug, Clone)]
pub struct Floater {
    pub owner: Entity,
    pub text: String,
    pub age: f32,
}

pub const FLOATER_SECS: f32 = 1.8;

/// Custom `emit` actions and `log` lines, newest last.
#[derive(Resource, Debug, Clone, Default)]
pub struct LogStrip {
    pub lines: VecDeque<String>,
    /// Bumped on every change so the view redraws only then.
    pub version: u64,
}

impl LogStrip {
    fn push(&mut self, line: String, cap: usize) {
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

/// Logic only: feed, state machines, mana, XP, companions. No rendering.
pub struct GameLogicPlugin;

impl Plugin for GameLogicPlugin {
    fn build(&self, app: &mut App) {
        app.add_message::<FeedMessage>()
            .init_resource::<GameConfig>()
            .init_resource::<LogStrip>()
            .init_resource::<Activity>()
            .init_resource::<Focus>()
            .init_resource::<CompanionSeq>()
            .add_systems(Update, (ingest, advance).chain().in_set(LogicSet));
    }
}

/// The logic systems; view systems run after it.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub struct LogicSet;

/// Typographic characters common in prompts and replies, spelled in ASCII: Bevy's built-in
/// font is an ASCII subset and would draw boxes.
fn plain(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{2032}' => "'",
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{2033}' => "\"",
        '\u{2013}' | '\u{2014}' | '\u{2212}' => "-",
        '\u{2026}' => "...",
        '\u{2022}' | '\u{00B7}' => "*",
        '\u{2192}' => "->",
        '\u{2190}' => "<-",
        _ => return None,
    })
}

/// Flattened whitespace, ASCII typography, at most `max` characters.
fn trimmed(text: &str, max: usize) -> String {
    let mut ascii = String::with_capacity(text.len());
    for c in text.chars() {
        match plain(c) {
            Some(s) => ascii.push_str(s),
            None => ascii.push(c),
        }
    }
    let flat: String = ascii.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        // ASCII dots: Bevy's built-in font is an ASCII subset.
        let mut s: String = flat.chars().take(max.saturating_sub(3)).collect();
        s.push_str("...");
        s
    }
}

/// Last path component or the start of a command, short enough to float.
fn short_target(target: &str) -> String {
    let t = target.trim();
    let looks_like_path = !t.contains(' ') && t.contains('/');
    let base = if looks_like_path {
        t.rsplit('/').find(|s| !s.is_empty()).unwrap_or(t)
    } else {
        t
    };
    trimmed(base, 28)
}

/// Drains the feed (messages and channel) and applies each item to the world.
pub fn ingest(world: &mut World) {
    let mut items: Vec<GameFeed> = world
        .resource_mut::<Messages<FeedMessage>>()
        .drain()
        .map(|m| m.0)
        .collect();
    if let Some(channel) = world.get_resource::<FeedChannel>() {
        items.extend(channel.0.try_iter().take(MAX_PER_FRAME));
    }
    if items.is_empty() {
        return;
    }
    let now = world
        .get_resource::<Time>()
        .map(|t| t.elapsed_secs())
        .unwrap_or(0.0);
    for item in items {
        match item {
            GameFeed::Event(ev) => apply_event(world, &ev, now),
            GameFeed::Action(act) => apply_action(world, &act, now),
            GameFeed::Quit => {
                world.write_message(bevy::app::AppExit::Success);
            }
        }
    }
}

fn default_label(session: &str) -> String {
    if session.is_empty() {
        "familiar".to_string()
    } else {
        session.chars().take(8).collect()
    }
}

/// Finds the familiar of `session`, bringing a new one in (and sending the least recently
/// active away when the row is full).
fn familiar_for(world: &mut World, session: Option<&str>, now: f32) -> Entity {
    let key = session.unwrap_or("");
    // Fast path: most items belong to the session of the previous one.
    if let Some(e) = world.resource::<Focus>().0
        && let Some(mut f) = world.get_mut::<Familiar>(e)
        && f.session == key
    {
        f.last_active = now;
        return e;
    }
    let key = key.to_string();
    let mut q = world.query::<(Entity, &Familiar)>();
    let all: Vec<(Entity, String, usize, f32)> = q
        .iter(world)
        .map(|(e, f)| (e, f.session.clone(), f.slot, f.last_active))
        .collect();
    if let Some((e, ..)) = all.iter().find(|(_, s, ..)| *s == key) {
        let e = *e;
        if let Some(mut f) = world.get_mut::<Familiar>(e) {
            f.last_active = now;
        }
        world.resource_mut::<Focus>().0 = Some(e);
        return e;
    }
    let config = world.resource::<GameConfig>().clone();
    let mut used_slots: Vec<usize> = all.iter().map(|(_, _, slot, _)| *slot).collect();
    if all.len() >= config.max_familiars.max(1)
        && let Some((old, _, slot, _)) = all
            .iter()
            .min_by(|a, b| a.3.partial_cmp(&b.3).unwrap_or(std::cmp::Ordering::Equal))
    {
        despawn_familiar(world, *old);
        used_slots.retain(|s| s != slot);
    }
    let slot = (0..).find(|s| !used_slots.contains(s)).unwrap_or(0);
    let e = world
        .spawn((
            Familiar {
                label: default_label(&key),
                session: key,
                slot,
                last_active: now,
            },
            Animation(AnimMachine::new()),
            Mana::default(),
            Progress {
                level: 1,
                ..Progress::default()
            },
            Mark::default(),
            Speech::default(),
            Quest::default(),
        ))
        .id();
    world.resource_mut::<Focus>().0 = Some(e);
    e
}

fn despawn_familiar(world: &mut World, e: Entity) {
    let mut q = world.query::<(Entity, Option<&Companion>, Option<&Floater>)>();
    let owned: Vec<Entity> = q
        .iter(world)
        .filter(|(_, c, f)| c.is_some_and(|c| c.owner == e) || f.is_some_and(|f| f.owner == e))
        .map(|(x, ..)| x)
        .collect();
    for x in owned {
        world.despawn(x);
    }
    world.despawn(e);
    if world.resource::<Focus>().0 == Some(e) {
        world.resource_mut::<Focus>().0 = None;
    }
}

/// The companion of `owner` that `agent` activity belongs to, binding an unbound one if needed.
fn companion_for(world: &mut World, owner: Entity, agent: &str) -> Option<Entity> {
    let mut q = world.query::<(Entity, &Companion)>();
    let mine: Vec<(Entity, String, Option<String>, bool)> = q
        .iter(world)
        .filter(|(_, c)| c.owner == owner)
        .map(|(e, c)| (e, c.id.clone(), c.agent.clone(), c.leaving.is_some()))
        .collect();
    if let Some((e, ..)) = mine
        .iter()
        .find(|(_, id, bound, _)| id == agent || bound.as_deref() == Some(agent))
    {
        return Some(*e);
    }
    // The oldest companion that has no agent yet.
    let mut q = world.query::<(Entity, &Companion)>();
    let unbound = q
        .iter(world)
        .filter(|(_, c)| c.owner == owner && c.agent.is_none() && c.leaving.is_none())
        .min_by_key(|(_, c)| c.order)
        .map(|(e, _)| e)?;
    if let Some(mut c) = world.get_mut::<Companion>(unbound) {
        c.agent = Some(agent.to_string());
    }
    Some(unbound)
}

fn companion_busy(world: &mut World, owner: Entity, agent: &str) {
    if let Some(c) = companion_for(world, owner, agent)
        && let Some(mut comp) = world.get_mut::<Companion>(c)
    {
        comp.busy = 1.5;
    }
}

/// Agent key of inline sidechain records, which carry no agent id.
const SIDECHAIN_AGENT: &str = "sidechain";

/// Session state (mana, status) that every event and action of the main agent carries.
fn observe_state(world: &mut World, e: Entity, used: Option<u64>, limit: u64, status: Status) {
    if let Some(mut mana) = world.get_mut::<Mana>(e) {
        mana.observe(used, limit);
    }
    if let Some(mut mark) = world.get_mut::<Mark>(e) {
        mark.0 = status;
    }
    if let Some(mut anim) = world.get_mut::<Animation>(e) {
        match status {
            Status::Idle => anim.0.sleep(),
            Status::Working => anim.0.wake(),
            _ => {}
        }
    }
}

/// `my-project 258c72`: the project (the session's `cwd`) and the session's first characters,
/// so several familiars can be told apart.
pub fn session_label(cwd: &str, session: Option<&str>) -> String {
    let project = std::path::Path::new(cwd)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| cwd.to_owned());
    let short: String = session.unwrap_or("").chars().take(6).collect();
    trimmed(format!("{project} {short}").trim(), 40)
}

/// `my-project codex 1a4f8e` for a Codex session: it says which agent it is, and ends with
/// the end of the session id (a Codex id is a UUIDv7, whose start is the time: alike for every
/// session of a day).
pub fn codex_label(cwd: &str, session: Option<&str>) -> String {
    let project = std::path::Path::new(cwd)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| cwd.to_owned());
    let id: Vec<char> = session.unwrap_or("").chars().collect();
    let short: String = id[id.len().saturating_sub(6)..].iter().collect();
    trimmed(format!("{project} codex {short}").trim(), 40)
}

fn apply_event(world: &mut World, ev: &Event, now: f32) {
    let e = familiar_for(world, ev.session.as_deref(), now);
    if let Some(cwd) = ev.cwd.as_deref()
        && let Some(mut familiar) = world.get_mut::<Familiar>(e)
    {
        familiar.label = match ev.agent_kind {
            AgentKind::ClaudeCode => session_label(cwd, ev.session.as_deref()),
            AgentKind::Codex => codex_label(cwd, ev.session.as_deref()),
        };
    }
    if ev.kind == EventKind::Snapshot
        && ev.status == Status::Idle
        && let Some(mut anim) = world.get_mut::<Animation>(e)
    {
        anim.0 = AnimMachine::asleep();
    }
    // Old transcripts keep subagents inline: sidechain records without an agent id.
    let agent = ev
        .agent
        .as_deref()
        .or(ev.sidechain.then_some(SIDECHAIN_AGENT));
    if let Some(agent) = agent {
        // A subagent's own activity animates its companion, not the familiar, and its context
        // is its own chain's, not the session's mana.
        if !matches!(ev.kind, EventKind::Status | EventKind::SessionStart) {
            companion_busy(world, e, agent);
        }
        return;
    }
    // Compaction first: its post size stands in for the unknown context the event carries.
    if ev.kind == EventKind::CompactBoundary
        && let Some(mut mana) = world.get_mut::<Mana>(e)
    {
        mana.compact(ev.pre_tokens, ev.post_tokens);
    }
    observe_state(world, e, ev.context_used, ev.context_limit, ev.status);
    let floats = matches!(
        ev.kind,
        EventKind::Reading | EventKind::Writing | EventKind::Bash | EventKind::Tool
    );
    if floats && let Some(target) = ev.target.as_deref().filter(|t| !t.trim().is_empty()) {
        world.spawn(Floater {
            owner: e,
            text: short_target(target),
            age: 0.0,
        });
    }
}

fn apply_action(world: &mut World, act: &Action, now: f32) {
    let e = familiar_for(world, act.session.as_deref(), now);
    let log_cap = world.resource::<GameConfig>().log_lines;
    if let Some(agent) = act.agent.as_deref()
        && let ActionKind::Animate { .. } = act.kind
    {
        companion_busy(world, e, agent);
        return;
    }
    match &act.kind {
        ActionKind::Animate { name } => match Anim::parse(name) {
            Some(anim) => {
                if let Some(mut a) = world.get_mut::<Animation>(e) {
                    a.0.request(anim);
                }
            }
            None => {
                tracing::debug!(name, script = act.script, "unknown animation");
                world.resource_mut::<LogStrip>().push(
                    format!("unknown animation \"{}\"", trimmed(name, 24)),
                    log_cap,
                );
            }
        },
        ActionKind::Say { text } => {
            let text = trimmed(text, 140);
            let secs = (2.5 + text.chars().count() as f32 * 0.05).min(8.0);
            if let Some(mut s) = world.get_mut::<Speech>(e) {
                s.0 = Some((text, secs));
            }
        }
        ActionKind::Quest { text } => {
            if let Some(mut q) = world.get_mut::<Quest>(e) {
                q.0 = Some(trimmed(text, 90)).filter(|t| !t.is_empty());
            }
        }
        ActionKind::Xp { amount } => {
            if let Some(mut p) = world.get_mut::<Progress>(e) {
                p.add(*amount);
            }
        }
        ActionKind::Rest => {
            if let Some(mut a) = world.get_mut::<Animation>(e) {
                a.0.request(Anim::Rest);
            }
        }
        ActionKind::CompanionSpawn { id, kind } => {
            let mut q = world.query::<&Companion>();
            let exists = q.iter(world).any(|c| c.owner == e && c.id == *id);
            let count = q.iter(world).filter(|c| c.owner == e).count();
            let cap = world.resource::<GameConfig>().max_companions;
            if !exists && count < cap {
                let order = {
                    let mut seq = world.resource_mut::<CompanionSeq>();
                    seq.0 += 1;
                    seq.0
                };
                world.spawn(Companion {
                    owner: e,
                    id: id.clone(),
                    kind: trimmed(kind, 20),
                    agent: None,
                    order,
                    age: 0.0,
                    busy: 0.0,
                    leaving: None,
                });
            }
        }
        ActionKind::CompanionLeave { id } => {
            let mut q = world.query::<&mut Companion>();
            for mut c in q.iter_mut(world) {
                if c.owner == e
                    && c.leaving.is_none()
                    && (c.id == *id || c.agent.as_deref() == Some(id.as_str()))
                {
                    c.leaving = Some(0.0);
                }
            }
        }
        ActionKind::Emit { name, data } => {
            let body = serde_json::to_string(data).unwrap_or_default();
            let line = if data.is_empty() {
                format!("* {}", trimmed(name, 30))
            } else {
                format!("* {} {}", trimmed(name, 30), trimmed(&body, 60))
            };
            world.resource_mut::<LogStrip>().push(line, log_cap);
        }
        ActionKind::Log { text } => {
            world
                .resource_mut::<LogStrip>()
                .push(trimmed(text, 90), log_cap);
        }
        // Other sinks carry these out.
        ActionKind::Notify { .. } | ActionKind::Sound { .. } | ActionKind::Run { .. } => {}
    }
}

/// Advances every timer by the frame's delta and decides whether the window must animate.
#[allow(clippy::type_complexity)]
pub fn advance(
    time: Res<Time>,
    mut commands: Commands,
    mut familiars: Query<(&mut Animation, &mut Mana, &mut Progress, &mut Speech)>,
    mut companions: Query<(Entity, &mut Companion)>,
    mut floaters: Query<(Entity, &mut Floater)>,
    mut activity: ResMut<Activity>,
) {
    let dt = time.delta_secs();
    let mut animating = false;
    for (mut anim, mut mana, mut progress, mut speech) in &mut familiars {
        anim.0.tick(dt);
        animating |= !anim.0.settled();
        let target = mana.fraction().unwrap_or(mana.shown);
        let diff = target - mana.shown;
        if diff.abs() > 0.002 {
            // Ease towards the target in about half a second.
            mana.shown += diff * (dt * 6.0).min(1.0);
            animating = true;
        } else {
            mana.shown = target;
        }
        if let Some(c) = mana.compaction.as_mut() {
            c.age += dt;
        }
        if let Some(age) = progress.level_up_age.as_mut() {
            *age += dt;
            animating = true;
            if *age > 2.0 {
                progress.level_up_age = None;
            }
        }
        if let Some((_, left)) = speech.0.as_mut() {
            *left -= dt;
            if *left <= 0.0 {
                speech.0 = None;
            }
        }
    }
    for (e, mut c) in &mut companions {
        c.age += dt;
        c.busy = (c.busy - dt).max(0.0);
        if c.age < COMPANION_ENTER_SECS || c.busy > 0.0 {
            animating = true;
        }
        if let Some(l) = c.leaving.as_mut() {
            *l += dt;
            animating = true;
            if *l >= COMPANION_LEAVE_SECS {
                commands.entity(e).despawn();
            }
        }
    }
    for (e, mut f) in &mut floaters {
        f.age += dt;
        animating = true;
        if f.age >= FLOATER_SECS {
            commands.entity(e).despawn();
        }
    }
    activity.set_if_neq(Activity { animating });
}
