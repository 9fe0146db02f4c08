//! Adding and removing what Familiar installs into Claude Code's `settings.json` (its hooks,
//! and optionally its `statusLine`), as pure text-to-text edits.
//!
//! The file is the user's: every edit goes through [`crate::jsonedit`], which splices only the
//! bytes it must, so formatting, key order, comments and numbers as written stay. Entries that
//! are not Familiar's are never touched, a file that does not parse is refused (with its line)
//! rather than overwritten, and a `statusLine` the user set is never replaced. `uninstall`
//! removes exactly what `install` added: given the original text (the binary's backup), it
//! returns those very bytes when the file is as install left it, and `None` (remove the file)
//! when install created it; otherwise it splices Familiar's entries out and leaves the rest.
//! The binary (`familiar hook install/uninstall`) shows the diff, asks, keeps backups and
//! writes.

use std::path::Path;

use indexmap::IndexMap;
use jsonc_parser::ast::Value;
use serde::Serialize;

use crate::jsonedit::{self, Container, Item};

/// The hook events Familiar listens to: each that tells a status sooner or surer than the
/// transcript (see [`crate::hook_event`]) or points at a transcript. Claude Code 2.1.197's ten:
/// a new session (picked up at once), a prompt, a tool about to run, the permission dialog,
/// notifications (permission and idle prompts), a compaction, a subagent's end, the end of a
/// turn (well, or on an API error: `StopFailure` fires instead of `Stop`) and of the session.
/// Then four more that 2.1.332 fires (older CLIs ignore names they do not know): a tool that
/// failed (or was interrupted), auto mode refusing a tool call, a subagent's start and a
/// compaction's end. Not registered: what fires often and tells no status (`PostToolUse`,
/// `PostToolBatch`, `MessageDisplay`) or concerns no session's status (config, files, worktrees,
/// MCP elicitation, teams, tasks, model switches).
pub const EVENTS: [&str; 14] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "Notification",
    "PreCompact",
    "SubagentStop",
    "Stop",
    "StopFailure",
    "SessionEnd",
    "PostToolUseFailure",
    "PermissionDenied",
    "SubagentStart",
    "PostCompact",
];

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
    #[error(
        "settings.json already has a statusLine that is not Familiar's ({0}); remove it first if you want Familiar's, it was left as it is"
    )]
    StatusLineTaken(String),
}

/// What to install: Familiar's hooks and/or its status line, each as the command to run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The hook command (see [`hook_command`]), added to each of [`EVENTS`].
    pub hooks: Option<String>,
    /// The status line command (see [`status_line_command`]).
    pub status_line: Option<String>,
}

/// What of Familiar's a settings file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Installed {
    /// `(event, command)` for each hook event that runs Familiar's hook command.
    pub hooks: Vec<(String, String)>,
    /// Familiar's status line command, when it is the `statusLine`.
    pub status_line: Option<String>,
}

impl Installed {
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty() && self.status_line.is_none()
    }

    /// Are Familiar's hooks on every one of [`EVENTS`]?
    pub fn all_hooks(&self) -> bool {
        EVENTS
            .iter()
            .all(|event| self.hooks.iter().any(|(e, _)| e == event))
    }

    /// The plan whose install gives these entries.
    pub fn plan(&self) -> Plan {
        Plan {
            hooks: self.hooks.first().map(|(_, command)| command.clone()),
            status_line: self.status_line.clone(),
        }
    }
}

/// The result of an edit: the file before and after (`None`: no file), and what changed,
/// one line each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsEdit {
    pub before: Option<String>,
    pub after: Option<String>,
    pub changes: Vec<String>,
}

impl SettingsEdit {
    pub fn changed(&self) -> bool {
        self.before != self.after
    }

    fn unchanged(text: Option<&str>) -> SettingsEdit {
        SettingsEdit {
            before: text.map(str::to_owned),
            after: text.map(str::to_owned),
            changes: Vec::new(),
        }
    }
}

