//! Transcripts that appear: new sessions, subagents with their meta files, legacy agent
//! files matched by their records, every project layout, directories created after start, a
//! file named at run time (a hook's `transcript_path`).

use super::*;

#[test]
fn a_new_session_appears_next_to_an_old_one() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let old = dir.join("old.jsonl");
    fs::write(&old, real(SLASH)).expect("write");
    let handle = start(env.tailer_config(vec![Selector::All]));
    until_caught_up(&handle);
    let bytes = real(COMPACT);
    let new = dir.join(format!("{}.jsonl", session_of(&bytes)));
    append(&new, &bytes);
    append(&new, &marker("new"));
    let messages = until_marker(&handle, "new");
    assert_eq!(opened_paths(&messages), std::slice::from_ref(&new));
    let stream = stream_of(&messages, &new);
    assert_eq!(stream.opened, [(1, OpenReason::Appeared)]);
    assert_same_lines(&stream.lines_of_generation(1), &lines_of(&bytes), "new");
}

#[test]
fn subagent_transcripts_appear_under_their_session_with_their_meta() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/home/USER/projects/spotter"));
    let sub = real(SUBAGENT);
    let sid = session_of(&sub);
    fs::write(dir.join(format!("{sid}.jsonl")), real(SHORT)).expect("write the session");
    let handle = start(env.tailer_config(vec![Selector::Session(sid.clone())]));
    until_caught_up(&handle);

    // The subagents dir does not exist yet: it appears with the first subagent.
    let subagents = dir.join(&sid).join("subagents");
    fs::create_dir_all(&subagents).expect("mkdir");
    fs::write(
        subagents.join("agent-a881341.meta.json"),
        br#"{"agentType":"general-purpose"}"#,
    )
    .expect("meta");
    let path = subagents.join("agent-a881341.jsonl");
    append(&path, &sub);
    append(&path, &marker("sub"));
    let messages = until_marker(&handle, "sub");
    let info = messages
        .iter()
        .find_map(|m| match m {
            TailMessage::Opened { path: p, info, .. } if **p == *path => Some(info.clone()),
            _ => None,
        })
        .expect("the subagent file is opened");
    assert_eq!(info.kind, TranscriptKind::Subagent);
    assert_eq!(info.agent_id.as_deref(), Some("a881341"));
    assert_eq!(info.session_id.as_deref(), Some(sid.as_str()));
    assert_eq!(info.agent_type.as_deref(), Some("general-purpose"));
    let stream = stream_of(&messages, &path);
    assert_same_lines(&stream.lines_of_generation(1), &lines_of(&sub), "subagent");

    // A meta file that comes after its transcript: a `Meta` message.
    let later = subagents.join("agent-b77.jsonl");
    append(&later, &sub);
    append(&later, &marker("b77"));
    until_marker(&handle, "b77");
    fs::write(
        subagents.join("agent-b77.meta.json"),
        br#"{"agentType":"Explore"}"#,
    )
    .expect("meta");
    let messages = until(&handle, |m| matches!(m, TailMessage::Meta { .. })).expect("Meta");
    let Some(TailMessage::Meta {
        path: meta_for,
        agent_type,
    }) = messages.last()
    else {
        unreachable!("until stops on a Meta");
    };
    assert_eq!(**meta_for, *later);
    assert_eq!(agent_type.as_deref(), Some("Explore"));
}

#[test]
fn a_legacy_agent_file_is_matched_to_its_session_by_its_records() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let sub = real(SUBAGENT);
    let sid = session_of(&sub);
    let legacy = dir.join("agent-a881341.jsonl");
    fs::write(&legacy, &sub).expect("write");
    fs::write(dir.join("other-session.jsonl"), real(SHORT)).expect("write");
    let handle = start(env.tailer_config(vec![Selector::Session(sid)]));
    let startup = until_caught_up(&handle);
    assert_eq!(opened_paths(&startup), [legacy]);
}

