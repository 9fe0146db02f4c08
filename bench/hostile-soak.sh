#!/usr/bin/env bash
# Hostile soak (issue 28's "done when"; not run by CI): `familiar watch --headless --events`
# follows SESSIONS transcripts of one project (default 5,000) under the common soft limit of
# 1,024 open files, with a hostile script loaded (it keeps every text it sees, in its
# variables and in each session's state, asks `once_per` for a new key per event, says and
# emits the longest string a script may build, and replaces and serializes without end) and
# hostile stores (a FIFO and a symlink to /dev/zero where stores are read), while a writer
# appends real fixture lines to random sessions at RATE MB/s (default 100) for SECONDS
# (default 20). Then one sentinel per session: every one must be printed (no session lost),
# and Ctrl-C must end the watcher within 1 s. Prints the watcher's RSS over time (VmRSS) and
# its peak (VmHWM), the bytes written and the sentinels seen.
#
# usage: bench/hostile-soak.sh [SECONDS] [RATE_MB_S] [SESSIONS]
# env:   FAMILIAR_BIN (default: build and use target/release/familiar),
#        FAMILIAR_REAL_FIXTURES (default ../shared/fixtures/real)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
rate=${2:-100}
sessions=${3:-5000}
fixtures=${FAMILIAR_REAL_FIXTURES:-../shared/fixtures/real}
if [ -z "${FAMILIAR_BIN:-}" ]; then
  cargo build --release --quiet --bin familiar
  FAMILIAR_BIN=target/release/familiar
