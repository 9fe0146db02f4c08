//! Which sessions `watch` and `sessions` follow, read from their arguments: the selectors
//! (`--all`, `--project`, `--session`, `--file`, else the current directory's project), the
//! checks that what was named exists, and, when nothing was found, where sessions are instead.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use familiar_model::text::printable_line;
use familiar_tail::{Selector, TranscriptKind};

/// What to follow: everything (`--all`), these projects, sessions and files, or else the
/// current directory's project, as `watch` and `sessions` both take it.
pub fn selectors(
    config_dir: &Path,
    all: bool,
    projects: &[PathBuf],
    sessions: &[String],
    files: &[PathBuf],
) -> anyhow::Result<Vec<Selector>> {
    let mut selectors: Vec<Selector> = Vec::new();
    if all {
        selectors.push(Selector::All);
    }
    selectors.extend(projects.iter().cloned().map(Selector::Project));
    selectors.extend(sessions.iter().cloned().map(Selector::Session));
    selectors.extend(files.iter().cloned().map(Selector::File));
    if selectors.is_empty() {
        let cwd = std::env::current_dir().context("finding the current directory")?;
        selectors.push(Selector::Project(project_of(config_dir, &cwd)));
    }
    Ok(selectors)
}

/// The project a user standing in `cwd` means: the nearest directory, `cwd` or above, that
/// has Claude Code sessions; else the root of the git repository `cwd` is in; else `cwd`
/// itself (where sessions will appear). So `familiar` run in `~/code/app/src` watches
/// `~/code/app`.
pub fn project_of(config_dir: &Path, cwd: &Path) -> PathBuf {
    let projects = config_dir.join("projects");
    let has_sessions = |dir: &Path| {
        projects
            .join(familiar_tail::discovery::dash_encode(dir))
            .is_dir()
    };
    if let Some(dir) = cwd.ancestors().find(|dir| has_sessions(dir)) {
        return dir.to_owned();
    }
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(cwd)
        .to_owned()
}

