//! Time for scripts: `after(ms, name)`, `every(ms, name)` and `cancel(name)` set and clear
//! timers, [`crate::ScriptHost::tick`] fires the due ones into the script's `on_timer(t)`, and
//! `ev.state` / `t.state` keep a map per session.
//!
//! Timers never read the host's own clock. Their time is the latest of the times the caller
//! gave to `tick` and the timestamps (`ts`) of the events handled, so a live watcher (ticking
//! with wall time) and a dry run over a file (ticking with the events' own times) both work,
//! and a dry run gives the same actions every time. A timer belongs to a script and to the
//! session of the event whose handler set it; setting a timer again under the same name (in the
//! same session) moves it. Its actions are tagged with that event, like the event's own. The
//! state behind these functions is part of `HostState` (in `actions`), shared with
//! [`crate::host`].

use std::sync::Arc;

use familiar_model::{Action, ActionKind, Event, EventKind, Status};
use rhai::{Dynamic, Engine, EvalAltResult, FLOAT, INT, ImmutableString, Map, Position};

use crate::actions::Shared;
use crate::bounded::Shape;

type RhaiResult<T> = Result<T, Box<EvalAltResult>>;

/// The event a handler runs for, as far as its actions and timers need it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Origin {
    pub session: Option<String>,
    pub agent: Option<String>,
    pub line: u64,
    pub kind: EventKind,
    pub context_used: Option<u64>,
    pub context_limit: u64,
    pub status: Status,
}

impl Origin {
    pub fn of(event: &Event) -> Origin {
        Origin {
            session: event.session.clone(),
            agent: event.agent.clone(),
            line: event.line,
            kind: event.kind,
            context_used: event.context_used,
            context_limit: event.context_limit,
            status: event.status,
        }
    }

    /// An action queued by `script` while handling this origin.
    pub fn action(&self, kind: ActionKind, script: &str) -> Action {
        Action {
            kind,
            script: script.to_owned(),
            session: self.session.clone(),
            agent: self.agent.clone(),
            line: self.line,
            event: self.kind,
        }
    }
}

/// One timer set by a script.
#[derive(Debug, Clone)]
struct Timer {
    script: usize,
    name: String,
    origin: Arc<Origin>,
    /// Seconds since the epoch; `None` until the first time is known (then `now + delay`).
    due: Option<f64>,
    delay: f64,
    /// Repeat period in seconds, for `every`.
    period: Option<f64>,
    /// Order of setting, to fire timers due at the same time in the order they were set.
    seq: u64,
}

/// A timer that is due, as `tick` hands it to `on_timer`.
#[derive(Debug, Clone)]
pub(crate) struct Fired {
    pub script: usize,
    pub name: String,
    pub origin: Arc<Origin>,
    pub due: f64,
    pub period: Option<f64>,
}

/// Every script's timers and the timers' time.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    list: Vec<Timer>,
    /// Latest time seen (seconds since the epoch), from `tick` and from events' timestamps.
    now: Option<f64>,
    seq: u64,
    /// Times past this are ignored ([`crate::HostConfig::latest_time`]).
    pub latest: Option<f64>,
}

impl Timers {
    /// Move the timers' time forward (never back: one late record cannot rewind it; nor past
    /// the latest time there may be: one record from the future cannot hold every timer).
    pub fn advance(&mut self, secs: f64) {
        if secs.is_finite()
            && self.latest.is_none_or(|latest| secs <= latest)
            && self.now.is_none_or(|now| secs > now)
        {
            self.now = Some(secs);
        }
    }

    fn set(
        &mut self,
        script: usize,
        name: &str,
        origin: Arc<Origin>,
        delay: f64,
        period: Option<f64>,
    ) {
        self.cancel(script, origin.session.as_deref(), name);
        self.seq += 1;
        self.list.push(Timer {
            script,
            name: name.to_owned(),
            due: self.now.map(|now| now + delay),
            origin,
            delay,
            period,
            seq: self.seq,
        });
    }

    fn cancel(&mut self, script: usize, session: Option<&str>, name: &str) -> bool {
        let before = self.list.len();
        self.list.retain(|t| {
            !(t.script == script && t.name == name && t.origin.session.as_deref() == session)
        });
        self.list.len() != before
    }

    /// How many timers `script` has set (due or not).
    fn count(&self, script: usize) -> usize {
        self.list.iter().filter(|t| t.script == script).count()
    }

    /// Whether `script` has a timer `name` set in `session`.
    fn is_set(&self, script: usize, session: Option<&str>, name: &str) -> bool {
        self.list
            .iter()
            .any(|t| t.script == script && t.name == name && t.origin.session.as_deref() == session)
    }

    /// Whether any timer is set, due or not.
    pub fn has_any(&self) -> bool {
        !self.list.is_empty()
    }

    /// Drop a script's timers (it was reloaded: its state starts afresh).
    pub fn forget(&mut self, script: usize) {
        self.list.retain(|t| t.script != script);
    }