fi
bin=$(realpath "$FAMILIAR_BIN")
tmp=$(mktemp -d /tmp/familiar-hostile.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "hostile soak: $seconds s at $rate MB/s over $sessions sessions, binary $bin" >&2

python3 - "$bin" "$fixtures" "$tmp" "$seconds" "$rate" "$sessions" <<'PY'
import json, os, pathlib, random, resource, signal, subprocess, sys, threading, time

binary, fixtures, tmp = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
seconds, rate, sessions = float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
rng = random.Random(28)

# Real records only, each whole line as Claude Code wrote it; each session is written one
# real transcript's lines in order, over and over (one file is one session, as in life).
transcripts = []
for path in sorted(fixtures.glob("*.jsonl")):
    lines = [line for line in path.read_bytes().splitlines(keepends=True)
             if line.startswith(b"{") and line.endswith(b"\n") and len(line) <= 256 * 1024]
    if lines:
        transcripts.append(lines)
if not transcripts:
    sys.exit(f"no fixture lines under {fixtures}")

home = tmp / "home"
config = home / "claude"
project_cwd = tmp / "app"
project_cwd.mkdir(parents=True)
encoded = "".join(c if c.isalnum() else "-" for c in str(project_cwd))
project = config / "projects" / encoded
project.mkdir(parents=True)
first = json.dumps({"type": "user", "message": {"role": "user", "content": "start"},
                    "cwd": str(project_cwd), "sessionId": "s", "isSidechain": False,
                    "timestamp": "2026-11-27T10:00:00.000Z"}).encode() + b"\n"
paths = []
for n in range(sessions):
    path = project / f"{n:08d}-0000-4000-8000-000000000000.jsonl"
    path.write_bytes(first)
    paths.append(path)

# The hostile script, and hostile stores where the stores are read.
script = tmp / "hostile.rhai"
script.write_text(r'''
let k0 = ""; let k1 = ""; let k2 = ""; let k3 = ""; let k4 = ""; let k5 = ""; let k6 = ""; let k7 = "";
fn on_event(ev) {
    let text = ev.text ?? "";
    // Every text kept, in eight variables (one value holds at most the longest string) and in
    // each session's state: both bounds filled.
    switch ev.line % 8 {
        0 => k0 += text, 1 => k1 += text, 2 => k2 += text, 3 => k3 += text,
        4 => k4 += text, 5 => k5 += text, 6 => k6 += text, _ => k7 += text,
    }
    ev.state.kept = (ev.state.kept ?? "") + text;
    once_per(`${ev.line}-${ev.session}-${text.len()}`, 3600);
    let big = "x";
    for i in 0..20 { big += big; }
    say(big);
    emit("big", #{ a: big });
    let r = text; r.replace("a", "aaaaaaaaaaaaaaaa");
    let m = #{}; for i in 0..64 { m[`${i}`] = big; } let j = m.to_json();
}
''')
data = home / ".local/share/familiar/scripts"
data.mkdir(parents=True)
os.mkfifo(data / "hostile.rhai.json")
os.symlink("/dev/zero", data / "default.rhai.json")

env = dict(os.environ, HOME=str(home), CLAUDE_CONFIG_DIR=str(config),
           XDG_DATA_HOME=str(home / ".local/share"), XDG_CONFIG_HOME=str(home / ".config"),
           FAMILIAR_SOCKET=str(tmp / "run/hook.sock"), NO_COLOR="1")
env.pop("CODEX_HOME", None)

def limit_files():
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

watcher = subprocess.Popen(
    [binary, "watch", "--headless", "--events", "--no-notify", "--mute",
     ] + ([] if os.environ.get("SOAK_NO_SCRIPT") else ["--script", str(script)]),
    cwd=project_cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    preexec_fn=limit_files)
seen, lines_out = set(), [0]
def read_out():
    for line in watcher.stdout:
        lines_out[0] += 1
        if b'"summary-' in line or b"sentinel-" in line:
            try:
                text = json.loads(line).get("text") or ""
            except ValueError:
                continue
            if text.startswith("sentinel-"):
                seen.add(text)
errors = []
def read_err():
    for line in watcher.stderr:
        errors.append(line.decode(errors="replace").rstrip())
threading.Thread(target=read_out, daemon=True).start()
threading.Thread(target=read_err, daemon=True).start()

def status(field):
    try:
        for line in open(f"/proc/{watcher.pid}/status"):
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    except OSError:
        return float("nan")
    return float("nan")

deadline = time.time() + 60
while not any("listening for Claude Code hooks" in e for e in errors) and time.time() < deadline:
    time.sleep(0.1)
time.sleep(2)
print(f"started: RSS {status('VmRSS'):.1f} MiB", flush=True)

written, start, samples = 0, time.time(), []
cursor = [0] * sessions
next_sample = start
while time.time() - start < seconds:
    for _ in range(64):
        n = rng.randrange(sessions)
        lines = transcripts[n % len(transcripts)]
        line = lines[cursor[n] % len(lines)]
        cursor[n] += 1
        with open(paths[n], "ab") as f:
            f.write(line)
        written += len(line)
    ahead = written / (rate * 1e6) - (time.time() - start)
    if ahead > 0:
        time.sleep(ahead)
    if time.time() >= next_sample:
        samples.append(status("VmRSS"))
        next_sample += 2
elapsed = time.time() - start
print(f"wrote {written / 1e6:.0f} MB in {elapsed:.1f} s ({written / 1e6 / elapsed:.0f} MB/s)")
print("RSS every 2 s (MiB): " + " ".join(f"{s:.0f}" for s in samples))

for n, path in enumerate(paths):
    record = json.dumps({"type": "user", "message": {"role": "user", "content": f"sentinel-{n}"},
                         "cwd": str(project_cwd), "sessionId": "s", "isSidechain": False,
                         "timestamp": "2026-11-27T10:00:01.000Z"}).encode() + b"\n"
    with open(path, "ab") as f:
        f.write(record)
deadline = time.time() + 120
while len(seen) < sessions and time.time() < deadline:
    time.sleep(0.2)
print(f"sentinels seen: {len(seen)} of {sessions} ({lines_out[0]} lines printed)")
print(f"RSS now {status('VmRSS'):.1f} MiB (anonymous {status('RssAnon'):.1f}, files "
      f"{status('RssFile'):.1f}), peak {status('VmHWM'):.1f} MiB = "
      f"{status('VmHWM') * 1.048576:.1f} MB")
asked = time.time()
watcher.send_signal(signal.SIGINT)
try:
    watcher.wait(timeout=10)
    print(f"Ctrl-C answered in {time.time() - asked:.2f} s (exit {watcher.returncode})")
except subprocess.TimeoutExpired:
    watcher.kill()
    print("Ctrl-C: no exit within 10 s")
said = [e for e in errors if " INFO " not in e and " DEBUG " not in e]
print(f"stderr: {len(said)} lines besides logs; the first:")
for line in said[:8]:
    print("  " + line[:200])
PY
