//! A dry run is the real run. For every real and project transcript, the scripts (the shipped
//! ones, and `probe.rhai`, which logs every event whole and sets timers) make the same actions
//! through each source of the pipeline:
//!
//! - the recorded source, as `familiar run`, `test` and `replay --headless` read a file;
//! - the live source, as `watch` follows a file: its lines handed over in random chunks, and
//!   with the real tailer following the file while it is appended in random byte chunks
//!   (inotify; chunks cut lines anywhere);
//! - a remote host's file (`watch --remote`): its lines through the feed's wire format and
//!   the link's cursor, the link cut at random batches and resumed where the cursor says.
//!
//! Both sides run the session model on the records' own time (`Clock::Recorded`), so its
//! timers and the scripts' fire at the same places however fast the file is read. Each
//! transcript is read where Claude Code would have written it: a session's file named after a
//! session id, a subagent's under its session's folder.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use familiar_config::{Config, Overrides, Settings};
use familiar_model::Action;
use familiar_pipeline::source::follow::pass_on;
use familiar_pipeline::source::live::Live;
use familiar_pipeline::source::recorded::Recorded;
use familiar_pipeline::source::{Clock, Pace, Source};
use familiar_pipeline::window::Front;
use familiar_pipeline::{Stage, StageOptions, settings};
use familiar_session::ModelConfig;
use familiar_tail::{Line, OpenReason, Selector, TailMessage, TailerConfig};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestRunner};

fn probe() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/probe.rhai")
}

fn pipeline_settings() -> Settings {
    Config::default().merge(&Overrides {
        scripts: vec![probe()],
        ..Overrides::default()
    })
}

/// The stage of every side: shipped scripts and the probe, actions collected, nothing done.
fn stage() -> Stage {
    let mut options = StageOptions::dry_run(false);
    options.collect = true;
    Stage::new(&pipeline_settings(), options).expect("the scripts load")
}

fn model() -> ModelConfig {
    settings::model_config(&pipeline_settings(), Default::default(), None)
}

/// Every transcript of the project's fixtures and the real ones (JSONL: what a tailer follows).
fn transcripts() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            // Hook inputs and status lines are not transcripts.
            if name == "hooks" || name == "statusline" {
                continue;
            }
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                found.push(path);
            }
        }
    }
    let mut found = familiar_testkit::real_fixtures();
    walk(
        &familiar_testkit::workspace_root().join("fixtures"),
        &mut found,
    );
    found.sort();
    found
}

/// What `familiar run` does with `path`.
fn recorded(path: &Path) -> Vec<Action> {
    let mut stage = stage();
    let source = Source::Recorded {
        transcript: Recorded::open(path).expect("the fixture opens"),
        pace: Pace::AsRead,
    };
    // A file of no records is an error once read; its actions (none) are still compared.
    let _ = source.run(model(), &mut stage, &Front::terminal());
    stage.take_collected()
}

/// The complete lines of `bytes` as the tailer numbers them (an unfinished last line is not
/// one yet).
fn lines(bytes: &[u8]) -> Vec<Line> {
    let mut lines: Vec<Line> = bytes
        .split(|&byte| byte == b'\n')
        .enumerate()
        .map(|(index, line)| Line {
            number: index as u64 + 1,
            bytes: line.strip_suffix(b"\r").unwrap_or(line).to_vec(),
        })
        .collect();
    // The piece after the last newline: empty, or a line still being written.
    lines.pop();
    lines
}

fn opened(path: &Path) -> TailMessage {
    TailMessage::Opened {
        path: Arc::from(path),
        info: familiar_tail::discovery::classify(path).expect("a transcript's path"),
        generation: 1,
        reason: OpenReason::Appeared,
        identity: (1, 1),
    }
}

/// What `watch` does with `path` when its lines come in chunks of `sizes` (cycled).
fn live_in_chunks(path: &Path, sizes: &[usize]) -> Vec<Action> {
    let bytes = std::fs::read(path).expect("the fixture reads");
    let mut live = Live::with_clock(model(), Clock::Recorded);
    let mut stage = stage();
    let shared: Arc<Path> = Arc::from(path);
    live.take(opened(path));
    let mut lines = lines(&bytes).into_iter().peekable();
    for &size in sizes.iter().cycle() {
        if lines.peek().is_none() {
            break;
        }
        live.take(TailMessage::Lines {
            path: shared.clone(),
            generation: 1,
            lines: lines.by_ref().take(size).collect(),
            backlog: false,
            resume: None,
        });
        let _ = pass_on(&mut live, &mut stage);
    }
    live.take(TailMessage::Removed {
        path: shared,
        generation: 1,
    });
    let _ = pass_on(&mut live, &mut stage);
    stage.finish();
    stage.take_collected()
}

