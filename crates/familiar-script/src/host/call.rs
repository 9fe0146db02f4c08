//! Calling: run the scripts' handlers for one event and collect their actions and errors.
//! Part of [`crate::host`].

use familiar_model::{Action, Event};
use rhai::{CallFnOptions, Dynamic, Engine, EvalAltResult};

use super::load::module_text;
use super::{Script, ScriptHost, kind_index};
use crate::actions::Shared;
use crate::diag::{RuntimeContext, ScriptDiagnostic};
use crate::sandbox::Limits;
use crate::script_event::ScriptEvent;

impl ScriptHost {
    /// Run every script's handlers for `event`: `on_event` first, then `on_<kind>`, script by
    /// script in load order. Actions are appended to `actions`; runtime errors and refused
    /// `run` calls to `diagnostics` (each distinct error once; repeats are only counted).
    pub fn handle(
        &mut self,
        event: &Event,
        actions: &mut Vec<Action>,
        diagnostics: &mut Vec<ScriptDiagnostic>,
    ) {
        let index = kind_index(event.kind);
        if !self
            .scripts
            .iter()
            .any(|s| s.compiled.on_event || s.compiled.on_kind[index])
        {
            return;
        }
        let now = self.clock.now_secs(event);
        let script_event = ScriptEvent::new(event.clone());
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
            if wants_all {
                call_handler(
                    &self.engine,
                    &self.shared,
                    &self.limits,
                    script,
                    "on_event",
                    &script_event,
                    diagnostics,
                );
            }
            if wants_kind {
                call_handler(
                    &self.engine,
                    &self.shared,
                    &self.limits,
                    script,
                    &self.handler_names[index],
                    &script_event,
                    diagnostics,
                );
            }
            let mut state = self.shared.lock();
            for kind in state.queue.drain(..) {
                actions.push(Action {
                    kind,
                    script: script.name.clone(),
                    session: event.session.clone(),
                    agent: event.agent.clone(),
                    line: event.line,
                    event: event.kind,
                    context_used: event.context_used,
                    context_limit: event.context_limit,
                    status: event.status,
                });
            }
        }
    }

    /// [`ScriptHost::handle`] returning fresh vectors.
    pub fn handle_event(&mut self, event: &Event) -> (Vec<Action>, Vec<ScriptDiagnostic>) {
        let mut actions = Vec::new();
        let mut diagnostics = Vec::new();
        self.handle(event, &mut actions, &mut diagnostics);
        (actions, diagnostics)
    }
}

fn call_handler(
    engine: &Engine,
    shared: &Shared,
    limits: &Limits,
    script: &mut Script,
    handler: &str,
    event: &ScriptEvent,
    diagnostics: &mut Vec<ScriptDiagnostic>,
) {
    let options = CallFnOptions::new().eval_ast(false);
    let result = engine.call_fn_with_options::<Dynamic>(
        options,
        &mut script.compiled.scope,
        &script.compiled.ast,
        handler,
        (event.clone(),),
    );
    report_refusals(script, shared, handler, event.event(), diagnostics);
    let Err(err) = result else { return };
    *script.errors.entry(handler.to_owned()).or_insert(0) += 1;
    let compiled = &script.compiled;
    let ev = event.event();
    let dir = compiled.dir.clone();
    let mut diag = ScriptDiagnostic::from_eval(
        &script.name,
        &compiled.source,
        &err,
        RuntimeContext {
            handler: handler.to_owned(),
            event: Some((ev.kind, ev.line)),
        },
        limits,
        &|module| module_text(dir.as_deref(), module),
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

/// Warn about `run` calls refused during one handler call, once per call site.
fn report_refusals(
    script: &mut Script,
    shared: &Shared,
    handler: &str,
    event: &Event,
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
                serde_json::to_string(&refusal.argv).unwrap_or_default()
            ),
        );
        diag.runtime = Some(RuntimeContext {
            handler: handler.to_owned(),
            event: Some((event.kind, event.line)),
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
