//! `familiar demo`: replays the bundled transcript (`fixtures/demo.jsonl`, embedded in the
//! binary) through the same path as `familiar replay`, so a user sees Familiar work before any
//! session exists. The transcript is invented but uses only record shapes seen in real Claude
//! Code transcripts: a prompt, thinking, reads, a failing test, an edit, a subagent, an API
//! error, a compaction and a finished turn.

use std::process::ExitCode;

use familiar_transcript::NormalizerConfig;

use super::pipeline::PipelineArgs;
use super::replay::{PaceArgs, replay_events};

/// The bundled demo transcript.
pub const DEMO: &[u8] = include_bytes!("../../fixtures/demo.jsonl");

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub pace: PaceArgs,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = NormalizerConfig {
        // Scripts may read `ev.raw`; the window labels the familiar with the records' `cwd`.
        keep_raw: true,
        ..NormalizerConfig::default()
    };
    // The demo reads no flag of its own, but the config file's settings (a `context_limit`).
    let input = super::InputOptions {
        context_limit: None,
        max_line_bytes: familiar_transcript::DEFAULT_MAX_LINE_BYTES,
    };
    replay_events(
        familiar_pipeline::source::recorded::Recorded::bytes("the demo", DEMO),
        &input,
        config,
        &args.pace,
        &args.pipeline,
        "Familiar: demo",
        "The demo is over. Run `familiar` in a project to watch its Claude Code and Codex \
         sessions live. Close the window (q) when you are done.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use familiar_model::EventKind;

    #[test]
    fn the_demo_shows_every_stage_of_a_session() {
        let (events, diagnostics) =
            familiar_transcript::normalize_bytes(DEMO, &NormalizerConfig::default());
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let kinds: std::collections::BTreeSet<EventKind> = events.iter().map(|e| e.kind).collect();
        for kind in [
            EventKind::SessionStart,
            EventKind::Prompt,
            EventKind::Thinking,
            EventKind::Reading,
            EventKind::Writing,
            EventKind::Bash,
            EventKind::SubagentStart,
            EventKind::SubagentEnd,
            EventKind::Error,
            EventKind::CompactBoundary,
            EventKind::Success,
        ] {
            assert!(kinds.contains(&kind), "no {kind} event in the demo");
        }
    }
}