/// What `watch --remote` does with `path` on another host: its lines come over the feed's
/// wire (serialized and read back) in chunks of `sizes`, some batches without a resume point
/// (a batch cut off in the middle of a read); before each batch whose index is in `cuts` the
/// link drops, that batch is lost, and the next connection resumes from the cursor's point,
/// sending again the lines after it.
fn over_cut_links(path: &Path, sizes: &[usize], cuts: &[usize]) -> Vec<Action> {
    use familiar_pipeline::source::remote::cursor::Cursor;
    use familiar_pipeline::source::remote::wire::{FeedLine, Received};
    use familiar_tail::ResumePoint;

    let all = lines(&std::fs::read(path).expect("the fixture reads"));
    let mut live = Live::with_clock(model(), Clock::Recorded);
    let mut stage = stage();
    let mut cursor = Cursor::default();
    let shared: Arc<Path> = Arc::from(path);
    let mut through = |message: TailMessage, cursor: &mut Cursor| {
        let text = serde_json::to_string(&FeedLine::tail(message)).expect("serializes");
        let line: FeedLine = serde_json::from_str(&text).expect("reads back");
        let Some(Received::Tail(message)) = line.received() else {
            panic!("not a tail message: {text}");
        };
        let mut passed = Vec::new();
        cursor.pass(message, &mut passed);
        for message in passed {
            live.take(message);
        }
        let _ = pass_on(&mut live, &mut stage);
    };
    let opened = |reason| match opened(path) {
        TailMessage::Opened {
            path,
            info,
            generation,
            identity,
            ..
        } => TailMessage::Opened {
            path,
            info,
            generation,
            reason,
            identity,
        },
        other => other,
    };
    cursor.connecting();
    through(opened(OpenReason::Existing), &mut cursor);
    through(TailMessage::CaughtUp, &mut cursor);
    let (mut next, mut batch) = (0, 0);
    for &size in sizes.iter().cycle() {
        if next >= all.len() {
            break;
        }
        if cuts.contains(&batch) {
            let request = cursor.request();
            let point = request
                .resume
                .as_ref()
                .and_then(|files| files.first())
                .map_or(1, |file| file.4);
            cursor.connecting();
            through(opened(OpenReason::Resumed), &mut cursor);
            through(TailMessage::CaughtUp, &mut cursor);
            next = (point - 1) as usize;
        }
        let end = (next + size).min(all.len());
        let lines = all[next..end].to_vec();
        let resume = (batch % 3 != 1).then(|| ResumePoint {
            offset: 0,
            line: end as u64 + 1,
        });
        through(
            TailMessage::Lines {
                path: shared.clone(),
                generation: 1,
                lines,
                backlog: false,
                resume,
            },
            &mut cursor,
        );
        next = end;
        batch += 1;
    }
    through(
        TailMessage::Removed {
            path: shared,
            generation: 1,
        },
        &mut cursor,
    );
    stage.finish();
    stage.take_collected()
}

#[test]
fn a_remote_file_over_links_cut_at_random_gives_the_actions_of_a_dry_run() {
    for original in transcripts() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = placed(&original, dir.path());
        let want = recorded(&path);
        let mut runner = TestRunner::new(RunnerConfig {
            cases: 3,
            failure_persistence: None,
            ..RunnerConfig::default()
        });
        let plan = (
            proptest::collection::vec(1usize..40, 1..8),
            proptest::collection::vec(0usize..60, 0..12),
        );
        let result = runner.run(&plan, |(sizes, cuts)| {
            let got = over_cut_links(&path, &sizes, &cuts);
            prop_assert!(got == want, "{}", first_difference(&got, &want));
            Ok(())
        });
        if let Err(err) = result {
            panic!("{}: {err}", original.display());
        }
    }
}

/// Side by side, the first action where `got` and `want` differ, for a readable failure.
fn first_difference(got: &[Action], want: &[Action]) -> String {
    let index = got
        .iter()
        .zip(want)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    let show = |actions: &[Action]| {
        actions
            .get(index)
            .map_or("(none)".to_owned(), |action| format!("{action:?}"))
    };
    format!(
        "{} actions against {}; #{index}:\n  live:     {}\n  recorded: {}",
        got.len(),
        want.len(),
        show(got),
        show(want)
    )
}

/// A copy of `path` in `dir`, placed as Claude Code would have written it: a session's file
/// named after a session id (a fixture's name is not one), a subagent's file kept under its
/// session's folder.
fn placed(path: &Path, dir: &Path) -> PathBuf {
    let fixtures = familiar_testkit::workspace_root().join("fixtures");
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    let copy = if name.starts_with("agent-") {
        dir.join(path.strip_prefix(&fixtures).unwrap_or(Path::new(name)))
    } else {
        dir.join("0b9e2f1c-5d3a-4c8e-9f21-7a6b5c4d3e2f.jsonl")
    };
    std::fs::create_dir_all(copy.parent().expect("a parent")).expect("dirs");
    std::fs::copy(path, &copy).expect("the copy");
    copy
}

#[test]
fn the_live_source_in_any_chunks_gives_the_actions_of_a_dry_run() {
    for original in transcripts() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = placed(&original, dir.path());
        let want = recorded(&path);
        let mut runner = TestRunner::new(RunnerConfig {
            cases: 4,
            failure_persistence: None,
            ..RunnerConfig::default()
        });
        let sizes = proptest::collection::vec(1usize..40, 1..8);
        let result = runner.run(&sizes, |sizes| {
            let got = live_in_chunks(&path, &sizes);
            prop_assert!(got == want, "{}", first_difference(&got, &want));
            Ok(())
        });
        if let Err(err) = result {
            panic!("{}: {err}", original.display());
        }
    }
}

