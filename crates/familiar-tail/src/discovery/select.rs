//! Which transcripts a selector means: [`Selector`]s compiled against one config dir into a
//! [`Matcher`], which names the directories to watch ([`Matcher::roots`]) and decides per path,
//! asking for the file's [`Head`] (read by [`super::scan`]) when the path alone cannot tell.
//! Pure.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Component, Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};

use super::paths::{TranscriptInfo, TranscriptKind, dash_encode};
use super::{PROJECTS_DIR, SESSIONS_DIR};

mod opencode;

/// Which transcripts to follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// Every transcript under the config dir.
    All,
    /// The sessions of the project at this directory (by any encoding or by `cwd`).
    Project(PathBuf),
    /// One session (and its subagents).
    Session(String),
    /// One file, wherever it is (a hook's `transcript_path`), and its `subagents/` dir.
    File(PathBuf),
}

/// A directory to watch, recursively or not.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WatchRoot {
    pub path: PathBuf,
    pub recursive: bool,
}

/// First records of a file: what [`Matcher`] needs when the path alone cannot tell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    pub cwd: Option<String>,
    pub session_id: Option<String>,
    /// `true` once enough was read that a missing field will not turn up.
    pub exhausted: bool,
}

/// Answer of [`Matcher::decide`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Yes,
    No,
    /// The path cannot tell: look at the file's first records ([`Head`]).
    NeedRecords,
}

/// Selectors compiled against one config dir.
#[derive(Debug, Clone)]
pub struct Matcher {
    projects: PathBuf,
    sessions: PathBuf,
    /// Claude Code's dirs are watched (not with `--agent codex`).
    claude: bool,
    /// `$CODEX_HOME/sessions`, when Codex rollouts are watched too.
    codex_sessions: Option<PathBuf>,
    /// `<gemini dir>/tmp`, when Gemini CLI sessions are watched too.
    gemini_tmp: Option<PathBuf>,
    /// `<qwen dir>/projects`, when Qwen Code sessions are watched too.
    qwen_projects: Option<PathBuf>,
    /// `<copilot dir>/session-state`, when Copilot CLI sessions are watched too.
    copilot_state: Option<PathBuf>,
    selectors: Vec<Compiled>,
}

#[derive(Debug, Clone)]
enum Compiled {
    All,
    Project {
        /// The directory as given and canonicalized (deduplicated).
        dirs: Vec<PathBuf>,
        dash: Vec<String>,
        base64: Vec<String>,
    },
    Session(String),
    File {
        path: PathBuf,
        /// `<dir>/<stem>/subagents`: the subagents of a followed session file.
        subagents: PathBuf,
    },
}

/// Where a path lies relative to the config dir.
enum Place<'a> {
    /// `projects/<name>/...` with `name`.
    InProject(&'a str),
    /// Directly in `projects/`, or anywhere under `sessions/`.
    Flat,
    Elsewhere,
}

impl Matcher {
    pub fn new(config_dir: &Path, selectors: &[Selector]) -> Matcher {
        Matcher {
            projects: config_dir.join(PROJECTS_DIR),
            sessions: config_dir.join(SESSIONS_DIR),
            claude: true,
            codex_sessions: None,
            gemini_tmp: None,
            qwen_projects: None,
            copilot_state: None,
            selectors: selectors.iter().map(compile).collect(),
        }
    }

    /// Select one more file at run time (a hook's `transcript_path`), with its subagents:
    /// the directories to watch for it, or `None` if a `File` selector named it already.
    pub fn add_file(&mut self, path: &Path) -> Option<Vec<WatchRoot>> {
        let compiled = compile(&Selector::File(path.to_path_buf()));
        let known = self
            .selectors
            .iter()
            .any(|selector| match (selector, &compiled) {
                (Compiled::File { path: old, .. }, Compiled::File { path: new, .. }) => old == new,
                _ => false,
            });
        if known {
            return None;
        }
        let roots = file_roots(&compiled);
        self.selectors.push(compiled);
        Some(roots)
    }

    /// Which agents' sessions the selectors look at: Claude Code's (under the config dir) or
    /// not, and Codex's (`<codex_home>/sessions/YYYY/MM/DD/rollout-*.jsonl`, placed in a
    /// project by the `cwd` of their `session_meta`) or not.
    pub fn agents(mut self, claude: bool, codex_home: Option<&Path>) -> Matcher {
        self.claude = claude;
        self.codex_sessions = codex_home.map(|home| home.join(SESSIONS_DIR));
        self
    }

    /// Gemini CLI's sessions too, or not: `<gemini_dir>/tmp/<project>/chats/session-*.jsonl`,
    /// placed in a project by their project folder's `.project_root` (the head's `cwd`:
    /// [`super::scan::read_head_until`]).
    pub fn gemini(mut self, gemini_dir: Option<&Path>) -> Matcher {
        self.gemini_tmp = gemini_dir.map(|dir| dir.join("tmp"));
        self
    }

