//! The scenes the screenshot tests capture: each animation state, the approval wait, a party
//! of three sessions with a companion, a 1M-token session, and the rest after compaction.
//! Each opens the same way (a session starts, a quest is set), lets the entrance finish, then
//! cues its state and is captured a few frames into it.

use familiar_model::{Action, ActionKind, ErrorKind, Event, EventKind, Status};

use super::{Cue, STEP, Scene};
use crate::GameFeed;
use crate::clock::TimeOfDay;

/// Every scene, in the order the tests list them.
pub const NAMES: &[&str] = &[
    "enter",
    "idle",
    "reading",
    "writing",
    "bash",
    "thinking",
    "error",
    "success",
    "blocked",
    "asleep",
    "compaction",
    "approval",
    "party",
    "storm",
    "crowd5",
    "crowd10",
    "million",
    "after_compaction",
];

/// The frame a scene's state is cued at: the entrance (1 s) is over by then.
const CUE: u32 = 30;
/// Frames from the cue to the capture: the state shows, a few frames into its animation.
const SETTLE: u32 = 9;

/// One session of a scene.
struct Session {
    id: &'static str,
    line: u64,
    used: Option<u64>,
    limit: u64,
}

impl Session {
    fn new(id: &'static str, used: u64) -> Session {
        Session {
            id,
            line: 0,
            used: Some(used),
            limit: 200_000,
        }
    }

    fn event(&mut self, kind: EventKind, status: Status) -> Event {
        self.line += 1;
        let mut ev = Event::new(kind, self.line);
        ev.session = Some(self.id.to_string());
        ev.context_used = self.used;
        ev.context_limit = self.limit;
        ev.status = status;
        ev
    }

    fn working(&mut self, kind: EventKind, target: Option<&str>) -> GameFeed {
        let mut ev = self.event(kind, Status::Working);
        ev.target = target.map(str::to_string);
        GameFeed::Event(ev)
    }

    fn action(&self, kind: ActionKind, event: EventKind) -> GameFeed {
        GameFeed::Action(Action {
            kind,
            script: "scene".to_string(),
            session: Some(self.id.to_string()),
            agent: None,
            line: self.line,
            event,
        })
    }

    fn animate(&self, name: &str, event: EventKind) -> GameFeed {
        self.action(
            ActionKind::Animate {
                name: name.to_string(),
            },
            event,
        )
    }

    /// The session starts in a project on a branch, and the user sets a quest.
    fn opening(&mut self, project: &str, branch: &str, quest: &str) -> Vec<GameFeed> {
        let mut start = self.event(EventKind::SessionStart, Status::Working);
        start.cwd = Some(format!("/home/user/{project}"));
        start.git_branch = Some(branch.to_string());
        let prompt = self.working(EventKind::Prompt, None);
        vec![
            GameFeed::Event(start),
            prompt,
            self.action(
                ActionKind::Quest {
                    text: quest.to_string(),
                },
                EventKind::Prompt,
            ),
        ]
    }
}

fn build(name: &'static str, cues: Vec<Cue>, capture_frame: u32) -> Scene {
    // The user's profile, as the pipeline's Stage makes it: after each `xp` action, the
    // profile it gave (the window never counts XP itself).
    let mut profile = crate::progression::Profile::default();
    let cues = cues
        .into_iter()
        .map(|cue| Cue {
            frame: cue.frame,
            items: cue
                .items
                .into_iter()
                .flat_map(|item| {
                    let update = match &item {
                        GameFeed::Action(action) => {
                            crate::progression::earn(&mut profile, std::slice::from_ref(action)).0
                        }
                        _ => None,
                    };
                    std::iter::once(item).chain(update.map(GameFeed::Progress))
                })
                .collect(),
        })
        .collect();
    Scene {
        name,
        step: STEP,
        // Late afternoon: a time-of-day sky shows neither noon nor night.
        local_time: TimeOfDay {
            hour: 17,
            minute: 0,
        },
        seed: 14,
        cues,
        capture_frame,
    }
}

fn cue(frame: u32, items: Vec<GameFeed>) -> Cue {
    Cue { frame, items }
}

/// One session that starts, then shows `state` from frame [`CUE`].
fn single(name: &'static str, state: impl FnOnce(&mut Session) -> Vec<GameFeed>) -> Scene {
    let mut s = Session::new("scene-0001", 48_000);
    let open = s.opening("familiar", "main", "Make the flaky parser test pass");
    let items = state(&mut s);
    build(name, vec![cue(1, open), cue(CUE, items)], CUE + SETTLE)
}

/// A tool use the scripts animate, as `default.rhai` does.
fn tool(s: &mut Session, kind: EventKind, target: &str, anim: &str) -> Vec<GameFeed> {
    s.used = s.used.map(|u| u + 6_500);
    vec![
        s.working(kind, Some(target)),
        s.animate(anim, kind),
        s.action(ActionKind::Xp { amount: 10 }, kind),
    ]
}

