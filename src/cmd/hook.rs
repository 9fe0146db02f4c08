//! `familiar hook`: Claude Code runs it on its hook events (after `familiar hook install`); it
//! reads the hook JSON on stdin and hands it to a running Familiar over the local socket
//! (`familiar-hook`). It never disturbs Claude Code: it prints nothing on stdout (which a
//! SessionStart hook would add to the context), and exits 0 even when no Familiar listens.
//!
//! `familiar hook install` / `uninstall` edit Claude Code's `settings.json`: they show the
//! change as a diff, keep a backup of the file, refuse a file that does not parse, and
//! `uninstall` removes exactly what `install` added.

use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use familiar_hook::{MAX_MESSAGE, SettingsEdit};

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    pub action: Option<Action>,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Add Familiar's hooks (SessionStart, Notification, Stop) to Claude Code's settings.json;
    /// shows the change and keeps a backup.
    Install(EditArgs),
    /// Remove Familiar's hooks from settings.json, leaving every other setting as it was;
    /// keeps a backup.
    Uninstall(EditArgs),
}

#[derive(Debug, clap::Args)]
pub struct EditArgs {
    /// The settings file [default: $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json].
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Show the change without writing anything.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.action {
        None => {
            forward();
            Ok(ExitCode::SUCCESS)
        }
        Some(Action::Install(edit)) => {
            let command = familiar_hook::hook_command(
                &std::env::current_exe().context("cannot tell where this familiar binary is")?,
            );
            edit_settings(&edit, |text| familiar_hook::install(text, &command))
        }
        Some(Action::Uninstall(edit)) => edit_settings(&edit, |text| {
            familiar_hook::uninstall(text.unwrap_or_default())
        }),
    }
}

/// Hand stdin to a running Familiar; every failure is only logged (at debug level).
fn forward() {
    let mut message = Vec::new();
    if let Err(err) = io::stdin()
        .lock()
        .take(MAX_MESSAGE as u64)
        .read_to_end(&mut message)
    {
        tracing::debug!("cannot read the hook input: {err}");
        return;
    }
    let sent = familiar_hook::socket_path()
        .and_then(|path| familiar_hook::send(&path, &message, Duration::from_secs(2)));
    match sent {
        Ok(()) => tracing::debug!("hook input handed to the running Familiar"),
        Err(err) => tracing::debug!("{err}"),
    }
}

fn settings_path(edit: &EditArgs) -> anyhow::Result<PathBuf> {
    match &edit.settings {
        Some(path) => Ok(path.clone()),
        None => Ok(familiar_tail::discovery::config_dir()?.join("settings.json")),
    }
}

fn edit_settings(
    args: &EditArgs,
    edit: impl FnOnce(Option<&str>) -> Result<SettingsEdit, familiar_hook::SettingsError>,
) -> anyhow::Result<ExitCode> {
    let path = settings_path(args)?;
    let current = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let result = edit(current.as_deref()).with_context(|| format!("{}", path.display()))?;
    if !result.changed() {
        println!("{}: nothing to change", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let shown = path.display().to_string();
    let diff = similar::TextDiff::from_lines(&result.before, &result.after);
    print!(
        "{}",
        diff.unified_diff().context_radius(3).header(&shown, &shown)
    );
    for change in &result.changes {
        println!("# {change}");
    }
    if args.dry_run {
        println!("dry run: {} not written", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let backup = match &current {
        Some(_) => Some(backup(&path)?),
        None => None,
    };
    write_atomically(&path, &result.after)?;
    match backup {
        Some(backup) => println!(
            "wrote {} (the old file is in {}); undo with `familiar hook uninstall`",
            path.display(),
            backup.display()
        ),
        None => println!(
            "wrote {}; undo with `familiar hook uninstall`",
            path.display()
        ),
    }
    Ok(ExitCode::SUCCESS)
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

/// Write through a temp file in the same directory and rename, so Claude Code never reads a
/// half-written settings file; the old file's permissions are kept.
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
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
}
