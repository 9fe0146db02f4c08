//! A real session bus for notification tests (feature `dbus`): a `dbus-daemon --session` on a
//! private socket, and a small notification server on it (zbus) that records every `Notify`
//! call. Used by familiar-sink's tests and the binary's fault tests alike.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};

/// A `dbus-daemon --session` listening on a socket in `dir`; killed on drop.
pub struct DbusDaemon {
    child: Child,
    pub address: String,
}

impl DbusDaemon {
    pub fn start(dir: &Path) -> DbusDaemon {
        let socket = dir.join("bus");
        let mut child = Command::new("dbus-daemon")
            .arg("--session")
            .arg("--nofork")
            .arg("--print-address=1")
            .arg(format!("--address=unix:path={}", socket.display()))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("dbus-daemon runs (apt-get install dbus)");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("dbus-daemon prints its address");
        let address = line.trim().to_owned();
        assert!(address.starts_with("unix:"), "address: {address:?}");
        DbusDaemon { child, address }
    }

    /// The bus dies as a crashed session would: SIGKILL, no goodbye.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for DbusDaemon {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One `Notify` call as the server received it.
#[derive(Debug, Clone, PartialEq)]
pub struct NotifyCall {
    pub app_name: String,
    pub replaces_id: u32,
    pub summary: String,
    pub body: String,
    pub urgency: Option<u8>,
}

struct Server {
    calls: Sender<NotifyCall>,
    next_id: u32,
    capabilities: Vec<String>,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Server {
    #[allow(clippy::too_many_arguments)]
    async fn notify(
        &mut self,
        app_name: String,
        replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        mut hints: HashMap<String, zbus::OwnedVariant>,
        _expire_timeout: i32,
    ) -> u32 {
        let urgency = hints.remove("urgency").and_then(|v| u8::try_from(v).ok());
        let _ = self.calls.send(NotifyCall {
            app_name,
            replaces_id,
            summary,
            body,
            urgency,
        });
        // As the spec says: a replacement keeps its id, a new notification gets a fresh one.
        if replaces_id != 0 {
            replaces_id
        } else {
            self.next_id += 1;
            self.next_id
        }
    }

    async fn get_server_information(&self) -> (String, String, String, String) {
        (
            "familiar-test-server".to_owned(),
            "familiar".to_owned(),
            "0.1".to_owned(),
            "1.2".to_owned(),
        )
    }

    async fn get_capabilities(&self) -> Vec<String> {
        self.capabilities.clone()
    }

    async fn close_notification(&self, _id: u32) {}
}

/// Start a notification server on the bus at `address`; its calls arrive on the receiver.
/// Returns once the server owns its name.
pub fn start_notification_server(address: &str) -> Receiver<NotifyCall> {
    start_notification_server_with(address, &["body"])
}

/// The same, advertising `capabilities` (`GetCapabilities`).
pub fn start_notification_server_with(
    address: &str,
    capabilities: &[&str],
) -> Receiver<NotifyCall> {
    let capabilities: Vec<String> = capabilities.iter().map(|c| (*c).to_owned()).collect();
    let (calls_tx, calls_rx) = mpsc::channel();
    let (ready_tx, ready_rx) = mpsc::channel();
    let address = address.to_owned();
    std::thread::spawn(move || {
        zbus::block_on(async move {
            let server = Server {
                calls: calls_tx,
                // Start far from 0 so a test can tell a server id from a default.
                next_id: 40,
                capabilities,
            };
            let connection = zbus::connection::Builder::address(address.as_str())
                .name("org.freedesktop.Notifications")
                .serve_at("/org/freedesktop/Notifications", server)
                .build()
                .await
                .expect("server connects to the test bus");
            ready_tx.send(()).expect("test waits for the server");
            // Serve until the test process ends.
            let _connection = connection;
            std::future::pending::<()>().await;
        });
    });
    ready_rx.recv().expect("notification server started");
    calls_rx
}