    /// Qwen Code's sessions too, or not: `<qwen_dir>/projects/<project>/chats/<session>.jsonl`
    /// and their subagents' `<project>/subagents/<session>/agent-<id>.jsonl`, placed in a project by the `cwd` every record carries (the folder's name is the
    /// directory dash-encoded as Claude Code's, but from UTF-16 code units: not relied on).
    pub fn qwen(mut self, qwen_dir: Option<&Path>) -> Matcher {
        self.qwen_projects = qwen_dir.map(|dir| dir.join(PROJECTS_DIR));
        self
    }

    /// Copilot CLI's sessions too, or not: `<copilot_dir>/session-state/<session>/events.jsonl`,
    /// placed in a project by the `cwd` of its `session.start`.
    pub fn copilot(mut self, copilot_dir: Option<&Path>) -> Matcher {
        self.copilot_state = copilot_dir.map(|dir| dir.join("session-state"));
        self
    }

    /// The directories to watch for these selectors.
    pub fn roots(&self) -> Vec<WatchRoot> {
        let mut roots: Vec<WatchRoot> = Vec::new();
        let mut add = |root: WatchRoot| {
            if let Some(existing) = roots.iter_mut().find(|r| r.path == root.path) {
                existing.recursive |= root.recursive;
            } else {
                roots.push(root);
            }
        };
        for selector in &self.selectors {
            match selector {
                Compiled::All | Compiled::Project { .. } | Compiled::Session(_) => {
                    let claude = Some([&self.projects, &self.sessions]).filter(|_| self.claude);
                    let others = self
                        .codex_sessions
                        .iter()
                        .chain(&self.gemini_tmp)
                        .chain(&self.qwen_projects)
                        .chain(&self.copilot_state);
                    for dir in claude.into_iter().flatten().chain(others) {
                        add(WatchRoot {
                            path: dir.clone(),
                            recursive: true,
                        });
                    }
                }
                Compiled::File { .. } => file_roots(selector).into_iter().for_each(&mut add),
            }
        }
        roots
    }

    fn place<'p>(&self, path: &'p Path) -> Place<'p> {
        if self
            .codex_sessions
            .as_ref()
            .is_some_and(|dir| path.starts_with(dir))
        {
            return Place::Flat;
        }
        if let Some(tmp) = &self.gemini_tmp
            && path.starts_with(tmp)
        {
            // Its sessions, not the logs and tool outputs beside them.
            return match super::paths::gemini_chat(path) {
                Some(project) if project.parent() == Some(tmp.as_path()) => Place::Flat,
                _ => Place::Elsewhere,
            };
        }
        if let Some(projects) = &self.qwen_projects
            && path.starts_with(projects)
        {
            // Its sessions and their subagents' files, not what lies beside them.
            let project = super::paths::qwen_chat(path)
                .or_else(|| super::paths::qwen_subagent(path).map(|(project, _)| project));
            return match project {
                Some(project) if project.parent() == Some(projects.as_path()) => Place::Flat,
                _ => Place::Elsewhere,
            };
        }
        if let Some(state) = &self.copilot_state
            && path.starts_with(state)
        {
            // Its sessions' `events.jsonl`, not the checkpoints and snapshots beside them.
            return match super::paths::copilot_session(path) {
                Some(_) if path.parent().and_then(Path::parent) == Some(state.as_path()) => {
                    Place::Flat
                }
                _ => Place::Elsewhere,
            };
        }
        if !self.claude {
            return Place::Elsewhere;
        }
        if let Ok(rest) = path.strip_prefix(&self.projects) {
            let mut components = rest.components();
            let first = components.next();
            return match (first, components.next()) {
                (Some(Component::Normal(name)), Some(_)) => {
                    name.to_str().map_or(Place::Elsewhere, Place::InProject)
                }
                (Some(_), None) => Place::Flat,
                _ => Place::Elsewhere,
            };
        }
        if path.starts_with(&self.sessions) {
            return Place::Flat;
        }
        Place::Elsewhere
    }

    /// Does a transcript belong to the selection? `head` is `None` until its first records
    /// have been read; with a head the answer is `NeedRecords` only while the head is not
    /// [`Head::exhausted`] and lacks the field that decides.
    pub fn decide(&self, info: &TranscriptInfo, head: Option<&Head>) -> Verdict {
        let mut verdict = Verdict::No;
        for selector in &self.selectors {
            match self.decide_one(selector, info, head) {
                Verdict::Yes => return Verdict::Yes,
                Verdict::NeedRecords => verdict = Verdict::NeedRecords,
                Verdict::No => {}
            }
        }
        verdict
    }

    fn decide_one(
        &self,
        selector: &Compiled,
        info: &TranscriptInfo,
        head: Option<&Head>,
    ) -> Verdict {
        let path = info.path.as_path();
        let place = self.place(path);
        match selector {
            Compiled::All => match place {
                Place::Elsewhere => Verdict::No,
                _ => Verdict::Yes,
            },
            Compiled::File {
                path: file,
                subagents,
            } => {
                if path == file
                    || (info.kind == TranscriptKind::Subagent && path.parent() == Some(subagents))
                {
                    Verdict::Yes
                } else {
                    Verdict::No
                }
            }
            Compiled::Session(id) => {
                if matches!(place, Place::Elsewhere) {
                    return Verdict::No;
                }
                match info.session_id.as_deref() {
                    Some(session) => bool_verdict(session == id),
                    // A legacy `agent-<id>.jsonl`: its records name the session.
                    None => match head {
                        None => Verdict::NeedRecords,
                        Some(head) => match head.session_id.as_deref() {
                            Some(session) => bool_verdict(session == id),
                            None if head.exhausted => Verdict::No,
                            None => Verdict::NeedRecords,
                        },
                    },
                }
            }
            Compiled::Project { dirs, dash, base64 } => {
                let cwd_matches = |cwd: &str| {
                    let cwd = Path::new(cwd);
                    dirs.iter().any(|dir| cwd == dir || cwd.starts_with(dir))
                };
                match place {
                    Place::Elsewhere => Verdict::No,
                    Place::InProject(name) if base64.iter().any(|b| b == name) => Verdict::Yes,
                    Place::InProject(name) if dash.iter().any(|d| d == name) => {
                        // The dash encoding is lossy (`/a/b.c` and `/a/b-c` share a dir): the
                        // first `cwd` tells the two apart; no `cwd` at all → trust the dir.
                        match head {
                            None => Verdict::NeedRecords,
                            Some(head) => match head.cwd.as_deref() {
                                Some(cwd) => bool_verdict(cwd_matches(cwd)),
                                None if head.exhausted => Verdict::Yes,
                                None => Verdict::NeedRecords,
                            },
                        }
                    }
                    Place::InProject(_) => Verdict::No,
                    // An older Gemini CLI's project folder is the SHA-256 of its directory:
                    // the selected project's, whatever the session holds yet.
                    Place::Flat if gemini_hashed(path, dirs).is_some() => Verdict::Yes,
                    Place::Flat => match head {
                        None => Verdict::NeedRecords,
                        Some(head) => match head.cwd.as_deref() {
                            Some(cwd) => bool_verdict(cwd_matches(cwd)),
                            None if head.exhausted => Verdict::No,
                            None => Verdict::NeedRecords,
                        },
                    },
                }
            }
        }
    }
}

