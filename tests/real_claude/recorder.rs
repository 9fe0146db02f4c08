//! What the interactive session records raw beside Familiar's own hook: every hook input the CLI
//! sends (one JSON line each, as written) and every status line input (one file each). The
//! samples of `fixtures/hooks/` and `fixtures/statusline/` were recorded this way:
//! `FAMILIAR_RECORD=DIR` keeps the recordings in `DIR` (`hooks.jsonl`, `statusline/`) instead
//! of the test's temp dir, whatever the test then finds.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// Hook events of 2.1.332 unknown to 2.1.197. A name the CLI does not know opens a dialog at
/// start ("Unknown hook event ... was ignored", Continue / Fix / Exit), and nothing the script
/// does fires these: they are left out of the recording.
const NOT_IN_2_1_197: [&str; 4] = [
    "PreModelSwitch",
    "PostModelSwitch",
    "DirectoryAdded",
    "PreSkillShellCommand",
];

/// Every hook event both Claude Code 2.1.197 and 2.1.332 know: 2.1.332's own list
/// (`familiar_hook::input::KNOWN_EVENTS`) less [`NOT_IN_2_1_197`].
pub fn all_events() -> impl Iterator<Item = &'static str> {
    familiar_hook::input::KNOWN_EVENTS
        .into_iter()
        .filter(|event| !NOT_IN_2_1_197.contains(event))
}

/// What the recording status line shows.
pub const STATUS_LINE: &str = "statusline-recorded";

/// Where the recordings go.
pub struct Recorder {
    pub hooks: PathBuf,
    pub status_lines: PathBuf,
}

impl Recorder {
    /// In `FAMILIAR_RECORD`'s dir when set, else in `tmp`.
    pub fn new(tmp: &Path) -> Recorder {
        let dir = std::env::var_os("FAMILIAR_RECORD").map_or_else(|| tmp.to_owned(), PathBuf::from);
        let status_lines = dir.join("statusline");
        fs::create_dir_all(&status_lines).expect("statusline dir");
        let hooks = dir.join("hooks.jsonl");
        // A recording of this run only.
        let _ = fs::remove_file(&hooks);
        Recorder {
            hooks,
            status_lines,
        }
    }

    /// `settings.json` with the recorder on every hook event and as the status line.
    pub fn settings(&self) -> Value {
        let record = format!("cat >> '{0}'; echo >> '{0}'", self.hooks.display());
        let mut hooks = Map::new();
        for event in all_events() {
            hooks.insert(
                event.to_owned(),
                json!([{"matcher": "", "hooks": [{"type": "command", "command": record}]}]),
            );
        }
        // One file per run of the status line, named by the time and the shell's pid; it
        // shows [`STATUS_LINE`] (where 2.1.197 showed its shortcuts hint).
        let status_line = format!(
            "cat > '{}'/$(date +%s%N)-$$.json; echo {STATUS_LINE}",
            self.status_lines.display()
        );
        json!({
            // Permission prompts, as the test answers them: 2.1.332 starts in auto mode,
            // where a classifier (a model call) decides instead.
            // (`FAMILIAR_RECORD_MODE=auto` records auto mode's hooks instead.)
            "permissions": {"defaultMode": std::env::var("FAMILIAR_RECORD_MODE")
                .unwrap_or_else(|_| "default".to_owned())},
            "hooks": hooks,
            "statusLine": {"type": "command", "command": status_line},
        })
    }

    /// The status line inputs recorded so far, oldest first.
    pub fn status_lines(&self) -> Vec<Value> {
        let mut paths: Vec<PathBuf> = fs::read_dir(&self.status_lines)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .collect();
        paths.sort();
        paths
            .iter()
            .filter_map(|path| fs::read_to_string(path).ok())
            .filter_map(|text| serde_json::from_str(&text).ok())
            .collect()
    }
}
