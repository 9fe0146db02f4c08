//! The agents' part of `familiar doctor`: Claude Code's config dir, its projects and this
//! directory's, the newest sessions, the Codex home and its rollouts, Gemini CLI's, Qwen Code's
//! and Copilot CLI's dirs and their sessions, and what the newest sessions of each hold that
//! Familiar does not know.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use familiar_model::text::printable_line;
use familiar_tail::discovery::{self, Matcher, Selector, TranscriptKind};

use super::Check;

pub(super) fn check_claude(checks: &mut Vec<Check>, cwd: Option<&Path>) {
    let dir = match discovery::config_dir() {
        Ok(dir) => dir,
        Err(err) => {
            checks.push(Check::todo(
                "Claude Code dir",
                format!("{err}; set CLAUDE_CONFIG_DIR or HOME"),
            ));
            return;
        }
    };
    let from = if std::env::var_os("CLAUDE_CONFIG_DIR").is_some_and(|v| !v.is_empty()) {
        " (CLAUDE_CONFIG_DIR)"
    } else {
        ""
    };
    let projects = dir.join("projects");
    let count = std::fs::read_dir(&projects)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
                .count()
        })
        .ok();
    match count {
        Some(count) => checks.push(Check::ok(
            "Claude Code dir",
            format!("{}{from}, {count} project(s)", dir.display()),
        )),
        None => checks.push(Check::todo(
            "Claude Code dir",
            format!(
                "{}{from} has no projects/ dir; run `claude` once, or set CLAUDE_CONFIG_DIR to \
                 where Claude Code keeps its data",
                projects.display()
            ),
        )),
    }

    if let Some(cwd) = cwd {
        let encoded = discovery::dash_encode(cwd);
        let project_dir = projects.join(&encoded);
        if project_dir.is_dir() {
            checks.push(Check::ok(
                "this directory",
                format!("{} is project {encoded}", cwd.display()),
            ));
        } else {
            checks.push(Check::todo(
                "this directory",
                format!(
                    "{} would be project {encoded}, not there yet; start `claude` here \
                     (`familiar` waits for it)",
                    cwd.display()
                ),
            ));
        }
    }

    let mut sessions: Vec<(Option<SystemTime>, PathBuf)> =
        discovery::discover(&dir, &[Selector::All])
            .into_iter()
            .filter(|info| info.kind == TranscriptKind::Session)
            .map(|info| {
                let last = discovery::last_record_time(&info.path).ok().flatten();
                (last, info.path)
            })
            .collect();
    sessions.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    if sessions.is_empty() {
        checks.push(Check::todo(
            "sessions",
            "none found; start `claude`, or try `familiar demo`",
        ));
        return;
    }
    // Those `watch` and `sessions` leave unread at start (dormant) until written again.
    let dormant = sessions
        .iter()
        .filter(|(_, path)| {
            std::fs::metadata(path)
                .and_then(|meta| meta.modified())
                .is_ok_and(|written| {
                    written
                        .elapsed()
                        .is_ok_and(|age| age > familiar_tail::DORMANT_AFTER)
                })
        })
        .count();
    let dormant = match dormant {
        0 => String::new(),
        n => format!(
            " ({n} not written in the last {}: read once written again, or with --since)",
            familiar_model::words::duration(familiar_tail::DORMANT_AFTER)
        ),
    };
    let mut check = Check::ok(
        "sessions",
        format!("{} found{dormant}, newest:", sessions.len()),
    );
    let newest: Vec<PathBuf> = sessions
        .iter()
        .take(3)
        .map(|(_, path)| path.clone())
        .collect();
    for (last, path) in sessions.iter().take(3) {
        let when = last.map_or_else(
            || "no record time".to_owned(),
            |t| humantime::format_rfc3339_seconds(t).to_string(),
        );
        let shown = path.strip_prefix(&projects).unwrap_or(path);
        check
            .more
            .push(format!("{}  last record {when}", shown.display()));
    }
    checks.push(check);
    checks.push(check_known("Claude Code records", &newest));
}

