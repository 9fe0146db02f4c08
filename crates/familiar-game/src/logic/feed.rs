//! Applies the feed to the world: each event of the session model and each action of the
//! scripts finds (or brings in) its familiar and changes its state.

use bevy::prelude::*;
use familiar_model::{Action, ActionKind, AgentKind, Event, EventKind, Status};

use super::state::CompanionSeq;
use super::text::{agent_label, codex_label, project_of, session_label, short_target, trimmed};
use super::{
    Animation, Companion, Familiar, FeedChannel, FeedMessage, Floater, Focus, GameConfig, LogStrip,
    MAX_PER_FRAME, Mana, Mark, Quest, SessionInfo, Speech,
};
use crate::GameFeed;
use crate::anim::{Anim, AnimMachine};
use crate::progression::UserProfile;

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
    crate::frame_trace::note(world, &items);
    let now = world
        .get_resource::<Time>()
        .map(|t| t.elapsed_secs())
        .unwrap_or(0.0);
    for item in items {
        match item {
            GameFeed::Event(ev) => apply_event(world, &ev, now),
            GameFeed::Action(act) => apply_action(world, &act, now),
            GameFeed::Progress(update) => super::xp::apply(world, update),
            GameFeed::Quit => {
                world.write_message(bevy::app::AppExit::Success);
            }
            GameFeed::Waiting(looked_in) => {
                if let Some(mut notice) = world.get_resource_mut::<super::Notice>() {
                    notice.waiting = Some(looked_in);
                }
            }
            GameFeed::Ended(text) => {
                if let Some(mut notice) = world.get_resource_mut::<super::Notice>() {
                    notice.ended = Some(text);
                }
            }
            GameFeed::Remote { host, connected } => {
                let mut infos = world.query::<&mut SessionInfo>();
                for mut info in infos.iter_mut(world) {
                    if info.host.as_deref() == Some(host.as_str()) {
                        info.reconnecting = !connected;
                    }
                }
            }
        }
    }
}

pub(crate) fn default_label(session: &str) -> String {
    if session.is_empty() {
        "familiar".to_string()
    } else {
        session.chars().take(8).collect()
    }
}

/// Finds the familiar of `session`, bringing a new one in (and sending the least recently
/// active away when the row is full).
pub(crate) fn familiar_for(world: &mut World, session: Option<&str>, now: f32) -> Entity {
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
    let progress = super::xp::progress_of(&world.get_resource_or_init::<UserProfile>());
    let e = world
        .spawn((
            Familiar {
                label: default_label(&key),
                session: key,
                slot,
                last_active: now,
            },
            Animation(AnimMachine::new()),
            super::Effects::default(),
            Mana::default(),
            progress,
            Mark::default(),
            Speech::default(),
            Quest::default(),
            SessionInfo {
                status_since: now,
                ..SessionInfo::default()
            },
        ))
        .id();
    world.resource_mut::<Focus>().0 = Some(e);
    e
}

