//! Familiar's status line in a settings file, where each agent keeps it
//! ([`StatusLineAt`]): found, added (never over one the user set) and removed again.

use jsonc_parser::ast::{Object, Value};
use serde::Serialize;

use super::edit::{as_object, command_of, root};
use super::{SettingsError, StatusLineAt, is_ours};
use crate::jsonedit::{self, Container, Item};

/// How often Qwen Code runs the command besides its own changes, in seconds: it runs it at a
/// turn's end before it has written that end to the session file (`docs/events.md`), so
/// without a refresh the line would say `working` until the next change.
pub const QWEN_REFRESH_SECONDS: u32 = 2;

/// The status line entry as install writes it.
#[derive(Serialize)]
struct Entry<'a> {
    r#type: &'static str,
    command: &'a str,
    #[serde(rename = "refreshInterval", skip_serializing_if = "Option::is_none")]
    refresh_interval: Option<u32>,
}

impl<'a> Entry<'a> {
    fn new(command: &'a str, at: StatusLineAt) -> Entry<'a> {
        Entry {
            r#type: "command",
            command,
            refresh_interval: match at {
                StatusLineAt::Top => None,
                StatusLineAt::Ui => Some(QWEN_REFRESH_SECONDS),
            },
        }
    }
}

/// The index and command of `object`'s `statusLine` when it is Familiar's.
fn ours<'v>(object: &'v Object<'_>) -> Option<(usize, &'v str)> {
    let (index, status) = jsonedit::member(object, "statusLine")?;
    command_of(status)
        .filter(|command| is_ours(command, "statusline"))
        .map(|command| (index, command))
}

/// Familiar's status line command in `root` (a settings file's top-level object), and where:
/// the top-level `statusLine`, else `ui.statusLine`.
pub(super) fn find<'v>(root: &'v Object<'_>) -> Option<(StatusLineAt, &'v str)> {
    if let Some((_, command)) = ours(root) {
        return Some((StatusLineAt::Top, command));
    }
    let (_, ui) = jsonedit::member(root, "ui")?;
    ours(as_object(ui)?).map(|(_, command)| (StatusLineAt::Ui, command))
}

/// What a status line that is not Familiar's is, in words.
fn describe(status: &Value<'_>) -> String {
    if let Some(command) = command_of(status) {
        return command.to_owned();
    }
    match status {
        Value::NullKeyword(_) => "null: the status line turned off".to_owned(),
        Value::Object(object) => match jsonedit::member(object, "type") {
            Some((_, Value::StringLit(kind))) => format!("a status line of type {}", kind.value),
            _ => "not a command".to_owned(),
        },
        _ => "not a command".to_owned(),
    }
}

/// `doc` with Familiar's status line `command` added where `at` says, or `None` when it is
/// there already. One the user set is never replaced.
pub(super) fn add(
    doc: &str,
    command: &str,
    at: StatusLineAt,
) -> Result<Option<String>, SettingsError> {
    let root = root(doc)?;
    let unit = jsonedit::indent_unit(doc, &root);
    let entry = Entry::new(command, at);
    let object = as_object(&root).expect("root() returns an object");
    let parent = match at {
        StatusLineAt::Top => &root,
        StatusLineAt::Ui => match jsonedit::member(object, "ui") {
            None => {
                let ui = indexmap::IndexMap::from([("statusLine", entry)]);
                let container = Container::of(&root).expect("an object is a container");
                let item = Item::Member("ui", &ui);
                return Ok(Some(jsonedit::append(doc, &container, &item, &unit)));
            }
            Some((_, ui @ Value::Object(_))) => ui,
            Some(_) => return Err(SettingsError::NotObject("ui".to_owned())),
        },
    };
    let parent_object = as_object(parent).expect("an object");
    match jsonedit::member(parent_object, "statusLine") {
        None => {
            let container = Container::of(parent).expect("an object is a container");
            let item = Item::Member("statusLine", &entry);
            Ok(Some(jsonedit::append(doc, &container, &item, &unit)))
        }
        Some((_, status)) => match command_of(status) {
            Some(existing) if is_ours(existing, "statusline") => Ok(None),
            _ => Err(SettingsError::StatusLineTaken {
                key: at.key(),
                existing: describe(status),
            }),
        },
    }
}

/// `doc` (whose parsed top level is `root`) without Familiar's status line, or `None` when it
/// has none. A `ui` object it leaves empty goes with it.
pub(super) fn remove(doc: &str, root: &Value<'_>) -> Option<String> {
    let object = as_object(root)?;
    let root_container = Container::of(root)?;
    if let Some((index, _)) = ours(object) {
        return Some(jsonedit::remove(doc, &root_container, index));
    }
    let (ui_index, ui) = jsonedit::member(object, "ui")?;
    let ui_object = as_object(ui)?;
    let (index, _) = ours(ui_object)?;
    if ui_object.properties.len() > 1 {
        Some(jsonedit::remove(doc, &Container::of(ui)?, index))
    } else {
        Some(jsonedit::remove(doc, &root_container, ui_index))
    }
}
