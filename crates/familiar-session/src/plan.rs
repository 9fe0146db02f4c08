//! The session's plan: the normalizer's [`PlanChange`]s of a session's main agent applied in
//! order to its [`Plan`], and the whole plan put on the event that changed it. `model` calls
//! this for every line (backlog included, so a snapshot shows the plan as it stands);
//! `snapshot` carries it.

use familiar_model::{Event, Plan};

/// Applies the plan changes `events` carry to `plan`, setting [`Event::plan`] on each event
/// that changed it. A subagent keeps its own to-do list: its changes are dropped, not mixed
/// into its session's.
pub(crate) fn apply(plan: &mut Plan, events: &mut [Event], subagent_file: bool) {
    for event in events {
        let Some(change) = event.plan_change.take() else {
            continue;
        };
        if subagent_file || event.agent.is_some() || event.sidechain {
            continue;
        }
        if plan.apply(&change) {
            event.plan = Some(plan.items());
        }
    }
}
