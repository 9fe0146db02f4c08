//! `familiar statusline` as a real CLI's status-line command, behind a recorder that keeps
//! each input the CLI gave and the line Familiar printed (`real_copilot/interactive.rs`,
//! `real_qwen/statusline.rs`), and [`installed_familiar`], a `familiar` of its own for `hook
//! install` to name.

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
/// expanded) that saves its stdin in `dir`, runs `familiar statusline` on it (whatever its own
/// arguments), saves and prints the line.
pub struct Recorder {
    pub script: PathBuf,
    pub dir: PathBuf,
}

impl Recorder {
    /// A recorder under `root` (its runs in `root/statusline`).
    pub fn new(root: &Path) -> Recorder {
        Recorder::at(root, &root.join("statusline.sh"))
    }

    /// A recorder under `root` whose executable is `script` (written over whatever is there:
    /// `familiar` at the path `familiar hook install` named), run as `SCRIPT statusline` or
    /// alone.
    pub fn at(root: &Path, script: &Path) -> Recorder {
        let dir = root.join("statusline");
        fs::create_dir_all(&dir).expect("statusline dir");
        let script = script.to_owned();
        // A new file, not the old one written over (a hard link to the binary).
        let _ = fs::remove_file(&script);
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

/// `dir/familiar`: this build's `familiar` under a path of its own (a hard link, else a
/// copy), so that `dir/familiar hook install` writes `dir/familiar statusline` as the command
/// and [`Recorder::at`] can then stand at that path.
pub fn installed_familiar(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).expect("bin dir");
    let exe = dir.join("familiar");
    let built = Path::new(env!("CARGO_BIN_EXE_familiar"));
    if fs::hard_link(built, &exe).is_err() {
        fs::copy(built, &exe).expect("copy familiar");
    }
    exe
}
