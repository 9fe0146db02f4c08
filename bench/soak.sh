#!/usr/bin/env bash
# Soak test (not run by CI): `familiar watch --headless --events --no-notify --all` follows a
# synthetic session written at a high rate for N minutes, built from real fixture lines, with
# truncations and rotations (the file replaced by a new one) mixed in. At the end it checks that
# what the watcher printed is exactly what `familiar events` prints for each piece written
# (nothing lost, nothing doubled) and reports events/s and the watcher's RSS over time
# (sampled from /proc/PID/status VmRSS), which must stay flat.
#
# usage: bench/soak.sh [MINUTES] [LINES_PER_SECOND]     (defaults: 10 minutes, 2000 lines/s)
# env:   FAMILIAR_BIN (default: build and use target/release/familiar),
#        FAMILIAR_REAL_FIXTURES (default ../shared/fixtures/real), SOAK_KEEP=1 keeps the temp dir
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-10}
rate=${2:-2000}
fixtures=${FAMILIAR_REAL_FIXTURES:-../shared/fixtures/real}
if [ -z "${FAMILIAR_BIN:-}" ]; then
  cargo build --release --quiet --bin familiar
  FAMILIAR_BIN=target/release/familiar
fi
bin=$(realpath "$FAMILIAR_BIN")
tmp=$(mktemp -d /tmp/familiar-soak.XXXXXX)
if [ -z "${SOAK_KEEP:-}" ]; then trap 'rm -rf "$tmp"' EXIT; fi
echo "soak: $minutes min at $rate lines/s, binary $bin, temp dir $tmp" >&2

python3 - "$bin" "$fixtures" "$tmp" "$minutes" "$rate" <<'PY'
import collections, json, os, pathlib, random, signal, subprocess, sys, threading, time

binary, fixtures, tmp = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
minutes, rate = float(sys.argv[4]), float(sys.argv[5])
rng = random.Random(7)

# Content: real records (no invented shapes), each whole line as Claude Code wrote it.
pool = []
for path in sorted(fixtures.glob("*.jsonl")):
    for line in path.read_bytes().splitlines(keepends=True):
        if line.startswith(b"{") and line.endswith(b"\n") and len(line) <= 32 * 1024:
            pool.append(line)
if not pool:
    sys.exit(f"no fixture lines under {fixtures}")

def marker(text):
    # A summary record (the shape of the real fixtures' `summary` lines) naming a sync point.
    return json.dumps({"type": "summary", "summary": text, "leafUuid": text}).encode() + b"\n"

config = tmp / "claude"
project = config / "projects" / "-soak-project"
project.mkdir(parents=True)
live = project / "session.jsonl"
pieces_dir = tmp / "pieces"
env = dict(os.environ, CLAUDE_CONFIG_DIR=str(config), HOME=str(tmp), XDG_CONFIG_HOME=str(tmp / ".config"),
           FAMILIAR_SOCKET=str(tmp / "hook.sock"), DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/soak-bus",
           NO_COLOR="1")
for var in ("FAMILIAR_CONFIG", "RUST_LOG"):
    env.pop(var, None)
watcher = subprocess.Popen([binary, "-v", "watch", "--headless", "--events", "--no-notify", "--all"],
                           env=env, cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)

events, actions, seen = [], [0], set()
cond = threading.Condition()
stderr_lines = []

def read_stdout():
    for raw in watcher.stdout:
        line = raw.decode().rstrip("\n")
        if line.startswith('{"action":'):
            actions[0] += 1
            continue
        event = json.loads(line)
        if event.get("kind") == "status":
            continue  # idle/quiet timers: not records, `familiar events` never prints them
        with cond:
            events.append(line)
            if event.get("kind") == "summary" and str(event.get("text", "")).startswith("soak-"):
                seen.add(event["text"])
                cond.notify_all()

def read_stderr():
    for raw in watcher.stderr:
        with cond:
            stderr_lines.append(raw.decode(errors="replace").rstrip("\n"))
            cond.notify_all()

threading.Thread(target=read_stdout, daemon=True).start()
threading.Thread(target=read_stderr, daemon=True).start()

def wait_for(pred, what, timeout=120):
    deadline = time.monotonic() + timeout
    with cond:
        while not pred():
            left = deadline - time.monotonic()
            if left <= 0 or watcher.poll() is not None:
                sys.exit(f"soak: no {what} within {timeout}s (watcher exit {watcher.poll()}); "
                         f"stderr tail: {stderr_lines[-10:]}")
            cond.wait(min(left, 1))

wait_for(lambda: any("caught up" in l for l in stderr_lines), "'caught up'")

rss = []  # (seconds since start, kB)
stop = threading.Event()
start = time.monotonic()
def sample_rss():
    while not stop.is_set():
        try:
            for l in open(f"/proc/{watcher.pid}/status"):
                if l.startswith("VmRSS:"):
                    rss.append((time.monotonic() - start, int(l.split()[1])))
        except OSError:
            return
        stop.wait(2)
threading.Thread(target=sample_rss, daemon=True).start()