/// The directory of `dirs` whose SHA-256 names the Gemini CLI project folder `path` is in
/// (`tmp/<sha256 of the directory>/chats/`: the versions before 0.29).
fn gemini_hashed<'d>(path: &Path, dirs: &'d [PathBuf]) -> Option<&'d Path> {
    let folder = super::paths::gemini_chat(path)?.file_name()?.to_str()?;
    if folder.len() != 64 {
        return None;
    }
    dirs.iter()
        .find(|dir| {
            use sha2::Digest as _;
            let digest = sha2::Sha256::digest(dir.as_os_str().as_encoded_bytes());
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            hex.eq_ignore_ascii_case(folder)
        })
        .map(PathBuf::as_path)
}

impl Matcher {
    /// The selected project directory an older Gemini CLI's session at `path` runs in, when
    /// its project folder is named after that directory's SHA-256 (its records may not say
    /// it yet).
    pub fn gemini_hashed_project(&self, path: &Path) -> Option<&Path> {
        self.selectors.iter().find_map(|selector| match selector {
            Compiled::Project { dirs, .. } => gemini_hashed(path, dirs),
            _ => None,
        })
    }
}

/// A `File` selector's directories: the file's own (not recursively) and its `subagents/`.
fn file_roots(selector: &Compiled) -> Vec<WatchRoot> {
    let Compiled::File { path, subagents } = selector else {
        return Vec::new();
    };
    let mut roots: Vec<WatchRoot> = path
        .parent()
        .map(|parent| WatchRoot {
            path: parent.to_path_buf(),
            recursive: false,
        })
        .into_iter()
        .collect();
    roots.push(WatchRoot {
        path: subagents.clone(),
        recursive: false,
    });
    roots
}

fn compile(selector: &Selector) -> Compiled {
    match selector {
        Selector::All => Compiled::All,
        Selector::Project(dir) => {
            let mut dirs = vec![absolute(dir)];
            if let Ok(canonical) = fs::canonicalize(dir)
                && !dirs.contains(&canonical)
            {
                dirs.push(canonical);
            }
            let dash = dirs.iter().map(|dir| dash_encode(dir)).collect();
            let base64 = dirs
                .iter()
                .flat_map(|dir| {
                    let bytes = dir.as_os_str().as_bytes();
                    [URL_SAFE_NO_PAD.encode(bytes), URL_SAFE.encode(bytes)]
                })
                .collect();
            Compiled::Project { dirs, dash, base64 }
        }
        Selector::Session(id) => Compiled::Session(id.clone()),
        Selector::File(path) => {
            let path = absolute(path);
            let stem = path
                .file_name()
                .and_then(OsStr::to_str)
                .and_then(|name| name.strip_suffix(".jsonl"))
                .unwrap_or_default()
                .to_owned();
            let subagents = path.with_file_name(stem).join("subagents");
            Compiled::File { path, subagents }
        }
    }
}

fn bool_verdict(yes: bool) -> Verdict {
    if yes { Verdict::Yes } else { Verdict::No }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests;
