//! A scripted scene for looking at the game and measuring it, without the rest of Familiar:
//! a feeder thread plays a fixed loop of events and actions (reading, writing, bash, errors,
//! subagents, compaction, XP, the plan as the session model carries it, an approval wait,
//! "ultrathink" and "think hard" prompts, tool and API errors) into `run_game`.
//!
//! ```text
//! game-demo [--sessions N] [--rate ITEMS_PER_S] [--idle | --asleep] [--continuous]
//!           [--screenshot PATH [--frames N]] [--stats] [--window-memory PATH] [--xp N]
//!           [--steps N]
//! game-demo --scene NAME [--screenshot PATH]
//! ```
//! `--xp N` starts the user at N XP, with the unlocks of its level (to look at what is worn at
//! a level: 10 is Lv 2, 640 Lv 5, 7290 Lv 10, 68590 Lv 20), in a profile saved to a temporary
//! directory removed at the end.
//! `--steps N` plays the first N steps of the loop, then holds (to look at one moment: 1 is
//! the "ultrathink" prompt, 14 the approval wait, 17 the rain after an API error).
//! `--idle` sends the opening only, then nothing (for idle CPU); `--asleep` also says the agent
//! is idle with an unknown context (the familiar sleeps); `--stats` prints the time to
//! the first frame and frames per second to stderr every 5 s (used by `bench/game.sh`);
//! `--window-memory` opens the window at the size a `WindowMemory` JSON file says (to look at
//! other window sizes), and writes it back on exit.
//! `--scene` plays one of `familiar_game::scene::NAMES` instead of the loop, with a fixed clock,
//! and captures its frame (the screenshot tests, `tests/screens.rs`, run it so).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use familiar_game::progression::{Profile, ProgressUpdate, earn};
use familiar_game::{GameFeed, GameOptions, ScreenshotOptions, run_game};
use familiar_model::{
    Action, ActionKind, ErrorKind, Event, EventKind, PlanItem, PlanStatus, ReplayControl, Status,
};

struct Args {
    sessions: usize,
    rate: f64,
    idle: bool,
    asleep: bool,
    continuous: bool,
    screenshot: Option<PathBuf>,
    frames: u32,
    stats: bool,
    window_memory: Option<PathBuf>,
    xp: Option<i64>,
    scene: Option<String>,
    steps: Option<usize>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        sessions: 1,
        rate: 3.0,
        idle: false,
        asleep: false,
        continuous: false,
        screenshot: None,
        frames: 30,
        stats: false,
        window_memory: None,
        xp: None,
        scene: None,
        steps: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--sessions" => {
                a.sessions = value("--sessions")?
                    .parse()
                    .map_err(|e| format!("--sessions: {e}"))?
            }
            "--rate" => {
                a.rate = value("--rate")?
                    .parse()
                    .map_err(|e| format!("--rate: {e}"))?
            }
            "--frames" => {
                a.frames = value("--frames")?
                    .parse()
                    .map_err(|e| format!("--frames: {e}"))?
            }
            "--xp" => a.xp = Some(value("--xp")?.parse().map_err(|e| format!("--xp: {e}"))?),
            "--scene" => a.scene = Some(value("--scene")?),
            "--screenshot" => a.screenshot = Some(PathBuf::from(value("--screenshot")?)),
            "--steps" => {
                a.steps = Some(
                    value("--steps")?
                        .parse()
                        .map_err(|e| format!("--steps: {e}"))?,
                )
            }
            "--idle" => a.idle = true,
            "--asleep" => a.asleep = true,
            "--continuous" => a.continuous = true,
            "--stats" => a.stats = true,
            "--window-memory" => a.window_memory = Some(PathBuf::from(value("--window-memory")?)),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

/// Session state the demo evolves: context grows, compaction resets it.
struct Session {
    id: String,
    used: u64,
    line: u64,
}

impl Session {
    fn event(&mut self, kind: EventKind, status: Status) -> Event {
        self.line += 1;
        let mut ev = Event::new(kind, self.line);
        ev.session = Some(self.id.clone());
        ev.context_used = Some(self.used);
        ev.context_limit = 200_000;
        ev.status = status;
        ev
    }