/// When the project selectors found nothing: the sessions under `projects/` that are for other
/// directories, as one line that names the nearest ones (most leading path components shared
/// with `wanted`, then most sessions), or `None` when there are none. Each project directory's
/// `cwd` comes from the head of its newest transcript (its name, dash-encoded, is lossy).
pub fn elsewhere(config_dir: &Path, wanted: &[PathBuf]) -> Option<String> {
    if wanted.is_empty() {
        return None;
    }
    let projects = config_dir.join("projects");
    let mut found: Vec<(String, usize)> = Vec::new();
    for entry in std::fs::read_dir(&projects).ok()?.flatten() {
        let sessions: Vec<(SystemTime, PathBuf)> = std::fs::read_dir(entry.path())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|file| file.file_name().as_encoded_bytes().ends_with(b".jsonl"))
            .filter(|file| file.file_type().is_ok_and(|kind| kind.is_file()))
            .map(|file| {
                let modified = file.metadata().and_then(|m| m.modified());
                (modified.unwrap_or(SystemTime::UNIX_EPOCH), file.path())
            })
            .collect();
        let count = sessions.len();
        let Some((_, newest)) = sessions.into_iter().max() else {
            continue;
        };
        let cwd = familiar_tail::discovery::read_head_of(&newest)
            .ok()
            .and_then(|head| head.cwd)
            .unwrap_or_else(|| entry.file_name().to_string_lossy().into_owned());
        match found.iter_mut().find(|(known, _)| *known == cwd) {
            Some((_, n)) => *n += count,
            None => found.push((cwd, count)),
        }
    }
    let total: usize = found.iter().map(|(_, n)| n).sum();
    if total == 0 {
        return None;
    }
    let shared = |cwd: &str| {
        wanted
            .iter()
            .map(|dir| {
                Path::new(cwd)
                    .components()
                    .zip(dir.components())
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .max()
            .unwrap_or(0)
    };
    found.sort_by(|a, b| {
        shared(&b.0)
            .cmp(&shared(&a.0))
            .then(b.1.cmp(&a.1))
            .then(a.0.cmp(&b.0))
    });
    let nearest: Vec<String> = found
        .iter()
        .take(3)
        .map(|(cwd, n)| format!("{} ({n})", printable_line(cwd)))
        .collect();
    let more = if found.len() > 3 { ", …" } else { "" };
    let plural = if total == 1 { "" } else { "s" };
    let wanted: Vec<String> = wanted.iter().map(|dir| dir.display().to_string()).collect();
    Some(format!(
        "{total} session{plural} under {}, none for {}; nearest: {}{more}; use --project DIR \
         or --all",
        printable_line(&projects.display().to_string()),
        printable_line(&wanted.join(", ")),
        nearest.join(", ")
    ))
}

/// A `--project` or `--file` that names nothing: a directory that does not exist and has no
/// sessions, neither under Claude Code's `projects/` nor a Codex rollout whose `cwd` it is
/// (with `codex_home`; a deleted worktree's sessions can still be watched), or a file in a
/// directory that does not exist. A file that does not exist yet in a real directory is
/// waited for.
pub fn check_paths(
    config_dir: &Path,
    codex_home: Option<&Path>,
    projects: &[PathBuf],
    files: &[PathBuf],
    wait: bool,
) -> anyhow::Result<()> {
    for dir in projects {
        let recorded = config_dir
            .join("projects")
            .join(familiar_tail::discovery::dash_encode(dir));
        if !dir.is_dir() && !recorded.is_dir() && !codex_names(config_dir, codex_home, dir) {
            anyhow::bail!(
                "--project {}: no such directory, and no Claude Code or Codex session names it",
                dir.display()
            );
        }
    }
    for file in files {
        let parent = file.parent().filter(|p| !p.as_os_str().is_empty());
        if parent.is_some_and(|dir| !dir.is_dir()) {
            anyhow::bail!("--file {}: no such file or directory", file.display());
        }
        if !file.exists() {
            if !wait {
                anyhow::bail!(
                    "--file {}: no such file (--wait waits for it to appear)",
                    file.display()
                );
            }
            eprintln!(
                "familiar: waiting for {} to appear",
                printable_line(&file.display().to_string())
            );
        }
    }
    Ok(())
}

/// The session ids `given` on the command line, each resolved to the one session whose id it
/// begins (`familiar sessions` prints the first 8 characters): a prefix of none is an error at
/// once, unless `wait` (then it is said once, and followed as given when it appears); a prefix
/// of several names them.
pub fn resolve_sessions(
    config_dir: &Path,
    agent: super::agents::AgentArg,
    given: &[String],
    wait: bool,
) -> anyhow::Result<Vec<String>> {
    if given.is_empty() {
        return Ok(Vec::new());
    }
    let matcher = familiar_tail::discovery::Matcher::new(config_dir, &[Selector::All])
        .agents(true, agent.codex_home().as_deref())
        .gemini(agent.gemini_dir().as_deref())
        .qwen(agent.qwen_dir().as_deref())
        .copilot(agent.copilot_dir().as_deref());
    let mut known: Vec<String> = familiar_tail::discovery::discover_with(&matcher)
        .into_iter()
        .filter(|info| info.kind == TranscriptKind::Session)
        .filter_map(|info| {
            // A Gemini CLI session's name holds 8 characters of its id: its first line says it.
            match familiar_tail::discovery::gemini_chat(&info.path) {
                Some(_) if info.session_id.is_none() => {
                    familiar_tail::discovery::read_head_of(&info.path)
                        .ok()?
                        .session_id
                }
                _ => info.session_id,
            }
        })
        .collect();
    // opencode's sessions are rows of its database, not files.
    if let Some(db) = agent.opencode_db().filter(|db| db.is_file()) {
        match familiar_tail::opencode::list_sessions(&db) {
            Ok(sessions) => known.extend(sessions.into_iter().map(|session| session.id)),
            Err(err) => tracing::warn!("{}: {err}", db.display()),
        }
    }
    known.sort();
    known.dedup();
    let mut resolved = Vec::new();
    for id in given {
        let matching: Vec<&String> = known
            .iter()
            .filter(|known| known.starts_with(id.as_str()))
            .collect();
        match matching.as_slice() {
            [one] => resolved.push((*one).clone()),
            [] if wait => {
                eprintln!(
                    "familiar: waiting for session {} to appear",
                    printable_line(id)
                );
                resolved.push(id.clone());
            }
            [] => anyhow::bail!(
                "--session {}: no session's id begins so under {} (`familiar sessions --all` lists them; \
                 --wait waits for it)",
                printable_line(id),
                config_dir.join("projects").display()
            ),
            many => anyhow::bail!(
                "--session {}: {} sessions' ids begin so ({}): give more of it",
                printable_line(id),
                many.len(),
                many.iter()
                    .map(|id| id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    Ok(resolved)
}

/// Some Codex rollout under `codex_home` was written in `dir` (its `session_meta.cwd`, the
/// same match as `--project`'s): the rollouts are read, not the directory.
fn codex_names(config_dir: &Path, codex_home: Option<&Path>, dir: &Path) -> bool {
    let Some(home) = codex_home else {
        return false;
    };
    let matcher =
        familiar_tail::discovery::Matcher::new(config_dir, &[Selector::Project(dir.to_owned())])
            .agents(false, Some(home));
    !familiar_tail::discovery::discover_with(&matcher).is_empty()
}

/// `--since`: how recently a session must have been written to be read at start (older ones
/// are dormant: followed, and read once written again), or `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Since(pub Option<Duration>);

impl std::str::FromStr for Since {
    type Err = String;

    fn from_str(text: &str) -> Result<Since, String> {
        if text.eq_ignore_ascii_case("all") {
            return Ok(Since(None));
        }
        humantime::parse_duration(text)
            .map(|within| Since(Some(within)))
            .map_err(|err| format!("{err} (a duration such as 3d or 12h, or `all`)"))
    }
}

/// How long a file at start may go unwritten before it is dormant: `--since`, else a day;
/// never for sessions and files named one by one (they are read whatever their age).
pub fn dormant_after(since: Option<Since>, selectors: &[Selector]) -> Option<Duration> {
    let named = selectors
        .iter()
        .any(|selector| matches!(selector, Selector::Session(_) | Selector::File(_)));
    if named {
        return None;
    }
    since.map_or(Some(familiar_tail::DORMANT_AFTER), |Since(within)| within)
}

/// The line that says how many transcripts were left unread as dormant, if any.
pub fn dormant_note(dormant: u64, after: Option<Duration>, command: &str) -> Option<String> {
    let after = after.filter(|_| dormant > 0)?;
    let (files, were) = if dormant == 1 {
        ("transcript", "was")
    } else {
        ("transcripts", "were")
    };
    // A wider window to suggest, unless it was one already.
    let month = Duration::from_secs(30 * 24 * 60 * 60);
    let how = if after < month {
        format!("`familiar {command} --since 30d`, or `--since all`, reads them")
    } else {
        format!("`familiar {command} --since all` reads them")
    };
    Some(format!(
        "{dormant} {files} not written in the last {} {were} not read ({how})",
        familiar_model::words::duration(after)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dormant_note_suggests_a_wider_window_than_the_one_given() {
        let day = Duration::from_secs(86_400);
        assert_eq!(
            dormant_note(1, Some(day), "sessions").as_deref(),
            Some(
                "1 transcript not written in the last 1d was not read (`familiar sessions \
                 --since 30d`, or `--since all`, reads them)"
            )
        );
        assert_eq!(
            dormant_note(7, Some(30 * day), "watch").as_deref(),
            Some(
                "7 transcripts not written in the last 30d were not read (`familiar watch \
                 --since all` reads them)"
            )
        );
        assert_eq!(dormant_note(0, Some(day), "sessions"), None);
        assert_eq!(dormant_note(3, None, "sessions"), None);
    }
}
