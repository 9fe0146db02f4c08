//! Which opencode sessions the selectors mean: a session is not a file, so its place says
//! nothing; its row does (its id, and the `directory` it ran in).

use std::path::Path;

use super::{Compiled, Matcher};

impl Matcher {
    /// Does the root session `id`, run in `directory`, of the database `db` belong to the
    /// selection? `--all` takes every one, `--project DIR` those run in or under `DIR`,
    /// `--session ID` that one, a file selector its address.
    pub fn decide_opencode(&self, db: &Path, id: &str, directory: &str) -> bool {
        self.selectors.iter().any(|selector| match selector {
            Compiled::All => true,
            Compiled::Project { dirs, .. } => {
                let cwd = Path::new(directory);
                dirs.iter().any(|dir| cwd == dir || cwd.starts_with(dir))
            }
            Compiled::Session(session) => session == id,
            Compiled::File { path, .. } => *path == crate::opencode::address(db, id),
        })
    }
}