    fn action(&self, kind: ActionKind, event: EventKind, agent: Option<&str>) -> GameFeed {
        GameFeed::Action(Action {
            kind,
            script: "demo".to_string(),
            session: Some(self.id.clone()),
            agent: agent.map(str::to_string),
            line: self.line,
            event,
        })
    }
}

/// The demo's plan, as a `TodoWrite` call's `thinking` event carries it from the session
/// model: the first `done` items completed, the next in progress.
fn plan_event(s: &mut Session, done: usize) -> GameFeed {
    const ITEMS: [&str; 4] = [
        "Reproduce the flaky parser test",
        "Fix the tokenizer's lookahead",
        "Run the whole test suite",
        "Tidy the parser module",
    ];
    let mut ev = s.event(EventKind::Thinking, Status::Working);
    ev.tool = Some("TodoWrite".to_string());
    ev.model = Some("claude-opus-4-5".to_string());
    ev.plan = Some(
        ITEMS
            .iter()
            .enumerate()
            .map(|(i, text)| PlanItem {
                text: text.to_string(),
                status: match i.cmp(&done) {
                    std::cmp::Ordering::Less => PlanStatus::Completed,
                    std::cmp::Ordering::Equal => PlanStatus::InProgress,
                    std::cmp::Ordering::Greater => PlanStatus::Pending,
                },
                active_form: None,
            })
            .collect(),
    );
    GameFeed::Event(ev)
}

fn animate(name: &str) -> ActionKind {
    ActionKind::Animate {
        name: name.to_string(),
    }
}

