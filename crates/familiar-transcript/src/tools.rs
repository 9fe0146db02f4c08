//! Which event a tool call becomes, and what it works on (its `target`).
//!
//! Tool names are matched case-insensitively: CLIs before 1.0 wrote them lower-case.

use std::borrow::Cow;

use familiar_model::EventKind;
use serde::Deserialize;
use serde_json::value::RawValue;

/// The event kind a tool_use with this name becomes.
pub fn classify(name: &str) -> EventKind {
    const READING: [&str; 7] = [
        "read",
        "glob",
        "grep",
        "ls",
        "webfetch",
        "websearch",
        "notebookread",
    ];
    const WRITING: [&str; 4] = ["edit", "write", "multiedit", "notebookedit"];
    const BASH: [&str; 3] = ["bash", "bashoutput", "killshell"];
    const SUBAGENT: [&str; 2] = ["task", "agent"];
    const PLANNING: [&str; 11] = [
        "todowrite",
        "taskcreate",
        "taskupdate",
        "tasklist",
        "taskget",
        "todoread",
        "taskoutput",
        "askuserquestion",
        "exitplanmode",
        "enterplanmode",
        "skill",
    ];
    let is = |list: &[&str]| list.iter().any(|known| known.eq_ignore_ascii_case(name));
    if is(&READING) {
        EventKind::Reading
    } else if is(&WRITING) {
        EventKind::Writing
    } else if is(&BASH) {
        EventKind::Bash
    } else if is(&SUBAGENT) {
        EventKind::SubagentStart
    } else if is(&PLANNING) {
        EventKind::Thinking
    } else {
        EventKind::Tool
    }
}

/// Whether the tool modifies a file (counted in `files_modified`).
pub fn modifies_files(name: &str) -> bool {
    ["edit", "write", "multiedit", "notebookedit"]
        .iter()
        .any(|known| known.eq_ignore_ascii_case(name))
}

/// The fields of a tool input that Familiar reads; everything else is skipped.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolInput<'a> {
    #[serde(borrow)]
    pub file_path: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub notebook_path: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub path: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub pattern: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub command: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub url: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub query: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub bash_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub shell_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub description: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub subagent_type: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub skill: Option<Cow<'a, str>>,
    /// TaskCreate / TaskUpdate.
    #[serde(borrow)]
    pub subject: Option<Cow<'a, str>>,
    #[serde(rename = "taskId", borrow)]
    pub task_id: Option<Cow<'a, str>>,
}

impl<'a> ToolInput<'a> {
    /// The input of a tool call as serde reads it; all `None` when it is not an object of
    /// these fields (a field of another type, say). The fast path ([`crate::scan::tool_input`])
    /// reads nearly every input; serde reads the rest.
    pub fn parse(raw: Option<&'a RawValue>) -> ToolInput<'a> {
        raw.and_then(|raw| {
            crate::scan::tool_input(raw.get()).or_else(|| serde_json::from_str(raw.get()).ok())
        })
        .unwrap_or_default()
    }

    /// What the tool works on: file path, command, pattern, query or URL; a task's subject
    /// (else its id) for the task tools.
    pub fn target(&self) -> Option<&str> {
        [
            &self.file_path,
            &self.notebook_path,
            &self.command,
            &self.pattern,
            &self.url,
            &self.query,
            &self.path,
            &self.bash_id,
            &self.shell_id,
            &self.skill,
            &self.subject,
            &self.task_id,
        ]
        .into_iter()
        .find_map(|field| field.as_deref())
    }

    /// Path of a file-modifying tool.
    pub fn modified_path(&self) -> Option<&str> {
        self.file_path.as_deref().or(self.notebook_path.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_classified_case_insensitively() {
        assert_eq!(classify("Read"), EventKind::Reading);
        assert_eq!(classify("read"), EventKind::Reading);
        assert_eq!(classify("MultiEdit"), EventKind::Writing);
        assert_eq!(classify("KillShell"), EventKind::Bash);
        assert_eq!(classify("Task"), EventKind::SubagentStart);
        assert_eq!(classify("Agent"), EventKind::SubagentStart);
        assert_eq!(classify("TodoWrite"), EventKind::Thinking);
        assert_eq!(classify("TaskCreate"), EventKind::Thinking);
        assert_eq!(classify("TaskUpdate"), EventKind::Thinking);
        assert_eq!(classify("mcp__tidewave__project_eval"), EventKind::Tool);
    }
}
