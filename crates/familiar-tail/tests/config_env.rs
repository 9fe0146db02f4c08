//! `CLAUDE_CONFIG_DIR` decides where transcripts are looked for. One test per binary: it sets
//! the process environment, which other tests in the same process must not see change.

mod common;

use std::path::Path;

use common::*;
use familiar_tail::{Selector, TailMessage, config_dir};

#[test]
fn claude_config_dir_points_discovery_and_the_tailer_at_a_temp_dir() {
    let env = Env::new();
    // SAFETY: the only test in this binary; no other thread reads the environment now.
    unsafe { std::env::set_var("CLAUDE_CONFIG_DIR", &env.config) };
    let dir = config_dir().expect("a config dir");
    assert_eq!(dir, env.config);

    let project = env.project_dir(Path::new("/work/app"));
    let bytes = real("v2.1.38-spotter-slash-command-queue.jsonl");
    let path = project.join(format!("{}.jsonl", session_of(&bytes)));
    std::fs::write(&path, &bytes).expect("write");
    let found = familiar_tail::discovery::discover(&dir, &[Selector::All]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].path, path);

    let mut config = env.tailer_config(vec![Selector::All]);
    config.config_dir = dir;
    let handle = start(config);
    let messages = until(&handle, |m| matches!(m, TailMessage::CaughtUp)).expect("caught up");
    assert!(
        messages
            .iter()
            .any(|m| matches!(m, TailMessage::Opened { path: p, .. } if **p == *path))
    );

    // Empty means unset: back to ~/.claude (never written to).
    // SAFETY: as above.
    unsafe { std::env::set_var("CLAUDE_CONFIG_DIR", "") };
    let fallback = config_dir().expect("a home dir");
    assert!(fallback.ends_with(".claude"), "{}", fallback.display());
    assert_ne!(fallback, env.config);
}
