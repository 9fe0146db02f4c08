//! `--agent claude|codex|gemini|qwen|copilot|opencode|all`: which coding agents' sessions a live
//! command looks at, and where each keeps them (Claude Code's config dir, Codex's home, Gemini
//! CLI's dir, Qwen Code's dir, Copilot CLI's dir, opencode's database). Shared by `watch` and `sessions`; the places themselves come from `familiar-tail`'s discovery.

use std::path::PathBuf;

use familiar_tail::TailerConfig;

/// Which agents' sessions to follow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentArg {
    /// Claude Code's transcripts only.
    Claude,
    /// OpenAI Codex CLI rollouts only.
    Codex,
    /// Google Gemini CLI sessions only.
    Gemini,
    /// Qwen Code sessions only.
    Qwen,
    /// GitHub Copilot CLI sessions only.
    Copilot,
    /// opencode sessions only.
    Opencode,
    /// Every one of them.
    #[default]
    All,
}

impl AgentArg {
    /// The value as given on the command line, `None` for every agent (the default).
    pub fn name(self) -> Option<&'static str> {
        match self {
            AgentArg::Claude => Some("claude"),
            AgentArg::Codex => Some("codex"),
            AgentArg::Gemini => Some("gemini"),
            AgentArg::Qwen => Some("qwen"),
            AgentArg::Copilot => Some("copilot"),
            AgentArg::Opencode => Some("opencode"),
            AgentArg::All => None,
        }
    }

    pub fn claude(self) -> bool {
        matches!(self, AgentArg::Claude | AgentArg::All)
    }

    /// Codex's home when its rollouts are wanted and a home is known.
    pub fn codex_home(self) -> Option<PathBuf> {
        if !matches!(self, AgentArg::Codex | AgentArg::All) {
            return None;
        }
        match familiar_tail::discovery::codex_home() {
            Ok(home) => Some(home),
            Err(err) => {
                tracing::warn!("not following Codex sessions: {err}");
                None
            }
        }
    }

    /// Gemini CLI's dir when its sessions are wanted and a home is known.
    pub fn gemini_dir(self) -> Option<PathBuf> {
        if !matches!(self, AgentArg::Gemini | AgentArg::All) {
            return None;
        }
        match familiar_tail::discovery::gemini_dir() {
            Ok(dir) => Some(dir),
            Err(err) => {
                tracing::warn!("not following Gemini CLI sessions: {err}");
                None
            }
        }
    }

    /// Qwen Code's dir when its sessions are wanted and a home is known.
    pub fn qwen_dir(self) -> Option<PathBuf> {
        if !matches!(self, AgentArg::Qwen | AgentArg::All) {
            return None;
        }
        match familiar_tail::discovery::qwen_dir() {
            Ok(dir) => Some(dir),
            Err(err) => {
                tracing::warn!("not following Qwen Code sessions: {err}");
                None
            }
        }
    }

    /// Copilot CLI's dir when its sessions are wanted and a home is known.
    pub fn copilot_dir(self) -> Option<PathBuf> {
        if !matches!(self, AgentArg::Copilot | AgentArg::All) {
            return None;
        }
        match familiar_tail::discovery::copilot_dir() {
            Ok(dir) => Some(dir),
            Err(err) => {
                tracing::warn!("not following Copilot CLI sessions: {err}");
                None
            }
        }
    }

    /// opencode's database when its sessions are wanted and a home is known
    /// (`$OPENCODE_DB`, else `opencode.db` in `$XDG_DATA_HOME/opencode` or
    /// `~/.local/share/opencode`).
    pub fn opencode_db(self) -> Option<PathBuf> {
        if !matches!(self, AgentArg::Opencode | AgentArg::All) {
            return None;
        }
        let db = familiar_tail::opencode::db_path();
        if db.is_none() {
            tracing::warn!("not following opencode sessions: no home directory");
        }
        db
    }

    /// Point a tailer at the agents' places.
    pub fn apply(self, config: &mut TailerConfig) {
        config.claude = self.claude();
        config.codex_home = self.codex_home();
        config.gemini_dir = self.gemini_dir();
        config.qwen_dir = self.qwen_dir();
        config.copilot_dir = self.copilot_dir();
        config.opencode_db = self.opencode_db();
    }
}
