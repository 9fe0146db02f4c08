//! `familiar sessions`: a `ps` for agents. It follows the same transcripts `watch` would, reads
//! their start-up backlog through the same session model (`familiar_pipeline::source::live`), prints every
//! session's snapshot and exits: what `watch` would show as its first `snapshot` events.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context as _;
use familiar_model::Status;
use familiar_model::text::printable_line;
use familiar_model::words;
use familiar_pipeline::settings;
use familiar_pipeline::source::live::{Live, Took};
use familiar_pipeline::source::remote::hosts::sessions_once;
use familiar_session::{ModelConfig, SessionSnapshot};
use familiar_tail::TailerConfig;

use super::style::{self, Paint};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Sessions of the project at DIR (repeatable; default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Vec<PathBuf>,
    /// Every session under the Claude Code config dir.
    #[arg(long, conflicts_with = "project")]
    pub all: bool,
    /// Whose sessions: Claude Code's, OpenAI Codex CLI's ($CODEX_HOME or ~/.codex), Gemini
    /// CLI's, Qwen Code's ($QWEN_HOME or ~/.qwen), GitHub Copilot CLI's ($COPILOT_HOME or
    /// ~/.copilot), opencode's (its database, $OPENCODE_DB or ~/.local/share/opencode), or all
    /// of them.
    #[arg(long, value_enum, default_value_t = super::agents::AgentArg::All)]
    pub agent: super::agents::AgentArg,
    /// Also the sessions on another machine, over ssh: `[USER@]HOST[:PORT][:DIR]`
    /// (repeatable; as `watch --remote`).
    #[arg(long, value_name = "HOST")]
    pub remote: Vec<String>,
    /// The `familiar` to run on the remote hosts, when it is not on their PATH [default:
    /// familiar, or `[remote] bin` in the config].
    #[arg(long, value_name = "PATH")]
    pub remote_bin: Option<String>,
    /// Read the sessions written within DURATION (such as 3d or 12h), or `all` [default:
    /// 1d]: older transcripts are counted, not read (on `--remote` hosts, not listed).
    #[arg(long, value_name = "DURATION")]
    pub since: Option<super::selection::Since>,
    /// One JSON array of session objects (see docs/events.md).
    #[arg(long)]
    pub json: bool,
    /// A session without records this long is idle [default: 5m, or `idle_timeout` in the
    /// config].
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub idle_after: Option<Duration>,
}

/// Longest wait for the tailer to read what exists (it reads at most a few MiB per file).
const CATCH_UP_LIMIT: Duration = Duration::from_secs(60);

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config_dir = familiar_tail::config_dir().context("finding the Claude Code config dir")?;
    super::selection::check_paths(
        &config_dir,
        args.agent.codex_home().as_deref(),
        &args.project,
        &[],
        false,
    )?;
    let selectors = super::selection::selectors(&config_dir, args.all, &args.project, &[], &[])?;
    let settings = settings::settings(&familiar_config::Overrides {
        idle_timeout: args.idle_after,
        remote_hosts: args.remote.clone(),
        remote_bin: args.remote_bin.clone(),
        ..familiar_config::Overrides::default()
    })?;
    let remotes = super::remote_specs(&settings, args.agent, args.since)?;
    let projects: Vec<PathBuf> = selectors
        .iter()
        .map(|selector| match selector {
            familiar_tail::Selector::Project(dir) => Some(dir.clone()),
            _ => None,
        })
        .collect::<Option<_>>()
        .unwrap_or_default();
    let dormant_after = super::selection::dormant_after(args.since, &selectors);
    let mut tailer = TailerConfig::new(config_dir.clone(), selectors);
    tailer.dormant_after = dormant_after;
    args.agent.apply(&mut tailer);
    let model = settings::model_config(
        &settings,
        familiar_transcript::NormalizerConfig {
            configured_model: settings::configured_model(),
            ..Default::default()
        },
        None,
    );
    let (mut snapshots, mut dormant) = read_sessions(tailer, model.clone())?;
    let mut failed = false;
    for spec in remotes {
        match sessions_once(spec, model.clone(), CATCH_UP_LIMIT) {
            Ok((remote, left)) => {
                snapshots.extend(remote);
                dormant += left;
            }
            Err(reason) => {
                // One host that cannot be reached does not hide the others.
                super::style::error(format_args!("{}", printable_line(&reason)));
                failed = true;
            }
        }
    }
    if let Some(note) = super::selection::dormant_note(dormant, dormant_after, "sessions") {
        eprintln!("familiar: {note}");
    } else if snapshots.is_empty()
        && let Some(sessions) = super::selection::elsewhere(&config_dir, &projects)
    {
        eprintln!("familiar: {sessions}");
    }
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        serde_json::to_writer_pretty(&mut out, &snapshots)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out))
    } else {
        write!(
            out,
            "{}",
            table(&snapshots, SystemTime::now(), Paint::stdout())
        )
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) if failed => Ok(ExitCode::from(1)),
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(err) => Err(err).context("writing to stdout"),
    }
}

