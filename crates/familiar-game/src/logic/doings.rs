//! What a familiar's agent is doing, for the panel and the focus card: its plan (the session
//! model's `plan`, never rebuilt here), its quest (the last prompt), its model and a short log
//! of its last actions; with the pure text of the panel, the card and the bars' tooltips. The
//! feed (`feed`) calls [`observe`] for each main-agent event; `view::panel` draws the text.

use std::collections::VecDeque;

use bevy::prelude::*;
use familiar_model::{Event, EventKind, PlanItem, PlanStatus, Status};

use super::text::trimmed;
use super::{Mana, Progress};

/// Actions kept per familiar (the panel shows the newest that fit).
pub const DEEDS_KEPT: usize = 6;

/// One action of the log: `read lib.rs`, `$ cargo test`, `error: ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deed {
    pub verb: &'static str,
    /// Flattened whitespace, not yet cut to a width.
    pub what: String,
    pub error: bool,
}

impl Deed {
    /// The action in `chars` characters at most: a path keeps its file name, a command is
    /// cut in the middle, an error message (read from its start) at its end.
    pub fn line(&self, chars: usize) -> String {
        let room = chars.saturating_sub(self.verb.chars().count() + 1);
        let what = if self.error {
            shorten_end(&self.what, room)
        } else {
            shorten_middle(&self.what, room)
        };
        format!("{} {what}", self.verb)
    }
}

/// The panel's state of one familiar.
#[derive(Component, Debug, Clone, Default, PartialEq)]
pub struct Doings {
    /// The session's plan, as the latest event carrying one said.
    pub plan: Vec<PlanItem>,
    /// The latest prompt (slash commands left out), flattened.
    pub prompt: Option<String>,
    /// Model of the latest assistant message.
    pub model: Option<String>,
    /// Newest last.
    pub deeds: VecDeque<Deed>,
}

impl Doings {
    fn push(&mut self, verb: &'static str, what: &str, error: bool) {
        let what = trimmed(what, 400);
        if what.is_empty() {
            return;
        }
        if self.deeds.len() == DEEDS_KEPT {
            self.deeds.pop_front();
        }
        self.deeds.push_back(Deed { verb, what, error });
    }

    /// What the agent is doing now, in `chars` characters at most, for the line under its
    /// plate: the step of its plan in progress, else its latest action, else its quest.
    pub fn now_line(&self, chars: usize) -> Option<String> {
        let step = self
            .plan
            .iter()
            .find(|item| item.status == PlanStatus::InProgress)
            .map(|item| item.active_form.as_deref().unwrap_or(&item.text));
        if let Some(step) = step {
            return Some(shorten_end(&trimmed(step, 400), chars));
        }
        if let Some(deed) = self.deeds.back() {
            return Some(deed.line(chars));
        }
        self.prompt
            .as_deref()
            .map(|prompt| shorten_end(prompt, chars))
    }

    /// Takes what a main-agent event says.
    pub fn observe(&mut self, ev: &Event) {
        if let Some(plan) = &ev.plan {
            self.plan.clone_from(plan);
        }
        if let Some(model) = ev.model.as_deref().filter(|m| !m.starts_with('<'))
            && self.model.as_deref() != Some(model)
        {
            self.model = Some(model.to_owned());
        }
        let target = ev.target.as_deref().unwrap_or("");
        match ev.kind {
            EventKind::Prompt if ev.command.is_none() => {
                let text = trimmed(ev.text.as_deref().unwrap_or(""), 400);
                if !text.is_empty() {
                    self.prompt = Some(text);
                }
            }
            EventKind::Reading => self.push("read", target, false),
            EventKind::Writing => self.push("edit", target, false),
            EventKind::Bash => self.push("$", target, false),
            EventKind::Tool => {
                let tool = ev.tool.as_deref().unwrap_or("");
                self.push("use", format!("{tool} {target}").trim(), false)
            }
            EventKind::SubagentStart => {
                self.push("agent", ev.description.as_deref().unwrap_or(target), false)
            }
            EventKind::Error => {
                let what = ev
                    .message
                    .as_deref()
                    .or(ev.text.as_deref())
                    .or(ev.error_code.as_deref())
                    .unwrap_or("failed");
                let what = match ev.tool.as_deref() {
                    Some(tool) => format!("{tool}: {what}"),
                    None => what.to_owned(),
                };
                self.push("error", &what, true)
            }
            _ => {}
        }
    }
}

/// What a cut leaves in place of the text it takes out (one character, drawn by the pixel font).
const DOTS: &str = "…";

