//! `familiar hook`: Claude Code runs it on its hook events (after `familiar hook install`); it
//! reads the hook JSON on stdin and hands it to a running Familiar over the local socket
//! (`familiar-hook`). It never disturbs Claude Code: it prints nothing on stdout (which a
//! SessionStart hook would add to the context), gives up within a fraction of a second, and
//! exits 0 even when no Familiar listens.
//!
//! `familiar hook install [--statusline]` / `uninstall` edit Claude Code's `settings.json`
//! through `familiar_hook::settings` (only the bytes that must change do): they show the
//! changed lines (string values of the user's own lines masked, since `env` may hold
//! secrets), ask before writing (`--yes` for scripts), refuse a read-only or unparsable file,
//! write through a symlink to its target, and keep a bounded number of backups, from which
//! `uninstall` gives back the user's exact original (or removes the file install created).
//!
//! `--agent copilot` edits GitHub Copilot CLI's user settings (`$COPILOT_HOME/settings.json`)
//! the same way, for its status line only: its `statusLine` takes the same
//! `{"type": "command", "command": …}` as Claude Code's, and Claude Code's hooks are not its.
//! `--agent qwen` edits Qwen Code's (`$QWEN_HOME/settings.json`), for its status line only
//! too, which it keeps under `ui` and refreshes on a timer
//! ([`familiar_hook::StatusLineAt::Ui`]).

use std::io::{self, BufRead as _, IsTerminal as _, Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use clap::ValueEnum as _;
use familiar_hook::{MAX_MESSAGE, Plan, SettingsEdit, StatusLineAt};
use familiar_model::text::{printable, printable_line};

/// Backups of settings.json kept beside it; older ones are removed.
const BACKUPS_KEPT: usize = 5;

/// How long `familiar hook` may take to hand its message over, all told.
const SEND_DEADLINE: Duration = Duration::from_millis(300);

/// How long it waits for its input: Claude Code writes it at once and closes the pipe; a
/// writer that keeps it open must not hold the hook (nor Claude Code, which waits for it).
const READ_DEADLINE: Duration = Duration::from_secs(1);

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    pub action: Option<Action>,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Add Familiar's hooks (session start and end, prompt, tool, tool failure, permission
    /// request and denial, notification, compaction start and end, subagent start and stop,
    /// stop) to Claude Code's settings.json, and with --statusline its status line; shows the
    /// change and asks first.
    Install(InstallArgs),
    /// Remove everything Familiar added to settings.json (hooks and status line), giving back
    /// the file as it was.
    Uninstall(EditArgs),
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Also make `familiar statusline` Claude Code's status line (never replaces one you set;
    /// with --agent copilot or qwen, the status line is all that is installed).
    #[arg(long)]
    pub statusline: bool,
    #[command(flatten)]
    pub edit: EditArgs,
}

#[derive(Debug, clap::Args)]
pub struct EditArgs {
    /// Whose settings: Claude Code's (hooks and status line), GitHub Copilot CLI's or Qwen
    /// Code's (their status line only).
    #[arg(long, value_enum, default_value_t = SettingsOf::Claude)]
    pub agent: SettingsOf,
    /// The settings file [default: $CLAUDE_CONFIG_DIR/settings.json, else
    /// ~/.claude/settings.json; with --agent copilot $COPILOT_HOME/settings.json, else
    /// ~/.copilot/settings.json; with --agent qwen $QWEN_HOME/settings.json, else
    /// ~/.qwen/settings.json].
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Show the change without writing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Write without asking (for scripts; without a terminal to ask on, this is required).
    #[arg(short, long)]
    pub yes: bool,
}

/// The agent CLI whose settings file `install` and `uninstall` edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SettingsOf {
    /// Claude Code.
    Claude,
    /// GitHub Copilot CLI.
    Copilot,
    /// Qwen Code.
    Qwen,
}