/// Every session in scope, as `watch` would see it when it caught up, and how many
/// transcripts were left unread as dormant.
pub fn read_sessions(
    config: TailerConfig,
    model: ModelConfig,
) -> anyhow::Result<(Vec<SessionSnapshot>, u64)> {
    // The CLI's own word on the sessions that run now (no hooks needed): read once.
    let cli_config = config.claude.then(|| config.config_dir.clone());
    let handle = familiar_tail::spawn(config)?;
    let mut live = Live::new(model);
    let deadline = Instant::now() + CATCH_UP_LIMIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match handle.receiver().recv_timeout(left) {
            Ok(message) => {
                if live.take(message) == Took::CaughtUp {
                    break;
                }
            }
            Err(_) => {
                handle.stop();
                anyhow::bail!("the transcripts were not read within {CATCH_UP_LIMIT:?}");
            }
        }
        live.drain().for_each(drop);
    }
    if let Some(config) = &cli_config {
        live.cli_states_now(config);
    }
    live.drain().for_each(drop);
    let dormant = handle.stats().dormant;
    handle.stop();
    Ok((live.model.snapshot(), dormant))
}

/// The shortest start of each id, at least [`SHORT_ID`] characters, that starts no other id
/// listed (as git abbreviates): what `watch --session` takes. opencode's ids share their first
/// twelve characters when made within minutes of each other.
fn short_ids(mut ids: Vec<&str>) -> std::collections::HashMap<String, String> {
    ids.sort_unstable();
    ids.dedup();
    let common = |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    (0..ids.len())
        .map(|at| {
            let id = ids[at];
            let before = at.checked_sub(1).map_or(0, |prev| common(ids[prev], id));
            let after = ids.get(at + 1).map_or(0, |next| common(id, next));
            let keep = (before.max(after) + 1).max(SHORT_ID);
            (id.to_owned(), id.chars().take(keep).collect())
        })
        .collect()
}

/// Characters of an id the table shows at least (a Claude Code session id's first group).
const SHORT_ID: usize = 8;

/// The human table: one row per session, its live subagents indented below it.
pub fn table(snapshots: &[SessionSnapshot], now: SystemTime, paint: Paint) -> String {
    if snapshots.is_empty() {
        return "no sessions\n".to_owned();
    }
    let mut rows = vec![[
        "PROJECT".to_owned(),
        "SESSION".to_owned(),
        "MODEL".to_owned(),
        "STATUS".to_owned(),
        "MANA".to_owned(),
        "LAST ACTIVITY".to_owned(),
    ]];
    let ids = short_ids(
        snapshots
            .iter()
            .flat_map(|snapshot| {
                std::iter::once(snapshot.session.as_str())
                    .chain(snapshot.subagents.iter().map(|agent| agent.agent.as_str()))
            })
            .collect(),
    );
    let short = |id: &str| printable_line(ids.get(id).map_or(id, String::as_str)).into_owned();
    for snapshot in snapshots {
        // Which agent and where, as the plates say it (Claude Code is the default).
        let agent = match snapshot.agent_kind {
            familiar_model::AgentKind::ClaudeCode => String::new(),
            other => format!(" {other}"),
        };
        let project = snapshot
            .cwd
            .as_deref()
            .map(|cwd| {
                let name = std::path::Path::new(cwd)
                    .file_name()
                    .map(|name| name.to_string_lossy().into_owned())
                    .unwrap_or_else(|| cwd.to_owned());
                match &snapshot.git_branch {
                    Some(branch) => format!("{name}{agent} ({branch})"),
                    None => format!("{name}{agent}"),
                }
            })
            .unwrap_or_else(|| format!("?{agent}"));
        let project = match &snapshot.host {
            Some(host) => format!("{project} @{host}"),
            None => project,
        };
        rows.push([
            printable_line(&project).into_owned(),
            short(&snapshot.session),
            printable_line(snapshot.model.as_deref().unwrap_or("?")).into_owned(),
            status(snapshot.status, snapshot.status_for),
            context(snapshot.context_used, snapshot.context_limit),
            snapshot
                .last_activity_ms
                .map(|ms| ago(now, ms))
                .unwrap_or_else(|| "?".to_owned()),
        ]);
        for agent in &snapshot.subagents {
            rows.push([
                format!(
                    "  └ {}",
                    printable_line(agent.agent_type.as_deref().unwrap_or("subagent"))
                ),
                short(&agent.agent),
                String::new(),
                status(agent.status, None),
                context(agent.context_used, agent.context_limit),
                String::new(),
            ]);
        }
    }
    let widths: Vec<usize> = (0..6)
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for (index, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(column, (cell, width))| {
                let style = match (index, column) {
                    (0, _) => style::HEADING,
                    (_, 3) => status_style(cell),
                    _ => return format!("{cell:<width$}"),
                };
                // Painted, then padded: escapes take no columns.
                let pad = width.saturating_sub(cell.chars().count());
                format!("{}{}", paint.paint(style, cell), " ".repeat(pad))
            })
            .collect();
        text.push_str(cells.join("  ").trim_end());
        text.push('\n');
    }
    text
}

