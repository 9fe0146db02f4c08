//! The frame trace (issue 31): on request (`GameOptions::frame_trace`; the window executable
//! reads `FAMILIAR_FRAME_TRACE=<path>`), one JSON line per drawn frame that shows new feed
//! input, so that a benchmark can tell how long a transcript line takes to reach the screen
//! (`bench/frame_latency.py`).
//!
//! "Drawn" is the end of the render app's frame: a system in `RenderSystems::Cleanup`, which
//! runs after Bevy's `render_system` has submitted the frame's commands and called `present` on
//! the window's swap-chain texture. The time taken there is `CLOCK_REALTIME` (`SystemTime`,
//! what Python's `time.time_ns()` reads), so a benchmark compares it with the time of its
//! `write`. With Mesa's software Vulkan (lavapipe) on X11, `present` hands the finished image to
//! the X server itself (or to its present thread, which does it next), so the pixels are on the
//! server within a fraction of a millisecond of the time written (`bench/frame_latency.py
//! --fb` checks it against Xvfb's own framebuffer); with a GPU the image may still be queued
//! behind vsync, up to one refresh later.
//!
//! Which input a frame shows: the main app notes what `logic::ingest` applied in its update
//! ([`note`]); extraction carries it to the render world with that frame; it is written when a
//! frame presents (a frame that presented nothing, a hidden window, passes it to the next one).
//! Everything an item changes is drawn in the update that applied it (the view's systems run
//! after `LogicSet`), so that frame is the first that shows it.
//!
//! Off, none of this exists: no resource, no system, and `note` finds no resource (one lookup
//! per frame that applied input). On, the file is written through a buffer, flushed once per
//! traced frame, after its time is taken; a write that fails stops the trace with a warning.
//!
//! A line: `{"presented_ns":…,"applied_ns":…,"since_previous_ns":…,"frame":…,"items":[…]}`:
//! the frame's end; when the main app applied its input (`applied_ns`, so the render's share
//! is `presented_ns - applied_ns`); the time since the previous presented frame (62.5 ms while
//! something moves, seconds while idle), the count of presented frames, and each item as
//! `{"session":…,"line":…,"event":…}` (an event: its session, line in the transcript and kind)
//! or `{…,"action":…}` (a script's action, by the line of the event that caused it) or
//! `{"other":…}`.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use bevy::prelude::*;
use bevy::render::renderer::render_system;
use bevy::render::view::ExtractedWindows;
use bevy::render::{Extract, ExtractSchedule, Render, RenderApp, RenderSystems};
use serde::Serialize;

use crate::GameFeed;

/// One item of the feed a frame applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TracedItem {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other: Option<&'static str>,
}

impl TracedItem {
    pub fn of(item: &GameFeed) -> TracedItem {
        let none = TracedItem {
            session: None,
            line: None,
            event: None,
            action: None,
            other: None,
        };
        match item {
            GameFeed::Event(ev) => TracedItem {
                session: ev.session.clone(),
                line: Some(ev.line),
                event: Some(ev.kind.as_str()),
                ..none
            },
            GameFeed::Action(act) => TracedItem {
                session: act.session.clone(),
                line: Some(act.line),
                action: Some(act.kind.name()),
                ..none
            },
            GameFeed::Progress(_) => TracedItem {
                other: Some("progress"),
                ..none
            },
            GameFeed::Quit => TracedItem {
                other: Some("quit"),
                ..none
            },
            GameFeed::Waiting(_) => TracedItem {
                other: Some("waiting"),
                ..none
            },
            GameFeed::Ended(_) => TracedItem {
                other: Some("ended"),
                ..none
            },
            GameFeed::Remote { .. } => TracedItem {
                other: Some("remote"),
                ..none
            },
        }
    }
}

/// What the main app's current update applied (cleared in `First`).
#[derive(Resource, Debug, Clone, Default)]
pub(crate) struct Applied {
    /// When `ingest` applied the first of them, ns since the Unix epoch.
    at_ns: u64,
    items: Vec<TracedItem>,
}

/// Called by `logic::ingest` with the items it is about to apply; does nothing unless the
/// trace is on.
pub(crate) fn note(world: &mut World, items: &[GameFeed]) {
    if let Some(mut applied) = world.get_resource_mut::<Applied>() {
        if applied.items.is_empty() {
            applied.at_ns = now_ns();
        }
        applied.items.extend(items.iter().map(TracedItem::of));
    }
}

/// The trace's serialized line for one frame.
#[derive(Debug, Serialize)]
pub struct TraceLine<'a> {
    pub presented_ns: u64,
    pub applied_ns: u64,
    pub since_previous_ns: u64,
    pub frame: u64,
    pub items: &'a [TracedItem],
}

/// The render world's side: the applied input not yet on screen, and the file.
#[derive(Resource)]
struct Trace {
    out: Option<BufWriter<File>>,
    path: PathBuf,
    /// Applied input of frames extracted but not yet presented: (`applied_ns`, items).
    waiting: Option<(u64, Vec<TracedItem>)>,
    /// Whether this frame had a swap-chain texture to present, before `render_system`.
    acquired: bool,
    previous_ns: u64,
    frames: u64,
}