/// `text` in `max` characters at most, cut in the middle (`cargo te…parser`); a path
/// (no spaces, a `/`) keeps its file name whole when it can (`…/src/lib.rs`). Cuts fall
/// between characters, never inside one.
pub fn shorten_middle(text: &str, max: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= max {
        return text.to_owned();
    }
    if max <= 1 {
        return chars[chars.len() - max..].iter().collect();
    }
    let is_path = !text.contains(' ') && text.contains('/');
    if is_path {
        // The longest tail of whole components that fits after `…`.
        let mut tail = 0;
        for (i, c) in chars.iter().enumerate().rev() {
            if *c == '/' && chars.len() - i < max {
                tail = chars.len() - i;
            }
        }
        if tail > 0 {
            let mut out = String::from(DOTS);
            out.extend(&chars[chars.len() - tail..]);
            return out;
        }
        // Even the file name alone is too long: fall through, cut in its middle.
        let name_start = chars.iter().rposition(|c| *c == '/').map_or(0, |i| i + 1);
        return shorten_middle(&chars[name_start..].iter().collect::<String>(), max);
    }
    let keep = max - 1;
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let mut out: String = chars[..head].iter().collect();
    out.push_str(DOTS);
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// `text` in `max` characters at most, cut at the end with `…`.
pub fn shorten_end(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push_str(DOTS);
    out
}

/// An item's mark: done, in progress, pending (the pixel font draws all three).
pub fn plan_mark(status: PlanStatus) -> &'static str {
    match status {
        PlanStatus::Completed => "✓",
        PlanStatus::InProgress => "▶",
        PlanStatus::Pending => "□",
    }
}

/// The plan's lines in `budget` lines of `chars` characters: a heading with the count done,
/// then the items around the first one not done (the done ones before it scroll away first).
fn plan_lines(plan: &[PlanItem], chars: usize, budget: usize) -> Vec<String> {
    if plan.is_empty() || budget < 2 {
        return Vec::new();
    }
    let done = plan
        .iter()
        .filter(|i| i.status == PlanStatus::Completed)
        .count();
    let mut out = vec![format!("Plan {done}/{}", plan.len())];
    let rows = budget - 1;
    let current = plan
        .iter()
        .position(|i| i.status != PlanStatus::Completed)
        .unwrap_or(plan.len().saturating_sub(1));
    // One done item above the current one, when there is room for both and the next.
    let above = usize::from(rows >= 3);
    let start = current
        .saturating_sub(above)
        .min(plan.len().saturating_sub(rows));
    for item in plan.iter().skip(start).take(rows) {
        let mark = plan_mark(item.status);
        let room = chars.saturating_sub(mark.len() + 1);
        out.push(format!(
            "{mark} {}",
            shorten_end(&trimmed(&item.text, 400), room)
        ));
    }
    out
}

/// The panel's text, `max_lines` lines of `chars` characters at most: the quest (unless the
/// banner shows the same words), the plan, the last actions (newest last).
pub fn panel_lines(
    doings: &Doings,
    banner: Option<&str>,
    chars: usize,
    max_lines: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(prompt) = &doings.prompt
        && banner != Some(prompt.as_str())
        && max_lines > 0
    {
        out.push(shorten_end(&format!("Quest: {prompt}"), chars));
    }
    let left = max_lines.saturating_sub(out.len());
    // The actions keep up to three lines (more without a plan); the plan has the rest.
    let deed_rows = doings.deeds.len().min(if doings.plan.is_empty() {
        left
    } else {
        3.min(left.saturating_sub(2))
    });
    out.extend(plan_lines(&doings.plan, chars, left - deed_rows));
    let skip = doings.deeds.len() - deed_rows;
    out.extend(doings.deeds.iter().skip(skip).map(|d| d.line(chars)));
    out
}

/// `148213` → `148,213`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The mana bar's exact figures, in tokens left like the bar and its label:
/// `51,787 of 200,000 tokens left (26 %)`.
pub fn mana_figures(mana: &Mana) -> String {
    match mana.remaining() {
        Some(left) => {
            let percent = if mana.limit == 0 {
                0
            } else {
                (left as f64 * 100.0 / mana.limit as f64).round() as u64
            };
            format!(
                "{} of {} tokens left ({percent} %)",
                grouped(left),
                grouped(mana.limit)
            )
        }
        None => format!("? of {} tokens left (not known yet)", grouped(mana.limit)),
    }
}

/// The plate's first line whole: `familiar (fix/flaky-parser) · session 258c7280-ae70-…`
/// (the id in full: `watch --session` takes any unique start of it).
pub fn name_figures(project: Option<&str>, branch: Option<&str>, session: &str) -> String {
    let place = match (project, branch) {
        (Some(project), Some(branch)) => format!("{project} ({branch})"),
        (Some(project), None) => project.to_owned(),
        _ => String::new(),
    };
    match (place.is_empty(), session.is_empty()) {
        (false, false) => format!("{place} · session {session}"),
        (false, true) => place,
        (true, _) => format!("session {session}"),
    }
}

/// The XP bar's exact figures: `XP 123: level 5, 147 to level 6`.
pub fn xp_figures(progress: &Progress) -> String {
    let level = progress.level.max(1);
    let next = Progress::xp_for_level(level + 1);
    format!(
        "XP {}: level {level}, {} to level {}",
        grouped(progress.xp.max(0) as u64),
        grouped((next - progress.xp).max(0) as u64),
        level + 1
    )
}

