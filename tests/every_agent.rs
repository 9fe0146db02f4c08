//! Every agent Familiar reads, side by side in one project (issue 29): the sessions each real
//! CLI wrote against its mock (the fixtures: Claude Code 2.1.332, Codex 0.171.0, Gemini CLI
//! 0.61.0, Qwen Code 0.24.4, Copilot CLI 1.0.102, opencode 1.18.33's database), placed where
//! each CLI keeps them, their project the test's. Checked: `familiar sessions` lists each
//! agent's sessions in that project and says whose each is; `familiar stats` of the project
//! reads every one of them, its tokens per agent equal to what `stats` reads from that agent's
//! files alone.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::watch::encoded_project_dir;
use serde_json::Value;

/// A home holding one project's sessions of every agent.
struct Tree {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    /// Each agent's session files (opencode's: its sessions' addresses).
    files: BTreeMap<&'static str, Vec<PathBuf>>,
}

/// `fixture`'s text with its project (`placeholder`) made `project`.
fn fixture_in(fixture: &str, placeholder: &str, project: &Path) -> String {
    fs::read_to_string(common::fixture(fixture))
        .unwrap_or_else(|err| panic!("{fixture}: {err}"))
        .replace(placeholder, project.to_str().expect("UTF-8 temp dir"))
}

fn write(path: &Path, text: &str) -> PathBuf {
    fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    fs::write(path, text).expect("write session file");
    path.to_owned()
}

/// The `key` of the first line of `text` that has it.
fn first(text: &str, key: &str) -> String {
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|record| record[key].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no {key} in the fixture"))
}

impl Tree {
    fn new() -> Tree {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical temp dir");
        let home = root.join("home");
        let project = root.join("project");
        fs::create_dir_all(&project).expect("mkdir");
        let mut files: BTreeMap<&'static str, Vec<PathBuf>> = BTreeMap::new();

        // Claude Code: `projects/<encoded project>/<session id>.jsonl`.
        let text = fixture_in(
            "claude-2.1.332/main.jsonl",
            "/tmp/.tmpIs7Lvr/project",
            &project,
        );
        let id = first(&text, "sessionId");
        let dir = encoded_project_dir(&home.join(".claude"), &project);
        files.insert(
            "claude",
            vec![write(&dir.join(format!("{id}.jsonl")), &text)],
        );

        // Codex: `sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`, placed by its `cwd`.
        let text = fixture_in(
            "codex-0.171.0/main.jsonl",
            "/tmp/familiar-codex/project",
            &project,
        );
        let day = home.join(".codex/sessions/2026/11/27");
        files.insert(
            "codex",
            vec![write(
                &day.join("rollout-2026-11-27T17-53-59-01a21e24-8173-7d71-a2b0-e0c1f361228a.jsonl"),
                &text,
            )],
        );

        // Gemini CLI: `tmp/<project folder>/chats/session-*.jsonl`, placed by the folder's
        // `.project_root` (its records never name the project).
        let text = fs::read_to_string(common::fixture("gemini-0.61.0/main.jsonl")).expect("gemini");
        let folder = home.join(".gemini/tmp/project");
        write(
            &folder.join(".project_root"),
            project.to_str().expect("UTF-8"),
        );
        let id = first(&text, "sessionId");
        files.insert(
            "gemini",
            vec![write(
                &folder.join(format!("chats/session-2026-11-28T02-01-{}.jsonl", &id[..8])),
                &text,
            )],
        );

        // Qwen Code: `projects/<project, non-alphanumerics as dashes>/chats/<id>.jsonl`.
        let text = fixture_in(
            "qwen-0.24.4/main.jsonl",
            "/tmp/familiar-qwen/project",
            &project,
        );
        let id = first(&text, "sessionId");
        let encoded = project
            .to_str()
            .expect("UTF-8")
            .replace(|c: char| !c.is_ascii_alphanumeric(), "-");
        files.insert(
            "qwen",
            vec![write(
                &home.join(format!(".qwen/projects/{encoded}/chats/{id}.jsonl")),
                &text,
            )],
        );

        // Copilot CLI: `session-state/<id>/events.jsonl`, placed by `session.start`'s `cwd`.
        let text = fixture_in("copilot-1.0.102/main.jsonl", "/tmp/cp/proj", &project);
        files.insert(
            "copilot",
            vec![write(
                &home.join(
                    ".copilot/session-state/a59f8f81-7352-43fd-96e6-3e4569a13695/events.jsonl",
                ),
                &text,
            )],
        );

        // opencode: the database its real CLI wrote, its sessions' directory made the project.
        let db = home.join(".local/share/opencode/opencode.db");
        fs::create_dir_all(db.parent().expect("a parent")).expect("mkdir");
        fs::copy(common::fixture("opencode-1.18.33/opencode.db"), &db).expect("copy db");
        let conn = rusqlite::Connection::open(&db).expect("open db");
        conn.execute(
            "UPDATE session SET directory = ?1",
            [project.to_str().expect("UTF-8")],
        )
        .expect("move the sessions");
        drop(conn);
        let roots: Vec<PathBuf> = familiar_tail::opencode::list_sessions(&db)
            .expect("list")
            .iter()
            .map(|session| familiar_tail::opencode::address(&db, &session.id))
            .collect();
        assert_eq!(roots.len(), 3, "the fixture's three runs");
        files.insert("opencode", roots);

        Tree {
            _tmp: tmp,
            home,
            project,
            files,
        }
    }

