//! A folder of small status files, each rewritten whole at every change and removed when its
//! writer ends: Claude Code's `sessions/<pid>.json` (parsed by `familiar_hook::cli_sessions`).
//! One thread watches the folder (inotify; a poll every [`POLL`] where inotify cannot watch it,
//! or while it does not exist yet), reads a file again when it changed, and sends what it
//! holds; a file named `<pid>.json` whose process is gone counts as removed (a CLI that
//! crashed leaves its file behind). Files are read only when regular and at most
//! [`MAX_FILE_BYTES`] long.

use std::collections::HashMap;
use std::fs;
use std::io::Read as _;
use std::os::fd::AsRawFd as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use inotify::{Inotify, WatchMask};

/// Longest status file read; a longer one is not a status file.
pub const MAX_FILE_BYTES: u64 = 64 * 1024;
/// How often the folder is read again without inotify, and processes are looked for.
pub const POLL: Duration = Duration::from_millis(250);
/// How often the processes of the files are looked for.
const LIVENESS: Duration = Duration::from_secs(1);

/// What changed in the folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusFileChange {
    /// A file's contents, new or changed (and once for each file there at start).
    Written { path: PathBuf, bytes: Vec<u8> },
    /// The file is gone, or the process named by its `<pid>.json` name is.
    Removed { path: PathBuf },
}

/// The watching thread; dropping this stops it.
pub struct StatusFiles {
    receiver: Receiver<StatusFileChange>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl StatusFiles {
    /// Watch `dir` (it may not exist yet) for `*.json` files.
    pub fn follow(dir: PathBuf) -> std::io::Result<StatusFiles> {
        let (sender, receiver) = crossbeam_channel::bounded(256);
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("familiar-status-files".to_owned())
            .spawn(move || watch(&dir, &sender, &stopped))?;
        Ok(StatusFiles {
            receiver,
            stop,
            thread: Some(thread),
        })
    }

    pub fn receiver(&self) -> &Receiver<StatusFileChange> {
        &self.receiver
    }
}

impl Drop for StatusFiles {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The `*.json` files in `dir` now, with their contents, those of processes that are gone
/// left out: for a command that looks once (`familiar sessions`).
pub fn read_now(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .filter_map(|path| read_small(&path).map(|bytes| (path, bytes)))
        .filter(|(path, bytes)| process_alive(path, bytes))
        .collect();
    files.sort();
    files
}

fn watch(dir: &Path, sender: &Sender<StatusFileChange>, stop: &AtomicBool) {
    let mut known: HashMap<PathBuf, Vec<u8>> = HashMap::new();
    let mut inotify = Inotify::init().ok();
    let mut watching = false;
    let mut buffer = [0u8; 4096];
    let mut last_liveness = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        if !watching && let Some(inotify) = &mut inotify {
            let mask = WatchMask::CLOSE_WRITE
                | WatchMask::MOVED_TO
                | WatchMask::MOVED_FROM
                | WatchMask::CREATE
                | WatchMask::DELETE
                | WatchMask::MODIFY
                | WatchMask::DELETE_SELF
                | WatchMask::MOVE_SELF;
            watching = inotify.watches().add(dir, mask).is_ok();
        }
        if !rescan(dir, &mut known, sender) {
            return;
        }
        if last_liveness.elapsed() >= LIVENESS {
            last_liveness = Instant::now();
            if !sweep_dead(&mut known, sender) {
                return;
            }
        }
        // Wait for a change (or the poll interval), then read the folder again: a rescan of a
        // handful of small files is simpler than following each event, and loses none.
        match (&mut inotify, watching) {
            (Some(inotify), true) => {
                if !wait_readable(inotify.as_raw_fd(), POLL) {
                    continue;
                }
                match inotify.read_events(&mut buffer) {
                    Ok(events) => {
                        let gone = events.into_iter().any(|event| {
                            event.mask.intersects(
                                inotify::EventMask::DELETE_SELF | inotify::EventMask::MOVE_SELF,
                            )
                        });
                        // The folder itself went away: watch for it anew.
                        watching &= !gone;
                    }
                    Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(_) => watching = false,
                }
            }
            _ => std::thread::sleep(POLL),
        }
    }
}

/// `true` when the fd is readable within `timeout`.
fn wait_readable(fd: i32, timeout: Duration) -> bool {
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: one valid pollfd for the duration of the call.
    let ready = unsafe { libc::poll(&mut poll, 1, millis) };
    ready > 0 && poll.revents & libc::POLLIN != 0
}

/// Read the folder; send what changed. `false` once nobody listens.
fn rescan(
    dir: &Path,
    known: &mut HashMap<PathBuf, Vec<u8>>,
    sender: &Sender<StatusFileChange>,
) -> bool {
    let mut present: Vec<PathBuf> = Vec::new();
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|ext| ext != "json") {
            continue;
        }
        let Some(bytes) = read_small(&path) else {
            continue;
        };
        present.push(path.clone());
        // Created but not written yet: its contents come with the next change.
        if bytes.is_empty() {
            continue;
        }
        if known.get(&path) == Some(&bytes) || !process_alive(&path, &bytes) {
            continue;
        }
        known.insert(path.clone(), bytes.clone());
        if sender
            .send(StatusFileChange::Written { path, bytes })
            .is_err()
        {
            return false;
        }
    }
    let removed: Vec<PathBuf> = known
        .keys()
        .filter(|path| !present.contains(path))
        .cloned()
        .collect();
    for path in removed {
        known.remove(&path);
        if sender.send(StatusFileChange::Removed { path }).is_err() {
            return false;
        }
    }
    true
}