/// A command running `familiar SUBCOMMAND` for the executable at `exe`: its path
/// (single-quoted when it holds anything a shell would split or expand) and the subcommand.
fn exe_command(exe: &Path, subcommand: &str) -> String {
    let path = exe.display().to_string();
    let plain = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c));
    if plain {
        format!("{path} {subcommand}")
    } else {
        format!("'{}' {subcommand}", path.replace('\'', r"'\''"))
    }
}

/// The hook command for a `familiar` executable: `…/familiar hook`.
pub fn hook_command(exe: &Path) -> String {
    exe_command(exe, "hook")
}

/// The status line command for a `familiar` executable: `…/familiar statusline`.
pub fn status_line_command(exe: &Path) -> String {
    exe_command(exe, "statusline")
}

/// Is `command` one that `install` wrote: `…/familiar SUBCOMMAND` exactly as
/// [`exe_command`] writes it (a plain path, or one single-quoted path), and nothing else? A
/// user's own command that merely ends so (`notify-send done; ~/bin/familiar hook`) is not.
fn is_ours(command: &str, subcommand: &str) -> bool {
    let Some(program) = command
        .trim()
        .strip_suffix(subcommand)
        .and_then(|rest| rest.strip_suffix(' '))
    else {
        return false;
    };
    let path = if let Some(quoted) = program.strip_prefix('\'') {
        // One single-quoted word, its own quotes written as `'\''`.
        let Some(inner) = quoted.strip_suffix('\'') else {
            return false;
        };
        if inner.replace(r"'\''", "").contains('\'') {
            return false;
        }
        inner.replace(r"'\''", "'")
    } else if program
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+~".contains(c))
    {
        program.to_owned()
    } else {
        return false;
    };
    Path::new(&path)
        .file_name()
        .is_some_and(|name| name == "familiar")
}

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

fn parse(text: &str) -> Result<Option<Value<'_>>, SettingsError> {
    jsonedit::parse(text).map_err(|problem| SettingsError::Parse {
        line: problem.line,
        column: problem.column,
        message: problem.message,
    })
}

/// The top-level object of `text` (which must have one).
fn root(text: &str) -> Result<Value<'_>, SettingsError> {
    match parse(text)? {
        Some(value @ Value::Object(_)) => Ok(value),
        Some(_) | None => Err(SettingsError::NotObject("the top level".to_owned())),
    }
}

fn as_object<'v, 'a>(value: &'v Value<'a>) -> Option<&'v jsonc_parser::ast::Object<'a>> {
    match value {
        Value::Object(object) => Some(object),
        _ => None,
    }
}

fn string<'v>(value: Option<&'v Value<'_>>) -> Option<&'v str> {
    match value {
        Some(Value::StringLit(lit)) => Some(lit.value.as_ref()),
        _ => None,
    }
}