pieces = []          # bytes of each piece (file content between two resets)
current = bytearray()
fd = None
ops = collections.Counter()
written_lines = 0
written_bytes = 0
seq = 0

def open_live(truncate):
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | (os.O_TRUNC if truncate else 0)
    return os.open(live, flags, 0o644)

def write(data):
    global written_bytes
    os.write(fd, data)
    current.extend(data)
    written_bytes += len(data)

def new_piece(how):
    global fd, current, seq
    if current:
        pieces.append(bytes(current))
    current = bytearray()
    seq += 1
    first = marker(f"soak-{seq}-start")  # a distinct first line: a new transcript, not a copy
    if how == "rotate":
        # Replace the file by a new one: written beside it, renamed over it.
        side = project / ".session.next"
        side_fd = os.open(side, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(side_fd, first)
        os.close(side_fd)
        os.replace(side, live)
        if fd is not None:
            os.close(fd)
        fd = open_live(False)
        current.extend(first)
    else:
        if fd is not None:
            os.close(fd)
        fd = open_live(how == "truncate")
        write(first)
    ops[how] += 1

new_piece("create")
end_at = start + minutes * 60
segment = 0
while time.monotonic() < end_at:
    # One segment: a few thousand records at the target rate, in uneven writes that cut lines.
    seg_start, n = time.monotonic(), rng.randint(1000, 8000)
    i = 0
    while i < n and time.monotonic() < end_at:
        batch = b"".join(rng.choice(pool) for _ in range(rng.randint(1, 40)))
        i += batch.count(b"\n")
        cut = rng.randrange(len(batch)) if rng.random() < 0.3 else len(batch)
        write(batch[:cut])
        if cut < len(batch):
            time.sleep(0.001)  # half a line on disk for a moment
            write(batch[cut:])
        written_lines += batch.count(b"\n")
        ahead = seg_start + i / rate - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
    segment += 1
    text = f"soak-{seq}-sync-{segment}"
    write(marker(text))
    # Sync point: everything so far was read before the file is cut or replaced.
    wait_for(lambda: text in seen, f"sync marker {text}")
    how = rng.choice(["append", "append", "truncate", "rotate"])
    if how == "append":
        ops["append"] += 1
    else:
        new_piece(how)

text = f"soak-{seq}-end"
write(marker(text))
wait_for(lambda: text in seen, "end marker")
writing_s = time.monotonic() - start
pieces.append(bytes(current))
time.sleep(4)  # let any late (wrong) output show up before counting
stop.set()
watcher.send_signal(signal.SIGINT)
status = watcher.wait(timeout=30)

# What `familiar events` prints for each piece, as its own file of the same name.
expected = []
for k, piece in enumerate(pieces):
    d = pieces_dir / str(k)
    d.mkdir(parents=True)
    (d / "session.jsonl").write_bytes(piece)
    out = subprocess.run([binary, "events", str(d / "session.jsonl")], env=env, capture_output=True, check=True)
    # The live tailer names the session of a record that carries none after its file
    # (familiar_tail::file::tag); `familiar events` leaves it empty. Apply the same rule.
    expected.extend(line.replace(',"session":null,', ',"session":"session",', 1)
                    for line in out.stdout.decode().splitlines())

got = events
lost = collections.Counter(expected) - collections.Counter(got)
doubled = collections.Counter(got) - collections.Counter(expected)
same = got == expected
kb = [k for _, k in rss]
tenth = max(1, len(kb) // 10)
print(f"duration            {writing_s:.0f} s writing ({minutes:g} min asked), watcher exit {status}")
print(f"written             {written_lines} records, {written_bytes / 1e6:.1f} MB, {len(pieces)} pieces "
      f"({ops['truncate']} truncations, {ops['rotate']} rotations, {ops['append']} plain sync points)")
print(f"watcher printed     {len(got)} events ({len(got) / writing_s:.0f} events/s), {actions[0]} actions")
print(f"familiar events     {len(expected)} events for the same pieces")
print(f"lost / doubled      {sum(lost.values())} / {sum(doubled.values())}; same order: {same}")
print(f"watcher RSS (MiB)   min {min(kb) / 1024:.1f}  max {max(kb) / 1024:.1f}  "
      f"first 10% median {sorted(kb[:tenth])[tenth // 2] / 1024:.1f}  "
      f"last 10% median {sorted(kb[-tenth:])[tenth // 2] / 1024:.1f}  ({len(kb)} samples, every 2 s)")
step = max(1, len(rss) // 12)
print("RSS over time       " + "  ".join(f"{t:.0f}s:{k / 1024:.1f}" for t, k in rss[::step]))
(tmp / "rss.tsv").write_text("".join(f"{t:.1f}\t{k}\n" for t, k in rss))
if not same or status != 0:
    for line in list(lost)[:3]:
        print("lost:", line[:200])
    for line in list(doubled)[:3]:
        print("doubled:", line[:200])
    print("stderr tail:", *stderr_lines[-10:], sep="\n  ")
    sys.exit("soak: FAILED")
print("soak: OK")
PY
