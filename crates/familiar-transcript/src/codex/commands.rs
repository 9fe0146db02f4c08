//! What a Codex tool call works on: the shell command of `exec_command` / `shell` /
//! `shell_command`, whether that command only reads (the `reading` rule), and the files an
//! `apply_patch` patch touches. Pure string work for [`super::Rollout`].
//!
//! The reading rule (documented in `docs/events.md`): a command reads when every part of its
//! pipeline (`|`) starts with a read-only program — `cat`, `head`, `tail`, `nl`, `wc`, `ls`,
//! `tree`, `find` (without `-exec`, `-execdir` or `-delete`), `fd`, `rg`, `grep`, `egrep`,
//! `fgrep`, `stat`, `file`, `pwd`, or `sed -n` — and it has no redirection (`>`), no command
//! list (`;`, `&&`, `||`, a newline) and no substitution (`` ` ``, `$(`). Anything else is `bash`.

use serde_json::Value;

const READ_ONLY: [&str; 16] = [
    "cat", "head", "tail", "nl", "wc", "ls", "tree", "find", "fd", "rg", "grep", "egrep", "fgrep",
    "stat", "file", "pwd",
];

/// The command line of a shell tool call: `exec_command {"cmd": …}`, `shell_command
/// {"command": "…"}`, or the old `shell {"command": ["bash", "-lc", "…"]}` (the script of a
/// `-lc`/`-c` wrapper, else the words joined by spaces).
pub(super) fn command_line(arguments: &Value) -> Option<String> {
    if let Some(cmd) = arguments["cmd"].as_str() {
        return Some(cmd.to_owned());
    }
    match &arguments["command"] {
        Value::String(command) => Some(command.clone()),
        Value::Array(words) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [shell, flag, script]
                    if shell.ends_with("sh") && (*flag == "-lc" || *flag == "-c") =>
                {
                    Some((*script).to_owned())
                }
                [] => None,
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

/// Whether `command` only reads (the rule in the module documentation).
pub fn is_read_only(command: &str) -> bool {
    let command = command.trim();
    if command.is_empty()
        || ["&&", "||", ";", ">", "`", "$(", "\n"]
            .iter()
            .any(|mark| command.contains(mark))
    {
        return false;
    }
    command.split('|').all(|part| {
        let words: Vec<&str> = part.split_whitespace().collect();
        match words.first().copied() {
            Some("sed") => words.get(1) == Some(&"-n"),
            Some("find") => !words
                .iter()
                .any(|word| matches!(*word, "-exec" | "-execdir" | "-delete" | "-ok")),
            Some(program) => READ_ONLY.contains(&program),
            None => false,
        }
    })
}

/// The files a patch touches, in order: every `*** Add File:`, `*** Update File:`,
/// `*** Delete File:` and `*** Move to:` line of the `apply_patch` format.
pub fn patch_files(patch: &str) -> Vec<String> {
    const HEADERS: [&str; 4] = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    let mut files: Vec<String> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_end();
        if let Some(path) = HEADERS.iter().find_map(|header| line.strip_prefix(header)) {
            let path = path.trim();
            if !path.is_empty() && !files.iter().any(|known| known == path) {
                files.push(path.to_owned());
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reading_commands_are_the_documented_ones() {
        for command in [
            "cat a.txt",
            "sed -n '1,20p' src/lib.rs",
            "rg -n foo src",
            "grep -r x . | head -5",
            "ls -la",
            "find . -name '*.rs'",
            "head -3 a b",
            "nl -ba x | sed -n 2,4p",
        ] {
            assert!(is_read_only(command), "{command}");
        }
        for command in [
            "exit 3",
            "sed -i s/a/b/ x",
            "cat a > b",
            "ls && rm -rf x",
            "cargo test",
            "find . -delete",
            "find . -exec rm {} +",
            "cat $(echo x)",
            "",
            "rg x | xargs rm",
        ] {
            assert!(!is_read_only(command), "{command}");
        }
    }

    #[test]
    fn command_lines_of_each_shell_tool() {
        assert_eq!(
            command_line(&json!({"cmd": "cat a.txt"})).as_deref(),
            Some("cat a.txt")
        );
        assert_eq!(
            command_line(&json!({"command": ["bash", "-lc", "ls -la"]})).as_deref(),
            Some("ls -la")
        );
        assert_eq!(
            command_line(&json!({"command": ["git", "status"]})).as_deref(),
            Some("git status")
        );
        assert_eq!(
            command_line(&json!({"command": "pwd"})).as_deref(),
            Some("pwd")
        );
        assert_eq!(command_line(&json!({"other": 1})), None);
    }

    #[test]
    fn a_patch_touches_each_file_once() {
        let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+bye\n*** Add File: b.txt\n+new file\n*** Update File: c.txt\n*** Move to: d.txt\n*** Delete File: a.txt\n*** End Patch\n";
        assert_eq!(patch_files(patch), ["a.txt", "b.txt", "c.txt", "d.txt"]);
        assert!(patch_files("not a patch").is_empty());
    }
}
