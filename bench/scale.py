"""Scale of the headless watcher: N live sessions (a quarter of them with a subagent
transcript) each appended at 10 lines/s with real fixture lines, for a fixed time, while
`familiar watch --headless --all` follows them through the shipped scripts. Reports the
watcher's CPU (share of one core) and peak RSS for each N.
Usage: python3 bench/scale.py [SECONDS] [BINARY]   (default 20 s, target/release/familiar)
SESSIONS="200" (space-separated) picks the counts; PERF=FILE records the last count's watcher
with `perf record -g` (or PERF_ARGS, e.g. "--call-graph dwarf") into FILE (for `perf report -i FILE`)."""
import glob
import os
import subprocess
import sys
import tempfile
import time

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/familiar"
here = os.path.dirname(os.path.abspath(__file__))
fixtures = os.environ.get("FAMILIAR_REAL_FIXTURES", os.path.join(here, "../../shared/fixtures/real"))
lines = []
for path in sorted(glob.glob(os.path.join(fixtures, "v2.1.*.jsonl"))):
    with open(path, "rb") as f:
        lines.extend(l for l in f if len(l) < 20000)
ticks = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks


def wakeups(pid):
    """Context switches so far per thread name (each one a wake-up of that thread)."""
    counts = {}
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            with open(f"{task}/comm") as f:
                name = f.read().strip()
            with open(f"{task}/status") as f:
                # voluntary_ctxt_switches + nonvoluntary_ctxt_switches
                n = sum(int(l.split()[1]) for l in f if "ctxt_switches:" in l)
        except OSError:
            continue
        counts[name] = counts.get(name, 0) + n
    return counts


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def measure(sessions, home):
    """One round: SESSIONS live files under HOME, followed by one watcher."""
    project = os.path.join(home, ".claude", "projects", "-work-scale")
    os.makedirs(project)
    files = []
    for n in range(sessions):
        sid = f"00000000-0000-4000-8000-{n:012d}"
        files.append(open(os.path.join(project, f"{sid}.jsonl"), "ab"))
        if n % 4 == 0:
            sub = os.path.join(project, sid, "subagents")
            os.makedirs(sub)
            files.append(open(os.path.join(sub, f"agent-a{n:06d}.jsonl"), "ab"))
    env = dict(os.environ, HOME=home, CLAUDE_CONFIG_DIR=os.path.join(home, ".claude"),
               XDG_CONFIG_HOME=os.path.join(home, ".config"),
               FAMILIAR_SOCKET=os.path.join(home, "sock"),
               DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent")
    watch = subprocess.Popen([binary, "watch", "--headless", "--no-notify", "--all"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        time.sleep(1.5)
        perf = None
        if os.environ.get("PERF"):
            perf = subprocess.Popen(["perf", "record"] + os.environ.get("PERF_ARGS", "-g").split() + ["-o", os.environ["PERF"], "-p", str(watch.pid)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        start_cpu, start_wakes, start = cpu_seconds(watch.pid), wakeups(watch.pid), time.monotonic()
        written, i = 0, 0
        # Each file gets 10 lines per second, spread evenly.
        interval = 1.0 / (10 * len(files))
        next_at = start
        while time.monotonic() - start < seconds:
            f = files[i % len(files)]
            f.write(lines[i % len(lines)])
            f.flush()
            i += 1
            written += 1
            next_at += interval
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        elapsed = time.monotonic() - start
        cpu = (cpu_seconds(watch.pid) - start_cpu) / elapsed * 100
        rss = rss_kb(watch.pid) / 1024
        end_wakes = wakeups(watch.pid)
        per_thread = ", ".join(f"{name} {(end_wakes[name] - start_wakes.get(name, 0)) / elapsed:.0f}"
                               for name in sorted(end_wakes))
        if perf:
            perf.send_signal(2)
            perf.wait()
        print(f"{sessions:>8} {len(files):>6} {written / elapsed:>8.0f} {cpu:>16.1f} {rss:>12.1f}"
              f"   wake-ups/s: {per_thread}")
    finally:
        # The watcher ends, and its files with the temporary home, whatever happened here.
        watch.terminate()
        watch.wait()
        for f in files:
            f.close()


print("load average (1, 5, 15 min) at start: %.2f %.2f %.2f" % os.getloadavg())
print(f"{'sessions':>8} {'files':>6} {'lines/s':>8} {'CPU % of a core':>16} {'peak RSS MB':>12}")
for sessions in [int(n) for n in os.environ.get("SESSIONS", "1 10 100 200").split()]:
    # Removed after each round: 1,000 sessions leave about 350 MB of transcripts.
    with tempfile.TemporaryDirectory(prefix="familiar-scale-") as home:
        measure(sessions, home)
print("load average (1, 5, 15 min) at end: %.2f %.2f %.2f" % os.getloadavg())