#[test]
fn project_paths_with_spaces_dots_and_underscores_in_every_layout() {
    let env = Env::new();
    let project = env.tmp.path().join("my proj.v2_final");
    let twin = env.tmp.path().join("my-proj-v2-final"); // same dash encoding
    fs::create_dir_all(&project).expect("mkdir");
    let projects = env.config.join("projects");
    let bytes = real(SHORT);
    let mine = with_cwd(&bytes, &project);
    let theirs = with_cwd(&bytes, &twin);

    let dash = env.project_dir(&project);
    assert!(dash.to_string_lossy().ends_with("-my-proj-v2-final"));
    let b64 = projects.join(familiar_tail::discovery::base64url_encode(&project));
    let sessions = env.config.join("sessions");
    let other = projects.join("-somewhere-else");
    for dir in [&b64, &sessions, &other] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    let expected = [
        dash.join("a.jsonl"),
        b64.join("b.jsonl"),
        projects.join("c.jsonl"),
        sessions.join("d.jsonl"),
    ];
    for path in &expected {
        fs::write(path, &mine).expect("write");
    }
    fs::write(dash.join("twin.jsonl"), &theirs).expect("write"); // lossy collision
    fs::write(projects.join("flat-other.jsonl"), &theirs).expect("write");
    fs::write(other.join("e.jsonl"), &mine).expect("write");

    let selectors = vec![Selector::Project(project.clone())];
    let handle = start(env.tailer_config(selectors.clone()));
    let mut want: Vec<PathBuf> = expected.to_vec();
    want.sort();
    assert_eq!(opened_paths(&until_caught_up(&handle)), want);

    let mut found: Vec<PathBuf> = familiar_tail::discovery::discover(&env.config, &selectors)
        .into_iter()
        .map(|info| info.path)
        .collect();
    found.sort();
    assert_eq!(found, want, "the one-shot discovery agrees");

    // And what the project writes next arrives, in any of its layouts.
    append(&expected[1], &marker("b64"));
    let stream = stream_of(&until_marker(&handle, "b64"), &expected[1]);
    assert!(stream.lines.iter().all(|l| !l.backlog));
}

#[test]
fn directories_created_after_start_are_picked_up() {
    for (poll, mode) in modes() {
        let env = Env::new(); // not even the config dir exists
        let handle = start(config_for(&env, poll));
        until_caught_up(&handle);
        let bytes = real(SHORT);
        let dir = env.project_dir(Path::new("/later"));
        let path = dir.join("s.jsonl");
        append(&path, &bytes);
        append(&path, &marker("later"));
        let stream = stream_of(&until_marker(&handle, "later"), &path);
        assert_same_lines(&stream.lines_of_generation(1), &lines_of(&bytes), mode);

        // A hook-named file in a directory that does not exist yet, outside the config dir.
        let elsewhere = env.tmp.path().join("elsewhere/deeper");
        let file = elsewhere.join("hooked.jsonl");
        let hook = format!(
            r#"{{"session_id":"x","transcript_path":{}}}"#,
            serde_json::to_string(&file.to_string_lossy()).expect("JSON")
        );
        let named = familiar_tail::transcript_path_from_hook(&hook).expect("a path");
        let mut config = env.tailer_config(vec![Selector::File(named)]);
        if poll {
            config.mode = poll_mode();
        }
        let handle = start(config);
        until_caught_up(&handle);
        fs::create_dir_all(&elsewhere).expect("mkdir");
        append(&file, &bytes);
        append(&file, &marker("hooked"));
        let stream = stream_of(&until_marker(&handle, "hooked"), &file);
        assert_same_lines(&stream.lines_of_generation(1), &lines_of(&bytes), mode);
    }
}

