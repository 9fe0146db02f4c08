//! The selectors' decisions on paths and heads (`Matcher::decide`).
use super::*;
use crate::discovery::paths::{base64url_encode, classify};

#[test]
fn project_matching_uses_cwd_to_settle_dash_collisions() {
    let config = Path::new("/cfg");
    let matcher = Matcher::new(config, &[Selector::Project(PathBuf::from("/a/b.c"))]);
    let info = classify(Path::new("/cfg/projects/-a-b-c/s1.jsonl")).expect("transcript");
    assert_eq!(matcher.decide(&info, None), Verdict::NeedRecords);
    let mine = Head {
        cwd: Some("/a/b.c".into()),
        session_id: None,
        exhausted: false,
    };
    let other = Head {
        cwd: Some("/a/b-c".into()),
        ..mine.clone()
    };
    assert_eq!(matcher.decide(&info, Some(&mine)), Verdict::Yes);
    assert_eq!(matcher.decide(&info, Some(&other)), Verdict::No);

    let b64 = format!(
        "/cfg/projects/{}/s2.jsonl",
        base64url_encode(Path::new("/a/b.c"))
    );
    let info = classify(Path::new(&b64)).expect("transcript");
    assert_eq!(matcher.decide(&info, None), Verdict::Yes);

    let flat = classify(Path::new("/cfg/projects/s3.jsonl")).expect("transcript");
    assert_eq!(matcher.decide(&flat, Some(&mine)), Verdict::Yes);
    assert_eq!(matcher.decide(&flat, Some(&other)), Verdict::No);

    let elsewhere = classify(Path::new("/cfg/projects/-x/s4.jsonl")).expect("transcript");
    assert_eq!(matcher.decide(&elsewhere, None), Verdict::No);
}

#[test]
fn gemini_sessions_are_placed_by_their_project_folder_not_their_logs() {
    let gemini = Path::new("/h/.gemini");
    let session = classify(Path::new(
        "/h/.gemini/tmp/b/chats/session-2026-11-28T02-01-6435cd03.jsonl",
    ))
    .expect("a session");
    let log = classify(Path::new("/h/.gemini/tmp/b/logs/session-6435cd03.jsonl")).expect("a jsonl");
    let mine = Head {
        cwd: Some("/a/b".into()),
        session_id: Some("6435cd03-7822-42c5-8604-c04e4df1a206".into()),
        exhausted: true,
    };
    let other = Head {
        cwd: Some("/elsewhere".into()),
        ..mine.clone()
    };
    let project = [Selector::Project(PathBuf::from("/a/b"))];
    let matcher = Matcher::new(Path::new("/cfg"), &project)
        .agents(false, None)
        .gemini(Some(gemini));
    assert_eq!(matcher.decide(&session, None), Verdict::NeedRecords);
    assert_eq!(matcher.decide(&session, Some(&mine)), Verdict::Yes);
    assert_eq!(matcher.decide(&session, Some(&other)), Verdict::No);
    assert_eq!(matcher.decide(&log, Some(&mine)), Verdict::No);
    assert_eq!(
        matcher.roots(),
        [WatchRoot {
            path: "/h/.gemini/tmp".into(),
            recursive: true
        }]
    );
    // Without `.gemini(…)` (`--agent claude`), they are elsewhere.
    let claude = Matcher::new(Path::new("/cfg"), &[Selector::All]);
    assert_eq!(claude.decide(&session, Some(&mine)), Verdict::No);
    let all = Matcher::new(Path::new("/cfg"), &[Selector::All]).gemini(Some(gemini));
    assert_eq!(all.decide(&session, None), Verdict::Yes);
    // `--session` by the whole id, which only the records say.
    let by_id = Matcher::new(
        Path::new("/cfg"),
        &[Selector::Session(
            "6435cd03-7822-42c5-8604-c04e4df1a206".into(),
        )],
    )
    .gemini(Some(gemini));
    assert_eq!(by_id.decide(&session, None), Verdict::NeedRecords);
    assert_eq!(by_id.decide(&session, Some(&mine)), Verdict::Yes);
}

