//! The agent's plan: its to-do items (Claude Code's `TodoWrite`, or its task tools
//! `TaskCreate` / `TaskUpdate`), each done, in progress or pending.
//!
//! `familiar-transcript` turns a planning tool call into a [`PlanChange`] (the whole list
//! for `TodoWrite`, one task for the task tools); `familiar-session`, the one owner of session
//! state, applies the changes in order and puts the whole plan on the event that changed it
//! ([`crate::Event::plan`]) and in its snapshot. The game and the scripts read that list and
//! never rebuild it.

use serde::{Deserialize, Serialize};

/// Where an item stands. The serde names are the CLI's own (`input.todos[].status`,
/// `TaskUpdate`'s `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
}

impl PlanStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanStatus::Pending => "pending",
            PlanStatus::InProgress => "in_progress",
            PlanStatus::Completed => "completed",
        }
    }

    /// The CLI's word for it; `None` for a word Familiar has not seen a CLI write.
    pub fn parse(word: &str) -> Option<PlanStatus> {
        match word {
            "pending" => Some(PlanStatus::Pending),
            "in_progress" => Some(PlanStatus::InProgress),
            "completed" => Some(PlanStatus::Completed),
            _ => None,
        }
    }
}

/// One item of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanItem {
    /// What is to be done (`content` of a todo, `subject` of a task).
    pub text: String,
    pub status: PlanStatus,
    /// The same in the present tense, shown while it is in progress (`activeForm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
}

/// What one planning tool call does to the plan: made by the normalizer, applied by the
/// session model (never serialized: events carry the resulting [`crate::Event::plan`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanChange {
    /// `TodoWrite`: the whole list, every time.
    Replace(Vec<PlanItem>),
    /// `TaskCreate`: a new task. The CLI names it (`Task #1 created successfully`) only in
    /// the tool's result, so it is known by its tool_use id (`key`) until then.
    Create { key: String, item: PlanItem },
    /// `TaskUpdate` of the task `id`; `key` is the tool_use id that created it, when its
    /// result was read.
    Update {
        id: String,
        key: Option<String>,
        status: Option<PlanStatus>,
        text: Option<String>,
    },
}

/// A plan as the session model keeps it: the items with what identifies them for later
/// changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    entries: Vec<PlanEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct PlanEntry {
    key: Option<String>,
    id: Option<String>,
    item: PlanItem,
}

/// Items kept at most (a runaway list must not grow without bound).
pub const MAX_PLAN_ITEMS: usize = 200;

impl Plan {
    /// Applies one change; `false` when it changed nothing (an update of a task this plan
    /// never saw created: its text is unknown, and Familiar does not make one up).
    pub fn apply(&mut self, change: &PlanChange) -> bool {
        match change {
            PlanChange::Replace(items) => {
                self.entries = items
                    .iter()
                    .take(MAX_PLAN_ITEMS)
                    .map(|item| PlanEntry {
                        key: None,
                        id: None,
                        item: item.clone(),
                    })
                    .collect();
                true
            }
            PlanChange::Create { key, item } => {
                if self.entries.len() >= MAX_PLAN_ITEMS {
                    return false;
                }
                self.entries.push(PlanEntry {
                    key: Some(key.clone()),
                    id: None,
                    item: item.clone(),
                });
                true
            }
            PlanChange::Update {
                id,
                key,
                status,
                text,
            } => {
                let found = self.entries.iter_mut().find(|entry| {
                    entry.id.as_deref() == Some(id.as_str()) || (key.is_some() && entry.key == *key)
                });
                let Some(entry) = found else {
                    return false;
                };
                entry.id = Some(id.clone());
                if let Some(status) = status {
                    entry.item.status = *status;
                }
                if let Some(text) = text {
                    entry.item.text.clone_from(text);
                }
                true
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The items, in the order the agent wrote them.
    pub fn items(&self) -> Vec<PlanItem> {
        self.entries
            .iter()
            .map(|entry| entry.item.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(text: &str, status: PlanStatus) -> PlanItem {
        PlanItem {
            text: text.to_owned(),
            status,
            active_form: None,
        }
    }

    #[test]
    fn tasks_are_created_pending_then_found_by_id_or_by_the_call_that_made_them() {
        let mut plan = Plan::default();
        assert!(plan.apply(&PlanChange::Create {
            key: "toolu_a".into(),
            item: item("Add tests", PlanStatus::Pending),
        }));
        assert!(plan.apply(&PlanChange::Create {
            key: "toolu_b".into(),
            item: item("Run CI", PlanStatus::Pending),
        }));
        assert!(plan.apply(&PlanChange::Update {
            id: "2".into(),
            key: Some("toolu_b".into()),
            status: Some(PlanStatus::InProgress),
            text: None,
        }));
        // Once named, the id alone finds it.
        assert!(plan.apply(&PlanChange::Update {
            id: "2".into(),
            key: None,
            status: Some(PlanStatus::Completed),
            text: None,
        }));
        assert_eq!(
            plan.items(),
            vec![
                item("Add tests", PlanStatus::Pending),
                item("Run CI", PlanStatus::Completed)
            ]
        );
    }

    #[test]
    fn an_update_of_a_task_never_seen_changes_nothing() {
        let mut plan = Plan::default();
        let unknown = PlanChange::Update {
            id: "7".into(),
            key: None,
            status: Some(PlanStatus::Completed),
            text: None,
        };
        assert!(!plan.apply(&unknown));
        assert!(plan.is_empty());
    }

    #[test]
    fn a_todo_list_replaces_the_whole_plan() {
        let mut plan = Plan::default();
        plan.apply(&PlanChange::Replace(vec![item("a", PlanStatus::Pending)]));
        plan.apply(&PlanChange::Replace(vec![item(
            "b",
            PlanStatus::InProgress,
        )]));
        assert_eq!(plan.items(), vec![item("b", PlanStatus::InProgress)]);
    }
}