    /// Advance to `now` and take the timers due by then, in order of due time and then of
    /// setting. A one-shot timer is removed; a repeating one fires once and is moved to its
    /// next due time after `now` (missed periods are skipped, not fired in a burst).
    pub fn take_due(&mut self, now: f64) -> Vec<Fired> {
        self.advance(now);
        let Some(now) = self.now else {
            return Vec::new();
        };
        for timer in &mut self.list {
            if timer.due.is_none() {
                timer.due = Some(now + timer.delay);
            }
        }
        let mut due: Vec<(f64, u64)> = self
            .list
            .iter()
            .filter_map(|t| t.due.filter(|d| *d <= now).map(|d| (d, t.seq)))
            .collect();
        due.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut fired = Vec::with_capacity(due.len());
        for (at, seq) in due {
            let Some(index) = self.list.iter().position(|t| t.seq == seq) else {
                continue;
            };
            let timer = &mut self.list[index];
            fired.push(Fired {
                script: timer.script,
                name: timer.name.clone(),
                origin: timer.origin.clone(),
                due: at,
                period: timer.period,
            });
            match timer.period {
                Some(period) => {
                    let skipped = ((now - at) / period).floor() + 1.0;
                    timer.due = Some(at + skipped * period);
                }
                None => {
                    self.list.remove(index);
                }
            }
        }
        fired
    }
}

/// What `on_timer(t)` receives: the script type `Timer`.
#[derive(Debug, Clone)]
pub struct TimerEvent {
    pub(crate) fired: Arc<Fired>,
}

fn opt_str(value: &Option<String>) -> Dynamic {
    value
        .as_deref()
        .map_or(Dynamic::UNIT, |s| Dynamic::from(ImmutableString::from(s)))
}

fn runtime_error(message: String) -> Box<EvalAltResult> {
    Box::new(EvalAltResult::ErrorRuntime(message.into(), Position::NONE))
}

/// The fields of `t` in `on_timer(t)`, for "did you mean" hints and the docs test.
pub const TIMER_FIELDS: &[&str] = &["name", "session", "agent", "at", "every", "state"];

/// The state map of (running script, `session`).
pub(crate) fn session_state(shared: &Shared, session: &Option<String>) -> Map {
    let state = shared.lock();
    state
        .session_state
        .get(&(state.script_id, session.clone()))
        .map(|(map, _)| map.clone())
        .unwrap_or_default()
}

pub(crate) fn set_session_state(
    shared: &Shared,
    session: &Option<String>,
    map: Map,
    max_depth: usize,
) -> RhaiResult<()> {
    let bounds = shared.lock().bounds;
    let max_bytes = bounds.session_state_bytes;
    let bytes = match crate::bounded::measure(&Dynamic::from_map(map.clone()), max_depth, max_bytes)
    {
        Shape::Fits(bytes) => bytes,
        Shape::TooDeep => {
            return Err(runtime_error(format!(
                "state: data nested more than {max_depth} levels deep"
            )));
        }
        Shape::TooLarge => {
            return Err(runtime_error(format!(
                "state: more than the {max_bytes} bytes a session's state may hold"
            )));
        }
    };
    let mut state = shared.lock();
    let key = (state.script_id, session.clone());
    let before = state.session_state.get(&key).map_or(0, |(_, bytes)| *bytes);
    let total = state
        .session_state_total
        .get(&key.0)
        .copied()
        .unwrap_or(0)
        .saturating_sub(before)
        .saturating_add(bytes);
    let max_total = bounds.all_session_state_bytes;
    if total > max_total && bytes > before {
        return Err(runtime_error(format!(
            "state: the sessions' states of this script together would hold more than the \
             {max_total} bytes they may; empty the state of sessions that are done \
             (`ev.state = #{{}}`)"
        )));
    }
    state.session_state_total.insert(key.0, total);
    if map.is_empty() {
        state.session_state.remove(&key);
    } else {
        state.session_state.insert(key, (map, bytes));
    }
    Ok(())
}

