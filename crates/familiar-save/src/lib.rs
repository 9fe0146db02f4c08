//! Familiar's save files: what the game's progression and the scripts' `store` keep between
//! runs, under the user's data directory ([`data_dir`], e.g. `~/.local/share/familiar`).
//!
//! Two parts, split like the rest of the workspace: [`format`] is pure (bytes in, a value or a
//! [`Rejected`] reason out; the versioned envelope and its migration rules, and the name a
//! rejected file is set aside under), and [`file`] is the I/O edge (read, set a bad file aside
//! by renaming it, write atomically through a temporary file and a rename). Callers
//! (`familiar-game`'s progression, `familiar-script`'s store) print the one-line errors these
//! return and go on with a fresh value: a save file never stops play.

pub mod file;
pub mod format;

pub use file::{
    FailureGate, LoadError, MAX_SAVE_BYTES, SaveError, data_dir, load, lock_path, read_regular,
    save, update,
};
pub use format::{Rejected, Versioned, decode, encode, set_aside_path};