impl SettingsOf {
    /// Where the agent keeps its status line.
    fn status_line_at(self) -> StatusLineAt {
        match self {
            SettingsOf::Claude | SettingsOf::Copilot => StatusLineAt::Top,
            SettingsOf::Qwen => StatusLineAt::Ui,
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.action {
        None => {
            forward();
            Ok(ExitCode::SUCCESS)
        }
        Some(Action::Install(install)) => {
            let exe =
                std::env::current_exe().context("cannot tell where this familiar binary is")?;
            // Claude Code's hooks are its own; the others take the status line alone.
            let claude = install.edit.agent == SettingsOf::Claude;
            let plan = Plan {
                hooks: claude.then(|| familiar_hook::hook_command(&exe)),
                status_line: (install.statusline || !claude)
                    .then(|| familiar_hook::status_line_command(&exe)),
                status_line_at: install.edit.agent.status_line_at(),
            };
            edit_settings(&install.edit, Direction::Install, |text, _| {
                familiar_hook::install(text, &plan)
            })
        }
        Some(Action::Uninstall(edit)) => {
            edit_settings(&edit, Direction::Uninstall, |text, originals| match text {
                Some(text) => familiar_hook::uninstall(text, originals),
                None => Ok(SettingsEdit {
                    before: None,
                    after: None,
                    changes: Vec::new(),
                }),
            })
        }
    }
}

/// Most of a hook's input read: a tool's whole input rides along (a `Write` of a large file),
/// and only the fields [`familiar_hook::HookInput`] keeps are sent on.
const INPUT_LIMIT: u64 = 64 << 20;

/// Hand stdin to a running Familiar; every failure is only logged (at debug level). An input
/// longer than the socket takes ([`MAX_MESSAGE`]: a `PreToolUse` or `PostToolUseFailure` of a
/// large `Write`) goes as the fields Familiar reads, instead of cut short and unreadable.
fn forward() {
    let message = match read_input(READ_DEADLINE) {
        Ok(message) => message,
        Err(err) => {
            tracing::debug!("cannot read the hook input: {err}");
            return;
        }
    };
    let mut message = message;
    if message.len() > MAX_MESSAGE {
        match familiar_hook::HookInput::parse(&message).and_then(|input| serde_json::to_vec(&input))
        {
            Ok(compact) => message = compact,
            Err(err) => tracing::debug!("a long hook input that does not parse: {err}"),
        }
    }
    let sent = familiar_hook::socket_path()
        .and_then(|path| familiar_hook::send(&path, &message, SEND_DEADLINE));
    match sent {
        Ok(()) => tracing::debug!("hook input handed to the running Familiar"),
        Err(err) => tracing::debug!("{err}"),
    }
}

/// Stdin to its end, [`INPUT_LIMIT`] bytes at most, within `deadline`: what came by then is
/// the input (an error when it ran out before the end).
fn read_input(deadline: Duration) -> io::Result<Vec<u8>> {
    use std::os::fd::AsRawFd as _;
    let until = std::time::Instant::now() + deadline;
    let stdin = io::stdin();
    let mut lock = stdin.lock();
    let fd = lock.as_raw_fd();
    let mut message = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no end of input within {deadline:?}"),
            ));
        }
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = i32::try_from(left.as_millis()).unwrap_or(i32::MAX).max(1);
        // SAFETY: one valid pollfd for the call's duration.
        let ready = unsafe { libc::poll(&mut poll, 1, millis) };
        if ready < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        if ready == 0 {
            continue;
        }
        let room = usize::try_from(INPUT_LIMIT).unwrap_or(usize::MAX) - message.len();
        let want = chunk.len().min(room);
        if want == 0 {
            return Ok(message);
        }
        match lock.read(&mut chunk[..want]) {
            Ok(0) => return Ok(message),
            Ok(n) => message.extend_from_slice(&chunk[..n]),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
}

/// The settings file named on the command line or Claude Code's own.
pub fn settings_path(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    settings_path_of(explicit, SettingsOf::Claude)
}

/// The settings file named, else `agent`'s own.
fn settings_path_of(explicit: Option<&Path>, agent: SettingsOf) -> anyhow::Result<PathBuf> {
    match (explicit, agent) {
        (Some(path), _) => Ok(path.to_owned()),
        (None, SettingsOf::Claude) => {
            Ok(familiar_tail::discovery::config_dir()?.join("settings.json"))
        }
        (None, SettingsOf::Copilot) => {
            Ok(familiar_tail::discovery::copilot_dir()?.join("settings.json"))
        }
        (None, SettingsOf::Qwen) => {
            Ok(familiar_tail::discovery::qwen_home()?.join("settings.json"))
        }
    }
}

/// Follow symlinks to the file they name (which may not exist yet), so the edit is written
/// there and the link stays a link.
fn resolve(path: &Path) -> anyhow::Result<PathBuf> {
    let mut path = path.to_owned();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&path)
                    .with_context(|| format!("cannot read the link {}", path.display()))?;
                path = match path.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(path),
        }
    }
    anyhow::bail!("{}: too many levels of symbolic links", path.display())
}

#[derive(Clone, Copy, PartialEq)]
enum Direction {
    Install,
    Uninstall,
}

