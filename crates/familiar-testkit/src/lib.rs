//! Test support shared by every crate's tests (a dev-dependency only): where the fixtures
//! are. Real Claude Code transcripts live beside the repository in
//! `../shared/fixtures/real/` (`FAMILIAR_REAL_FIXTURES` moves them); the small edge-case
//! transcripts the project writes live in `fixtures/`. With the `dbus` feature, `dbus`
//! gives notification tests a real session bus and a recording notification server; `xvfb`
//! gives window tests a display.

use std::path::{Path, PathBuf};

#[cfg(feature = "dbus")]
pub mod dbus;
pub mod docs;
#[cfg(feature = "pulse")]
pub mod pulse;
pub mod xvfb;

/// The workspace root (this crate is `crates/familiar-testkit`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The directory of the real transcripts.
pub fn real_fixtures_dir() -> PathBuf {
    std::env::var_os("FAMILIAR_REAL_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared/fixtures/real"))
}

/// One real transcript by file name; panics (in a test) with where it looked.
pub fn real_fixture(name: &str) -> PathBuf {
    let path = real_fixtures_dir().join(name);
    assert!(
        path.is_file(),
        "real fixture {} is missing (set FAMILIAR_REAL_FIXTURES)",
        path.display()
    );
    path
}

/// Every real transcript (`*.jsonl`), sorted by name; panics when there are none.
pub fn real_fixtures() -> Vec<PathBuf> {
    let dir = real_fixtures_dir();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("cannot list {}: {err}", dir.display()))
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no real fixtures in {}", dir.display());
    paths
}

/// One of the project's own fixtures (`fixtures/NAME`).
pub fn own_fixture(name: &str) -> PathBuf {
    let path = workspace_root().join("fixtures").join(name);
    assert!(path.is_file(), "fixture {} is missing", path.display());
    path
}

/// The names in `dir`, sorted (empty when it cannot be read): what a save or a set-aside left.
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok())
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// [`file_names`] without the lock files that shared saves keep beside their file for good
/// (`.progress.json.lock`); a temporary file left behind (`.progress.json.tmp-…`) still shows.
pub fn saved_file_names(dir: &Path) -> Vec<String> {
    file_names(dir)
        .into_iter()
        .filter(|name| !(name.starts_with('.') && name.ends_with(".lock")))
        .collect()
}

/// A counting allocator for tests that bound memory exactly, independent of timing: a test
/// binary declares `#[global_allocator] static A: familiar_testkit::Counting = Counting;` and
/// reads [`Counting::current`] and [`Counting::peak`] (process-wide: the measured cases run one
/// after another in one test).
pub struct Counting;

static ALLOCATED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static PEAK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Counting {
    /// Bytes allocated now.
    pub fn current() -> usize {
        ALLOCATED.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The most allocated at once since the last [`Counting::reset_peak`].
    pub fn peak() -> usize {
        PEAK.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Start measuring a peak from now; returns the bytes allocated now (the base).
    pub fn reset_peak() -> usize {
        let now = Counting::current();
        PEAK.store(now, std::sync::atomic::Ordering::Relaxed);
        now
    }
}

// SAFETY: every call is forwarded as is to the system allocator; only counters are added.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: forwarded as is to the system allocator.
        let ptr = unsafe { std::alloc::System.alloc(layout) };
        if !ptr.is_null() {
            let now = ALLOCATED.fetch_add(layout.size(), std::sync::atomic::Ordering::Relaxed)
                + layout.size();
            PEAK.fetch_max(now, std::sync::atomic::Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: forwarded as is to the system allocator.
        unsafe { std::alloc::System.dealloc(ptr, layout) };
        ALLOCATED.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
    }
}