    /// `familiar ARGS` in the project, every agent's dir where its CLI would look.
    fn familiar(&self, args: &[&str]) -> Vec<u8> {
        let output = self.run(args);
        assert!(
            output.status.success(),
            "familiar {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output.stdout
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new(env!("CARGO_BIN_EXE_familiar"))
            .args(args)
            .env("HOME", &self.home)
            .env("CLAUDE_CONFIG_DIR", self.home.join(".claude"))
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            // `familiar stats` keeps what it read in the cache folder: the temporary home's.
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env("XDG_RUNTIME_DIR", self.home.join("run"))
            .env_remove("CODEX_HOME")
            .env_remove("GEMINI_CLI_HOME")
            .env_remove("QWEN_HOME")
            .env_remove("QWEN_RUNTIME_DIR")
            .env_remove("COPILOT_HOME")
            .env_remove("OPENCODE_DB")
            .env_remove("FAMILIAR_CONFIG")
            .current_dir(&self.project)
            .stdin(Stdio::null())
            .output()
            .expect("run familiar")
    }

    /// `familiar stats --json` rows of `files`, or of the project when none.
    fn stats(&self, files: &[PathBuf]) -> Vec<Value> {
        let mut args = vec!["stats", "--json"];
        let paths: Vec<&str> = files
            .iter()
            .map(|path| path.to_str().expect("UTF-8"))
            .collect();
        args.extend(paths);
        let stdout = self.familiar(&args);
        String::from_utf8_lossy(&stdout)
            .lines()
            .map(|line| serde_json::from_str(line).expect("one JSON object a line"))
            .collect()
    }
}

/// The tokens of `stats --json` rows, summed field by field.
fn tokens(rows: &[Value]) -> BTreeMap<String, u64> {
    let mut sum = BTreeMap::new();
    for row in rows {
        let Some(tokens) = row["tokens"].as_object() else {
            continue;
        };
        for (key, value) in tokens {
            *sum.entry(key.clone()).or_default() += value.as_u64().unwrap_or(0);
        }
    }
    sum
}

#[test]
fn every_agent_in_one_project_is_listed_and_counted() {
    let tree = Tree::new();

    let sessions: Vec<Value> =
        serde_json::from_slice(&tree.familiar(&["sessions", "--json"])).expect("sessions JSON");
    let mut by_agent: BTreeMap<String, usize> = BTreeMap::new();
    for session in &sessions {
        assert_eq!(
            session["cwd"],
            tree.project.to_string_lossy().as_ref(),
            "{session}"
        );
        // Left out for Claude Code (docs/events.md), so its JSON is unchanged.
        let agent = session
            .get("agent_kind")
            .map_or(Some("claude"), Value::as_str);
        *by_agent.entry(agent.unwrap_or("?").to_owned()).or_default() += 1;
    }
    let expected: BTreeMap<String, usize> = [
        ("claude", 1),
        ("codex", 1),
        ("copilot", 1),
        ("gemini", 1),
        ("opencode", 3),
        ("qwen", 1),
    ]
    .into_iter()
    .map(|(agent, n)| (agent.to_owned(), n))
    .collect();
    assert_eq!(by_agent, expected, "{sessions:#?}");

    // `stats` of the project reads every agent's sessions, and counts each as `stats` of that
    // agent's files alone does.
    let all = tree.stats(&[]);
    let mut total = BTreeMap::new();
    for (agent, files) in &tree.files {
        let alone = tokens(&tree.stats(files));
        assert!(
            alone.values().any(|&n| n > 0),
            "{agent}: no tokens in {alone:?}"
        );
        for (key, value) in alone {
            *total.entry(key).or_insert(0) += value;
        }
    }
    assert_eq!(tokens(&all), total, "{all:#?}");
    assert_eq!(
        all.len(),
        tree.files.values().map(Vec::len).sum::<usize>(),
        "one row per session file: {all:#?}"
    );
}

/// `watch --session` knows every agent's ids: opencode's, rows of its database, share their
/// first characters when made minutes apart, and `sessions` prints as many as tell them apart.
#[test]
fn a_session_id_is_resolved_among_every_agents_sessions() {
    let tree = Tree::new();
    let table = String::from_utf8(tree.familiar(&["sessions"])).expect("UTF-8");
    let opencode: Vec<&str> = table
        .lines()
        .filter(|line| line.contains(" opencode "))
        .filter_map(|line| line.split_whitespace().nth(2))
        .collect();
    assert_eq!(opencode.len(), 3, "{table}");
    assert!(opencode.iter().all(|id| id.len() > 8), "{table}");
    let ambiguous = tree.run(&["watch", "--headless", "--session", "ses_dded"]);
    assert!(!ambiguous.status.success());
    assert!(
        String::from_utf8_lossy(&ambiguous.stderr)
            .contains("--session ses_dded: 3 sessions' ids begin so"),
        "{ambiguous:?}"
    );
}