/// The command of a `{"type": "command", "command": …}` entry.
fn command_of<'v>(entry: &'v Value<'_>) -> Option<&'v str> {
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
fn installed_plain(text: &str) -> Result<Installed, SettingsError> {
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
    if let Some((_, status)) = jsonedit::member(root, "statusLine")
        && let Some(command) = command_of(status)
        && is_ours(command, "statusline")
    {
        found.status_line = Some(command.to_owned());
    }
    Ok(found)
}

/// Add what `plan` names where it is not there yet. `text` is the current file (`None` when
/// there is none).
fn install_plain(text: Option<&str>, plan: &Plan) -> Result<SettingsEdit, SettingsError> {
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
    if let Some(command) = &plan.status_line {
        let root = root(&doc)?;
        let object = as_object(&root).expect("root() returns an object");
        match jsonedit::member(object, "statusLine") {
            None => {
                let unit = jsonedit::indent_unit(&doc, &root);
                let entry = Command {
                    r#type: "command",
                    command,
                };
                let container = Container::of(&root).expect("an object is a container");
                let next =
                    jsonedit::append(&doc, &container, &Item::Member("statusLine", &entry), &unit);
                doc = next;
                changes.push(format!("add statusLine: {command}"));
            }
            Some((_, status)) => match command_of(status) {
                Some(existing) if is_ours(existing, "statusline") => {}
                Some(existing) => return Err(SettingsError::StatusLineTaken(existing.to_owned())),
                None => return Err(SettingsError::StatusLineTaken("not a command".to_owned())),
            },
        }
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
/// (with the groups, event lists and `hooks` object they leave empty) and the rest stays.
fn uninstall_plain(text: &str, originals: &[&str]) -> Result<SettingsEdit, SettingsError> {
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
        changes.push(format!("remove statusLine: {command}"));
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
    if let Some((index, status)) = jsonedit::member(object, "statusLine")
        && command_of(status).is_some_and(|c| is_ours(c, "statusline"))
    {
        return Ok(Some(jsonedit::remove(doc, &root_container, index)));
    }
    Ok(None)
}

/// How a settings file is written, kept through an edit: a byte-order mark in front (some
/// Windows editors write one), and CRLF line ends (when every line ends so). The edits work
/// on the file without them; what they add gets the file's own line ends.
#[derive(Debug, Clone, Copy)]
struct Form {
    bom: bool,
    crlf: bool,
}

impl Form {
    /// The form of `text`, and `text` without it.
    fn of(text: &str) -> (Form, std::borrow::Cow<'_, str>) {
        let body = text.strip_prefix('\u{feff}');
        let bom = body.is_some();
        let body = body.unwrap_or(text);
        let crlf = body.contains("\r\n") && !body.replace("\r\n", "").contains('\n');
        let plain = if crlf {
            std::borrow::Cow::Owned(body.replace("\r\n", "\n"))
        } else {
            std::borrow::Cow::Borrowed(body)
        };
        (Form { bom, crlf }, plain)
    }

    /// `text` (edited without the form) in the form again.
    fn restore(self, text: String) -> String {
        let text = if self.crlf {
            text.replace('\n', "\r\n")
        } else {
            text
        };
        if self.bom {
            format!("\u{feff}{text}")
        } else {
            text
        }
    }
}

/// What of Familiar's is in `text` (a settings file, its form kept: [`Form`]).
pub fn installed(text: &str) -> Result<Installed, SettingsError> {
    installed_plain(&Form::of(text).1)
}

/// Add what `plan` names where it is not there yet. `text` is the current file (`None` when
/// there is none); a byte-order mark and CRLF line ends are kept, and added lines end as the
/// file's do.
pub fn install(text: Option<&str>, plan: &Plan) -> Result<SettingsEdit, SettingsError> {
    let Some(text) = text else {
        return install_plain(None, plan);
    };
    let (form, plain) = Form::of(text);
    let edit = install_plain(Some(&plain), plan)?;
    Ok(SettingsEdit {
        before: Some(text.to_owned()),
        after: edit.after.map(|after| form.restore(after)),
        changes: edit.changes,
    })
}

/// Remove what `install` added (see [`uninstall_plain`]), the file's form kept: given the
/// original (`originals`, the backups), its very bytes come back.
pub fn uninstall(text: &str, originals: &[&str]) -> Result<SettingsEdit, SettingsError> {
    let (form, plain) = Form::of(text);
    let originals: Vec<std::borrow::Cow<'_, str>> = originals
        .iter()
        .map(|original| Form::of(original).1)
        .collect();
    let originals: Vec<&str> = originals.iter().map(|o| o.as_ref()).collect();
    let edit = uninstall_plain(&plain, &originals)?;
    Ok(SettingsEdit {
        before: Some(text.to_owned()),
        after: edit.after.map(|after| form.restore(after)),
        changes: edit.changes,
    })
}