/// What the newest sessions of an agent hold that Familiar does not know (a record type, a
/// subtype, an attachment or item type a newer CLI writes), with the CLI versions that wrote
/// them: counted and passed over, never lost in silence (`docs/events.md`).
pub(super) fn check_known(what: &'static str, paths: &[PathBuf]) -> Check {
    let mut unknown: std::collections::BTreeMap<String, u64> = Default::default();
    let mut versions: std::collections::BTreeSet<String> = Default::default();
    let mut known_versions: std::collections::BTreeSet<String> = Default::default();
    for path in paths {
        let file: Box<dyn std::io::Read> = match familiar_tail::opencode::parse_address(path) {
            // An opencode session: its rows, as the lines the live source sends.
            Some((db, session)) => match familiar_tail::opencode::read_session(&db, &session) {
                Ok(lines) => Box::new(std::io::Cursor::new(lines)),
                Err(_) => continue,
            },
            None => match std::fs::File::open(path) {
                Ok(file) => Box::new(file),
                Err(_) => continue,
            },
        };
        let mut normalizer = familiar_transcript::Normalizer::default();
        // Lines it cannot read are the events command's to report; here only the types count.
        let read = familiar_transcript::normalize_read(file, &mut normalizer, |_| Ok(()), |_| {});
        if read.is_err() {
            continue;
        }
        let metrics = normalizer.metrics();
        for (name, count) in metrics.unknown.iter() {
            *unknown.entry(name.to_owned()).or_default() += count;
        }
        if !metrics.unknown.is_empty() {
            versions.extend(metrics.cli_version.clone());
        } else {
            known_versions.extend(metrics.cli_version.clone());
        }
    }
    // The versions that wrote something unknown, or (all known) every version read.
    if unknown.is_empty() {
        versions = known_versions;
    }
    let written_by = if versions.is_empty() {
        String::new()
    } else {
        format!(
            " (CLI {})",
            versions.into_iter().collect::<Vec<_>>().join(", ")
        )
    };
    if unknown.is_empty() {
        return Check::ok(
            what,
            format!("everything in the newest sessions is known{written_by}"),
        );
    }
    let mut check = Check::ok(
        what,
        format!(
            "the newest sessions{written_by} hold {} kind(s) of record Familiar does not know \
             yet: counted and passed over (a newer Familiar may read them)",
            unknown.len()
        ),
    );
    check.more = unknown
        .into_iter()
        .map(|(name, count)| format!("{name} ×{count}"))
        .collect();
    check
}

/// The Codex CLI's home and its rollouts. Codex is optional: no home is fine.
pub(super) fn check_codex(checks: &mut Vec<Check>) {
    let home = match discovery::codex_home() {
        Ok(home) => home,
        Err(err) => {
            checks.push(Check::ok(
                "Codex dir",
                format!("{err}; Codex sessions not followed"),
            ));
            return;
        }
    };
    let from = if std::env::var_os("CODEX_HOME").is_some_and(|v| !v.is_empty()) {
        " (CODEX_HOME)"
    } else {
        ""
    };
    let sessions = home.join("sessions");
    if !sessions.is_dir() {
        checks.push(Check::ok(
            "Codex dir",
            format!(
                "{} has no sessions yet (only needed with Codex; set CODEX_HOME if it keeps its files \
                 elsewhere)",
                sessions.display()
            ),
        ));
        return;
    }
    let matcher = Matcher::new(&home, &[Selector::All]).agents(false, Some(&home));
    let mut rollouts: Vec<(Option<SystemTime>, PathBuf)> = discovery::discover_with(&matcher)
        .into_iter()
        .map(|info| {
            let last = discovery::last_record_time(&info.path).ok().flatten();
            (last, info.path)
        })
        .collect();
    rollouts.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut check = Check::ok(
        "Codex dir",
        format!("{}{from}, {} session(s)", home.display(), rollouts.len()),
    );
    for (last, path) in rollouts.iter().take(3) {
        let when = last.map_or_else(
            || "no record time".to_owned(),
            |t| humantime::format_rfc3339_seconds(t).to_string(),
        );
        let shown = path.strip_prefix(&sessions).unwrap_or(path);
        check
            .more
            .push(format!("{}  last record {when}", shown.display()));
    }
    checks.push(check);
    let newest: Vec<PathBuf> = rollouts
        .iter()
        .take(3)
        .map(|(_, path)| path.clone())
        .collect();
    if !newest.is_empty() {
        checks.push(check_known("Codex records", &newest));
    }
}

/// Gemini CLI's dir and its sessions (`tmp/<project>/chats/session-*.jsonl`), each with the
/// project its folder names. Gemini CLI is optional: no dir is fine.
pub(super) fn check_gemini(checks: &mut Vec<Check>) {
    check_sessions_dir(
        checks,
        &AgentDir {
            dir_check: "Gemini dir",
            records_check: "Gemini records",
            cli: "Gemini CLI",
            env: &["GEMINI_CLI_HOME"],
            dir: discovery::gemini_dir(),
            sessions: "tmp",
            select: |matcher, dir| matcher.gemini(Some(dir)),
            place: |info| {
                info.cwd
                    .clone()
                    .unwrap_or_else(|| "no .project_root".to_owned())
            },
        },
    );
}

