//! A real OpenSSH server on 127.0.0.1 for the `watch --remote` tests: a free port, a throwaway
//! host key and an authorized client key, and a "remote" side of its own (a Claude config dir,
//! a hook socket, agent homes) passed to the remote `familiar` through the client's `SetEnv`.
//! The `ssh` Familiar starts is the system's, found on PATH: the test puts a wrapper first on
//! PATH that adds `-F` with this server's client config, and notes each connection's pid (so
//! a test can cut one).

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `sshd` and the remote side it logs into.
pub struct Sshd {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    child: Child,
    pub port: u16,
    /// The remote Claude config dir (`CLAUDE_CONFIG_DIR` of the remote commands).
    pub remote_config: PathBuf,
    /// The remote hook socket (`FAMILIAR_SOCKET`).
    pub remote_socket: PathBuf,
    /// Where the wrapper `ssh` lives: put it first on PATH.
    pub bin: PathBuf,
    /// One line per connection: the pid of its `ssh`.
    pub pids: PathBuf,
}

const SSHD: &str = "/usr/sbin/sshd";

impl Sshd {
    pub fn start() -> Sshd {
        assert!(
            Path::new(SSHD).exists(),
            "{SSHD} is missing: install openssh-server (.ci/run does)"
        );
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical temp dir");
        for key in ["host_key", "client_key"] {
            let made = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(root.join(key))
                .status()
                .expect("run ssh-keygen");
            assert!(made.success(), "ssh-keygen failed");
        }
        fs::copy(root.join("client_key.pub"), root.join("authorized_keys"))
            .expect("authorize the client key");
        let remote = root.join("remote");
        let remote_config = remote.join("claude");
        let remote_socket = remote.join("run/hook.sock");
        for dir in [&remote_config, &remote.join("run"), &remote.join(".config")] {
            fs::create_dir_all(dir).expect("mkdir");
        }
        // The hook socket's directory must be the user's alone.
        use std::os::unix::fs::PermissionsExt as _;
        fs::set_permissions(remote.join("run"), fs::Permissions::from_mode(0o700)).expect("chmod");
        // Root's privilege separation directory (Debian's service makes it at boot).
        let _ = fs::create_dir_all("/run/sshd");
        let port = free_port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {root}/host_key\n\
             AuthorizedKeysFile {root}/authorized_keys\nPidFile {root}/sshd.pid\n\
             StrictModes no\nUsePAM no\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\n\
             AcceptEnv CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME FAMILIAR_SOCKET \
             XDG_CONFIG_HOME XDG_DATA_HOME\n",
            root = root.display()
        );
        fs::write(root.join("sshd_config"), config).expect("sshd_config");
        let client = format!(
            "Host *\n  IdentityFile {root}/client_key\n  IdentitiesOnly yes\n\
             \x20 UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n  LogLevel ERROR\n\
             \x20 SetEnv CLAUDE_CONFIG_DIR={config} CODEX_HOME={remote}/codex \
             GEMINI_CLI_HOME={remote}/gemini FAMILIAR_SOCKET={socket} \
             XDG_CONFIG_HOME={remote}/.config XDG_DATA_HOME={remote}/.local\n",
            root = root.display(),
            config = remote_config.display(),
            remote = remote.display(),
            socket = remote_socket.display(),
        );
        fs::write(root.join("ssh_config"), client).expect("ssh_config");
        let bin = root.join("bin");
        fs::create_dir_all(&bin).expect("mkdir");
        let pids = root.join("ssh.pids");
        let wrapper = format!(
            "#!/bin/sh\necho $$ >> '{pids}'\nexec /usr/bin/ssh -F '{root}/ssh_config' \"$@\"\n",
            pids = pids.display(),
            root = root.display()
        );
        let ssh = bin.join("ssh");
        fs::write(&ssh, wrapper).expect("ssh wrapper");
        fs::set_permissions(&ssh, fs::Permissions::from_mode(0o755)).expect("chmod");
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(root.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(fs::File::create(root.join("sshd.log")).expect("sshd log"))
            .spawn()
            .expect("start sshd");
        let sshd = Sshd {
            _tmp: tmp,
            root,
            child,
            port,
            remote_config,
            remote_socket,
            bin,
            pids,
        };
        sshd.wait_listening();
        sshd
    }

    fn wait_listening(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "sshd did not listen: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn log(&self) -> String {
        fs::read_to_string(self.root.join("sshd.log")).unwrap_or_default()
    }

    /// `--remote` for this server, with an optional project directory.
    pub fn remote(&self, dir: Option<&Path>) -> String {
        match dir {
            Some(dir) => format!("localhost:{}:{}", self.port, dir.display()),
            None => format!("localhost:{}", self.port),
        }
    }

    /// The environment a local `familiar` needs to reach this server through `ssh`.
    pub fn env(&self) -> Vec<(&'static str, OsString)> {
        let mut path = OsString::from(&self.bin);
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_default());
        vec![("PATH", path)]
    }

    /// The pids of the `ssh` connections made so far, in order.
    pub fn connections(&self) -> Vec<i32> {
        fs::read_to_string(&self.pids)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect()
    }

    /// The remote `familiar` processes still running (of this server's remote side).
    pub fn remote_feeds(&self) -> Vec<i32> {
        let needle = format!("FAMILIAR_SOCKET={}", self.remote_socket.display());
        let Ok(entries) = fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let environ = fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                cmdline.windows(4).any(|w| w == b"feed")
                    && environ
                        .split(|&b| b == 0)
                        .any(|var| var == needle.as_bytes())
            })
            .collect()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}
