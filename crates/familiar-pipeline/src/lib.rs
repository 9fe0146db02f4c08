//! Familiar's one pipeline, which every command that runs scripts goes through:
//!
//! ```text
//! source ─▶ session model ─▶ Stage (scripts) ─▶ sinks, stdout, window
//! ```
//!
//! - [`source`]: where lines come from, one [`source::Source`] for every command: live
//!   sessions ([`source::live`], [`source::follow`], [`source::remote`]) or a transcript read
//!   to its end ([`source::recorded`]: a file, stdin, the demo), by its timestamps or as fast
//!   as it reads. Every source feeds the session model (`familiar-session`), the one owner of
//!   session state, and [`source::Source::run`] takes its events through the [`Stage`].
//! - [`settings`]: the config file, the flags and the defaults merged once, and the sinks
//!   built from them.
//! - [`stage`]: the [`Stage`], where events meet the scripts and actions go out. A dry run
//!   (`familiar run`, `familiar test`) is the same stage with nothing carried out.
//! - [`window`]: the game window's process, or the terminal when there is none.
//! - [`progress`]: the user's XP, level and unlocks, owned by the [`Stage`].
//! - [`report`]: how all of it talks on stderr (errors, warnings, skipped lines, logs).
//!
//! A dry run of a script over a transcript, as `familiar run` does it:
//!
//! ```no_run
//! use familiar_pipeline::source::recorded::Recorded;
//! use familiar_pipeline::source::{Pace, Source};
//! use familiar_pipeline::window::Front;
//! use familiar_pipeline::{Stage, StageOptions, settings};
//!
//! # fn main() -> Result<(), familiar_pipeline::Error> {
//! let mut settings = settings::settings(&Default::default())?;
//! settings.scripts = vec!["my.rhai".into()];
//! let mut stage = Stage::with_scripts(&settings, StageOptions::dry_run(true), false)?;
//! let config = settings::model_config(&settings, Default::default(), None);
//! let source = Source::Recorded {
//!     transcript: Recorded::open("session.jsonl".as_ref())?,
//!     pace: Pace::AsRead,
//! };
//! let ran = source.run(config, &mut stage, &Front::terminal())?;
//! assert_eq!(ran.failures, 0);
//! # Ok(())
//! # }
//! ```

mod error;
pub mod progress;
pub mod report;
pub mod settings;
pub mod source;
pub mod stage;
pub mod window;

pub use error::Error;
pub use stage::{Stage, StageOptions};