/// A dry run of a transcript whose lines need the timers: the scripts see the quiet turn's
/// `waiting_for_input` and their own timer fires, at the records' times, not the reader's.
#[test]
fn a_dry_run_runs_the_timers_at_the_records_own_times() {
    let path = familiar_testkit::real_fixture("v2.1.39-spotter-compact-queue-progress.jsonl");
    let actions = recorded(&path);
    let says: Vec<&str> = actions
        .iter()
        .filter_map(|action| match &action.kind {
            familiar_model::ActionKind::Say { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        says.iter().any(|text| text.starts_with("timer nudge due ")),
        "no timer fired: {says:?}"
    );
    let statuses = actions
        .iter()
        .filter(|action| matches!(&action.kind, familiar_model::ActionKind::Log { text } if text.contains(r#""kind":"status""#)))
        .count();
    assert!(statuses > 0, "no status event reached the scripts");
}

/// `watch --headless` for real: the tailer follows the file while it is appended in random
/// byte chunks; then it is deleted, which ends the file as the end of input ends a dry run.
#[test]
fn the_real_tailer_following_appends_gives_the_actions_of_a_dry_run() {
    let mut runner = TestRunner::new(RunnerConfig {
        cases: 1,
        failure_persistence: None,
        ..RunnerConfig::default()
    });
    for original in transcripts() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = placed(&original, dir.path());
        let want = recorded(&path);
        let chunks = proptest::collection::vec(1usize..20_000, 1..64);
        let relative = path
            .strip_prefix(dir.path())
            .map(Path::to_path_buf)
            .expect("inside the temp dir");
        let result = runner.run(&chunks, |chunks| {
            let got = tailed(&path, &relative, &chunks);
            prop_assert!(got == want, "{}", first_difference(&got, &want));
            Ok(())
        });
        if let Err(err) = result {
            panic!("{}: {err}", original.display());
        }
    }
}

/// The tailer's messages for `path` copied to a fresh directory at `relative` (so its place
/// says what the original's says), appended in chunks of `chunks` bytes (cycled).
fn tailed(path: &Path, relative: &Path, chunks: &[usize]) -> Vec<Action> {
    let bytes = std::fs::read(path).expect("the fixture reads");
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("copy").join(relative);
    std::fs::create_dir_all(file.parent().expect("a parent")).expect("dirs");
    std::fs::File::create(&file).expect("the copy");
    let mut config = TailerConfig::new(
        dir.path().join("config"),
        vec![Selector::File(file.clone())],
    );
    config.from_start = true;
    let handle = familiar_tail::spawn(config).expect("the tailer starts");
    let mut live = Live::with_clock(model(), Clock::Recorded);
    let mut stage = stage();
    let writer = {
        let file = file.clone();
        let chunks = chunks.to_vec();
        std::thread::spawn(move || {
            let mut out = std::fs::OpenOptions::new()
                .append(true)
                .open(&file)
                .expect("the copy opens");
            let mut rest = &bytes[..];
            for &size in chunks.iter().cycle() {
                if rest.is_empty() {
                    break;
                }
                let (chunk, after) = rest.split_at(size.min(rest.len()));
                out.write_all(chunk).expect("appended");
                rest = after;
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let total = lines(&std::fs::read(path).expect("reads")).len() as u64;
    let mut read = 0u64;
    let mut removed = false;
    while !removed && Instant::now() < deadline {
        let Ok(message) = handle.receiver().recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        if let TailMessage::Lines { lines, .. } = &message {
            read += lines.len() as u64;
        }
        removed = matches!(message, TailMessage::Removed { .. });
        live.take(message);
        let _ = pass_on(&mut live, &mut stage);
        // Every complete line read: the file is deleted, its end for the model.
        if read == total && writer.is_finished() && file.exists() {
            std::fs::remove_file(&file).expect("the copy is removed");
        }
    }
    handle.stop();
    writer.join().expect("the writer ends");
    assert!(
        removed,
        "{}: the tailer read {read} of {total} lines",
        path.display()
    );
    stage.finish();
    stage.take_collected()
}

/// The dry run reads its input once, to its end, whatever is in it: a file of no records is an
/// error, after which nothing was done.
#[test]
fn a_file_of_no_records_is_not_a_transcript() {
    let mut stage = stage();
    let source = Source::Recorded {
        transcript: Recorded::reader(
            "garbage",
            std::io::Cursor::new(b"not json\nnor this\n".to_vec()),
        ),
        pace: Pace::AsRead,
    };
    let err = source
        .run(model(), &mut stage, &Front::terminal())
        .expect_err("not a transcript");
    assert_eq!(
        err.to_string(),
        "not a transcript: garbage: none of its 2 line(s) is a JSON record (JSONL, stream-json \
         or a JSON array expected)"
    );
    assert_eq!(stage.take_collected(), Vec::new());
}
