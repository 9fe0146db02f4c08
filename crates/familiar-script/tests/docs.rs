//! `docs/scripting.md` stays in step with the code: every event field, handler and action
//! function the engine provides is documented, and nothing documented is missing.

use std::path::PathBuf;

use familiar_script::{EVENT_FIELDS, known_handlers};

fn doc() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/scripting.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first column (`` `name` ``) of the table rows in the section with this heading.
fn table_names(doc: &str, heading: &str) -> Vec<String> {
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("no section {heading}"));
    let section = &doc[start + heading.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split('`').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_event_field_is_documented_in_order() {
    let names = table_names(&doc(), "## The event (`ev`)");
    assert_eq!(names, EVENT_FIELDS);
}

#[test]
fn every_handler_is_documented() {
    let doc = doc();
    for (name, _) in known_handlers() {
        assert!(doc.contains(&format!("`{name}")), "{name} missing");
    }
}

#[test]
fn every_action_function_is_documented() {
    let names = table_names(&doc(), "## Actions");
    let functions: Vec<&str> = names.iter().filter_map(|n| n.split('(').next()).collect();
    for f in [
        "animate",
        "say",
        "quest",
        "notify",
        "sound",
        "xp",
        "rest",
        "companion_spawn",
        "companion_leave",
        "emit",
        "log",
        "run",
    ] {
        assert!(functions.contains(&f), "{f} missing from {functions:?}");
    }
    assert!(doc().contains("`once_per(key, seconds)`"));
}

/// The names in back quotes of the meaning of the `ev` table's row for this field (after its
/// colon, when it has one: "on `error` events: `tool`, ...").
fn field_values(doc: &str, field: &str) -> Vec<String> {
    let row = doc
        .lines()
        .find(|line| line.starts_with(&format!("| `{field}` |")))
        .unwrap_or_else(|| panic!("no row for {field}"));
    let meaning = row.split('|').nth(3).unwrap_or("");
    let values = meaning.rsplit(':').next().unwrap_or(meaning);
    values
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_event_kind_is_documented_in_order() {
    let kinds: Vec<&str> = familiar_model::EventKind::ALL
        .iter()
        .map(|kind| kind.as_str())
        .collect();
    assert_eq!(field_values(&doc(), "kind"), kinds);
}

#[test]
fn every_error_kind_is_documented_in_order() {
    let kinds: Vec<&str> = familiar_model::ErrorKind::ALL
        .iter()
        .map(|kind| kind.as_str())
        .collect();
    assert_eq!(field_values(&doc(), "error"), kinds);
}
