"""`familiar watch --remote` over loopback SSH, beside the same watch of a local file.

1. Append -> action: a prompt appended to a transcript must come out of `familiar watch
   --headless` as default.rhai's `quest` action. Rounds alternate between a local transcript
   and one on the "remote" side, reached through a throwaway sshd on 127.0.0.1 (as
   tests/remote.rs starts it), so both are measured in one run under the same load. Reports
   p50/p99/max of each, and the remote's p99 over the local's.
2. The CPU of `familiar feed` (the remote end) while 50 remote sessions are appended at 10
   lines/s each, from /proc (user + system time over wall time).

Usage: python3 bench/remote.py [APPENDS] [BINARY]   (default 500, target/release/familiar)
Needs openssh-server (/usr/sbin/sshd) and ssh-keygen."""
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time

appends = int(sys.argv[1]) if len(sys.argv) > 1 else 500
binary = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "target/release/familiar")
root = tempfile.mkdtemp(prefix="familiar-remote-bench-")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_sshd():
    for key in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{root}/{key}"],
                       check=True)
    shutil.copy(f"{root}/client_key.pub", f"{root}/authorized_keys")
    remote = f"{root}/remote"
    for d in ("claude/projects/-bench", "run", ".config"):
        os.makedirs(f"{remote}/{d}", exist_ok=True)
    os.chmod(f"{remote}/run", 0o700)
    os.makedirs("/run/sshd", exist_ok=True)
    port = free_port()
    with open(f"{root}/sshd_config", "w") as f:
        f.write(f"Port {port}\nListenAddress 127.0.0.1\nHostKey {root}/host_key\n"
                f"AuthorizedKeysFile {root}/authorized_keys\nPidFile {root}/sshd.pid\n"
                "StrictModes no\nUsePAM no\nPasswordAuthentication no\n"
                "AcceptEnv CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME FAMILIAR_SOCKET "
                "XDG_CONFIG_HOME\n")
    with open(f"{root}/ssh_config", "w") as f:
        f.write(f"Host *\n  IdentityFile {root}/client_key\n  IdentitiesOnly yes\n"
                "  UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n  LogLevel ERROR\n"
                f"  SetEnv CLAUDE_CONFIG_DIR={remote}/claude CODEX_HOME={remote}/codex "
                f"GEMINI_CLI_HOME={remote}/gemini FAMILIAR_SOCKET={remote}/run/hook.sock "
                f"XDG_CONFIG_HOME={remote}/.config\n")
    os.makedirs(f"{root}/bin", exist_ok=True)
    with open(f"{root}/bin/ssh", "w") as f:
        f.write(f"#!/bin/sh\nexec /usr/bin/ssh -F {root}/ssh_config \"$@\"\n")
    os.chmod(f"{root}/bin/ssh", 0o755)
    sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", f"{root}/sshd_config"],
                            stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.02)
    return sshd, port, f"{remote}/claude/projects/-bench"


def record(text, cwd):
    return json.dumps({"type": "user", "sessionId": "bench", "isSidechain": False,
                       "timestamp": "2026-02-11T10:00:00.000Z", "cwd": cwd,
                       "message": {"role": "user", "content": text}}) + "\n"


sshd, port, remote_dir = start_sshd()
local_home = f"{root}/local"
local_dir = f"{local_home}/.claude/projects/-bench"
os.makedirs(local_dir)
local_file = f"{local_dir}/local.jsonl"
remote_file = f"{remote_dir}/remote.jsonl"
for path in (local_file, remote_file):
    open(path, "w").close()
env = dict(os.environ, HOME=local_home, CLAUDE_CONFIG_DIR=f"{local_home}/.claude",
           XDG_CONFIG_HOME=f"{local_home}/.config", FAMILIAR_SOCKET=f"{local_home}/sock",
           DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent",
           PATH=f"{root}/bin:" + os.environ["PATH"])
env.pop("RUST_LOG", None)
watch = subprocess.Popen([binary, "watch", "--headless", "--no-notify", "--all",
                          "--remote", f"localhost:{port}", "--remote-bin", binary],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
time.sleep(2.0)  # connected and caught up


def round_trip(path, text):
    start = time.perf_counter()
    with open(path, "a") as out:
        out.write(record(text, "/bench"))
    while True:
        ready, _, _ = select.select([watch.stdout], [], [], 10)
        if not ready:
            sys.exit(f"no action for {text} within 10 s")
        line = watch.stdout.readline().decode()
        if f'"text":"{text}"' in line and '"action":"quest"' in line:
            return (time.perf_counter() - start) * 1000


times = {"local": [], "remote": []}
for n in range(appends):
    for side, path in (("local", local_file), ("remote", remote_file)):
        times[side].append(round_trip(path, f"{side} {n}"))
        time.sleep(0.002)
watch.terminate()
watch.wait()


def summary(values):
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]
    return pick(0.5), pick(0.99), values[-1]


for side in ("local", "remote"):
    p50, p99, worst = summary(times[side])
    print(f"append -> action, {side:6} ({appends} appends, interleaved): "
          f"p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {worst:.2f} ms")
print("remote p99 / local p99: %.2f" % (summary(times["remote"])[1] / summary(times["local"])[1]))

# The feed's CPU at 50 remote sessions, 10 lines/s each.
sessions = [f"{remote_dir}/s{n:02}.jsonl" for n in range(50)]
for path in sessions:
    open(path, "w").close()
watch = subprocess.Popen([binary, "watch", "--headless", "--no-notify", "--all",
                          "--remote", f"localhost:{port}", "--remote-bin", binary],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
time.sleep(2.0)
feed = None
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        environ = open(f"/proc/{pid}/environ", "rb").read()
    except OSError:
        continue
    if b"feed" in cmd and f"FAMILIAR_SOCKET={root}/remote".encode() in environ:
        feed = int(pid)
if feed is None:
    sys.exit("no remote feed found")


def cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


seconds = 20
before, start = cpu(feed), time.monotonic()
handles = [open(path, "a") for path in sessions]
tick = 0
while time.monotonic() - start < seconds:
    for n, out in enumerate(handles):
        out.write(record(f"s{n} line {tick}", "/bench"))
        out.flush()
    tick += 1
    time.sleep(max(0.0, start + tick * 0.1 - time.monotonic()))
used, wall = cpu(feed) - before, time.monotonic() - start
watch.terminate()
watch.wait()
print(f"familiar feed, 50 sessions x 10 lines/s for {wall:.0f} s: "
      f"{100 * used / wall:.1f} % of one core ({tick * 50} lines)")
print("load average (1, 5, 15 min): %.2f %.2f %.2f" % os.getloadavg())
sshd.terminate()
shutil.rmtree(root, ignore_errors=True)
