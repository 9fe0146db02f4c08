//! `NotifySink`: desktop notifications through `notify-rust` over the D-Bus session bus (the
//! XDG notification spec), for `notify` actions.
//!
//! Sending happens on a worker thread so a slow or hung notification daemon never stalls the
//! pipeline; `handle` only queues. Each session gets one notification that later ones replace
//! (the id the server returned for the first is sent as `replaces_id`), so a burst of errors
//! updates one bubble instead of stacking twenty. With no session bus or no notification
//! server, the sink warns once, carries on, keeps trying quietly (a daemon may start later) and
//! rings the terminal bell instead when asked to.
//!
//! Bodies are untrusted text (tool errors quote web pages): for a server that advertises
//! `body-markup` (and so may render links and images), the body is escaped so it shows as the
//! plain text it is; other servers get it as it is. The summary is plain text by the spec.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::thread::JoinHandle;

use familiar_model::{Action, ActionKind, EventKind, Urgency};

use crate::{FailureCounter, Sink};

/// Notifications waiting for the worker before new ones are dropped (and counted).
const QUEUE: usize = 256;

/// How the notification sink behaves.
pub struct NotifyOptions {
    /// Application name shown by the notification server.
    pub app_name: String,
    /// Notifications caused by these event kinds are not shown (config toggles per kind).
    pub muted_events: HashSet<EventKind>,
    /// Where to ring the bell when a notification cannot be shown; `None` = no fallback.
    pub fallback_bell: Option<Box<dyn Write + Send>>,
}

impl Default for NotifyOptions {
    fn default() -> NotifyOptions {
        NotifyOptions {
            app_name: "Familiar".to_owned(),
            muted_events: HashSet::new(),
            fallback_bell: None,
        }
    }
}

enum Message {
    Show(Note),
    Flush(SyncSender<()>),
}

struct Note {
    session: Option<String>,
    title: String,
    body: String,
    urgency: Urgency,
}

/// Desktop notifications for `notify` actions.
pub struct NotifySink {
    tx: Option<SyncSender<Message>>,
    worker: Option<JoinHandle<()>>,
    muted: HashSet<EventKind>,
    failures: FailureCounter,
    sent: Arc<AtomicU64>,
}

impl NotifySink {
    /// Start the sink and its worker thread. Nothing touches D-Bus until the first `notify`.
    pub fn new(options: NotifyOptions) -> NotifySink {
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        let failures = FailureCounter::new();
        let sent = Arc::new(AtomicU64::new(0));
        let worker = Worker {
            app_name: options.app_name,
            bell: options.fallback_bell,
            replace_ids: HashMap::new(),
            markup: None,
            warned: false,
            failures: failures.clone(),
            sent: Arc::clone(&sent),
        };
        let spawned = std::thread::Builder::new()
            .name("familiar-notify".to_owned())
            .spawn(move || worker.run(rx));
        let (tx, worker) = match spawned {
            Ok(handle) => (Some(tx), Some(handle)),
            Err(err) => {
                failures.record(
                    "notify",
                    &format_args!("cannot start the notification thread: {err}"),
                );
                (None, None)
            }
        };
        NotifySink {
            tx,
            worker,
            muted: options.muted_events,
            failures,
            sent,
        }
    }

    /// Notifications the server accepted so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}

impl Sink for NotifySink {
    fn name(&self) -> &str {
        "notify"
    }

    fn handle(&mut self, action: &Action) {
        let ActionKind::Notify {
            title,
            body,
            urgency,
        } = &action.kind
        else {
            return;
        };
        if self.muted.contains(&action.event) {
            tracing::debug!(event = %action.event, "notification muted by configuration");
            return;
        }
        let Some(tx) = &self.tx else { return };
        let note = Note {
            session: action.session.clone(),
            title: title.clone(),
            body: body.clone(),
            urgency: *urgency,
        };
        match tx.try_send(Message::Show(note)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => self.failures.record(
                "notify",
                &"notification queue full (the notification server is slow); dropped one",
            ),
            Err(TrySendError::Disconnected(_)) => self
                .failures
                .record("notify", &"notification thread stopped; dropped one"),
        }
    }

    fn flush(&mut self) {
        let Some(tx) = &self.tx else { return };
        let (done_tx, done_rx) = mpsc::sync_channel(1);
        if tx.send(Message::Flush(done_tx)).is_ok() {
            // The worker answers after everything queued before the flush.
            let _ = done_rx.recv();
        }
    }