/// One step of the loop for a session: the items to send.
fn step(s: &mut Session, n: usize) -> Vec<GameFeed> {
    let mut out = Vec::new();
    let tool = |s: &mut Session, kind: EventKind, target: &str, anim: &str| {
        s.used = (s.used + 6_500).min(199_000);
        let mut ev = s.event(kind, Status::Working);
        ev.target = Some(target.to_string());
        ev.model = Some("claude-opus-4-5".to_string());
        vec![
            GameFeed::Event(ev),
            s.action(animate(anim), kind, None),
            s.action(ActionKind::Xp { amount: 10 }, kind, None),
        ]
    };
    // A prompt that asks for thinking (`think`: 2 think hard, 3 ultrathink), and the thinking
    // event after it, which carries the turn's intensity as the session model does.
    let prompt = |s: &mut Session, text: &str, quest: &str, think: u8| {
        let mut ev = s.event(EventKind::Prompt, Status::Working);
        ev.text = Some(text.to_string());
        ev.think = Some(think);
        let mut thinking = s.event(EventKind::Thinking, Status::Working);
        thinking.think = Some(think);
        vec![
            GameFeed::Event(ev),
            s.action(
                ActionKind::Quest {
                    text: quest.to_string(),
                },
                EventKind::Prompt,
                None,
            ),
            GameFeed::Event(thinking),
            s.action(animate("think"), EventKind::Thinking, None),
        ]
    };
    let error = |s: &mut Session, kind: ErrorKind, anim: &str| {
        let mut ev = s.event(EventKind::Error, Status::Working);
        ev.error = Some(kind);
        vec![
            GameFeed::Event(ev),
            s.action(animate(anim), EventKind::Error, None),
        ]
    };
    match n % 20 {
        0 => {
            out.extend(prompt(
                s,
                "ultrathink: make the flaky test pass and tidy the parser",
                // Accents, CJK and an emoji: the pixel font and its fallback.
                "Corrige le test «café» — 修正テスト 🚀",
                3,
            ));
            out.push(plan_event(s, 0));
        }
        1 => out.extend(tool(s, EventKind::Reading, "/repo/tests/parser.rs", "cast")),
        2 => out.extend(tool(s, EventKind::Reading, "/repo/src/parser.rs", "cast")),
        3 => out.extend(tool(s, EventKind::Bash, "cargo test parser", "attack")),
        4 => {
            let mut hurt = error(s, ErrorKind::Tool, "hurt");
            if let Some(GameFeed::Event(ev)) = hurt.first_mut() {
                ev.tool = Some("Bash".to_string());
                ev.text = Some("2 tests failed: parser::lookahead, parser::eof".to_string());
            }
            out.extend(hurt);
            out.push(s.action(
                ActionKind::Say {
                    text: "Ouch, 2 tests failed.".to_string(),
                },
                EventKind::Error,
                None,
            ));
        }
        5 => {
            out.push(s.action(
                ActionKind::CompanionSpawn {
                    id: "toolu_demo".to_string(),
                    kind: "Explore".to_string(),
                },
                EventKind::SubagentStart,
                None,
            ));
            out.push(s.action(animate("think"), EventKind::SubagentStart, None));
        }
        6 | 7 => {
            // The subagent's own event: its companion's context (its mana bar).
            let mut ev = s.event(EventKind::Reading, Status::Working);
            ev.agent = Some("agent-demo".to_string());
            ev.context_used = Some(if n % 20 == 6 { 60_000 } else { 130_000 });
            ev.target = Some("/repo/src/lexer.rs".to_string());
            out.push(GameFeed::Event(ev));
            out.push(s.action(animate("cast"), EventKind::Reading, Some("agent-demo")));
        }
        8 => out.push(s.action(
            ActionKind::CompanionLeave {
                id: "toolu_demo".to_string(),
            },
            EventKind::SubagentEnd,
            None,
        )),
        9 => {
            out.push(plan_event(s, 1));
            out.extend(tool(s, EventKind::Writing, "/repo/src/parser.rs", "write"));
        }
        10 => {
            out.push(plan_event(s, 2));
            out.extend(tool(s, EventKind::Bash, "cargo test", "attack"));
        }
        11 => {
            let mut data = serde_json::Map::new();
            data.insert("passed".into(), serde_json::Value::from(42));
            out.push(s.action(
                ActionKind::Emit {
                    name: "tests_green".to_string(),
                    data,
                },
                EventKind::Success,
                None,
            ));
            out.push(plan_event(s, 3));
            out.push(s.action(animate("victory"), EventKind::Success, None));
            out.push(s.action(ActionKind::Xp { amount: 60 }, EventKind::Success, None));
        }
        12 => {
            let mut ev = s.event(EventKind::Tool, Status::WaitingForApproval);
            ev.target = Some("git push".to_string());
            out.push(GameFeed::Event(ev));
        }
        // Still waiting for approval: nothing comes, the familiar keeps asking.
        13 => {}
        14 => {
            let mut blocked = error(s, ErrorKind::Rejected, "blocked");
            if let Some(GameFeed::Event(ev)) = blocked.first_mut() {
                ev.tool = Some("Bash".to_string());
                ev.target = Some("git push".to_string());
            }
            out.extend(blocked);
        }
        15 => {
            if s.used > 120_000 {
                let pre = s.used;
                s.used = 18_000;
                let mut ev = s.event(EventKind::CompactBoundary, Status::Working);
                ev.context_used = None;
                ev.pre_tokens = Some(pre);
                ev.post_tokens = Some(s.used);
                out.push(GameFeed::Event(ev));
                out.push(s.action(ActionKind::Rest, EventKind::CompactBoundary, None));
            } else {
                out.extend(tool(s, EventKind::Writing, "/repo/README.md", "write"));
            }
        }
        16 => out.extend(error(s, ErrorKind::Api, "hurt")),
        17 => out.extend(prompt(
            s,
            "think hard about why the parser test is flaky",
            "think hard about why the parser test is flaky",
            2,
        )),
        18 => out.extend(tool(s, EventKind::Reading, "/repo/src/lexer.rs", "cast")),
        _ => {
            out.push(plan_event(s, 4));
            let ev = s.event(EventKind::Success, Status::WaitingForInput);
            out.push(GameFeed::Event(ev));
            out.push(s.action(
                ActionKind::Log {
                    text: "turn done".to_string(),
                },
                EventKind::Success,
                None,
            ));
        }
    }
    out
}

