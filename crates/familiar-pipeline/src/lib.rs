//! Familiar's one pipeline, which every command that runs scripts goes through:
//!
//! ```text
//! source ─▶ session model ─▶ Stage (scripts) ─▶ sinks, stdout, window
//! ```
//!
//! - [`source`]: where lines come from: live sessions ([`source::live`], [`source::follow`])
//!   or a transcript read to its end ([`source::recorded`]: a file, stdin, the demo). Every
//!   source feeds the session model (`familiar-session`), the one owner of session state.
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
//! use familiar_pipeline::{Stage, StageOptions, settings};
//!
//! # fn main() -> Result<(), familiar_pipeline::Error> {
//! let mut settings = settings::settings(&Default::default())?;
//! settings.scripts = vec!["my.rhai".into()];
//! let mut stage = Stage::with_scripts(&settings, StageOptions::dry_run(true), false)?;
//! let config = settings::model_config(&settings, Default::default(), None);
//! Recorded::open("session.jsonl".as_ref())?.play(config, |item| stage.take(&item))?;
//! stage.finish();
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