/// Qwen Code's dir and its sessions (`projects/<project>/chats/<session id>.jsonl`), each with
/// the `cwd` its records name. Qwen Code is optional: no dir is fine.
pub(super) fn check_qwen(checks: &mut Vec<Check>) {
    check_sessions_dir(
        checks,
        &AgentDir {
            dir_check: "Qwen dir",
            records_check: "Qwen records",
            cli: "Qwen Code",
            env: &["QWEN_RUNTIME_DIR", "QWEN_HOME"],
            dir: discovery::qwen_dir(),
            sessions: "projects",
            select: |matcher, dir| matcher.qwen(Some(dir)),
            place: cwd_of_records,
        },
    );
}

/// Copilot CLI's dir and its sessions (`session-state/<session id>/events.jsonl`), each with
/// the `cwd` its `session.start` names. Copilot CLI is optional: no dir is fine.
pub(super) fn check_copilot(checks: &mut Vec<Check>) {
    check_sessions_dir(
        checks,
        &AgentDir {
            dir_check: "Copilot dir",
            records_check: "Copilot records",
            cli: "Copilot CLI",
            env: &["COPILOT_HOME"],
            dir: discovery::copilot_dir(),
            sessions: "session-state",
            select: |matcher, dir| matcher.copilot(Some(dir)),
            place: cwd_of_records,
        },
    );
}

/// An agent whose sessions live in a dir of its own, as `familiar doctor` shows it.
struct AgentDir {
    /// The names of its two checks: "Gemini dir", "Gemini records".
    dir_check: &'static str,
    records_check: &'static str,
    /// The CLI as a user knows it.
    cli: &'static str,
    /// The variables that move its dir, the first that is set winning.
    env: &'static [&'static str],
    dir: Result<PathBuf, discovery::DiscoveryError>,
    /// The folder under `dir` that holds the sessions.
    sessions: &'static str,
    /// The matcher that finds its sessions under `dir`.
    select: fn(Matcher, &Path) -> Matcher,
    /// Where a session runs, as its place or records say.
    place: fn(&discovery::TranscriptInfo) -> String,
}

fn cwd_of_records(info: &discovery::TranscriptInfo) -> String {
    discovery::read_head_of(&info.path)
        .ok()
        .and_then(|head| head.cwd)
        .unwrap_or_else(|| "no cwd".to_owned())
}

/// The agent's dir and how many sessions it holds, the newest three with where they run and
/// their last record's time, then what those three hold that Familiar does not know.
fn check_sessions_dir(checks: &mut Vec<Check>, agent: &AgentDir) {
    let what_dir = agent.dir_check;
    let dir = match &agent.dir {
        Ok(dir) => dir.clone(),
        Err(err) => {
            checks.push(Check::ok(
                what_dir,
                format!("{err}; {} sessions not followed", agent.cli),
            ));
            return;
        }
    };
    let from = agent
        .env
        .iter()
        .find(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()))
        .map_or_else(String::new, |var| format!(" ({var})"));
    let folder = dir.join(agent.sessions);
    if !folder.is_dir() {
        checks.push(Check::ok(
            what_dir,
            format!(
                "{} has no sessions yet (only needed with {}; set {} if it keeps its files \
                 elsewhere)",
                folder.display(),
                agent.cli,
                agent.env.join(" or ")
            ),
        ));
        return;
    }
    let matcher = (agent.select)(
        Matcher::new(&dir, &[Selector::All]).agents(false, None),
        &dir,
    );
    let mut sessions: Vec<(Option<SystemTime>, discovery::TranscriptInfo)> =
        discovery::discover_with(&matcher)
            .into_iter()
            .map(|info| {
                let last = discovery::last_record_time(&info.path).ok().flatten();
                (last, info)
            })
            .collect();
    sessions.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path)));
    let mut check = Check::ok(
        what_dir,
        format!("{}{from}, {} session(s)", dir.display(), sessions.len()),
    );
    for (last, info) in sessions.iter().take(3) {
        let when = last.map_or_else(
            || "no record time".to_owned(),
            |t| humantime::format_rfc3339_seconds(t).to_string(),
        );
        let shown = info.path.strip_prefix(&folder).unwrap_or(&info.path);
        check.more.push(format!(
            "{}  ({})  last record {when}",
            shown.display(),
            printable_line(&(agent.place)(info))
        ));
    }
    checks.push(check);
    let newest: Vec<PathBuf> = sessions
        .iter()
        .take(3)
        .map(|(_, info)| info.path.clone())
        .collect();
    if !newest.is_empty() {
        checks.push(check_known(agent.records_check, &newest));
    }
}