/// `working for 12s`, `waiting for approval for 2m`.
pub fn status_figures(status: Status, secs: f32) -> String {
    let s = secs.max(0.0) as u64;
    let how_long = if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{}h {:02}m", s / 3600, (s % 3600) / 60)
    };
    let what = match status {
        Status::Working => "working",
        Status::WaitingForApproval => "waiting for approval",
        Status::WaitingForInput => "waiting for input",
        Status::Idle => "idle",
        Status::Unknown => return "status unknown".to_owned(),
    };
    format!("{what} for {how_long}")
}

/// The card's figures, one per line, each cut to `chars`.
pub fn card_figures(
    title: &str,
    doings: &Doings,
    mana: &Mana,
    status: (Status, f32),
    progress: &Progress,
    chars: usize,
) -> Vec<String> {
    [
        title.to_owned(),
        format!("model: {}", doings.model.as_deref().unwrap_or("?")),
        format!(
            "context: {}",
            mana_figures(mana).replace(" tokens left", " left")
        ),
        status_figures(status.0, status.1),
        format!(
            "Lv {}  XP {} / {}",
            progress.level.max(1),
            grouped(progress.xp.max(0) as u64),
            grouped(Progress::xp_for_level(progress.level.max(1) + 1) as u64)
        ),
    ]
    .into_iter()
    .map(|line| shorten_end(&line, chars))
    .collect()
}

/// Feeds a main-agent event to the familiar's [`Doings`] (added on first use).
pub(crate) fn observe(world: &mut World, e: Entity, ev: &Event) {
    if let Some(mut doings) = world.get_mut::<Doings>(e) {
        doings.observe(ev);
        return;
    }
    let mut doings = Doings::default();
    doings.observe(ev);
    if let Ok(mut entity) = world.get_entity_mut(e) {
        entity.insert(doings);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_keeps_its_file_name_and_text_is_cut_in_the_middle() {
        assert_eq!(
            shorten_middle("/home/u/project/crates/game/src/view/layout.rs", 24),
            "…/src/view/layout.rs"
        );
        assert_eq!(
            shorten_middle("/a/very-long-file-name-here.rs", 12),
            "very-l…re.rs"
        );
        assert_eq!(
            shorten_middle("cargo test --workspace -q", 15),
            "cargo t…pace -q"
        );
        assert_eq!(shorten_middle("short", 15), "short");
        // Never inside a character.
        let cut = shorten_middle("日本語のファイル名がとても長い", 9);
        assert_eq!(cut.chars().count(), 9);
        assert_eq!(cut, "日本語の…ても長い");
    }

    #[test]
    fn figures_are_exact() {
        let mana = Mana {
            used: Some(148_213),
            ..Mana::default()
        };
        assert_eq!(mana_figures(&mana), "51,787 of 200,000 tokens left (26 %)");
        assert_eq!(grouped(1_000_000), "1,000,000");
        assert_eq!(grouped(999), "999");
        let progress = Progress {
            xp: 123,
            level: 4,
            level_up_age: None,
        };
        assert_eq!(xp_figures(&progress), "XP 123: level 4, 517 to level 5");
        assert_eq!(
            status_figures(Status::WaitingForApproval, 130.0),
            "waiting for approval for 2m 10s"
        );
    }

    fn item(text: &str, status: PlanStatus) -> PlanItem {
        PlanItem {
            text: text.to_owned(),
            status,
            active_form: None,
        }
    }

    #[test]
    fn the_panel_shows_the_quest_the_plan_around_its_current_item_and_the_last_actions() {
        let mut d = Doings {
            prompt: Some("Fix the parser".into()),
            ..Doings::default()
        };
        d.plan = (0..8)
            .map(|i| {
                let status = match i {
                    0..=3 => PlanStatus::Completed,
                    4 => PlanStatus::InProgress,
                    _ => PlanStatus::Pending,
                };
                item(&format!("step {i}"), status)
            })
            .collect();
        let mut ev = Event::new(EventKind::Reading, 1);
        ev.target = Some("/src/lib.rs".into());
        d.observe(&ev);
        let lines = panel_lines(&d, None, 30, 8);
        assert_eq!(
            lines,
            [
                "Quest: Fix the parser",
                "Plan 4/8",
                "✓ step 3",
                "▶ step 4",
                "□ step 5",
                "□ step 6",
                "□ step 7",
                "read /src/lib.rs",
            ]
        );
        // Two lines: the heading and the item in progress.
        assert_eq!(
            plan_lines(&d.plan, 30, 2),
            ["Plan 4/8", "▶ step 4"].map(String::from)
        );
        // The banner already says the quest: not twice.
        let lines = panel_lines(&d, Some("Fix the parser"), 30, 8);
        assert_eq!(lines[0], "Plan 4/8");
        assert!(lines.iter().all(|l| l.chars().count() <= 30));
    }

    #[test]
    fn the_plates_first_line_whole_names_the_session() {
        assert_eq!(
            name_figures(
                Some("familiar"),
                Some("fix/flaky-parser"),
                "258c7280-ae70-4798"
            ),
            "familiar (fix/flaky-parser) · session 258c7280-ae70-4798"
        );
        assert_eq!(name_figures(Some("app"), None, ""), "app");
        assert_eq!(name_figures(None, None, "s1"), "session s1");
    }
}