fn edit_settings(
    args: &EditArgs,
    direction: Direction,
    edit: impl FnOnce(Option<&str>, &[&str]) -> Result<SettingsEdit, familiar_hook::SettingsError>,
) -> anyhow::Result<ExitCode> {
    let named = settings_path_of(args.settings.as_deref(), args.agent)?;
    let path = resolve(&named)?;
    let shown = printable_line(&named.display().to_string()).into_owned();
    let current = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(err).with_context(|| format!("cannot read {shown}")),
    };
    let backups = backups(&path);
    let originals: Vec<String> = backups
        .iter()
        .filter_map(|backup| std::fs::read_to_string(backup).ok())
        .collect();
    let originals: Vec<&str> = originals.iter().map(String::as_str).collect();
    let result = edit(current.as_deref(), &originals).with_context(|| shown.clone())?;
    let mut out = io::stdout().lock();
    if !result.changed() {
        writeln!(out, "{shown}: nothing to change")?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    write!(out, "{}", masked_diff(&shown, &result))?;
    for change in &result.changes {
        writeln!(out, "# {}", printable_line(change))?;
    }
    if result.after.is_none() {
        writeln!(out, "# remove {shown} (Familiar created it)")?;
    }
    if args.dry_run {
        writeln!(out, "dry run: {shown} not written")?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    if current.is_some() {
        refuse_read_only(&path, &shown)?;
    }
    out.flush()?;
    if !args.yes && !confirm(&mut out, &shown)? {
        writeln!(out, "not written; {shown} is as it was")?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    // Another program (an editor, Claude Code itself) may have written the file while the
    // user read the change: what was shown is no longer what would be written over.
    let now = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(err).with_context(|| format!("cannot read {shown}")),
    };
    anyhow::ensure!(
        now == current,
        "{shown} changed while the change was shown; not written (run the command again to \
         see the change against it)"
    );
    let backup = match (&current, &result.after) {
        (Some(_), Some(_)) => Some(backup(&path)?),
        _ => None,
    };
    match &result.after {
        Some(text) => write_atomically(&path, text)?,
        None => std::fs::remove_file(&path)
            .with_context(|| format!("cannot remove {}", path.display()))?,
    }
    if let Some(backup) = &backup {
        prune_backups(&path);
        let backup = printable_line(&backup.display().to_string()).into_owned();
        match direction {
            Direction::Install => writeln!(
                out,
                "wrote {shown} (the old file is in {backup}); undo with `{}`",
                undo_command(args.agent)
            )?,
            Direction::Uninstall => writeln!(out, "wrote {shown} (the old file is in {backup})")?,
        }
    } else if result.after.is_none() {
        writeln!(out, "removed {shown}")?;
    } else if direction == Direction::Install {
        writeln!(
            out,
            "wrote {shown}; undo with `{}`",
            undo_command(args.agent)
        )?;
    } else {
        writeln!(out, "wrote {shown}")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The command that takes out what install wrote into `agent`'s settings.
fn undo_command(agent: SettingsOf) -> String {
    match agent.to_possible_value() {
        Some(name) if agent != SettingsOf::Claude => {
            format!("familiar hook uninstall --agent {}", name.get_name())
        }
        _ => "familiar hook uninstall".to_owned(),
    }
}

/// A read-only settings file is the user's choice: say so rather than replace it.
fn refuse_read_only(path: &Path, shown: &str) -> anyhow::Result<()> {
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {shown}"))?;
    let mode = meta.permissions().mode();
    anyhow::ensure!(
        mode & 0o222 != 0,
        "{shown} is read-only (mode {:o}); not written. Make it writable (chmod u+w) or edit it \
         by hand",
        mode & 0o7777
    );
    Ok(())
}

/// Ask on the terminal; without one, refuse (scripts pass --yes).
fn confirm(out: &mut impl io::Write, shown: &str) -> anyhow::Result<bool> {
    anyhow::ensure!(
        io::stdin().is_terminal(),
        "{shown} not written: no terminal to ask on; pass --yes to write without asking"
    );
    write!(out, "write {shown}? [y/N] ")?;
    out.flush()?;
    let mut answer = String::new();
    io::stdin()
        .lock()
        .read_line(&mut answer)
        .context("cannot read the answer")?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes" | "YES"))
}

/// The changed lines with one line of context. Lines from the user's file (context, removed
/// lines, and an added line that is mostly a removed one) have their string values masked,
/// so a secret next to the change is not printed.
fn masked_diff(shown: &str, edit: &SettingsEdit) -> String {
    let before = edit.before.as_deref().unwrap_or_default();
    let after = edit.after.as_deref().unwrap_or_default();
    let diff = similar::TextDiff::from_lines(before, after);
    let removed: Vec<&str> = diff
        .iter_all_changes()
        .filter(|change| change.tag() == similar::ChangeTag::Delete)
        .map(|change| change.value().trim_end().trim_end_matches(','))
        .collect();
    // An added line that is mostly a removed one (an item appended on the same line).
    let users = |line: &str| {
        removed.iter().any(|old| {
            let common = old
                .bytes()
                .zip(line.bytes())
                .take_while(|(a, b)| a == b)
                .count();
            common * 5 >= old.len() * 4
        })
    };
    let mut text = format!("--- {shown}\n+++ {shown}\n");
    for group in diff.grouped_ops(1) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (old, new) = (first.old_range().start, first.new_range().start);
        let old_len = last.old_range().end - old;
        let new_len = last.new_range().end - new;
        text.push_str(&format!(
            "@@ -{},{old_len} +{},{new_len} @@\n",
            old + 1,
            new + 1
        ));
        for op in group {
            for change in diff.iter_changes(&op) {
                let line = change.value().trim_end_matches(['\n', '\r']);
                let (sign, line) = match change.tag() {
                    similar::ChangeTag::Equal => (' ', mask_values(line)),
                    similar::ChangeTag::Delete => ('-', mask_values(line)),
                    similar::ChangeTag::Insert if users(line) => ('+', mask_values(line)),
                    similar::ChangeTag::Insert => ('+', line.to_owned()),
                };
                text.push(sign);
                text.push_str(&printable(&line));
                text.push('\n');
            }
        }
    }
    text
}

/// `line` with the contents of every string that is not an object key replaced by `…`.
fn mask_values(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find('"') {
        out.push_str(&rest[..=start]);
        let body = &rest[start + 1..];
        let mut end = None;
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    end = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            out.push('…');
            return out;
        };
        let after = &body[end + 1..];
        let is_key = after.trim_start().starts_with(':');
        out.push_str(if is_key || end == 0 {
            &body[..end]
        } else {
            "…"
        });
        out.push('"');
        rest = after;
    }
    out.push_str(rest);
    out
}

/// `NAME.familiar-backup-SECONDS[-N]` beside `path`, newest first.
fn backups(path: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!("{}.familiar-backup-", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<((u64, u64), PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let file = entry.file_name().to_string_lossy().into_owned();
            let stamp = file.strip_prefix(&prefix)?;
            let (seconds, n) = stamp.split_once('-').unwrap_or((stamp, "0"));
            Some((
                (seconds.parse().ok()?, n.parse().ok()?),
                path.with_file_name(&file),
            ))
        })
        .collect();
    found.sort_by_key(|(key, _)| std::cmp::Reverse(*key));
    found.into_iter().map(|(_, path)| path).collect()
}

/// Keep only the newest [`BACKUPS_KEPT`] backups.
fn prune_backups(path: &Path) {
    for old in backups(path).into_iter().skip(BACKUPS_KEPT) {
        if let Err(err) = std::fs::remove_file(&old) {
            tracing::warn!("cannot remove the old backup {}: {err}", old.display());
        }
    }
}

/// Copy the file beside itself as `NAME.familiar-backup-SECONDS` (never over an older one).
fn backup(path: &Path) -> anyhow::Result<PathBuf> {
    let seconds = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "settings.json".to_owned());
    let mut backup = path.with_file_name(format!("{name}.familiar-backup-{seconds}"));
    let mut n = 1;
    while backup.exists() {
        backup = path.with_file_name(format!("{name}.familiar-backup-{seconds}-{n}"));
        n += 1;
    }
    std::fs::copy(path, &backup)
        .with_context(|| format!("cannot back up {} to {}", path.display(), backup.display()))?;
    Ok(backup)
}

/// Write through a temp file in the same directory, flushed to disk, and rename, so Claude
/// Code never reads a half-written settings file (nor an empty one after a crash); the old
/// file's permissions are kept. A failed write (a full disk) leaves no temp file behind.
fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let tmp = path.with_file_name(format!(
        ".{}.familiar-tmp",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    let written = std::fs::File::create(&tmp).and_then(|mut file| {
        file.write_all(text.as_bytes())?;
        file.sync_all()
    });
    if let Err(err) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(err).with_context(|| format!("cannot write {}", tmp.display()));
    }
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    if let Err(err) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(err).with_context(|| format!("cannot replace {}", path.display()));
    }
    // The rename itself is on disk once its directory is.
    if let Some(dir) = dir {
        let _ = std::fs::File::open(dir).and_then(|dir| dir.sync_all());
    }
    Ok(())
}
