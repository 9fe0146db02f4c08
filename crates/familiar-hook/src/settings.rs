//! Adding and removing Familiar's hooks in Claude Code's `settings.json`, as pure text edits.
//!
//! The file is the user's: keys keep their order (an order-preserving JSON value), entries
//! that are not ours are never touched, a file that does not parse is refused (with its line)
//! rather than overwritten, and `uninstall` removes exactly what `install` added. The binary
//! (`familiar hook install/uninstall`) shows the diff, keeps a backup and writes.

use std::path::Path;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// The hook events Familiar listens to: a new session (picked up at once), notifications
/// (permission and idle prompts) and the end of a turn.
pub const EVENTS: [&str; 3] = ["SessionStart", "Notification", "Stop"];

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SettingsError {
    #[error(
        "settings.json does not parse (line {line}, column {column}: {message}); fix it first, it was left as it is"
    )]
    Parse {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("settings.json: {0} is not a JSON object; fix it first, it was left as it is")]
    NotObject(String),
    #[error("settings.json: hooks.{0} is not a JSON array; fix it first, it was left as it is")]
    NotArray(String),
}

/// The result of an edit: the text before and after, and what changed, one line each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsEdit {
    pub before: String,
    pub after: String,
    pub changes: Vec<String>,
}

impl SettingsEdit {
    pub fn changed(&self) -> bool {
        !self.changes.is_empty()
    }
}

/// JSON with objects in file order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(IndexMap<String, Json>),
}

/// The hook command for a `familiar` executable: its path (single-quoted when it holds
/// anything a shell would split or expand) and `hook`.
pub fn hook_command(exe: &Path) -> String {
    let path = exe.display().to_string();
    let plain = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c));
    if plain {
        format!("{path} hook")
    } else {
        format!("'{}' hook", path.replace('\'', r"'\''"))
    }
}

/// Is this hook command one that `install` wrote (`…/familiar hook`, quoted or not)?
fn is_ours(command: &str) -> bool {
    let Some(program) = command.trim().strip_suffix(" hook") else {
        return false;
    };
    let program = program.trim().trim_matches('\'');
    Path::new(program)
        .file_name()
        .is_some_and(|name| name == "familiar")
}

fn parse(text: &str) -> Result<IndexMap<String, Json>, SettingsError> {
    if text.trim().is_empty() {
        return Ok(IndexMap::new());
    }
    match serde_json::from_str::<Json>(text) {
        Ok(Json::Object(map)) => Ok(map),
        Ok(_) => Err(SettingsError::NotObject("the top level".to_owned())),
        Err(err) => {
            // serde_json's message ends with the position, which the error shows already.
            let text = err.to_string();
            let position = format!(" at line {} column {}", err.line(), err.column());
            Err(SettingsError::Parse {
                line: err.line(),
                column: err.column(),
                message: text.strip_suffix(&position).unwrap_or(&text).to_owned(),
            })
        }
    }
}

fn render(root: &IndexMap<String, Json>) -> String {
    let mut text = serde_json::to_string_pretty(root).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}

fn commands(group: &Json) -> impl Iterator<Item = &str> {
    let hooks = match group {
        Json::Object(group) => match group.get("hooks") {
            Some(Json::Array(hooks)) => hooks.as_slice(),
            _ => &[],
        },
        _ => &[],
    };
    hooks.iter().filter_map(|hook| match hook {
        Json::Object(hook) => match hook.get("command") {
            Some(Json::String(command)) => Some(command.as_str()),
            _ => None,
        },
        _ => None,
    })
}

/// Add Familiar's hook to each of [`EVENTS`] where it is not there yet. `text` is the current
/// file (`None` when there is none).
pub fn install(text: Option<&str>, command: &str) -> Result<SettingsEdit, SettingsError> {
    let before = text.unwrap_or_default().to_owned();
    let mut root = parse(&before)?;
    let hooks = root
        .entry("hooks".to_owned())
        .or_insert_with(|| Json::Object(IndexMap::new()));
    let Json::Object(hooks) = hooks else {
        return Err(SettingsError::NotObject("hooks".to_owned()));
    };
    let mut changes = Vec::new();
    for event in EVENTS {
        let groups = hooks
            .entry(event.to_owned())
            .or_insert_with(|| Json::Array(Vec::new()));
        let Json::Array(groups) = groups else {
            return Err(SettingsError::NotArray(event.to_owned()));
        };
        if groups.iter().flat_map(commands).any(is_ours) {
            continue;
        }
        let hook = IndexMap::from([
            ("type".to_owned(), Json::String("command".to_owned())),
            ("command".to_owned(), Json::String(command.to_owned())),
        ]);
        let group = IndexMap::from([
            ("matcher".to_owned(), Json::String(String::new())),
            ("hooks".to_owned(), Json::Array(vec![Json::Object(hook)])),
        ]);
        groups.push(Json::Object(group));
        changes.push(format!("add hooks.{event}: {command}"));
    }
    let after = if changes.is_empty() {
        before.clone()
    } else {
        render(&root)
    };
    Ok(SettingsEdit {
        before,
        after,
        changes,
    })
}

/// Remove every hook `install` added (and the groups, event lists and `hooks` object that are
/// left empty by that); everything else stays.
pub fn uninstall(text: &str) -> Result<SettingsEdit, SettingsError> {
    let before = text.to_owned();
    let mut root = parse(&before)?;
    let mut changes = Vec::new();
    let mut drop_hooks = false;
    if let Some(Json::Object(hooks)) = root.get_mut("hooks") {
        let mut emptied = Vec::new();
        for (event, groups) in hooks.iter_mut() {
            let Json::Array(groups) = groups else {
                continue;
            };
            let mut removed_here = false;
            groups.retain_mut(|group| {
                let Json::Object(group) = group else {
                    return true;
                };
                let Some(Json::Array(list)) = group.get_mut("hooks") else {
                    return true;
                };
                let len = list.len();
                list.retain(|hook| match hook {
                    Json::Object(hook) => !matches!(
                        hook.get("command"),
                        Some(Json::String(command)) if is_ours(command)
                    ),
                    _ => true,
                });
                if list.len() == len {
                    return true;
                }
                removed_here = true;
                !list.is_empty()
            });
            if removed_here {
                changes.push(format!("remove hooks.{event}: familiar hook"));
                if groups.is_empty() {
                    emptied.push(event.clone());
                }
            }
        }
        for event in emptied {
            hooks.shift_remove(&event);
        }
        drop_hooks = hooks.is_empty() && !changes.is_empty();
    }
    if drop_hooks {
        root.shift_remove("hooks");
    }
    let after = if changes.is_empty() {
        before.clone()
    } else {
        render(&root)
    };
    Ok(SettingsEdit {
        before,
        after,
        changes,
    })
}