pub(crate) struct FrameTracePlugin {
    pub path: PathBuf,
}

impl Plugin for FrameTracePlugin {
    fn build(&self, app: &mut App) {
        let out = match File::create(&self.path) {
            Ok(file) => BufWriter::new(file),
            Err(err) => {
                tracing::warn!("frame trace {}: {err}; not tracing", self.path.display());
                return;
            }
        };
        let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
            tracing::warn!("frame trace: no renderer, so no frames to trace");
            return;
        };
        render_app
            .insert_resource(Trace {
                out: Some(out),
                path: self.path.clone(),
                waiting: None,
                acquired: false,
                previous_ns: 0,
                frames: 0,
            })
            .add_systems(ExtractSchedule, extract_applied)
            .add_systems(
                Render,
                (
                    before_present
                        .in_set(RenderSystems::Render)
                        .before(render_system),
                    after_present.in_set(RenderSystems::Cleanup),
                ),
            );
        app.init_resource::<Applied>()
            .add_systems(First, clear_applied);
    }
}

fn clear_applied(mut applied: ResMut<Applied>) {
    if !applied.items.is_empty() {
        applied.items.clear();
    }
}

fn extract_applied(applied: Extract<Res<Applied>>, mut trace: ResMut<Trace>) {
    if applied.items.is_empty() {
        return;
    }
    match &mut trace.waiting {
        Some((_, items)) => items.extend(applied.items.iter().cloned()),
        None => trace.waiting = Some((applied.at_ns, applied.items.clone())),
    }
}

fn before_present(windows: Res<ExtractedWindows>, mut trace: ResMut<Trace>) {
    trace.acquired = windows.values().any(|w| w.swap_chain_texture.is_some());
}

fn after_present(windows: Res<ExtractedWindows>, mut trace: ResMut<Trace>) {
    // `render_system` presents every window that rendered this frame (taking its texture).
    let presented = trace.acquired && windows.values().all(|w| w.swap_chain_texture.is_none());
    if !presented {
        return;
    }
    let now = now_ns();
    let trace = &mut *trace;
    let since_previous = if trace.previous_ns == 0 {
        0
    } else {
        now.saturating_sub(trace.previous_ns)
    };
    trace.previous_ns = now;
    trace.frames += 1;
    let Some((applied_ns, items)) = trace.waiting.take() else {
        return;
    };
    let Some(out) = &mut trace.out else {
        return;
    };
    let line = TraceLine {
        presented_ns: now,
        applied_ns,
        since_previous_ns: since_previous,
        frame: trace.frames,
        items: &items,
    };
    if let Err(err) = write_line(out, &line) {
        tracing::warn!("frame trace {}: {err}; tracing stops", trace.path.display());
        trace.out = None;
    }
}

/// One line, then the buffer flushed: the trace is read while the window runs.
pub fn write_line(out: &mut impl std::io::Write, line: &TraceLine<'_>) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, line)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// `CLOCK_REALTIME` in ns (0 before 1970).
fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// The trace's path from the environment variable's value: unset or empty is off.
pub fn trace_path(value: Option<std::ffi::OsString>) -> Option<PathBuf> {
    value.filter(|v| !v.is_empty()).map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use familiar_model::{Event, EventKind};

    use super::*;

    #[test]
    fn a_line_names_each_item_by_session_and_line() {
        let mut ev = Event::new(EventKind::Prompt, 42);
        ev.session = Some("s-1".into());
        let items = [
            TracedItem::of(&GameFeed::Event(ev)),
            TracedItem::of(&GameFeed::Waiting("~/.claude".into())),
        ];
        let mut out = Vec::new();
        let line = TraceLine {
            presented_ns: 1_700_000_000_000_000_123,
            applied_ns: 1_700_000_000_000_000_000,
            since_previous_ns: 62_500_000,
            frame: 7,
            items: &items,
        };
        write_line(&mut out, &line).expect("writes to memory");
        assert_eq!(
            String::from_utf8_lossy(&out),
            "{\"presented_ns\":1700000000000000123,\"applied_ns\":1700000000000000000,\
             \"since_previous_ns\":62500000,\"frame\":7,\"items\":[{\"session\":\"s-1\",\
             \"line\":42,\"event\":\"prompt\"},{\"other\":\"waiting\"}]}\n"
        );
    }

    #[test]
    fn the_trace_is_off_unless_a_path_is_given() {
        assert_eq!(trace_path(None), None);
        assert_eq!(trace_path(Some("".into())), None);
        assert_eq!(
            trace_path(Some("/tmp/t.ndjson".into())),
            Some(PathBuf::from("/tmp/t.ndjson"))
        );
    }

    #[test]
    fn applied_input_is_noted_only_when_tracing() {
        let mut world = World::new();
        note(&mut world, &[GameFeed::Quit]);
        assert!(world.get_resource::<Applied>().is_none());
        world.init_resource::<Applied>();
        note(&mut world, &[GameFeed::Quit]);
        let applied = world.resource::<Applied>();
        assert_eq!(applied.items.len(), 1);
        assert!(applied.at_ns > 0);
    }
}
