//! The vocabulary shared by every stage of the pipeline (source → transform → sink).
//!
//! `familiar-transcript` turns raw records into [`Event`]s, the tailer tags them with their
//! session and agent, `familiar-script` maps them to [`Action`]s, and the sinks (stdout, desktop
//! notifications, the game) carry the actions out. This crate holds only plain data with a
//! stable serde form: the NDJSON schema documented in `docs/events.md` is a public contract, so
//! field names here change only with that document.

mod action;
mod control;
mod event;
pub mod memory;
pub mod plan;
pub mod progression;
pub mod sink;
pub mod text;
pub mod time;
pub mod window;
pub mod words;

pub use action::{Action, ActionKind, Urgency};
pub use control::ReplayControl;
pub use event::{AgentKind, ErrorKind, Event, EventKind, Status};
pub use plan::{Plan, PlanChange, PlanItem, PlanStatus};
pub use window::{WindowFeed, WindowReport};
