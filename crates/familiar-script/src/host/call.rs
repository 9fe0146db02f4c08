//! Calling: run the scripts' handlers for one event, or `on_timer` for each due timer, and
//! collect their actions and errors. Every call runs with its wall-clock budget, on a stack
//! big enough for the nested data it can build ([`crate::stack`]), and the state it leaves is
//! checked for data nested too deep. Part of [`crate::host`].

use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use familiar_model::{Action, Event, EventKind};
use rhai::{CallFnOptions, Dynamic, Engine, EvalAltResult};

use super::load::module_text;
use super::{Script, ScriptHost, kind_index};
use crate::actions::Shared;
use crate::bounded::{self, Shape};
use crate::diag::{RuntimeContext, ScriptDiagnostic, Severity, find_fn};
use crate::sandbox::Limits;
use crate::script_event::ScriptEvent;
use crate::store::STORE;
use crate::timers::{Fired, Origin, TimerEvent};

impl ScriptHost {
    /// Run every script's handlers for `event`: `on_event` first, then `on_<kind>`, script by
    /// script in load order. Actions are appended to `actions`; runtime errors and refused
    /// `run` calls to `diagnostics` (each distinct error once; repeats are only counted).
    /// The event's timestamp moves the timers' time forward (see [`ScriptHost::tick`]).
    pub fn handle(
        &mut self,
        event: &Event,
        actions: &mut Vec<Action>,
        diagnostics: &mut Vec<ScriptDiagnostic>,
    ) {
        if let Some(index) = self.wanted(event) {
            let origin = self.origin(event);
            let script_event = ScriptEvent::with_limits(event, &self.limits);
            self.on_big_stack(|host| {
                host.handle_here(script_event, origin, index, actions, diagnostics)
            });
        }
    }

    /// [`ScriptHost::handle`] for an event the caller shares: the scripts read it where it
    /// is, without a copy, when it is within the limits (the stage hands every event over
    /// this way, and keeps it for the window and stdout).
    pub fn handle_shared(
        &mut self,
        event: &Arc<Event>,
        actions: &mut Vec<Action>,
        diagnostics: &mut Vec<ScriptDiagnostic>,
    ) {
        if let Some(index) = self.wanted(event) {
            let origin = self.origin(event);
            let script_event = ScriptEvent::shared(event, &self.limits);
            self.on_big_stack(|host| {
                host.handle_here(script_event, origin, index, actions, diagnostics)
            });
        }
    }

    /// Move the timers' time to `event`'s, and say whether any handler wants it (the index of
    /// its kind) or it can be skipped.
    fn wanted(&mut self, event: &Event) -> Option<usize> {
        if let Some(secs) = ts_secs(event) {
            self.shared.lock().timers.advance(secs);
        }
        let index = kind_index(event.kind);
        self.scripts
            .iter()
            .any(|s| s.compiled.on_event || s.compiled.on_kind[index])
            .then_some(index)
    }

    /// The time of `event` by the host's clock, and what its actions are tagged with (read
    /// before the scripts' copy cuts any field to the string limit).
    fn origin(&self, event: &Event) -> (f64, Arc<Origin>) {
        (self.clock.now_secs(event), Arc::new(Origin::of(event)))
    }

    fn handle_here(
        &mut self,
        script_event: ScriptEvent,
        (now, origin): (f64, Arc<Origin>),
        index: usize,
        actions: &mut Vec<Action>,
        diagnostics: &mut Vec<ScriptDiagnostic>,
    ) {
        let script_event = Dynamic::from(script_event);
        self.shared.lock().origin = Some(origin.clone());
        for script in &mut self.scripts {
            let (wants_all, wants_kind) =
                (script.compiled.on_event, script.compiled.on_kind[index]);
            if !wants_all && !wants_kind {
                continue;
            }
            {
                let mut state = self.shared.lock();
                state.script_id = script.id;
                state.now = now;
            }
            let call = Call {
                engine: &self.engine,
                shared: &self.shared,
                limits: &self.limits,
                origin: &origin,
            };
            if wants_all {
                call.handler(script, "on_event", &script_event, diagnostics);
            }
            if wants_kind {
                call.handler(
                    script,
                    &self.handler_names[index],
                    &script_event,
                    diagnostics,
                );
            }
            let mut state = self.shared.lock();
            for kind in state.queue.drain() {
                actions.push(origin.action(kind, &script.name));
            }
            drop(state);
            let value = script.compiled.scope.get(STORE);
            script.store.save_soon(value, &script.name);
        }
        self.shared.lock().origin = None;
    }

    /// [`ScriptHost::handle`] returning fresh vectors.
    pub fn handle_event(&mut self, event: &Event) -> (Vec<Action>, Vec<ScriptDiagnostic>) {
        let mut actions = Vec::new();
        let mut diagnostics = Vec::new();
        self.handle(event, &mut actions, &mut diagnostics);
        (actions, diagnostics)
    }

    /// Whether any script has a timer set: without one, [`ScriptHost::tick`] has nothing to
    /// fire, and a caller replaying events can skip reading each one's time for it.
    pub fn has_timers(&self) -> bool {
        self.shared.lock().timers.has_any()
    }

