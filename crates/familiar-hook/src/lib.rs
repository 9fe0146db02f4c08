//! Claude Code hook integration (optional): Claude Code runs `familiar hook` on its hook
//! events; that process hands the hook's JSON to a running Familiar over a Unix socket under
//! the runtime dir, where permission, prompt, stop and idle signals become
//! [`familiar_model::Event`]s of kind `status` for the session model (`familiar-session`),
//! which fills in the session's state. The hook's `transcript_path` is followed too: `familiar
//! watch` hands it to the tailer (`familiar_tail::TailerHandle::follow`), which reads what is
//! on disk silently and then follows it, so a session outside the selection (another project,
//! another config dir) shows up at its first hook; `familiar watch --hook` follows the one a
//! hook names on stdin.
//!
//! [`cli_sessions`] reads the CLI's own sessions folder (`sessions/<pid>.json`), the status
//! source that needs no hook installed.
//!
//! [`socket`] holds both ends (the forwarder's [`socket::send`] and the watcher's
//! [`socket::HookListener`]); [`input`] parses hook JSON and maps it to events; [`settings`]
//! adds or removes Familiar's hooks (and status line) in Claude Code's `settings.json` (and its
//! status line in GitHub Copilot CLI's and Qwen Code's), as a
//! pure text-to-text edit through [`jsonedit`], a format-preserving JSON editor that changes
//! only the bytes it must (the binary shows the diff, asks, keeps backups and writes).

pub mod cli_sessions;
pub mod input;
pub mod jsonedit;
pub mod settings;
pub mod socket;
pub mod statusline_input;

pub use input::{HookInput, hook_event};
pub use settings::{
    Installed, Plan, SettingsEdit, SettingsError, StatusLineAt, hook_command, install, installed,
    status_line_command, uninstall,
};
pub use socket::{HookError, HookGuard, HookListener, MAX_MESSAGE, probe, send, socket_path};
