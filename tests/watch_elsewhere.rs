//! End-to-end: `familiar watch` (and `familiar sessions`) when nothing it was asked for is there (issue 13: a mistyped
//! path or another project's sessions gave "no Claude Code session yet ... waiting" forever
//! and nothing more). The real binary, a temporary Claude dir, real transcripts.

use std::fs;
use std::path::Path;

mod common;

use common::watch::*;

/// The `familiar:` lines of a run's stderr (not its `-v` logs), the temp dir written `$TMP`
/// (`-TMP` in a project directory's dash-encoded name).
fn said(stderr: &str, tmp: &Path) -> String {
    let tmp = tmp.display().to_string();
    let encoded = tmp.replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    stderr
        .lines()
        .filter(|line| line.starts_with("familiar: "))
        .map(|line| line.replace(&tmp, "$TMP").replace(&encoded, "-TMP") + "\n")
        .collect()
}

#[test]
fn regression_sessions_of_other_projects_are_counted_and_the_nearest_named() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let tmp = tmp.path().canonicalize().expect("canonical temp dir");
    let config = tmp.join("claude");
    let bytes = real_fixture_bytes(FIXTURE);
    // Two sessions of a sibling project, one of a neighbour, one far away.
    for (project, sessions) in [("code/app", 2), ("code/lib", 1), ("elsewhere/x", 1)] {
        let cwd = tmp.join(project);
        let dir = encoded_project_dir(&config, &cwd);
        fs::create_dir_all(&dir).expect("mkdir");
        for n in 0..sessions {
            fs::write(dir.join(format!("s{n}.jsonl")), with_cwd(&bytes, &cwd)).expect("write");
        }
    }
    let here = tmp.join("code/web");
    fs::create_dir_all(&here).expect("mkdir");
    let mut watch = Watch::start(&config, &here, &[]);
    watch.wait_stderr("use --project DIR or --all");
    watch.signal(libc::SIGTERM);
    assert!(watch.wait_exit().success(), "{}", watch.stderr());
    insta::assert_snapshot!(said(&watch.stderr(), &tmp));

    // `familiar sessions` says the same when it lists none.
    let output = common::Test::new()
        .arg("sessions")
        .current_dir(&here)
        .env("CLAUDE_CONFIG_DIR", &config)
        .env("NO_COLOR", "1")
        .stdout("no sessions\n")
        .run();
    assert_eq!(
        said(&String::from_utf8_lossy(&output.stderr), &tmp),
        "familiar: 4 sessions under $TMP/claude/projects, none for $TMP/code/web; nearest: \
         $TMP/code/app (2), $TMP/code/lib (1), $TMP/elsewhere/x (1); use --project DIR or --all\n"
    );
}

#[test]
fn regression_a_mistyped_file_or_project_is_an_error_not_a_silent_wait() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let missing = tmp.path().join("no-such-dir");
    let file = missing.join("session.jsonl");
    let output = common::Test::new()
        .args(["watch", "--headless", "--file"])
        .arg(&file)
        .env("NO_COLOR", "1")
        .status(1)
        .run();
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "familiar: --file {}: no such file or directory\n",
            file.display()
        )
    );
    let output = common::Test::new()
        .args(["watch", "--headless", "--project"])
        .arg(&missing)
        .env("NO_COLOR", "1")
        .status(1)
        .run();
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "familiar: --project {}: no such directory, and no Claude Code or Codex session names it\n",
            missing.display()
        )
    );
}
