//! `familiar doctor`: checks what Familiar needs and says, line by line, `ok` or what to do:
//! the config file (merged settings shown at the end), Claude Code's config dir and projects,
//! the encoded project dir of the current directory, the newest sessions with their last
//! record time, the configured scripts (compiled with `familiar-script`), the D-Bus session bus
//! and notification server (`familiar-sink`'s probes), the display for the game window, and
//! Claude Code's hooks and status line in its `settings.json` with the hook socket
//! (`familiar-hook`). Facts are gathered first and rendered by a pure function, so the output
//! is golden-tested; names from the disk pass through `printable_line` on the way out.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use familiar_model::text::printable_line;

use familiar_config::{Settings, Source};
use familiar_tail::discovery::{self, Matcher, Selector, TranscriptKind};

use super::style::{self, Paint};

#[derive(Debug, clap::Args)]
pub struct Args {}

/// One check: fine, or a problem with what to do about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub ok: bool,
    pub what: &'static str,
    pub detail: String,
    /// Extra indented lines (sessions, script warnings).
    pub more: Vec<String>,
}

impl Check {
    fn ok(what: &'static str, detail: impl Into<String>) -> Check {
        Check {
            ok: true,
            what,
            detail: detail.into(),
            more: Vec::new(),
        }
    }

    fn todo(what: &'static str, detail: impl Into<String>) -> Check {
        Check {
            ok: false,
            what,
            detail: detail.into(),
            more: Vec::new(),
        }
    }
}