/// Register `after`, `every`, `cancel` and the `Timer` type.
pub(crate) fn register(engine: &mut Engine, shared: &Shared, max_depth: usize) {
    let set = {
        let s = shared.clone();
        move |name: &str, ms: FLOAT, repeat: bool| -> RhaiResult<()> {
            let function = if repeat { "every" } else { "after" };
            if !ms.is_finite() || ms < 0.0 || (repeat && ms < 1.0) {
                return Err(runtime_error(format!(
                    "{function}: the delay must be a number of milliseconds{}, not {ms}",
                    if repeat {
                        " of at least 1"
                    } else {
                        " of 0 or more"
                    }
                )));
            }
            let mut state = s.lock();
            let bounds = state.bounds;
            if name.len() > bounds.timer_name_bytes {
                return Err(runtime_error(format!(
                    "{function}: a name of {} bytes, longer than the {} a timer's name may have",
                    name.len(),
                    bounds.timer_name_bytes
                )));
            }
            let Some(origin) = state.origin.clone() else {
                return Err(runtime_error(format!(
                    "{function}: timers are set from a handler (on_event, on_<kind>, on_timer), \
                     not while the script loads"
                )));
            };
            let script = state.script_id;
            if state.timers.count(script) >= bounds.timers
                && !state.timers.is_set(script, origin.session.as_deref(), name)
            {
                return Err(runtime_error(format!(
                    "{function}: more than {} timers set by one script; `cancel` the ones not \
                     needed, or reuse names (setting a name again moves its timer)",
                    bounds.timers
                )));
            }
            let secs = ms / 1000.0;
            state
                .timers
                .set(script, name, origin, secs, repeat.then_some(secs));
            Ok(())
        }
    };
    let (a, b, c, d) = (set.clone(), set.clone(), set.clone(), set);
    engine.register_fn("after", move |ms: INT, name: ImmutableString| {
        a(&name, ms as FLOAT, false)
    });
    engine.register_fn("after", move |ms: FLOAT, name: ImmutableString| {
        b(&name, ms, false)
    });
    engine.register_fn("every", move |ms: INT, name: ImmutableString| {
        c(&name, ms as FLOAT, true)
    });
    engine.register_fn("every", move |ms: FLOAT, name: ImmutableString| {
        d(&name, ms, true)
    });
    let s = shared.clone();
    engine.register_fn("cancel", move |name: ImmutableString| -> bool {
        let mut state = s.lock();
        let script = state.script_id;
        let session = state.origin.as_ref().and_then(|o| o.session.clone());
        state.timers.cancel(script, session.as_deref(), &name)
    });

    engine.register_type_with_name::<TimerEvent>("Timer");
    engine
        .register_get("name", |t: &mut TimerEvent| {
            ImmutableString::from(t.fired.name.as_str())
        })
        .register_get("session", |t: &mut TimerEvent| {
            opt_str(&t.fired.origin.session)
        })
        .register_get("agent", |t: &mut TimerEvent| opt_str(&t.fired.origin.agent))
        .register_get("at", |t: &mut TimerEvent| t.fired.due)
        .register_get("every", |t: &mut TimerEvent| {
            t.fired.period.map_or(Dynamic::UNIT, |p| {
                Dynamic::from_int((p * 1000.0).round() as INT)
            })
        });
    let s = shared.clone();
    engine.register_get("state", move |t: &mut TimerEvent| {
        session_state(&s, &t.fired.origin.session)
    });
    let s = shared.clone();
    engine.register_set(
        "state",
        move |t: &mut TimerEvent, map: Map| -> RhaiResult<()> {
            set_session_state(&s, &t.fired.origin.session, map, max_depth)
        },
    );
    engine.register_fn("to_string", |t: &mut TimerEvent| {
        format!("timer {:?} (due at {})", t.fired.name, t.fired.due)
    });
    engine.register_fn("to_debug", |t: &mut TimerEvent| {
        format!("timer {:?} (due at {})", t.fired.name, t.fired.due)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(session: &str) -> Arc<Origin> {
        let mut ev = Event::new(EventKind::Status, 1);
        ev.session = Some(session.into());
        Arc::new(Origin::of(&ev))
    }

    #[test]
    fn timers_fire_in_due_order_and_repeat_without_bursts() {
        let mut timers = Timers::default();
        timers.advance(100.0);
        timers.set(0, "b", origin("s"), 2.0, None);
        timers.set(0, "a", origin("s"), 1.0, None);
        timers.set(0, "tick", origin("s"), 1.0, Some(1.0));
        assert!(timers.take_due(100.5).is_empty());
        let names = |f: Vec<Fired>| f.into_iter().map(|f| f.name).collect::<Vec<_>>();
        assert_eq!(names(timers.take_due(102.0)), ["a", "tick", "b"]);
        // Ten periods later: the repeating timer fires once, then keeps its rhythm.
        assert_eq!(names(timers.take_due(112.5)), ["tick"]);
        assert!(timers.take_due(112.9).is_empty());
        assert_eq!(names(timers.take_due(113.0)), ["tick"]);
    }

    #[test]
    fn a_timer_set_before_any_time_is_known_counts_from_the_first_tick() {
        let mut timers = Timers::default();
        timers.set(0, "x", origin("s"), 5.0, None);
        assert!(timers.take_due(1000.0).is_empty());
        assert_eq!(timers.take_due(1005.0).len(), 1);
    }

    #[test]
    fn setting_again_moves_the_timer_and_sessions_are_apart() {
        let mut timers = Timers::default();
        timers.advance(0.0);
        timers.set(0, "x", origin("s1"), 5.0, None);
        timers.set(0, "x", origin("s2"), 5.0, None);
        timers.advance(3.0);
        timers.set(0, "x", origin("s1"), 5.0, None);
        let fired = timers.take_due(5.0);
        assert_eq!(fired.len(), 1);
        assert_eq!(fired[0].origin.session.as_deref(), Some("s2"));
        assert!(timers.cancel(0, Some("s1"), "x"));
        assert!(timers.take_due(100.0).is_empty());
    }
}
