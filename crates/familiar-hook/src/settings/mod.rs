//! Adding and removing what Familiar installs into an agent's `settings.json` (Claude Code's
//! hooks, and its status line where the agent keeps one: [`StatusLineAt`]), as pure
//! text-to-text edits.
//!
//! The file is the user's: every edit goes through [`crate::jsonedit`], which splices only the
//! bytes it must, so formatting, key order, comments and numbers as written stay. Entries that
//! are not Familiar's are never touched, a file that does not parse is refused (with its line)
//! rather than overwritten, and a status line the user set is never replaced. `uninstall`
//! removes exactly what `install` added: given the original text (the binary's backup), it
//! returns those very bytes when the file is as install left it, and `None` (remove the file)
//! when install created it; otherwise it splices Familiar's entries out and leaves the rest.
//! The binary (`familiar hook install/uninstall`) shows the diff, asks, keeps backups and
//! writes.
//!
//! Here: the plan, what is found, the commands and the public edits; [`form`] keeps a file's
//! byte-order mark and line ends; [`edit`] does the edits on the file without them (the hooks
//! itself); [`status_line`] finds, adds and removes the status line where [`StatusLineAt`]
//! says.

mod edit;
mod form;
mod status_line;

use std::path::Path;

use edit::{install_plain, installed_plain, uninstall_plain};
use form::Form;
pub use status_line::QWEN_REFRESH_SECONDS;

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
        "settings.json already has a {key} that is not Familiar's ({existing}); remove it first if you want Familiar's, it was left as it is"
    )]
    StatusLineTaken {
        /// Where: `statusLine` or `ui.statusLine` ([`StatusLineAt::key`]).
        key: &'static str,
        /// Its command, or what it is when it is not one.
        existing: String,
    },
}

/// Where an agent's settings keep its status-line command, and in what shape.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StatusLineAt {
    /// `"statusLine": {"type": "command", "command": …}` at the top: Claude Code's and GitHub
    /// Copilot CLI 1.0.102's.
    #[default]
    Top,
    /// `"ui": {"statusLine": {"type": "command", "command": …, "refreshInterval": 2}}`: Qwen
    /// Code 0.24.4's (its `getStatusLineConfig`), refreshed every
    /// [`QWEN_REFRESH_SECONDS`].
    Ui,
}

impl StatusLineAt {
    /// The setting's key, as the user reads it: `statusLine`, `ui.statusLine`.
    pub fn key(self) -> &'static str {
        match self {
            StatusLineAt::Top => "statusLine",
            StatusLineAt::Ui => "ui.statusLine",
        }
    }
}

/// What to install: Familiar's hooks and/or its status line, each as the command to run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The hook command (see [`hook_command`]), added to each of [`EVENTS`].
    pub hooks: Option<String>,
    /// The status line command (see [`status_line_command`]).
    pub status_line: Option<String>,
    /// Where the status line goes.
    pub status_line_at: StatusLineAt,
}

/// What of Familiar's a settings file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Installed {
    /// `(event, command)` for each hook event that runs Familiar's hook command.
    pub hooks: Vec<(String, String)>,
    /// Familiar's status line command, when it is the status line.
    pub status_line: Option<String>,
    /// Where that status line is (`Top` when there is none).
    pub status_line_at: StatusLineAt,
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
            status_line_at: self.status_line_at,
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

    pub(super) fn unchanged(text: Option<&str>) -> SettingsEdit {
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
pub(super) fn is_ours(command: &str, subcommand: &str) -> bool {
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
