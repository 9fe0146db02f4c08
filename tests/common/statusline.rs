//! `familiar statusline` as a real CLI's status-line command, behind a recorder that keeps
//! each input the CLI gave and the line Familiar printed (`real_copilot/interactive.rs`,
//! `real_qwen/statusline.rs`).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// One run of the status line: what the CLI gave, what Familiar printed.
#[derive(Debug)]
pub struct Run {
    pub file: PathBuf,
    pub input: Value,
    pub line: String,
    pub err: String,
}

/// The recorder: an executable file (a CLI runs it without a shell, so nothing in its path is
/// expanded) that saves its stdin in `dir`, runs `familiar statusline` on it, saves and prints
/// the line.
pub struct Recorder {
    pub script: PathBuf,
    pub dir: PathBuf,
}

impl Recorder {
    /// A recorder under `root` (its runs in `root/statusline`).
    pub fn new(root: &Path) -> Recorder {
        let dir = root.join("statusline");
        fs::create_dir_all(&dir).expect("statusline dir");
        let script = root.join("statusline.sh");
        fs::write(
            &script,
            format!(
                "#!/bin/sh\nf='{}'/$(date +%s%N)-$$\ncat > \"$f.json\"\n'{}' statusline < \"$f.json\" > \"$f.line\" 2> \"$f.err\"\ncat \"$f.line\"\n",
                dir.display(),
                env!("CARGO_BIN_EXE_familiar")
            ),
        )
        .expect("recorder");
        fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod recorder");
        Recorder { script, dir }
    }

    /// Every run so far, oldest first.
    pub fn runs(&self) -> Vec<Run> {
        let mut runs: Vec<Run> = fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .filter_map(|file| {
                let input = serde_json::from_str(&fs::read_to_string(&file).ok()?).ok()?;
                let line = fs::read_to_string(file.with_extension("line")).ok()?;
                let err = fs::read_to_string(file.with_extension("err")).unwrap_or_default();
                Some(Run {
                    file,
                    input,
                    line: line.trim_end().to_owned(),
                    err,
                })
            })
            .collect();
        runs.sort_by(|a, b| a.file.cmp(&b.file));
        runs
    }
}