/// A compaction from 152k to 18k used, and the rest it starts.
fn compaction(s: &mut Session) -> Vec<GameFeed> {
    let mut ev = s.event(EventKind::CompactBoundary, Status::Working);
    ev.context_used = None;
    ev.pre_tokens = Some(152_000);
    ev.post_tokens = Some(18_000);
    s.used = None;
    vec![
        GameFeed::Event(ev),
        s.action(ActionKind::Rest, EventKind::CompactBoundary),
    ]
}

/// The scene called `name` (one of [`NAMES`]).
pub fn scene(name: &str) -> Option<Scene> {
    let name: &'static str = NAMES.iter().find(|n| **n == name)?;
    Some(match name {
        "enter" => {
            let mut s = Session::new("scene-0001", 48_000);
            let open = s.opening("familiar", "main", "Make the flaky parser test pass");
            build(name, vec![cue(1, open)], 8)
        }
        "idle" => single(name, |s| vec![s.working(EventKind::Text, None)]),
        "reading" => single(name, |s| {
            tool(s, EventKind::Reading, "/src/familiar/src/parser.rs", "cast")
        }),
        "writing" => single(name, |s| {
            tool(
                s,
                EventKind::Writing,
                "/src/familiar/src/parser.rs",
                "write",
            )
        }),
        "bash" => single(name, |s| {
            tool(s, EventKind::Bash, "cargo test parser", "attack")
        }),
        "thinking" => single(name, |s| {
            let mut ev = s.event(EventKind::Thinking, Status::Working);
            ev.think = Some(2);
            vec![GameFeed::Event(ev), s.animate("think", EventKind::Thinking)]
        }),
        "error" => single(name, |s| {
            vec![
                s.working(EventKind::Error, Some("cargo test parser")),
                s.animate("hurt", EventKind::Error),
                s.action(
                    ActionKind::Say {
                        text: "Ouch, 2 tests failed.".to_string(),
                    },
                    EventKind::Error,
                ),
            ]
        }),
        "success" => single(name, |s| {
            let mut data = serde_json::Map::new();
            data.insert("passed".into(), serde_json::Value::from(42));
            vec![
                s.working(EventKind::Success, None),
                s.action(
                    ActionKind::Emit {
                        name: "tests_green".to_string(),
                        data,
                    },
                    EventKind::Success,
                ),
                s.animate("victory", EventKind::Success),
                s.action(ActionKind::Xp { amount: 60 }, EventKind::Success),
            ]
        }),
        "blocked" => single(name, |s| {
            vec![
                s.working(EventKind::Error, Some("rm -rf target")),
                s.animate("blocked", EventKind::Error),
            ]
        }),
        "asleep" => single(name, |s| {
            s.used = None;
            vec![GameFeed::Event(s.event(EventKind::Status, Status::Idle))]
        }),
        "compaction" => {
            let mut s = Session::new("scene-0001", 152_000);
            let open = s.opening("familiar", "main", "Tidy the parser");
            let rest = compaction(&mut s);
            build(name, vec![cue(1, open), cue(CUE, rest)], CUE + 20)
        }
        "after_compaction" => {
            // The rest (3 s) is over, the context is known again, the note still shows (5 s).
            let mut s = Session::new("scene-0001", 152_000);
            let open = s.opening("familiar", "main", "Tidy the parser");
            let rest = compaction(&mut s);
            s.used = Some(18_000);
            let known = vec![s.working(EventKind::Text, None)];
            build(
                name,
                vec![cue(1, open), cue(CUE, rest), cue(CUE + 64, known)],
                CUE + 80,
            )
        }
        "approval" => single(name, |s| {
            let mut ev = s.event(EventKind::Tool, Status::WaitingForApproval);
            ev.tool = Some("Bash".to_string());
            ev.target = Some("git push".to_string());
            vec![GameFeed::Event(ev)]
        }),
        "party" => {
            let mut a = Session::new("party-alpha", 40_000);
            let mut b = Session::new("party-beta", 120_000);
            let mut c = Session::new("party-gamma", 185_000);
            let mut open = a.opening("familiar", "main", "Make the flaky parser test pass");
            open.extend(b.opening("website", "feature/hud", "Add a dark theme"));
            open.extend(c.opening("infra", "fix/ci", "Why is CI red?"));
            let mut work = tool(&mut a, EventKind::Reading, "/src/parser.rs", "cast");
            work.push(b.action(
                ActionKind::CompanionSpawn {
                    id: "toolu_scene".to_string(),
                    kind: "Explore".to_string(),
                },
                EventKind::SubagentStart,
            ));
            work.push(b.animate("think", EventKind::SubagentStart));
            work.extend(tool(&mut c, EventKind::Bash, "cargo test", "attack"));
            build(name, vec![cue(1, open), cue(CUE, work)], CUE + 20)
        }
        // Three sessions, one of which fails twice at the API: its own rain cloud, the sky
        // clear over the others (issue 27).
        "storm" => {
            let mut a = Session::new("storm-alpha", 40_000);
            let mut b = Session::new("storm-beta", 90_000);
            let mut c = Session::new("storm-gamma", 150_000);
            let mut open = a.opening("familiar", "main", "Make the flaky parser test pass");
            open.extend(b.opening("website", "feature/hud", "Add a dark theme"));
            open.extend(c.opening("infra", "fix/ci", "Deploy the preview"));
            let mut work = tool(&mut a, EventKind::Reading, "/src/parser.rs", "cast");
            work.extend(tool(&mut b, EventKind::Writing, "/src/theme.css", "write"));
            for _ in 0..2 {
                let mut ev = c.event(EventKind::Error, Status::Working);
                ev.error = Some(ErrorKind::Api);
                ev.error_code = Some("overloaded".to_string());
                ev.message = Some("API overloaded (HTTP 529)".to_string());
                work.push(GameFeed::Event(ev));
            }
            work.push(c.animate("hurt", EventKind::Error));
            build(name, vec![cue(1, open), cue(CUE, work)], CUE + 20)
        }
        "crowd5" => crowd(name, 5),
        "crowd10" => crowd(name, 10),
        "million" => {
            let mut s = Session::new("scene-1m", 640_000);
            s.limit = 1_000_000;
            let mut open = s.opening("monorepo", "main", "Migrate every service to the new API");
            if let Some(GameFeed::Event(ev)) = open.first_mut() {
                ev.model = Some("claude-opus-4-1[1m]".to_string());
            }
            let work = tool(&mut s, EventKind::Reading, "/src/monorepo/services", "cast");
            build(name, vec![cue(1, open), cue(CUE, work)], CUE + SETTLE)
        }
        _ => return None,
    })
}

