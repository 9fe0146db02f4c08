//! `--agent claude|codex|all`: which coding agents' sessions a live command looks at, and where
//! each keeps them (Claude Code's config dir, Codex's home). Shared by `watch` and `sessions`;
//! the places themselves come from `familiar-tail`'s discovery.

use std::path::PathBuf;

use familiar_tail::TailerConfig;

/// Which agents' sessions to follow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentArg {
    /// Claude Code's transcripts only.
    Claude,
    /// OpenAI Codex CLI rollouts only.
    Codex,
    /// Both.
    #[default]
    All,
}

impl AgentArg {
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

    /// Point a tailer at the agents' places.
    pub fn apply(self, config: &mut TailerConfig) {
        config.claude = self.claude();
        config.codex_home = self.codex_home();
    }
}