    /// Fire every timer due by `now` (set by scripts with `after` and `every`), in order of due
    /// time, each into its script's `on_timer(t)`. `now` is the caller's clock, never read here:
    /// wall time for a live session, the events' own time for a replay or a dry run. Actions
    /// are tagged with the event whose handler set the timer. Time never goes back: a `now`
    /// earlier than an earlier tick or event timestamp fires nothing new.
    pub fn tick(&mut self, now: SystemTime) -> (Vec<Action>, Vec<ScriptDiagnostic>) {
        let secs = now
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let fired = self.shared.lock().timers.take_due(secs);
        let mut actions = Vec::new();
        let mut diagnostics = Vec::new();
        if !fired.is_empty() {
            self.on_big_stack(|host| host.fire(fired, now, &mut actions, &mut diagnostics));
        }
        // A store changed by the last events of a burst is saved within a second of it, not
        // at some later event (a crash meanwhile lost it all).
        self.save_stores_soon();
        (actions, diagnostics)
    }

    fn fire(
        &mut self,
        fired: Vec<Fired>,
        now: SystemTime,
        actions: &mut Vec<Action>,
        diagnostics: &mut Vec<ScriptDiagnostic>,
    ) {
        for timer in fired {
            let Some(script) = self
                .scripts
                .iter_mut()
                .find(|s| s.id == timer.script && s.compiled.on_timer)
            else {
                continue;
            };
            let origin = timer.origin.clone();
            // `once_per` in `on_timer` reads the host's clock as for an event at `now`.
            let mut probe = Event::new(origin.kind, origin.line);
            probe.session = origin.session.clone();
            probe.ts = Some(familiar_model::time::format_timestamp(now));
            let clock_now = self.clock.now_secs(&probe);
            {
                let mut state = self.shared.lock();
                state.script_id = script.id;
                state.now = clock_now;
                state.origin = Some(origin.clone());
            }
            let arg = Dynamic::from(TimerEvent {
                fired: Arc::new(timer),
            });
            let call = Call {
                engine: &self.engine,
                shared: &self.shared,
                limits: &self.limits,
                origin: &origin,
            };
            call.handler(script, "on_timer", &arg, diagnostics);
            let mut state = self.shared.lock();
            for kind in state.queue.drain() {
                actions.push(origin.action(kind, &script.name));
            }
            state.origin = None;
            drop(state);
            let value = script.compiled.scope.get(STORE);
            script.store.save_soon(value, &script.name);
        }
    }
}

/// The event's timestamp in seconds since the epoch, if it has a readable one.
fn ts_secs(event: &Event) -> Option<f64> {
    event.ts.as_deref().and_then(crate::clock::rfc3339_secs)
}

/// What every handler call of one event (or timer) shares.
struct Call<'a> {
    engine: &'a Engine,
    shared: &'a Shared,
    limits: &'a Limits,
    origin: &'a Origin,
}

impl Call<'_> {
    /// Call one handler with its time budget, then check the state it left.
    fn handler(
        &self,
        script: &mut Script,
        handler: &str,
        arg: &Dynamic,
        diagnostics: &mut Vec<ScriptDiagnostic>,
    ) {
        let options = CallFnOptions::new().eval_ast(false);
        self.shared.lock().deadline = Some(Instant::now() + self.limits.max_call_time);
        let result = self.engine.call_fn_with_options::<Dynamic>(
            options,
            &mut script.compiled.scope,
            &script.compiled.ast,
            handler,
            (arg.clone(),),
        );
        let dropped_logs = {
            let mut state = self.shared.lock();
            state.deadline = None;
            std::mem::take(&mut state.queue.dropped)
        };
        let context = (self.origin.kind, self.origin.line);
        report_refusals(script, self.shared, handler, context, diagnostics);
        let error = match result {
            Err(err) => Some(self.diagnostic(script, handler, &err)),
            Ok(_) => reset_oversized_state(script, self.limits)
                .or_else(|| {
                    (dropped_logs > 0).then(|| {
                        format!(
                            "{dropped_logs} print/debug line(s) dropped: the actions of one \
                             call may hold at most {} actions and {} bytes of text",
                            self.limits.max_actions, self.limits.max_string_size
                        )
                    })
                })
                .map(|message| {
                    let mut diag = ScriptDiagnostic::warning(
                        &script.name,
                        &script.compiled.source,
                        find_fn(&script.compiled.source, handler),
                        message,
                    );
                    diag.severity = Severity::Error;
                    diag.runtime = Some(self.context(handler));
                    diag
                }),
        };
        let Some(diag) = error else { return };
        *script.errors.entry(handler.to_owned()).or_insert(0) += 1;
        let key = (
            handler.to_owned(),
            diag.line,
            diag.col,
            diag.message.clone(),
        );
        if script.reported.insert(key) {
            diagnostics.push(diag);
        }
    }

    fn context(&self, handler: &str) -> RuntimeContext {
        RuntimeContext {
            handler: handler.to_owned(),
            event: Some((self.origin.kind, self.origin.line)),
        }
    }

    fn diagnostic(
        &self,
        script: &mut Script,
        handler: &str,
        err: &EvalAltResult,
    ) -> ScriptDiagnostic {
        // A failed call can leave deep data in state as well.
        reset_oversized_state(script, self.limits);
        let compiled = &script.compiled;
        let dir = compiled.dir.clone();
        let mut diag = ScriptDiagnostic::from_eval(
            &script.name,
            &compiled.source,
            err,
            self.context(handler),
            self.limits,
            &|module| module_text(dir.as_deref(), module, self.limits),
        );
        // Rhai functions cannot see the caller's variables: only handlers, called by the host
        // with the script's scope, see state. Say so when a helper trips over it.
        if let EvalAltResult::ErrorVariableNotFound(var, _) = err.unwrap_inner()
            && matches!(*err, EvalAltResult::ErrorInFunctionCall(..))
            && compiled.scope.contains(var)
        {
            diag.notes.push(format!(
                "'{var}' is a script-level variable: only handlers see state; pass it to the \
                 function as an argument and return the new value"
            ));
        }
        diag
    }
}