#[test]
fn codex_rollouts_are_placed_by_their_cwd_and_narrowed_by_agent() {
    let config = Path::new("/cfg");
    let codex = Path::new("/h/.codex");
    let rollout = classify(Path::new(
        "/h/.codex/sessions/2026/11/23/rollout-2026-11-23T16-21-59-01a20936-daa5-7031-9c10-cb9fc41a4f8e.jsonl",
    ))
    .expect("a rollout");
    let claude = classify(Path::new("/cfg/projects/-a-b/s1.jsonl")).expect("transcript");
    let mine = Head {
        cwd: Some("/a/b".into()),
        session_id: Some("01a20936-daa5-7031-9c10-cb9fc41a4f8e".into()),
        exhausted: true,
    };
    let other = Head {
        cwd: Some("/elsewhere".into()),
        ..mine.clone()
    };
    let project = [Selector::Project(PathBuf::from("/a/b"))];

    let both = Matcher::new(config, &project).agents(true, Some(codex));
    assert_eq!(both.decide(&rollout, None), Verdict::NeedRecords);
    assert_eq!(both.decide(&rollout, Some(&mine)), Verdict::Yes);
    assert_eq!(both.decide(&rollout, Some(&other)), Verdict::No);
    assert_eq!(both.decide(&claude, Some(&mine)), Verdict::Yes);
    let roots: Vec<PathBuf> = both.roots().into_iter().map(|r| r.path).collect();
    assert_eq!(
        roots,
        [
            PathBuf::from("/cfg/projects"),
            PathBuf::from("/cfg/sessions"),
            PathBuf::from("/h/.codex/sessions")
        ]
    );

    // `--agent codex`: Claude Code's dirs are neither watched nor matched.
    let codex_only = Matcher::new(config, &project).agents(false, Some(codex));
    assert_eq!(codex_only.decide(&rollout, Some(&mine)), Verdict::Yes);
    assert_eq!(codex_only.decide(&claude, Some(&mine)), Verdict::No);
    assert_eq!(
        codex_only.roots(),
        [WatchRoot {
            path: "/h/.codex/sessions".into(),
            recursive: true
        }]
    );

    // `--agent claude` (and every matcher before Codex): rollouts are elsewhere.
    let claude_only = Matcher::new(config, &[Selector::All]);
    assert_eq!(claude_only.decide(&rollout, Some(&mine)), Verdict::No);
    // A session id selects a rollout by its name.
    let by_id = Matcher::new(
        config,
        &[Selector::Session(
            "01a20936-daa5-7031-9c10-cb9fc41a4f8e".into(),
        )],
    )
    .agents(true, Some(codex));
    assert_eq!(by_id.decide(&rollout, None), Verdict::Yes);
}

#[test]
fn session_and_file_selectors() {
    let config = Path::new("/cfg");
    let matcher = Matcher::new(config, &[Selector::Session("s1".into())]);
    let main = classify(Path::new("/cfg/projects/-p/s1.jsonl")).expect("transcript");
    let sub = classify(Path::new("/cfg/projects/-p/s1/subagents/agent-a.jsonl")).expect("t");
    let other = classify(Path::new("/cfg/projects/-p/s2.jsonl")).expect("transcript");
    let legacy = classify(Path::new("/cfg/projects/-p/agent-b.jsonl")).expect("transcript");
    assert_eq!(matcher.decide(&main, None), Verdict::Yes);
    assert_eq!(matcher.decide(&sub, None), Verdict::Yes);
    assert_eq!(matcher.decide(&other, None), Verdict::No);
    assert_eq!(matcher.decide(&legacy, None), Verdict::NeedRecords);
    let head = Head {
        cwd: None,
        session_id: Some("s1".into()),
        exhausted: false,
    };
    assert_eq!(matcher.decide(&legacy, Some(&head)), Verdict::Yes);

    let matcher = Matcher::new(config, &[Selector::File(PathBuf::from("/x/s9.jsonl"))]);
    let file = classify(Path::new("/x/s9.jsonl")).expect("transcript");
    let sub = classify(Path::new("/x/s9/subagents/agent-q.jsonl")).expect("transcript");
    let other = classify(Path::new("/x/s8.jsonl")).expect("transcript");
    assert_eq!(matcher.decide(&file, None), Verdict::Yes);
    assert_eq!(matcher.decide(&sub, None), Verdict::Yes);
    assert_eq!(matcher.decide(&other, None), Verdict::No);
    assert_eq!(
        matcher.roots(),
        [
            WatchRoot {
                path: "/x".into(),
                recursive: false
            },
            WatchRoot {
                path: "/x/s9/subagents".into(),
                recursive: false
            }
        ]
    );
}