    fn failures(&self) -> u64 {
        self.failures.get()
    }
}

impl Drop for NotifySink {
    fn drop(&mut self) {
        // Closing the channel ends the worker once the queue is drained.
        self.tx = None;
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

struct Worker {
    app_name: String,
    bell: Option<Box<dyn Write + Send>>,
    /// Server id of the current notification of each session, sent as `replaces_id`.
    replace_ids: HashMap<Option<String>, u32>,
    /// Does the server render markup in bodies? Asked once (again after a failure, as the
    /// server may have changed).
    markup: Option<bool>,
    /// The one warning about missing notifications was given (reset once one gets through).
    warned: bool,
    failures: FailureCounter,
    sent: Arc<AtomicU64>,
}

impl Worker {
    fn run(mut self, rx: Receiver<Message>) {
        for message in rx {
            match message {
                Message::Show(note) => self.show(note),
                Message::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
    }

    fn show(&mut self, note: Note) {
        let markup = *self.markup.get_or_insert_with(|| {
            notify_rust::get_capabilities()
                .is_ok_and(|caps| caps.iter().any(|cap| cap == "body-markup"))
        });
        let body = if markup {
            escape_markup(&note.body)
        } else {
            note.body
        };
        let mut notification = notify_rust::Notification::new();
        notification
            .appname(&self.app_name)
            .summary(&note.title)
            .body(&body)
            .urgency(map_urgency(note.urgency));
        if let Some(id) = self.replace_ids.get(&note.session) {
            notification.id(*id);
        }
        match notification.show() {
            Ok(handle) => {
                self.replace_ids.insert(note.session, handle.id());
                self.sent.fetch_add(1, Ordering::Relaxed);
                if self.warned {
                    tracing::info!("desktop notifications work again");
                    self.warned = false;
                }
            }
            Err(err) => {
                self.markup = None;
                if self.warned {
                    self.failures.count_quietly();
                    tracing::debug!(sink = "notify", "notification not shown: {err}");
                } else {
                    self.warned = true;
                    self.failures.count_quietly();
                    let fallback = if self.bell.is_some() {
                        "ringing the terminal bell instead"
                    } else {
                        "carrying on without them"
                    };
                    tracing::warn!(
                        sink = "notify",
                        "desktop notifications unavailable ({err}); {fallback}. Check that \
                         DBUS_SESSION_BUS_ADDRESS names a running session bus with a \
                         notification daemon on it (`familiar doctor` tells)"
                    );
                }
                self.ring_instead();
            }
        }
    }

    fn ring_instead(&mut self) {
        if let Some(bell) = &mut self.bell
            && let Err(err) = bell.write_all(b"\x07").and_then(|()| bell.flush())
        {
            tracing::debug!(sink = "notify", "cannot ring the fallback bell: {err}");
        }
    }
}

/// `text` as markup that shows exactly `text`: the XML entities the notification spec's
/// markup (a subset of HTML) knows.
fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

fn map_urgency(urgency: Urgency) -> notify_rust::Urgency {
    match urgency {
        Urgency::Low => notify_rust::Urgency::Low,
        Urgency::Normal => notify_rust::Urgency::Normal,
        Urgency::Critical => notify_rust::Urgency::Critical,
    }
}

/// Why a probe of the desktop notification path failed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("no D-Bus session bus: {0}")]
    NoBus(String),
    #[error("no notification server on the session bus: {0}")]
    NoServer(String),
}

/// What the notification server says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    pub name: String,
    pub vendor: String,
    pub version: String,
    pub spec_version: String,
}

/// Connect to the session bus (as `DBUS_SESSION_BUS_ADDRESS` names it) and say hello.
pub fn probe_session_bus() -> Result<(), ProbeError> {
    zbus::block_on(zbus::Connection::session())
        .map(drop)
        .map_err(|err| ProbeError::NoBus(err.to_string()))
}

/// Ask the notification server for its name and version (`GetServerInformation`).
pub fn probe_notification_server() -> Result<ServerInfo, ProbeError> {
    probe_session_bus()?;
    notify_rust::get_server_information()
        .map(|info| ServerInfo {
            name: info.name,
            vendor: info.vendor,
            version: info.version,
            spec_version: info.spec_version,
        })
        .map_err(|err| ProbeError::NoServer(err.to_string()))
}
