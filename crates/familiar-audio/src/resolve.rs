//! What a `sound(name)` names: a built-in cue ([`crate::cues`]) or a user's file, found the way
//! `familiar-script` finds imports: a relative path inside the directory of the script that
//! asked (no `..`, no absolute path, no symlink out of it), here with a `.wav`, `.ogg` or
//! `.flac` extension.
//!
//! Actions carry the file name of their script (`Action::script`), not its directory, so the
//! sink is given the loaded scripts' paths ([`ScriptDirs`]) and looks the directory up by
//! that name. Shipped scripts have no directory: they can play built-in cues only.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use crate::cues;

/// File extensions a user's sound may have.
pub const EXTENSIONS: &[&str] = &["wav", "ogg", "flac"];

/// What a sound name resolved to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Source {
    /// Index into [`cues::CUES`].
    Cue(usize),
    /// Canonical path of a user's file.
    File(PathBuf),
}

/// Why a sound name cannot be played.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error(
        "unknown sound {name:?} (built-in cues: {}; a file needs a .wav, .ogg or .flac extension)",
        cues::names().join(", ")
    )]
    UnknownCue { name: String },
    #[error("sound file {name:?} in {script}: {why}")]
    BadPath {
        name: String,
        script: String,
        why: &'static str,
    },
}

/// The directories of the loaded script files, by file name (what actions carry).
#[derive(Debug, Clone, Default)]
pub struct ScriptDirs(HashMap<String, Vec<PathBuf>>);

impl ScriptDirs {
    /// From the script paths the pipeline loaded (config `scripts` and `--script`).
    pub fn from_paths<'a>(paths: impl IntoIterator<Item = &'a Path>) -> ScriptDirs {
        let mut dirs: HashMap<String, Vec<PathBuf>> = HashMap::new();
        for path in paths {
            let (Some(name), Some(dir)) = (path.file_name(), path.parent()) else {
                continue;
            };
            // `x.rhai` relative to the current directory has an empty parent.
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            dirs.entry(name.to_string_lossy().into_owned())
                .or_default()
                .push(dir.to_owned());
        }
        ScriptDirs(dirs)
    }

    fn of(&self, script: &str) -> &[PathBuf] {
        self.0.get(script).map_or(&[], Vec::as_slice)
    }
}

/// Whether `name` asks for a file rather than a built-in cue: it has a sound file extension.
pub fn is_file_name(name: &str) -> bool {
    Path::new(name)
        .extension()
        .and_then(|ext| ext.to_str())
        .is_some_and(|ext| {
            EXTENSIONS
                .iter()
                .any(|known| ext.eq_ignore_ascii_case(known))
        })
}

/// Resolve `name` as asked by the script named `script`.
pub fn resolve(name: &str, script: &str, dirs: &ScriptDirs) -> Result<Source, ResolveError> {
    if !is_file_name(name) {
        return cues::find(name)
            .map(Source::Cue)
            .ok_or_else(|| ResolveError::UnknownCue {
                name: name.to_owned(),
            });
    }
    let bad = |why| ResolveError::BadPath {
        name: name.to_owned(),
        script: script.to_owned(),
        why,
    };
    let relative = Path::new(name);
    let inside = relative
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !inside {
        return Err(bad(
            "sound files are relative paths inside the script's directory",
        ));
    }
    let candidates = dirs.of(script);
    if candidates.is_empty() {
        return Err(bad("this script has no directory (built-in cues only)"));
    }
    let mut outside = false;
    for dir in candidates {
        // Symlinks could still point outside: compare canonical paths.
        let (Ok(root), Ok(file)) = (dir.canonicalize(), dir.join(relative).canonicalize()) else {
            continue;
        };
        if file.starts_with(&root) {
            return Ok(Source::File(file));
        }
        outside = true;
    }
    Err(bad(if outside {
        "outside the script's directory"
    } else {
        "no such file"
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs_with(dir: &Path) -> ScriptDirs {
        ScriptDirs::from_paths([dir.join("mine.rhai").as_path()])
    }

    #[test]
    fn names_without_a_sound_extension_are_built_in_cues() {
        let dirs = ScriptDirs::default();
        assert_eq!(
            resolve("error", "default.rhai", &dirs),
            Ok(Source::Cue(cues::find("error").expect("cue")))
        );
        let err = resolve("fanfar", "default.rhai", &dirs).expect_err("unknown");
        assert!(err.to_string().contains("approval, input, done"), "{err}");
        assert!(is_file_name("a/b.OGG") && !is_file_name("level_up"));
    }

    #[test]
    fn files_resolve_inside_the_script_s_directory_like_imports() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::create_dir(dir.path().join("sounds")).expect("sounds");
        std::fs::write(dir.path().join("sounds/ding.wav"), b"x").expect("file");
        let dirs = dirs_with(dir.path());
        let found = resolve("sounds/ding.wav", "mine.rhai", &dirs).expect("found");
        assert_eq!(
            found,
            Source::File(
                dir.path()
                    .join("sounds/ding.wav")
                    .canonicalize()
                    .expect("c")
            )
        );
        let why = |name: &str, script: &str| match resolve(name, script, &dirs) {
            Err(ResolveError::BadPath { why, .. }) => why,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            why("../ding.wav", "mine.rhai"),
            "sound files are relative paths inside the script's directory"
        );
        assert_eq!(
            why("/etc/ding.wav", "mine.rhai"),
            "sound files are relative paths inside the script's directory"
        );
        assert_eq!(why("sounds/none.ogg", "mine.rhai"), "no such file");
        assert_eq!(
            why("sounds/ding.wav", "default.rhai"),
            "this script has no directory (built-in cues only)"
        );
    }

    #[test]
    fn a_symlink_out_of_the_script_s_directory_is_refused() {
        let outside = tempfile::tempdir().expect("outside");
        std::fs::write(outside.path().join("secret.wav"), b"x").expect("file");
        let dir = tempfile::tempdir().expect("dir");
        std::os::unix::fs::symlink(
            outside.path().join("secret.wav"),
            dir.path().join("link.wav"),
        )
        .expect("symlink");
        match resolve("link.wav", "mine.rhai", &dirs_with(dir.path())) {
            Err(ResolveError::BadPath { why, .. }) => {
                assert_eq!(why, "outside the script's directory")
            }
            other => panic!("{other:?}"),
        }
    }
}
