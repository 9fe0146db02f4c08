//! What time and the signals do to a session's status: the model's tick (the quiet-turn and
//! idle timers, a held `success` let out, events held for a session no record named), and a
//! hook's or the CLI's own word on a status. Part of [`super::SessionModel`].

use std::time::SystemTime;

use familiar_model::Event;
use familiar_model::time::elapsed;

use super::SessionModel;
use crate::file::FileState;
use crate::input::Output;
use crate::timers::timer_status;

impl SessionModel {
    pub(super) fn tick(&mut self, now: SystemTime, out: &mut Vec<Output>) {
        self.now = Some(now);
        let timers = self.config.timers;
        // Only files an input changed or whose next threshold came: at any other file, this
        // tick would find nothing to do (see `table`).
        let due = self.files.due(now);
        if due.is_empty() {
            return;
        }
        let quiet = |file: &FileState| {
            file.last_activity
                .is_some_and(|last| elapsed(last, now) >= timers.quiet_after)
        };
        // Events held for a session that no record named: once the file has been quiet for
        // the quiet-turn time, no record is coming soon to name it; let them out as they are.
        for &id in &due {
            if let Some(file) = self.files.get_mut(id)
                && !file.held.is_empty()
                && quiet(file)
            {
                Self::release_held(file, out);
            }
        }
        // A success held for its `turn_duration`: quiet this long, the CLI wrote none.
        for &id in &due {
            if self.files.get(id).is_some_and(|file| {
                !file.in_backlog && file.normalizer.has_deferred() && quiet(file)
            }) {
                self.flush(id, out);
            }
        }
        let mut events = Vec::new();
        for &id in &due {
            let finished = self
                .files
                .get(id)
                .is_some_and(|file| self.finished_subagent(file));
            let Some(file) = self.files.get_mut(id) else {
                continue;
            };
            if let Some(last) = file.last_activity {
                // The next threshold after now: quiet-turn or idle time since the last activity.
                let next = [timers.quiet_after, timers.idle_after]
                    .into_iter()
                    .filter_map(|after| last.checked_add(after))
                    .filter(|at| *at > now)
                    .min();
                if let Some(next) = next {
                    self.files.schedule(id, next);
                }
            }
            let Some(file) = self.files.get_mut(id) else {
                continue;
            };
            if file.in_backlog || file.hook_status.is_some() || file.last_line == 0 || finished {
                continue;
            }
            let Some(last) = file.last_activity else {
                continue;
            };
            let due = timer_status(
                &timers,
                elapsed(last, now),
                file.last_kind,
                file.normalizer.status(),
            );
            let Some(status) = due else { continue };
            if file.timer_status == Some(status) || file.status == status {
                file.timer_status = Some(status);
                continue;
            }
            file.timer_status = Some(status);
            events.push(file.status_event(status, Some(now)));
            file.status = status;
            file.status_since = Some(now);
        }
        for event in events {
            self.push_session_event(event, out);
        }
    }

    pub(super) fn finished_subagent(&self, file: &FileState) -> bool {
        file.is_subagent()
            && file
                .info
                .agent_id
                .as_ref()
                .and_then(|agent| self.links.get(agent))
                .is_some_and(|tool_use| self.ended.contains(tool_use))
    }

    /// A `status` event from a timer or a hook: after the session's snapshot, if it has one.
    pub(super) fn push_session_event(&mut self, event: Event, out: &mut Vec<Output>) {
        if let Some(key) = &event.session {
            let needs_snapshot = self
                .sessions
                .get(key)
                .is_some_and(|session| session.had_backlog && !session.shown);
            if needs_snapshot {
                self.show(&key.clone(), out);
            }
        }
        out.push(Output::Event(event));
    }

    /// A live signal of a session's status: a hook's, or (`from_hook` false) the CLI's
    /// sessions file's. Either wins over the timers until the session's next record.
    pub(super) fn hook(&mut self, signal: &Event, from_hook: bool, out: &mut Vec<Output>) {
        let now = self.now;
        let main = signal.session.as_deref().and_then(|key| {
            self.files
                .iter()
                .filter(|(_, _, file)| !file.is_subagent() && file.session_key() == Some(key))
                .max_by_key(|(_, _, file)| file.last_activity)
                .map(|(id, _, _)| id)
        });
        if let Some(id) = main {
            self.files.changed(id);
        }
        let Some(file) = main.and_then(|id| self.files.get_mut(id)) else {
            // A session the model does not follow: the hook's word is all there is (its
            // transcript is followed from now on); the sessions file names every session.
            if from_hook {
                out.push(Output::Event(signal.clone()));
            }
            return;
        };
        if file.status == signal.status {
            return;
        }
        let mut event = file.status_event(signal.status, now);
        event.text.clone_from(&signal.text);
        event.ts = signal.ts.clone().or(event.ts);
        file.hook_status = Some(signal.status);
        file.status = signal.status;
        file.status_since = now.or(file.status_since);
        self.push_session_event(event, out);
    }
}