#[test]
fn a_file_named_at_run_time_is_followed_with_its_subagents_its_old_lines_as_backlog() {
    for (poll, mode) in modes() {
        let env = Env::new();
        let project = env.project_dir(Path::new("/p"));
        fs::write(
            project.join("mine.jsonl"),
            with_cwd(&real(SLASH), Path::new("/p")),
        )
        .expect("write");
        // A session in a directory nothing selected: what a hook's `transcript_path` names.
        let elsewhere = env.tmp.path().join("elsewhere");
        let bytes = real(COMPACT);
        let file = elsewhere.join("named.jsonl");
        let subagents = elsewhere.join("named/subagents");
        fs::create_dir_all(&subagents).expect("mkdir");
        let cut = after_lines(&bytes, 50);
        fs::write(&file, &bytes[..cut]).expect("write");
        let sub = real(SUBAGENT);
        let agent = subagents.join("agent-a881341.jsonl");
        fs::write(&agent, &sub).expect("write");
        fs::write(elsewhere.join("unnamed.jsonl"), real(SHORT)).expect("write");

        let mut config = env.tailer_config(vec![Selector::Project(PathBuf::from("/p"))]);
        if poll {
            config.mode = poll_mode();
        }
        let handle = start(config);
        let startup = until_caught_up(&handle);
        assert_eq!(
            opened_paths(&startup),
            [project.join("mine.jsonl")],
            "{mode}"
        );

        handle.follow(file.clone());
        let named = until_caught_up(&handle);
        assert_eq!(
            opened_paths(&named),
            [agent.clone(), file.clone()],
            "{mode}"
        );
        let stream = stream_of(&named, &file);
        assert_eq!(stream.opened, [(1, OpenReason::Existing)], "{mode}");
        assert!(stream.lines.iter().all(|l| l.backlog), "{mode}");
        let all = lines_of(&bytes);
        assert_same_lines(&stream.lines_of_generation(1), &all[..50], mode);
        let stream = stream_of(&named, &agent);
        assert_same_lines(&stream.lines_of_generation(1), &lines_of(&sub), mode);

        // Named again (every hook names it): nothing changes; what comes next is live.
        handle.follow(file.clone());
        append(&file, &bytes[cut..]);
        append(&file, &marker("named"));
        let messages = until_marker(&handle, "named");
        assert!(opened_paths(&messages).is_empty(), "{mode}");
        let stream = stream_of(&messages, &file);
        assert!(stream.lines.iter().all(|l| !l.backlog), "{mode}");
        assert_same_lines(&stream.lines_of_generation(1), &all[50..], mode);
        assert_eq!(stream.lines.first().map(|l| l.number), Some(51), "{mode}");
    }
}

/// Issue 28: a project directory that is a symlink (sessions kept on another disk) was
/// ignored in silence. Its transcripts are found and followed like any other's.
#[test]
fn a_symlinked_project_directory_is_followed() {
    for poll in [false, true] {
        let env = Env::new();
        let elsewhere = env.tmp.path().join("elsewhere/app-sessions");
        fs::create_dir_all(&elsewhere).expect("mkdir");
        let projects = env.config.join("projects");
        fs::create_dir_all(&projects).expect("mkdir");
        let link = projects.join(familiar_tail::discovery::dash_encode(Path::new(
            "/home/u/app",
        )));
        std::os::unix::fs::symlink(&elsewhere, &link).expect("symlink");
        let bytes = real(SLASH);
        let file = link.join(format!("{}.jsonl", session_of(&bytes)));
        fs::write(&file, &bytes).expect("write");
        let mut config = env.tailer_config(vec![Selector::All]);
        config.from_start = true;
        if poll {
            config.mode = poll_mode();
        }
        let handle = start(config);
        append(&file, &marker("linked"));
        let messages = until_marker(&handle, "linked");
        let stream = stream_of(&messages, &file);
        assert_same_lines(
            &stream.lines_of_generation(1),
            &lines_of(&bytes),
            &format!("through the symlink (poll {poll})"),
        );
        // A symlinked project made while running appears too.
        let later = env.tmp.path().join("elsewhere/lib-sessions");
        fs::create_dir_all(&later).expect("mkdir");
        let link = projects.join(familiar_tail::discovery::dash_encode(Path::new(
            "/home/u/lib",
        )));
        std::os::unix::fs::symlink(&later, &link).expect("symlink");
        let file = link.join("0b9e2f1c-5d3a-4c8e-9f21-7a6b5c4d3e2f.jsonl");
        append(&file, &bytes);
        append(&file, &marker("linked-later"));
        let messages = until_marker(&handle, "linked-later");
        let stream = stream_of(&messages, &file);
        assert_same_lines(
            &stream.lines_of_generation(1),
            &lines_of(&bytes),
            &format!("through a new symlink (poll {poll})"),
        );
    }
}