/// Reset the first state variable nested deeper than `max` to `()`, returning its name. Data
/// that deep would overflow the stack of the next walk over it outside a handler call (a
/// reload drops the old state on the caller's stack).
pub(super) fn reset_oversized_state(script: &mut Script, limits: &Limits) -> Option<String> {
    let scope = &mut script.compiled.scope;
    let (max_depth, max_bytes) = (limits.max_data_depth, limits.max_state_bytes);
    let mut deep: Vec<String> = Vec::new();
    let mut sizes: Vec<(String, usize)> = Vec::new();
    for (name, constant, value) in scope.iter_raw() {
        if constant {
            continue;
        }
        match bounded::measure(value, max_depth, max_bytes) {
            Shape::TooDeep => deep.push(name.to_owned()),
            Shape::TooLarge => sizes.push((name.to_owned(), usize::MAX)),
            Shape::Fits(bytes) => sizes.push((name.to_owned(), bytes)),
        }
    }
    let mut total = sizes
        .iter()
        .fold(0usize, |sum, (_, b)| sum.saturating_add(*b));
    if deep.is_empty() && total <= max_bytes {
        return None;
    }
    // What is too deep goes, then the largest until the rest fits.
    sizes.sort_by_key(|(_, bytes)| std::cmp::Reverse(*bytes));
    let mut large = Vec::new();
    for (name, bytes) in sizes {
        if total <= max_bytes {
            break;
        }
        total = total.saturating_sub(bytes);
        large.push(name);
    }
    for name in deep.iter().chain(&large) {
        // `store` is Familiar's own map: emptied, never `()` (the script would fail on it).
        let reset = if name == STORE {
            Dynamic::from_map(rhai::Map::new())
        } else {
            Dynamic::UNIT
        };
        if let Some(value) = scope.get_mut(name) {
            *value = reset;
        }
    }
    let shown = |name: &str| if name == STORE { "#{}" } else { "()" };
    if let Some(name) = deep.first() {
        return Some(format!(
            "state variable `{name}` holds data nested more than {max_depth} levels deep; it \
             is reset to {}",
            shown(name)
        ));
    }
    large.first().map(|name| {
        format!(
            "state variable `{name}` grew past the {max_bytes} bytes a script's state may \
             hold; it is reset to {}",
            shown(name)
        )
    })
}

/// Characters of a refused `run`'s argv shown in its warning: enough to know it, never a
/// screenful (an argv may hold a 16 MiB string).
const SHOWN_ARGV: usize = 200;

/// The argv as JSON, cut after [`SHOWN_ARGV`] characters (`…` and how long it was).
fn shown_argv(argv: &[String]) -> String {
    let json = serde_json::to_string(argv).unwrap_or_default();
    let count = json.chars().count();
    if count <= SHOWN_ARGV {
        return json;
    }
    let cut: String = json.chars().take(SHOWN_ARGV).collect();
    format!("{cut}… ({count} characters)")
}

/// Warn about `run` calls refused during one handler call, once per call site.
fn report_refusals(
    script: &mut Script,
    shared: &Shared,
    handler: &str,
    (kind, line): (EventKind, u64),
    diagnostics: &mut Vec<ScriptDiagnostic>,
) {
    let refusals: Vec<_> = shared.lock().refusals.drain(..).collect();
    for refusal in refusals {
        let pos = refusal.position;
        let mut diag = ScriptDiagnostic::warning(
            &script.name,
            &script.compiled.source,
            pos.line().map(|l| (l, pos.position().unwrap_or(1))),
            format!(
                "run({}) refused: running programs is not allowed (use --allow-run)",
                shown_argv(&refusal.argv)
            ),
        );
        diag.runtime = Some(RuntimeContext {
            handler: handler.to_owned(),
            event: Some((kind, line)),
        });
        let key = (
            handler.to_owned(),
            diag.line,
            diag.col,
            "run refused".to_owned(),
        );
        if script.reported.insert(key) {
            diagnostics.push(diag);
        }
    }
}
