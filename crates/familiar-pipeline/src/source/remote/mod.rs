//! Sessions on other machines, over SSH (`familiar watch --remote`), through the same session
//! model and stage as this machine's:
//!
//! ```text
//! remote: tailer ─▶ feed ─▶ stdout ══ ssh ══▶ link ─▶ cursor ─▶ session model ─▶ Stage
//! ```
//!
//! - [`feed`]: `familiar feed`, run on the remote host by the user's `ssh`;
//! - [`wire`]: its lines (what the remote tailer read, hooks, the CLI's states);
//! - [`spec`]: a remote as the user names it, and the `ssh` command that reaches it;
//! - [`link`]: starting `ssh`, reading the feed, trying again with backoff;
//! - [`hosts`]: the remotes of one `watch`, a session model each;
//! - [`probe`]: `familiar doctor`'s look at a remote (the link, up to the feed's hello);
//! - [`cursor`]: where each remote file's stream stands, so a reconnect loses and doubles
//!   nothing (pure).

pub mod cursor;
pub mod feed;
pub mod hosts;
pub mod link;
pub mod probe;
pub mod spec;
pub mod wire;

pub use hosts::Hosts;
pub use link::{Link, News};
pub use spec::RemoteSpec;
