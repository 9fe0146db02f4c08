//! `familiar doctor`: checks what Familiar needs and says, line by line, `ok` or what to do:
//! the config file (merged settings shown at the end), Claude Code's config dir and projects,
//! the encoded project dir of the current directory, the newest sessions with their last
//! record time, the configured scripts (compiled with `familiar-script`), the D-Bus session bus
//! and notification server (`familiar-sink`'s probes), the display for the game window,
//! Claude Code's hooks and status line in its `settings.json` with the hook socket
//! (`familiar-hook`), the open-file limit, and `familiar stats`'s cache (read-only); `agents`:
//! the agents' dirs, their newest sessions and what those hold that Familiar does not know.
//! Facts are gathered first and rendered by a pure function, so the output is golden-tested;
//! names from the disk pass through `printable_line` on the way out.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use familiar_model::text::printable_line;

use familiar_config::{Settings, Source};

use super::style::{self, Paint};

mod agents;
mod opencode;

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
    agents::check_claude(&mut checks, cwd.as_deref());
    agents::check_codex(&mut checks);
    agents::check_gemini(&mut checks);
    agents::check_qwen(&mut checks);
    agents::check_copilot(&mut checks);
    opencode::check_opencode(&mut checks);
    check_scripts(&mut checks, settings.as_ref());
    check_notifications(&mut checks);
    checks.push(check_sound());
    checks.push(check_display());
    checks.push(check_window());
    check_hooks(&mut checks);
    check_agent_status_lines(&mut checks);
    checks.push(check_open_files());
    checks.extend(check_stats_cache());
    if let Some(settings) = &settings {
        check_remotes(&mut checks, settings);
    }
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

/// Each configured remote host (`[remote] hosts`): reached through the user's ssh as `watch`
/// would, up to the remote Familiar's answer.
fn check_remotes(checks: &mut Vec<Check>, settings: &Settings) {
    let specs = match super::remote_specs(settings, super::agents::AgentArg::All, None) {
        Ok(specs) => specs,
        Err(err) => {
            checks.push(Check::todo("remote", format!("{err:#}")));
            return;
        }
    };
    for spec in specs {
        let probed = familiar_pipeline::source::remote::probe::probe(
            &spec,
            std::time::Duration::from_secs(15),
        );
        let mut check = match probed {
            Ok(version) => Check::ok(
                "remote",
                format!("{}: Familiar {version} answers over ssh", spec.name()),
            ),
            Err(reason) => Check::todo("remote", format!("{}: {reason}", spec.name())),
        };
        if let Some(dir) = &spec.dir {
            check.more.push(format!("the sessions of {dir} there"));
        }
        checks.push(check);
    }
}

/// Descriptors held at most (one per followed transcript) against how many transcripts
/// there are: `familiar watch --all` follows every one.
fn check_open_files() -> Check {
    let what = "open files";
    let Ok(limit) = familiar_tail::descriptors::open_file_limit() else {
        return Check::ok(what, "the open-file limit cannot be read");
    };
    // Familiar raises its soft limit to the hard one when it starts following.
    let usable = limit.hard;
    let mut transcripts = 0u64;
    let roots = [
        familiar_tail::discovery::config_dir().map(|dir| dir.join("projects")),
        familiar_tail::discovery::codex_home().map(|dir| dir.join("sessions")),
        familiar_tail::discovery::gemini_dir().map(|dir| dir.join("tmp")),
        familiar_tail::discovery::qwen_dir().map(|dir| dir.join("projects")),
        familiar_tail::discovery::copilot_dir().map(|dir| dir.join("session-state")),
    ];
    for root in roots.into_iter().flatten() {
        familiar_tail::discovery::walk(&root, true, &mut |_| transcripts += 1, &mut |_, _| {});
    }
    let shown = usable.map_or_else(|| "unlimited".to_owned(), |n| n.to_string());
    // Room for the rest of the process (sockets, the window's pipe, scripts, sounds).
    match usable {
        Some(max) if transcripts + 64 > max => Check::todo(
            what,
            format!(
                "{transcripts} transcripts, and Familiar may hold {shown} files open: those past \
                 the limit are closed between reads and reopened when they change (raise the \
                 hard limit, `ulimit -Hn`, to follow each one held open)"
            ),
        ),
        _ if limit.soft == limit.hard => Check::ok(
            what,
            format!("{transcripts} transcripts; Familiar may hold {shown} files open"),
        ),
        _ => Check::ok(
            what,
            format!(
                "{transcripts} transcripts; Familiar may hold {shown} files open (it raises its \
                 soft limit, {}, to that when it starts)",
                limit
                    .soft
                    .map_or_else(|| "unlimited".to_owned(), |n| n.to_string())
            ),
        ),
    }
}

