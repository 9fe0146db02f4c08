//! A tick that looks only at the due files (`table`) says and does exactly what a tick that
//! looks at every file says and does: both models take the same random mix of live and
//! backlog lines of three files (a session, its subagent, a file whose place says nothing),
//! ticks minutes or milliseconds apart, hook signals, and files replaced, and must give the
//! same outputs after every input.

use std::path::Path;
use std::time::{Duration, SystemTime};

use familiar_model::{Event, EventKind, Status};
use familiar_testkit::real_fixture;
use proptest::prelude::*;

use super::{ModelConfig, SessionModel};
use crate::input::{FileInfo, FileKind, Input, Output};

const FILES: [(&str, &str); 3] = [
    (
        "/p/s.jsonl",
        "v2.1.39-spotter-subagent-agent-acompact-fffbd0.jsonl",
    ),
    (
        "/p/s/subagents/agent-a1.jsonl",
        "v2.1.39-spotter-subagent-agent-a881341.jsonl",
    ),
    (
        "/elsewhere/x.jsonl",
        "v2.1.38-spotter-slash-command-queue.jsonl",
    ),
];

fn info(index: usize) -> FileInfo {
    match index {
        0 => FileInfo {
            kind: FileKind::Session,
            session_id: Some("s".into()),
            agent_id: None,
            agent_type: None,
            cwd: None,
        },
        1 => FileInfo {
            kind: FileKind::Subagent,
            session_id: Some("s".into()),
            agent_id: Some("a1".into()),
            agent_type: None,
            cwd: None,
        },
        _ => FileInfo::unknown(),
    }
}

#[derive(Debug, Clone)]
enum Op {
    Lines { file: usize, count: usize },
    Tick { millis: u64 },
    Hook { file: usize, waiting: bool },
    Replace { file: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3usize, 1..6usize).prop_map(|(file, count)| Op::Lines { file, count }),
        3 => prop_oneof![0..20u64, 1_000..8_000u64, 60_000..400_000u64]
            .prop_map(|millis| Op::Tick { millis }),
        1 => (0..3usize, any::<bool>()).prop_map(|(file, waiting)| Op::Hook { file, waiting }),
        1 => (0..3usize).prop_map(|file| Op::Replace { file }),
    ]
}

struct Pair {
    due: SessionModel,
    all: SessionModel,
}

impl Pair {
    fn apply(&mut self, input: Input<'_>) -> Result<(), TestCaseError> {
        let (mut a, mut b) = (Vec::<Output>::new(), Vec::<Output>::new());
        self.due.apply(input, &mut a);
        self.all.apply(input, &mut b);
        prop_assert_eq!(a, b, "after {:?}", input);
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_tick_at_the_due_files_does_what_a_tick_at_every_file_does(
        backlog in prop::collection::vec(0..40usize, 3),
        ops in prop::collection::vec(op(), 1..120),
    ) {
        let lines: Vec<Vec<Vec<u8>>> = FILES
            .iter()
            .map(|(_, fixture)| {
                let bytes = std::fs::read(real_fixture(fixture)).expect("fixture");
                bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(<[u8]>::to_vec).collect()
            })
            .collect();
        let mut all = SessionModel::new(ModelConfig::default());
        all.files.scan_all = true;
        let mut pair = Pair { due: SessionModel::new(ModelConfig::default()), all };
        let mut now = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000_000);
        let mut next = [0usize; 3];
        pair.apply(Input::Tick(now))?;
        for (index, (path, _)) in FILES.iter().enumerate() {
            pair.apply(Input::Opened { path: Path::new(path), info: &info(index) })?;
            for _ in 0..backlog[index].min(lines[index].len()) {
                next[index] += 1;
                let bytes = &lines[index][next[index] - 1];
                pair.apply(Input::Line { path: Path::new(path), number: next[index] as u64, bytes, backlog: true })?;
            }
        }
        pair.apply(Input::CaughtUp)?;
        for op in ops {
            match op {
                Op::Lines { file, count } => {
                    for _ in 0..count {
                        let Some(bytes) = lines[file].get(next[file]) else { break };
                        next[file] += 1;
                        pair.apply(Input::Line { path: Path::new(FILES[file].0), number: next[file] as u64, bytes, backlog: false })?;
                    }
                }
                Op::Tick { millis } => {
                    now += Duration::from_millis(millis);
                    pair.apply(Input::Tick(now))?;
                }
                Op::Hook { file, waiting } => {
                    let mut signal = Event::new(EventKind::Status, 0);
                    signal.session = Some(if file == 2 { "none".into() } else { "s".into() });
                    signal.status = if waiting { Status::WaitingForInput } else { Status::WaitingForApproval };
                    pair.apply(Input::Hook(&signal))?;
                }
                Op::Replace { file } => {
                    let path = Path::new(FILES[file].0);
                    pair.apply(Input::Removed { path })?;
                    pair.apply(Input::Opened { path, info: &info(file) })?;
                    next[file] = 0;
                }
            }
        }
        prop_assert_eq!(pair.due.snapshot(), pair.all.snapshot());
    }
}