/// Render checks and settings; `[ok]` lines need nothing, `[!!]` lines say what to do.
pub fn render(checks: &[Check], settings: Option<&Settings>, paint: Paint) -> String {
    let mut out = String::new();
    for check in checks {
        let mark = if check.ok {
            paint.paint(style::GOOD, "[ok]")
        } else {
            paint.paint(style::ATTENTION, "[!!]")
        };
        let _ = writeln!(
            out,
            "{mark} {}: {}",
            paint.paint(style::HEADING, check.what),
            printable_line(&check.detail)
        );
        for line in &check.more {
            let _ = writeln!(out, "       {}", printable_line(line));
        }
    }
    if let Some(settings) = settings {
        let _ = writeln!(
            out,
            "\n{}",
            paint.paint(
                style::HEADING,
                "settings (config file merged with defaults):"
            )
        );
        for line in settings.to_string().lines() {
            let _ = writeln!(out, "  {}", printable_line(line));
        }
    }
    out
}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    let mut checks = Vec::new();
    let settings = check_config(&mut checks);
    let cwd = std::env::current_dir().ok();
    check_claude(&mut checks, cwd.as_deref());
    check_codex(&mut checks);
    check_scripts(&mut checks, settings.as_ref());
    check_notifications(&mut checks);
    checks.push(check_sound());
    checks.push(check_display());
    checks.push(check_window());
    check_hooks(&mut checks);
    // Written with `?`: a closed pipe ends quietly (main.rs), a full disk is an error.
    let mut out = std::io::stdout().lock();
    out.write_all(render(&checks, settings.as_ref(), Paint::stdout()).as_bytes())?;
    out.flush()?;
    // An invalid config stops every other command too: say so in the exit code.
    Ok(if settings.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The sound server `sound(...)` actions play on (`familiar-audio`'s probe).
fn check_sound() -> Check {
    match familiar_audio::probe() {
        Ok(info) => Check::ok(
            "sound",
            format!(
                "{} at {}, playing to {}",
                info.server,
                info.socket.display(),
                info.default_sink.unwrap_or_default()
            ),
        ),
        Err(err) => Check::todo(
            "sound",
            format!(
                "{err}; sounds are skipped until then (--mute or [sound] enabled = false turns them off)"
            ),
        ),
    }
}

fn check_config(checks: &mut Vec<Check>) -> Option<Settings> {
    let source = familiar_config::locate();
    let named = match &source {
        Source::Env(path) => format!("{} (from FAMILIAR_CONFIG)", path.display()),
        Source::Default(path) => path.display().to_string(),
        Source::None => "no home directory to look in".to_owned(),
    };
    match familiar_config::load_from(source) {
        Ok(loaded) => {
            let state = if loaded.found {
                "read"
            } else {
                "not found, defaults apply"
            };
            checks.push(Check::ok("config", format!("{named} ({state})")));
            Some(loaded.config.merge(&familiar_config::Overrides::default()))
        }
        Err(err) => {
            let mut check = Check::todo(
                "config",
                format!("{named} is invalid; fix it (every command refuses to start until then)"),
            );
            check.more = err.to_string().lines().map(str::to_owned).collect();
            checks.push(check);
            None
        }
    }
}

fn check_claude(checks: &mut Vec<Check>, cwd: Option<&Path>) {
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
    let mut check = Check::ok("sessions", format!("{} found, newest:", sessions.len()));
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
fn check_known(what: &'static str, paths: &[PathBuf]) -> Check {
    let mut unknown: std::collections::BTreeMap<String, u64> = Default::default();
    let mut versions: std::collections::BTreeSet<String> = Default::default();
    let mut known_versions: std::collections::BTreeSet<String> = Default::default();
    for path in paths {
        let Ok(file) = std::fs::File::open(path) else {
            continue;
        };
        let mut normalizer = familiar_transcript::Normalizer::default();
        // Lines it cannot read are the events command's to report; here only the types count.
        let read = familiar_transcript::normalize_read(file, &mut normalizer, |_| Ok(()), |_| {});
        if read.is_err() {
            continue;
        }
        let metrics = normalizer.metrics();
        for (name, count) in &metrics.unknown {
            *unknown.entry(name.clone()).or_default() += count;
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
fn check_codex(checks: &mut Vec<Check>) {
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

fn check_scripts(checks: &mut Vec<Check>, settings: Option<&Settings>) {
    let scripts = settings.map(|s| s.scripts.as_slice()).unwrap_or_default();
    if scripts.is_empty() {
        checks.push(Check::ok(
            "scripts",
            "no scripts configured (the shipped default applies; add `scripts = [...]` to the \
             config or pass --script)",
        ));
        return;
    }
    for path in scripts {
        let mut host = familiar_script::ScriptHost::new(familiar_script::HostConfig::default());
        match host.load_file(path) {
            Ok(report) => {
                let handlers = if report.handlers.is_empty() {
                    "no handlers".to_owned()
                } else {
                    report.handlers.join(", ")
                };
                let mut check = if report.warnings.is_empty() {
                    Check::ok("script", format!("{} ({handlers})", path.display()))
                } else {
                    Check::todo(
                        "script",
                        format!(
                            "{} loads with {} warning(s); see `familiar check {}`",
                            path.display(),
                            report.warnings.len(),
                            path.display()
                        ),
                    )
                };
                check.more = report.warnings.iter().map(|w| w.headline()).collect();
                checks.push(check);
            }
            Err(err) => {
                let mut check = Check::todo(
                    "script",
                    format!(
                        "{} does not load; fix it or remove it from the config",
                        path.display()
                    ),
                );
                check.more = err.to_string().lines().map(str::to_owned).collect();
                checks.push(check);
            }
        }
    }
}

fn check_notifications(checks: &mut Vec<Check>) {
    let address = std::env::var("DBUS_SESSION_BUS_ADDRESS").unwrap_or_default();
    let named = if address.is_empty() {
        "default address".to_owned()
    } else {
        address
    };
    match familiar_sink::probe_session_bus() {
        Ok(()) => checks.push(Check::ok("D-Bus session bus", named)),
        Err(familiar_sink::ProbeError::NoBus(err) | familiar_sink::ProbeError::NoServer(err)) => {
            checks.push(Check::todo(
                "D-Bus session bus",
                format!(
                    "{named}: {err}; start a session bus (dbus-daemon --session, or log in to a \
                     desktop) and set DBUS_SESSION_BUS_ADDRESS"
                ),
            ));
            checks.push(Check::todo(
                "notification server",
                "not checked without a session bus; desktop notifications are off until then",
            ));
            return;
        }
    }
    match familiar_sink::probe_notification_server() {
        Ok(info) => checks.push(Check::ok(
            "notification server",
            format!("{} {} by {}", info.name, info.version, info.vendor),
        )),
        Err(err) => checks.push(Check::todo(
            "notification server",
            format!(
                "{err}; start a notification daemon (dunst, mako, your desktop's own), or use \
                 `bell_fallback = true` under [notifications]"
            ),
        )),
    }
}

fn check_display() -> Check {
    let var = |name| std::env::var(name).ok().filter(|v| !v.is_empty());
    if let Some(wayland) = var("WAYLAND_DISPLAY") {
        return Check::ok("display", format!("WAYLAND_DISPLAY={wayland}"));
    }
    let Some(display) = var("DISPLAY") else {
        return Check::todo(
            "display",
            "none (DISPLAY and WAYLAND_DISPLAY are unset): the game window cannot open; use \
             --headless, or run under a desktop session or Xvfb",
        );
    };
    // A local display `:N` is a socket; say so when it is missing rather than fail later.
    if let Some(number) = display
        .strip_prefix(':')
        .and_then(|rest| rest.split('.').next())
    {
        let socket = Path::new("/tmp/.X11-unix").join(format!("X{number}"));
        if !socket.exists() {
            return Check::todo(
                "display",
                format!(
                    "DISPLAY={display} but no X server socket at {}; start the X server (or \
                     Xvfb {display}), or use --headless",
                    socket.display()
                ),
            );
        }
    }
    Check::ok("display", format!("DISPLAY={display}"))
}

/// The game window's own executable, which `familiar` starts beside itself.
fn check_window() -> Check {
    match super::front::window_beside_me() {
        Ok((_, exe)) if exe.is_file() => Check::ok("window", exe.display().to_string()),
        Ok((me, _)) => Check::todo(
            "window",
            format!(
                "no {} beside {}: the game window cannot open (`cargo build --release` builds \
                 it there, `cargo install --path .` installs both; `cargo run` builds it on \
                 first use)",
                super::front::WINDOW_EXE,
                me.display()
            ),
        ),
        Err(err) => Check::todo("window", err),
    }
}

/// Claude Code's hooks and status line in its settings.json, and the hook socket.
fn check_hooks(checks: &mut Vec<Check>) {
    let path = match super::hook::settings_path(None) {
        Ok(path) => path,
        Err(err) => {
            checks.push(Check::todo("hooks", format!("{err:#}")));
            return;
        }
    };
    let shown = path.display();
    let install = "run `familiar hook install` so permission and idle prompts reach Familiar \
                   at once";
    let found = match std::fs::read_to_string(&path) {
        Ok(text) => familiar_hook::installed(&text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            Ok(familiar_hook::Installed::default())
        }
        Err(err) => {
            checks.push(Check::todo("hooks", format!("cannot read {shown}: {err}")));
            return;
        }
    };
    let found = match found {
        Ok(found) => found,
        Err(err) => {
            checks.push(Check::todo("hooks", format!("{shown}: {err}")));
            return;
        }
    };
    let events: Vec<&str> = found
        .hooks
        .iter()
        .map(|(event, _)| event.as_str())
        .collect();
    checks.push(if found.all_hooks() {
        Check::ok(
            "hooks",
            format!("installed in {shown} ({})", events.join(", ")),
        )
    } else if events.is_empty() {
        Check::todo("hooks", format!("not installed in {shown}; {install}"))
    } else {
        Check::todo(
            "hooks",
            format!(
                "only {} in {shown}; run `familiar hook install` to add the rest",
                events.join(", ")
            ),
        )
    });
    checks.push(match &found.status_line {
        Some(command) => Check::ok("status line", format!("installed ({command})")),
        None => Check::ok(
            "status line",
            "not installed (optional: `familiar hook install --statusline` shows mana and \
             status under Claude Code's prompt)",
        ),
    });
    checks.push(check_socket(!events.is_empty()));
}

fn check_socket(hooks_installed: bool) -> Check {
    let path = match familiar_hook::socket_path() {
        Ok(path) => path,
        Err(err) => return Check::todo("hook socket", err.to_string()),
    };
    match familiar_hook::probe(&path, Duration::from_millis(500)) {
        Ok(()) => Check::ok(
            "hook socket",
            format!("{}: a running Familiar listens", path.display()),
        ),
        Err(familiar_hook::HookError::NotListening { .. }) if hooks_installed => Check::ok(
            "hook socket",
            format!(
                "{}: no Familiar running now; hooks reach the next `familiar` there",
                path.display()
            ),
        ),
        Err(familiar_hook::HookError::NotListening { .. }) => Check::ok(
            "hook socket",
            format!("{}: no Familiar running now", path.display()),
        ),
        Err(err) => Check::todo("hook socket", err.to_string()),
    }
}
