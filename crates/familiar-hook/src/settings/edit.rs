//! The edits themselves, on the file without its [`super::form::Form`]: what of Familiar's a
//! file holds, adding it (the hooks here, the status line by [`super::status_line`]), and
//! taking it out again.

use indexmap::IndexMap;
use jsonc_parser::ast::Value;
use serde::Serialize;

use super::{
    EVENTS, Installed, Plan, SettingsEdit, SettingsError, install, installed, is_ours, status_line,
};
use crate::jsonedit::{self, Container, Item};

#[derive(Serialize)]
struct Command<'a> {
    r#type: &'static str,
    command: &'a str,
}

#[derive(Serialize)]
struct Group<'a> {
    matcher: &'static str,
    hooks: [Command<'a>; 1],
}

fn group(command: &str) -> Group<'_> {
    Group {
        matcher: "",
        hooks: [Command {
            r#type: "command",
            command,
        }],
    }
}

pub(super) fn parse(text: &str) -> Result<Option<Value<'_>>, SettingsError> {
    jsonedit::parse(text).map_err(|problem| SettingsError::Parse {
        line: problem.line,
        column: problem.column,
        message: problem.message,
    })
}

/// The top-level object of `text` (which must have one).
pub(super) fn root(text: &str) -> Result<Value<'_>, SettingsError> {
    match parse(text)? {
        Some(value @ Value::Object(_)) => Ok(value),
        Some(_) | None => Err(SettingsError::NotObject("the top level".to_owned())),
    }
}

pub(super) fn as_object<'v, 'a>(value: &'v Value<'a>) -> Option<&'v jsonc_parser::ast::Object<'a>> {
    match value {
        Value::Object(object) => Some(object),
        _ => None,
    }
}

pub(super) fn string<'v>(value: Option<&'v Value<'_>>) -> Option<&'v str> {
    match value {
        Some(Value::StringLit(lit)) => Some(lit.value.as_ref()),
        _ => None,
    }
}

/// The command of a `{"type": "command", "command": …}` entry.
pub(super) fn command_of<'v>(entry: &'v Value<'_>) -> Option<&'v str> {
    string(as_object(entry).and_then(|o| jsonedit::member(o, "command").map(|(_, v)| v)))
}

/// The commands in one matcher group of a hook event (`{"matcher": …, "hooks": [...]}`).
fn group_commands<'v>(group: &'v Value<'_>) -> Vec<&'v str> {
    let list = as_object(group).and_then(|g| jsonedit::member(g, "hooks"));
    match list {
        Some((_, Value::Array(list))) => list.elements.iter().filter_map(command_of).collect(),
        _ => Vec::new(),
    }
}

/// What of Familiar's `text` holds (nothing for an empty file).
pub(super) fn installed_plain(text: &str) -> Result<Installed, SettingsError> {
    let mut found = Installed::default();
    let Some(root) = parse(text)? else {
        return Ok(found);
    };
    let Some(root) = as_object(&root) else {
        return Err(SettingsError::NotObject("the top level".to_owned()));
    };
    if let Some((_, Value::Object(hooks))) = jsonedit::member(root, "hooks") {
        for prop in &hooks.properties {
            let Value::Array(groups) = &prop.value else {
                continue;
            };
            let ours = groups
                .elements
                .iter()
                .flat_map(group_commands)
                .find(|command| is_ours(command, "hook"));
            if let Some(command) = ours {
                found
                    .hooks
                    .push((prop.name.as_str().to_owned(), command.to_owned()));
            }
        }
    }
    if let Some((at, command)) = status_line::find(root) {
        found.status_line = Some(command.to_owned());
        found.status_line_at = at;
    }
    Ok(found)
}

/// Add what `plan` names where it is not there yet. `text` is the current file (`None` when
/// there is none).
pub(super) fn install_plain(
    text: Option<&str>,
    plan: &Plan,
) -> Result<SettingsEdit, SettingsError> {
    let mut doc = match text {
        None => "{}\n".to_owned(),
        Some(text) if text.trim().is_empty() => "{}\n".to_owned(),
        // Comments only: the object goes after them.
        Some(text) if parse(text)?.is_none() => format!("{text}\n{{}}\n"),
        Some(text) => text.to_owned(),
    };
    let mut changes = Vec::new();
    if let Some(command) = &plan.hooks {
        for event in EVENTS {
            if let Some(next) = add_hook(&doc, event, command)? {
                doc = next;
                changes.push(format!("add hooks.{event}: {command}"));
            }
        }
    }
    if let Some(command) = &plan.status_line
        && let Some(next) = status_line::add(&doc, command, plan.status_line_at)?
    {
        doc = next;
        changes.push(format!("add {}: {command}", plan.status_line_at.key()));
    }
    if changes.is_empty() {
        return Ok(SettingsEdit::unchanged(text));
    }
    Ok(SettingsEdit {
        before: text.map(str::to_owned),
        after: Some(doc),
        changes,
    })
}