/// Files whose process is gone count as removed.
fn sweep_dead(known: &mut HashMap<PathBuf, Vec<u8>>, sender: &Sender<StatusFileChange>) -> bool {
    let dead: Vec<PathBuf> = known
        .iter()
        .filter(|(path, bytes)| !process_alive(path, bytes))
        .map(|(path, _)| path.clone())
        .collect();
    for path in dead {
        known.remove(&path);
        if sender.send(StatusFileChange::Removed { path }).is_err() {
            return false;
        }
    }
    true
}

/// A regular file of at most [`MAX_FILE_BYTES`], read whole (never a FIFO or a device).
fn read_small(path: &Path) -> Option<Vec<u8>> {
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    fs::File::open(path)
        .ok()?
        .take(MAX_FILE_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// Is the process a `<pid>.json` names still running? `true` when it cannot be told: a name
/// that is no pid, or a file written from another pid namespace (its `pidDomain` names
/// another one: a container's CLI), where the number means another process.
fn process_alive(path: &Path, bytes: &[u8]) -> bool {
    let Some(pid) = path
        .file_stem()
        .and_then(|stem| stem.to_str())
        .and_then(|stem| stem.parse::<i32>().ok())
        .filter(|pid| *pid > 0)
    else {
        return true;
    };
    if !same_pid_namespace(bytes) {
        return true;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

fn same_pid_namespace(bytes: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Domain {
        #[serde(rename = "pidDomain")]
        pid_domain: Option<String>,
    }
    let Some(domain) = serde_json::from_slice::<Domain>(bytes)
        .ok()
        .and_then(|domain| domain.pid_domain)
    else {
        return true;
    };
    match fs::read_link("/proc/self/ns/pid") {
        Ok(ours) => domain.ends_with(&*ours.to_string_lossy()),
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next(files: &StatusFiles) -> StatusFileChange {
        files
            .receiver()
            .recv_timeout(Duration::from_secs(5))
            .expect("a change within 5 s")
    }

    #[test]
    fn writes_and_removals_are_seen_and_dead_processes_count_as_removed() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join("sessions");
        let files = StatusFiles::follow(dir.clone()).expect("follow");
        // The folder appears after watching began.
        fs::create_dir(&dir).expect("mkdir");
        let ours = dir.join(format!("{}.json", std::process::id()));
        fs::write(&ours, br#"{"status":"busy"}"#).expect("write");
        assert_eq!(
            next(&files),
            StatusFileChange::Written {
                path: ours.clone(),
                bytes: br#"{"status":"busy"}"#.to_vec()
            }
        );
        // Rewritten whole, as the CLI does (a temporary file renamed over it).
        let temporary = dir.join("tmp.partial");
        fs::write(&temporary, br#"{"status":"idle"}"#).expect("write");
        fs::rename(&temporary, &ours).expect("rename");
        assert_eq!(
            next(&files),
            StatusFileChange::Written {
                path: ours.clone(),
                bytes: br#"{"status":"idle"}"#.to_vec()
            }
        );
        fs::remove_file(&ours).expect("remove");
        assert_eq!(next(&files), StatusFileChange::Removed { path: ours });
        // A file left behind by a process that is gone is not a running session.
        let mut child = std::process::Command::new("true").spawn().expect("true");
        let pid = child.id();
        child.wait().expect("wait");
        fs::write(dir.join(format!("{pid}.json")), b"{}").expect("write");
        let fifo = dir.join("fifo.json");
        let path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: a valid C path; a FIFO must never be opened for reading (it would block).
        unsafe { libc::mkfifo(path.as_ptr(), 0o600) };
        fs::write(dir.join("later.json"), b"{}").expect("write");
        assert_eq!(
            next(&files),
            StatusFileChange::Written {
                path: dir.join("later.json"),
                bytes: b"{}".to_vec()
            }
        );
    }
}