/// `familiar stats`'s cache of files read: where it is and what it holds, read without writing
/// (no line when there is no cache folder, without a home).
fn check_stats_cache() -> Option<Check> {
    use super::stats::cache;
    let what = "stats cache";
    let path = cache::default_path()?;
    let shown = path.display();
    Some(match cache::contents(&path) {
        Ok(None) => Check::ok(
            what,
            format!("none yet (`familiar stats` keeps what it reads in {shown})"),
        ),
        Ok(Some(contents)) => Check::ok(
            what,
            format!(
                "{shown}: {} files kept, {} (removing it is safe: the next `familiar stats` \
                 reads every file again)",
                contents.files,
                familiar_model::words::bytes(contents.bytes)
            ),
        ),
        // The error names the file.
        Err(err) if cache::is_damaged(&err) => Check::todo(
            what,
            format!("{err:#}: the next `familiar stats` makes it anew"),
        ),
        Err(err) => Check::todo(
            what,
            format!(
                "{err:#}: `familiar stats` reads every file without it (remove it, and the \
                 next `familiar stats` makes it anew)"
            ),
        ),
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
    match familiar_pipeline::window::window_beside_me() {
        Ok((_, exe)) if exe.is_file() => Check::ok("window", exe.display().to_string()),
        Ok((me, _)) => Check::todo(
            "window",
            format!(
                "no {} beside {}: the game window cannot open ({}; `cargo run` builds it on \
                 first use)",
                familiar_pipeline::window::WINDOW_EXE,
                me.display(),
                familiar_pipeline::window::WINDOW_EXE_HOW,
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

/// GitHub Copilot CLI's and Qwen Code's status lines in their settings.json, each when the
/// CLI's dir is there.
fn check_agent_status_lines(checks: &mut Vec<Check>) {
    let agents = [
        (
            "Copilot status line",
            familiar_tail::discovery::copilot_dir(),
            "copilot",
            "Copilot CLI",
        ),
        (
            "Qwen status line",
            familiar_tail::discovery::qwen_home(),
            "qwen",
            "Qwen Code",
        ),
    ];
    for (name, dir, agent, cli) in agents {
        let Ok(dir) = dir else {
            continue;
        };
        if dir.is_dir() {
            checks.push(check_status_line(
                name,
                &dir.join("settings.json"),
                agent,
                cli,
            ));
        }
    }
}

/// Whether `familiar statusline` is the status line in `path`, another agent CLI's settings.
fn check_status_line(name: &'static str, path: &std::path::Path, agent: &str, cli: &str) -> Check {
    let shown = path.display();
    let found = match std::fs::read_to_string(path) {
        Ok(text) => familiar_hook::installed(&text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            Ok(familiar_hook::Installed::default())
        }
        Err(err) => return Check::todo(name, format!("cannot read {shown}: {err}")),
    };
    match found {
        Ok(found) => match found.status_line {
            Some(command) => Check::ok(name, format!("installed in {shown} ({command})")),
            None => Check::ok(
                name,
                format!(
                    "not installed (optional: `familiar hook install --agent {agent}` shows \
                     mana and status under {cli}'s prompt)"
                ),
            ),
        },
        Err(err) => Check::todo(name, format!("{shown}: {err}")),
    }
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