/// `doc` with Familiar's hook added to `event`, or `None` when it is there already.
fn add_hook(doc: &str, event: &str, command: &str) -> Result<Option<String>, SettingsError> {
    let root = root(doc)?;
    let unit = jsonedit::indent_unit(doc, &root);
    let object = as_object(&root).expect("root() returns an object");
    let Some((_, hooks)) = jsonedit::member(object, "hooks") else {
        let events = IndexMap::from([(event, [group(command)])]);
        let container = Container::of(&root).expect("an object is a container");
        return Ok(Some(jsonedit::append(
            doc,
            &container,
            &Item::Member("hooks", &events),
            &unit,
        )));
    };
    let Some(hooks_object) = as_object(hooks) else {
        return Err(SettingsError::NotObject("hooks".to_owned()));
    };
    let container = Container::of(hooks).expect("an object is a container");
    match jsonedit::member(hooks_object, event) {
        None => Ok(Some(jsonedit::append(
            doc,
            &container,
            &Item::Member(event, &[group(command)]),
            &unit,
        ))),
        Some((_, groups @ Value::Array(list))) => {
            let ours = list
                .elements
                .iter()
                .flat_map(group_commands)
                .any(|c| is_ours(c, "hook"));
            if ours {
                return Ok(None);
            }
            let container = Container::of(groups).expect("an array is a container");
            Ok(Some(jsonedit::append(
                doc,
                &container,
                &Item::Element(&group(command)),
                &unit,
            )))
        }
        Some(_) => Err(SettingsError::NotArray(event.to_owned())),
    }
}

/// Remove everything `install` added. `originals` are earlier versions of the file (the
/// binary's backups, newest first): when `text` is exactly what `install` makes of one of
/// them, that one comes back byte for byte, and when it is exactly what `install` makes of no
/// file, the result is no file (`after: None`). Otherwise Familiar's entries are spliced out
/// (with the groups, event lists, `hooks` and `ui` objects they leave empty) and the rest
/// stays.
pub(super) fn uninstall_plain(
    text: &str,
    originals: &[&str],
) -> Result<SettingsEdit, SettingsError> {
    let found = installed_plain(text)?;
    if found.is_empty() {
        return Ok(SettingsEdit::unchanged(Some(text)));
    }
    let mut changes: Vec<String> = found
        .hooks
        .iter()
        .map(|(event, command)| format!("remove hooks.{event}: {command}"))
        .collect();
    if let Some(command) = &found.status_line {
        changes.push(format!("remove {}: {command}", found.status_line_at.key()));
    }
    let plan = found.plan();
    let made_from = |original: Option<&str>| {
        install(original, &plan).is_ok_and(|edit| edit.after.as_deref() == Some(text))
    };
    let restored = originals
        .iter()
        .find(|original| {
            installed(original).is_ok_and(|found| found.is_empty()) && made_from(Some(original))
        })
        .map(|original| Some((*original).to_owned()))
        .or_else(|| made_from(None).then_some(None));
    let after = match restored {
        Some(after) => after,
        None => Some(splice_out(text)?),
    };
    Ok(SettingsEdit {
        before: Some(text.to_owned()),
        after,
        changes,
    })
}

/// `text` without Familiar's entries, removed one at a time.
fn splice_out(text: &str) -> Result<String, SettingsError> {
    let mut doc = text.to_owned();
    while let Some(next) = splice_one(&doc)? {
        doc = next;
    }
    Ok(doc)
}

/// `doc` with one of Familiar's entries removed, or `None` when none is left.
fn splice_one(doc: &str) -> Result<Option<String>, SettingsError> {
    let root = root(doc)?;
    let object = as_object(&root).expect("root() returns an object");
    let root_container = Container::of(&root).expect("an object is a container");
    if let Some((hooks_index, hooks)) = jsonedit::member(object, "hooks")
        && let Some(hooks_object) = as_object(hooks)
    {
        for (event_index, prop) in hooks_object.properties.iter().enumerate() {
            let Value::Array(groups) = &prop.value else {
                continue;
            };
            for (group_index, group) in groups.elements.iter().enumerate() {
                let Some((_, list @ Value::Array(entries))) =
                    as_object(group).and_then(|g| jsonedit::member(g, "hooks"))
                else {
                    continue;
                };
                let Some(entry_index) = entries
                    .elements
                    .iter()
                    .position(|entry| command_of(entry).is_some_and(|c| is_ours(c, "hook")))
                else {
                    continue;
                };
                // Remove the smallest thing that leaves nothing of ours and nothing empty.
                let (container, index) = if entries.elements.len() > 1 {
                    (Container::of(list), entry_index)
                } else if groups.elements.len() > 1 {
                    (Container::of(&prop.value), group_index)
                } else if hooks_object.properties.len() > 1 {
                    (Container::of(hooks), event_index)
                } else {
                    (Some(root_container), hooks_index)
                };
                let container = container.expect("objects and arrays are containers");
                return Ok(Some(jsonedit::remove(doc, &container, index)));
            }
        }
    }
    Ok(status_line::remove(doc, &root))
}