fn feeder(tx: Sender<GameFeed>, args: &Args, control: ReplayControl, mut profile: Profile) {
    // The user's profile, as the pipeline's Stage keeps it: the window shows it from the
    // start, and after each `xp` action the profile it gave.
    let start = ProgressUpdate {
        profile: profile.clone(),
        ..ProgressUpdate::default()
    };
    if tx.send(GameFeed::Progress(start)).is_err() {
        return;
    }
    let names = ["alpha", "café-crème", "テスト", "delta", "epsilon", "zeta"];
    let mut sessions: Vec<Session> = (0..args.sessions.max(1))
        .map(|i| Session {
            id: format!("{}-{i}", names[i % names.len()]),
            used: 40_000 + 30_000 * i as u64,
            line: 0,
        })
        .collect();
    let branches = ["main", "fix/flaky-parser", "feature/hud"];
    for (i, s) in sessions.iter_mut().enumerate() {
        let mut ev = s.event(EventKind::SessionStart, Status::Working);
        ev.cwd = Some(format!("/home/demo/{}", s.id));
        ev.git_branch = Some(branches[i % branches.len()].to_string());
        if tx.send(GameFeed::Event(ev)).is_err() {
            return;
        }
    }
    if args.asleep {
        for s in &mut sessions {
            let mut ev = s.event(EventKind::Status, Status::Idle);
            ev.context_used = None;
            if tx.send(GameFeed::Event(ev)).is_err() {
                return;
            }
        }
    }
    if args.idle || args.asleep {
        return;
    }
    let mut n = 0usize;
    loop {
        if args.steps.is_some_and(|steps| n >= steps * sessions.len()) {
            return;
        }
        if control.paused() {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        let i = n % sessions.len();
        let k = n / sessions.len();
        for item in step(&mut sessions[i], k) {
            let update = match &item {
                GameFeed::Action(action) => earn(&mut profile, std::slice::from_ref(action)).0,
                _ => None,
            };
            if tx.send(item).is_err() {
                return;
            }
            if let Some(update) = update
                && tx.send(GameFeed::Progress(update)).is_err()
            {
                return;
            }
        }
        n += 1;
        let wait = 1.0 / (args.rate.max(0.01) * control.speed());
        std::thread::sleep(Duration::from_secs_f64(wait));
    }
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("game-demo: {e}");
            return ExitCode::FAILURE;
        }
    };
    // A profile at the XP asked for.
    let mut profile = Profile::default();
    profile.add(args.xp.unwrap_or(0));
    let scene = match args
        .scene
        .as_deref()
        .map(|n| (n, familiar_game::scene::scene(n)))
    {
        None => None,
        Some((_, Some(scene))) => Some(scene),
        Some((name, None)) => {
            let names = familiar_game::scene::NAMES.join(", ");
            eprintln!("game-demo: no scene {name:?} (scenes: {names})");
            return ExitCode::FAILURE;
        }
    };
    let started = Instant::now();
    let (tx, rx) = crossbeam_channel::unbounded();
    let control = ReplayControl::new(1.0);
    let frames = Arc::new(AtomicU64::new(0));
    let options = GameOptions {
        replay: Some(control.clone()),
        continuous: args.continuous,
        window_memory: args.window_memory.clone(),
        title: "Familiar demo".to_string(),
        screenshot: args.screenshot.clone().map(|path| ScreenshotOptions {
            path,
            after_frames: scene.as_ref().map_or(args.frames, |s| s.capture_frame),
        }),
        scene: scene.clone(),
        frame_counter: Some(frames.clone()),
        ..GameOptions::default()
    };
    if args.stats {
        let frames = frames.clone();
        std::thread::spawn(move || {
            while frames.load(Ordering::Relaxed) == 0 {
                std::thread::sleep(Duration::from_millis(2));
            }
            eprintln!("first frame after {} ms", started.elapsed().as_millis());
            let mut last = (Instant::now(), frames.load(Ordering::Relaxed));
            loop {
                std::thread::sleep(Duration::from_secs(5));
                let now = (Instant::now(), frames.load(Ordering::Relaxed));
                let fps = (now.1 - last.1) as f64 / (now.0 - last.0).as_secs_f64();
                eprintln!("fps {fps:.1}");
                last = now;
            }
        });
    }
    if scene.is_none() {
        std::thread::spawn(move || feeder(tx, &args, control, profile));
    }
    match run_game(rx, options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("game-demo: {e}");
            ExitCode::FAILURE
        }
    }
}