/// Waiting on the user stands out; idle fades.
fn status_style(cell: &str) -> anstyle::Style {
    let waiting = [Status::WaitingForApproval, Status::WaitingForInput]
        .iter()
        .any(|status| cell.starts_with(words::status(*status)));
    if waiting {
        style::ATTENTION
    } else if cell.starts_with(words::status(Status::Working)) {
        style::GOOD
    } else {
        style::QUIET
    }
}

/// The status in the window's words, and for how long: `your turn 1m`.
fn status(status: Status, since: Option<Duration>) -> String {
    match since {
        Some(duration) => format!("{} {}", words::status(status), words::duration(duration)),
        None => words::status(status).to_owned(),
    }
}

/// Mana: what is left of the context window, as the window's bar and the status line say it.
fn context(used: Option<u64>, limit: u64) -> String {
    let left = words::context_left(used, limit);
    match words::percent_left(used, limit) {
        Some(percent) => format!("{left} ({percent}%)"),
        None => left,
    }
}

fn ago(now: SystemTime, unix_ms: i64) -> String {
    let now_ms = familiar_model::time::to_unix_ms(now);
    let ms = u64::try_from(now_ms.saturating_sub(unix_ms)).unwrap_or(0);
    format!("{} ago", words::duration(Duration::from_millis(ms)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use familiar_session::SubagentSnapshot;

    #[test]
    fn short_ids_are_eight_characters_or_as_many_as_tell_them_apart() {
        let ids = short_ids(vec![
            "d5fc5bb7-8aa6-46d7-92d1-26bec25f153e",
            "ses_dded6df31ffeiGw5MSfMtzOMIC",
            "ses_dded6d0f3ffe1UTm7yXrMc64lZ",
            "ses_dded6c649ffeK58qwIT364qSnL",
            "abc",
        ]);
        assert_eq!(ids["d5fc5bb7-8aa6-46d7-92d1-26bec25f153e"], "d5fc5bb7");
        assert_eq!(ids["ses_dded6df31ffeiGw5MSfMtzOMIC"], "ses_dded6df");
        assert_eq!(ids["ses_dded6d0f3ffe1UTm7yXrMc64lZ"], "ses_dded6d0");
        assert_eq!(ids["ses_dded6c649ffeK58qwIT364qSnL"], "ses_dded6c");
        assert_eq!(ids["abc"], "abc");
    }

    #[test]
    fn the_table_reads_at_a_glance_and_escapes_what_records_wrote() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let snapshot = SessionSnapshot {
            session: "258c7280-ae70".into(),
            cwd: Some("/home/u/spot\u{1b}]0;x\u{7}ter".into()),
            git_branch: Some("main".into()),
            agent_kind: Default::default(),
            model: Some("claude-opus-4-8".into()),
            status: Status::WaitingForInput,
            status_for: Some(Duration::from_secs(95)),
            context_used: Some(150_000),
            context_limit: 1_000_000,
            last_record: None,
            last_activity_ms: Some(1_000_000_000 - 7_000),
            line: 12,
            tools: Default::default(),
            transcript: None,
            subagents: vec![SubagentSnapshot {
                agent: "a881341".into(),
                agent_type: Some("Explore".into()),
                tool_use_id: None,
                status: Status::Working,
                context_used: None,
                context_limit: 200_000,
            }],
            plan: Vec::new(),
            host: None,
        };
        assert_eq!(
            table(&[snapshot], now, Paint::plain()),
            "PROJECT                   SESSION   MODEL            STATUS        MANA                   LAST ACTIVITY\n\
             spot\\e]0;x\\x07ter (main)  258c7280  claude-opus-4-8  your turn 1m  850k left of 1M (85%)  7s ago\n\
             \u{20} └ Explore               a881341                    working       ? left of 200k\n"
        );
        assert_eq!(table(&[], now, Paint::plain()), "no sessions\n");
    }

    #[test]
    fn a_row_says_which_agent_and_which_host_as_the_plates_do() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let snapshot = SessionSnapshot {
            session: "019a2b3c-0000".into(),
            cwd: Some("/home/u/spotter".into()),
            git_branch: Some("main".into()),
            agent_kind: familiar_model::AgentKind::Codex,
            model: Some("gpt-5.5".into()),
            status: Status::Working,
            status_for: Some(Duration::from_secs(5)),
            context_used: None,
            context_limit: 258_400,
            last_record: None,
            last_activity_ms: Some(1_000_000_000),
            line: 3,
            tools: Default::default(),
            transcript: None,
            subagents: Vec::new(),
            plan: Vec::new(),
            host: Some("me@devbox".into()),
        };
        let table = table(&[snapshot], now, Paint::plain());
        let row = table.lines().nth(1).expect("a row");
        assert!(
            row.starts_with("spotter codex (main) @me@devbox  019a2b3c"),
            "{table}"
        );
    }
}