/// The sessions of a crowd: each its own project, branch, quest and work.
const CROWD: [(&str, &str, &str, &str, EventKind, &str, &str); 10] = [
    (
        "crowd-01",
        "familiar",
        "main",
        "Fix the flaky parser test",
        EventKind::Reading,
        "/src/parser.rs",
        "cast",
    ),
    (
        "crowd-02",
        "website",
        "feature/hud",
        "Add a dark theme",
        EventKind::Writing,
        "/src/theme.css",
        "write",
    ),
    (
        "crowd-03",
        "infra",
        "fix/ci",
        "Why is CI red?",
        EventKind::Bash,
        "cargo test --workspace",
        "attack",
    ),
    (
        "crowd-04",
        "api",
        "main",
        "Paginate the search endpoint",
        EventKind::Reading,
        "/src/search.rs",
        "cast",
    ),
    (
        "crowd-05",
        "docs",
        "guide",
        "Write the install guide",
        EventKind::Writing,
        "/docs/install.md",
        "write",
    ),
    (
        "crowd-06",
        "mobile",
        "release/2.1",
        "Bump the SDK",
        EventKind::Bash,
        "npm ci",
        "attack",
    ),
    (
        "crowd-07",
        "data",
        "etl",
        "Speed up the nightly load",
        EventKind::Reading,
        "/etl/load.py",
        "cast",
    ),
    (
        "crowd-08",
        "auth",
        "main",
        "Rotate the signing keys",
        EventKind::Bash,
        "make rotate",
        "attack",
    ),
    (
        "crowd-09",
        "billing",
        "fix/tax",
        "Round tax per line",
        EventKind::Writing,
        "/src/tax.rs",
        "write",
    ),
    (
        "crowd-10",
        "search",
        "main",
        "Index the new fields",
        EventKind::Reading,
        "/src/index.rs",
        "cast",
    ),
];

/// `count` sessions at once, each at its own work, one waiting for approval: what a window
/// with many sessions must still say without a click.
fn crowd(name: &'static str, count: usize) -> Scene {
    let mut open = Vec::new();
    let mut work = Vec::new();
    for (index, &(id, project, branch, quest, kind, target, anim)) in
        CROWD.iter().take(count).enumerate()
    {
        let mut s = Session::new(id, 20_000 + 18_000 * index as u64);
        open.extend(s.opening(project, branch, quest));
        if index == 2 {
            let mut ev = s.event(EventKind::Status, Status::WaitingForApproval);
            ev.previous_status = Some(Status::Working);
            work.push(GameFeed::Event(ev));
        } else {
            work.extend(tool(&mut s, kind, target, anim));
        }
    }
    build(name, vec![cue(1, open), cue(CUE, work)], CUE + 20)
}