pub(crate) fn despawn_familiar(world: &mut World, e: Entity) {
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
pub(crate) fn companion_for(world: &mut World, owner: Entity, agent: &str) -> Option<Entity> {
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

pub(crate) fn companion_busy(world: &mut World, owner: Entity, agent: &str) {
    if let Some(c) = companion_for(world, owner, agent)
        && let Some(mut comp) = world.get_mut::<Companion>(c)
    {
        comp.busy = 1.5;
    }
}

/// Agent key of inline sidechain records, which carry no agent id.
pub(crate) const SIDECHAIN_AGENT: &str = "sidechain";

/// Session state (mana, status) that every event and action of the main agent carries.
pub(crate) fn observe_state(
    world: &mut World,
    e: Entity,
    used: Option<u64>,
    limit: u64,
    status: Status,
    ts: Option<f64>,
    now: f32,
) {
    if let Some(mut mana) = world.get_mut::<Mana>(e) {
        mana.observe(used, limit);
    }
    let changed = match world.get_mut::<Mark>(e) {
        Some(mut mark) if mark.0 != status => {
            mark.0 = status;
            true
        }
        _ => false,
    };
    if let Some(mut info) = world.get_mut::<SessionInfo>(e) {
        info.observe(ts, changed, now);
    }
    if let Some(mut anim) = world.get_mut::<Animation>(e) {
        anim.0.ask(status == Status::WaitingForApproval);
        match status {
            Status::Idle => anim.0.sleep(),
            Status::Working => anim.0.wake(),
            _ => {}
        }
    }
}

pub(crate) fn apply_event(world: &mut World, ev: &Event, now: f32) {
    let e = familiar_for(world, ev.session.as_deref(), now);
    if let Some(cwd) = ev.cwd.as_deref()
        && let Some(mut familiar) = world.get_mut::<Familiar>(e)
    {
        familiar.label = match ev.agent_kind {
            AgentKind::ClaudeCode => session_label(cwd, ev.session.as_deref()),
            AgentKind::Codex => codex_label(cwd, ev.session.as_deref()),
            other => agent_label(cwd, other.as_str(), ev.session.as_deref()),
        };
    }
    if let Some(mut info) = world.get_mut::<SessionInfo>(e) {
        if ev.host.is_some() && info.host != ev.host {
            info.host.clone_from(&ev.host);
        }
        if let Some(cwd) = ev.cwd.as_deref() {
            // The plate says which agent a session is (Claude Code is the default), and on
            // which host a remote one runs (`SessionInfo::name`).
            info.project = Some(project_of(cwd));
            info.agent = (ev.agent_kind != AgentKind::ClaudeCode).then_some(ev.agent_kind);
        }
        if let Some(branch) = ev.git_branch.as_deref().filter(|b| !b.trim().is_empty()) {
            info.branch = Some(trimmed(branch, 40));
        }
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
        super::reactions::companion_context(world, e, agent, ev);
        return;
    }
    super::doings::observe(world, e, ev);
    // Compaction first: its post size stands in for the unknown context the event carries.
    if ev.kind == EventKind::CompactBoundary
        && let Some(mut mana) = world.get_mut::<Mana>(e)
    {
        mana.compact(ev.pre_tokens, ev.post_tokens);
    }
    let ts = ev
        .ts
        .as_deref()
        .and_then(familiar_model::time::parse_timestamp_ms)
        .map(|ms| ms as f64 / 1000.0);
    observe_state(
        world,
        e,
        ev.context_used,
        ev.context_limit,
        ev.status,
        ts,
        now,
    );
    super::reactions::observe_event(world, e, ev);
    if ev.kind == EventKind::Snapshot
        && let Some(mut info) = world.get_mut::<SessionInfo>(e)
    {
        let held = ev.duration_ms.unwrap_or(0) as f32 / 1000.0;
        info.status_since = now - held;
        // The snapshot says how long in its own terms: the game clock from here on.
        info.status_since_ts = None;
    }
    let floats = matches!(
        ev.kind,
        EventKind::Reading | EventKind::Writing | EventKind::Bash | EventKind::Tool
    );
    if floats && let Some(target) = ev.target.as_deref().filter(|t| !t.trim().is_empty()) {
        // One floater per familiar: a burst of tools stacked them into unreadable text.
        let mut q = world.query::<(Entity, &Floater)>();
        let old: Vec<Entity> = q
            .iter(world)
            .filter(|(_, f)| f.owner == e)
            .map(|(x, _)| x)
            .collect();
        for x in old {
            world.despawn(x);
        }
        world.spawn(Floater {
            owner: e,
            text: short_target(target),
            age: 0.0,
        });
    }
}

pub(crate) fn apply_action(world: &mut World, act: &Action, now: f32) {
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
        // XP is the pipeline's to count: the profile it makes comes as `GameFeed::Progress`.
        ActionKind::Xp { .. } => {}
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
                    context: None,
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
        // A notification shows in the window's log too: with the desktop's (`watch`), or in
        // its place (`replay` and `demo` notify the desktop only with `--notify`).
        ActionKind::Notify { title, body, .. } => {
            let line = if body.trim().is_empty() {
                format!("! {}", trimmed(title, 40))
            } else {
                format!("! {}: {}", trimmed(title, 40), trimmed(body, 60))
            };
            world.resource_mut::<LogStrip>().push(line, log_cap);
        }
        // Other sinks carry these out.
        ActionKind::Sound { .. } | ActionKind::Run { .. } => {}
    }
}
