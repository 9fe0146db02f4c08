//! The agent's plan, as the planning tools write it: `TodoWrite` (the whole list each time,
//! `input.todos[] {content, status, activeForm}`) and the task tools of Claude Code 2.1.x
//! (`TaskCreate {subject, activeForm}`, whose result names the task: `Task #1 created
//! successfully: ...`; `TaskUpdate {taskId, status?, subject?}`). A tool_use becomes a
//! [`PlanChange`] on its `thinking` event; `familiar-session` applies the changes. Part of
//! [`super::Normalizer`], kept apart from the record parsing: the tool input is read a second
//! time, here, only for these three tools.

use std::collections::VecDeque;

use familiar_model::{PlanChange, PlanItem, PlanStatus};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::record;

/// Task ids remembered with the tool_use that created them, per normalizer (file).
const MAX_TASK_IDS: usize = 256;

/// Which `TaskCreate` call made which task (the id is known only from its result).
#[derive(Debug, Clone, Default)]
pub(super) struct TaskIds {
    /// `(task id, tool_use id of its TaskCreate)`, oldest first.
    known: VecDeque<(String, String)>,
}

impl TaskIds {
    fn key_of(&self, id: &str) -> Option<&str> {
        self.known
            .iter()
            .rev()
            .find(|(task, _)| task == id)
            .map(|(_, key)| key.as_str())
    }

    /// A tool result arrived: if it answers a `TaskCreate`, remember the task's id.
    pub(super) fn result(&mut self, tool: &str, tool_use_id: &str, content: Option<&RawValue>) {
        if !tool.eq_ignore_ascii_case("TaskCreate") {
            return;
        }
        let Some(id) = content
            .and_then(record::raw_text)
            .as_deref()
            .and_then(created_task_id)
        else {
            return;
        };
        if self.known.len() == MAX_TASK_IDS {
            self.known.pop_front();
        }
        self.known.push_back((id, tool_use_id.to_owned()));
    }
}

/// `Task #12 created successfully: ...` → `12` (Claude Code 2.1.56's and 2.1.59's result).
fn created_task_id(text: &str) -> Option<String> {
    let rest = text.trim_start().strip_prefix("Task #")?;
    let (id, tail) = rest.split_once(' ')?;
    (!id.is_empty() && tail.starts_with("created")).then(|| id.to_owned())
}

#[derive(Deserialize)]
struct Todo {
    content: String,
    status: String,
    #[serde(rename = "activeForm", default)]
    active_form: Option<String>,
}

#[derive(Deserialize)]
struct TodoWrite {
    todos: Vec<Todo>,
}

#[derive(Deserialize)]
struct TaskCreate {
    subject: String,
    #[serde(rename = "activeForm", default)]
    active_form: Option<String>,
}

#[derive(Deserialize)]
struct TaskUpdate {
    #[serde(rename = "taskId")]
    task_id: String,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    subject: Option<String>,
}

/// What a tool_use does to the plan; `None` for any other tool, or an input of another shape
/// (an unknown status word leaves the item's status as it was, or pending for a new one).
pub(super) fn change(
    tasks: &TaskIds,
    name: &str,
    tool_use_id: Option<&str>,
    input: Option<&RawValue>,
) -> Option<PlanChange> {
    let is = |tool: &str| name.eq_ignore_ascii_case(tool);
    if !(is("TodoWrite") || is("TaskCreate") || is("TaskUpdate")) {
        return None;
    }
    let input = input?.get();
    if is("TodoWrite") {
        let write: TodoWrite = serde_json::from_str(input).ok()?;
        let items = write
            .todos
            .into_iter()
            .map(|todo| PlanItem {
                text: todo.content,
                status: PlanStatus::parse(&todo.status).unwrap_or(PlanStatus::Pending),
                active_form: todo.active_form,
            })
            .collect();
        return Some(PlanChange::Replace(items));
    }
    if is("TaskCreate") {
        let create: TaskCreate = serde_json::from_str(input).ok()?;
        return Some(PlanChange::Create {
            key: tool_use_id?.to_owned(),
            item: PlanItem {
                text: create.subject,
                status: PlanStatus::Pending,
                active_form: create.active_form,
            },
        });
    }
    let update: TaskUpdate = serde_json::from_str(input).ok()?;
    Some(PlanChange::Update {
        key: tasks.key_of(&update.task_id).map(str::to_owned),
        id: update.task_id,
        status: update.status.as_deref().and_then(PlanStatus::parse),
        text: update.subject,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).unwrap()
    }

    #[test]
    fn a_task_created_result_names_the_task() {
        assert_eq!(
            created_task_id("Task #12 created successfully: Run CI"),
            Some("12".into())
        );
        assert_eq!(created_task_id("Updated task #1 status"), None);
        let mut tasks = TaskIds::default();
        let content = raw(r#""Task #3 created successfully: Add HTTP path""#);
        tasks.result("TaskCreate", "toolu_3", Some(&content));
        let update = raw(r#"{"taskId": "3", "status": "in_progress"}"#);
        assert_eq!(
            change(&tasks, "TaskUpdate", Some("toolu_9"), Some(&update)),
            Some(PlanChange::Update {
                id: "3".into(),
                key: Some("toolu_3".into()),
                status: Some(PlanStatus::InProgress),
                text: None,
            })
        );
    }

    #[test]
    fn other_tools_and_other_shapes_change_no_plan() {
        let tasks = TaskIds::default();
        let input = raw(r#"{"file_path": "/a"}"#);
        assert_eq!(change(&tasks, "Read", Some("t"), Some(&input)), None);
        assert_eq!(change(&tasks, "TodoWrite", Some("t"), Some(&input)), None);
    }
}
