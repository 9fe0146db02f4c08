//! The plan on real transcripts: `TaskCreate`/`TaskUpdate` (Claude Code 2.1.56) aggregated
//! by the session model, `TodoWrite` (2.0.67) replacing it, and the snapshot carrying it.

use std::path::Path;

use familiar_model::{Event, EventKind, PlanItem, PlanStatus};
use familiar_session::{FileInfo, FileKind, Input, ModelConfig, SessionModel};
use familiar_testkit::real_fixture;

fn feed(model: &mut SessionModel, path: &Path, backlog: bool) -> Vec<Event> {
    let bytes = std::fs::read(path).expect("fixture");
    let info = FileInfo {
        kind: FileKind::Session,
        session_id: None,
        agent_id: None,
        agent_type: None,
        cwd: None,
    };
    model.apply(Input::Opened { path, info: &info }, &mut Vec::new());
    let mut events = Vec::new();
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        events.extend(model.events(Input::Line {
            path,
            number: index as u64 + 1,
            bytes: line,
            backlog,
        }));
    }
    events
}

fn statuses(plan: &[PlanItem]) -> Vec<PlanStatus> {
    plan.iter().map(|item| item.status).collect()
}

#[test]
fn task_tools_build_the_plan_one_task_at_a_time() {
    let path = real_fixture("v2.1.56-erk-api-error-turn-duration.jsonl");
    let mut model = SessionModel::new(ModelConfig::default());
    let events = feed(&mut model, &path, false);
    let planned: Vec<&Event> = events.iter().filter(|e| e.plan.is_some()).collect();
    // Six TaskCreate and twelve TaskUpdate calls; TaskList changes nothing.
    assert_eq!(planned.len(), 18);
    assert!(planned.iter().all(|e| e.kind == EventKind::Thinking));
    let first = planned[0].plan.as_ref().unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(
        first[0].text,
        "Add get_list(), graphql(), supports_direct_api to HttpClient"
    );
    assert_eq!(first[0].status, PlanStatus::Pending);
    // Line 111: `TaskUpdate {taskId: "1", status: "in_progress"}`, task #1 named by the
    // result of its TaskCreate on line 17.
    let started = planned.iter().find(|e| e.line == 111).expect("line 111");
    use PlanStatus::*;
    assert_eq!(
        statuses(started.plan.as_ref().unwrap()),
        [InProgress, Pending, Pending, Pending, Pending, Pending]
    );
    let last = planned.last().unwrap().plan.as_ref().unwrap();
    assert_eq!(statuses(last), [Completed; 6]);
    assert_eq!(last[5].text, "Run CI and verify");
    assert_eq!(
        last[5].active_form.as_deref(),
        Some("Running CI verification")
    );
    // Events that do not change the plan do not carry it.
    assert!(
        events
            .iter()
            .filter(|e| e.tool.as_deref() == Some("TaskList"))
            .all(|e| e.plan.is_none())
    );
}

#[test]
fn todo_write_replaces_the_plan_and_the_snapshot_carries_it() {
    let path = real_fixture("v2.0.67-erk-ci-compact-boundary-queue.jsonl");
    let mut model = SessionModel::new(ModelConfig::default());
    assert!(
        feed(&mut model, &path, true).is_empty(),
        "backlog is silent"
    );
    let snapshot = model.snapshot();
    let plan = &snapshot[0].plan;
    assert!(!plan.is_empty());
    assert_eq!(plan[0].text, "Phase 1: Create push-session exec command");
    assert!(plan.iter().all(|item| item.status == PlanStatus::Completed));
    let events = model.events(Input::CaughtUp);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].kind, EventKind::Snapshot);
    assert_eq!(events[0].plan.as_ref(), Some(plan));
    // Live, each TodoWrite carries the whole new list.
    let mut live = SessionModel::new(ModelConfig::default());
    let events = feed(&mut live, &path, false);
    let first = events
        .iter()
        .find_map(|e| e.plan.as_ref())
        .expect("a TodoWrite");
    assert!(first.iter().all(|item| item.status == PlanStatus::Pending));
    assert_eq!(first.len(), plan.len());
}

#[test]
fn the_plan_is_in_the_json_form_of_an_event() {
    let path = real_fixture("v2.1.59-erk-local-command-progress.jsonl");
    let mut model = SessionModel::new(ModelConfig::default());
    let events = feed(&mut model, &path, false);
    let event = events.iter().find(|e| e.plan.is_some()).expect("a plan");
    let json = serde_json::to_value(event).expect("json");
    assert_eq!(
        json["plan"][0],
        serde_json::json!({
            "text": "Delete dead Graphite ABC methods and implementations",
            "status": "pending",
            "active_form": json["plan"][0]["active_form"].clone(),
        })
    );
    assert!(json["plan"][0]["active_form"].is_string());
    assert!(json.get("plan_change").is_none());
}
