#!/usr/bin/env bash
# Codex start-up: `familiar sessions --agent codex` in a project with no rollout of its own,
# beside ROLLOUTS rollouts of another project (the real Codex 0.169.0 rollout of fixtures/,
# its cwd changed, grown to SIZE_MIB MiB each) under $CODEX_HOME/sessions/YYYY/MM/DD/. Each
# rollout is placed by its first record's `cwd`, so start-up reads every rollout's head.
# Wall time best / median of RUNS runs per binary, interleaved.
# Usage: bench/codex-startup.sh [BINARY...]   (default target/release/familiar; ROLLOUTS=300,
# SIZE_MIB=2, RUNS=7)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- target/release/familiar
exec python3 - "$@" <<'PY'
import os, statistics, subprocess, sys, tempfile, time
rollouts, size, runs = (int(os.environ.get(k, d)) for k, d in
                        (("ROLLOUTS", 300), ("SIZE_MIB", 2), ("RUNS", 7)))
home = tempfile.mkdtemp(prefix="familiar-codex-startup-")
project = os.path.join(home, "project")
os.makedirs(project)
with open("fixtures/codex-0.169.0/main.jsonl", "rb") as f:
    body = f.read().replace(b"/tmp/familiar-codex/project", b"/elsewhere/other-project")
grown = body * (size * (1 << 20) // len(body) + 1)
for n in range(rollouts):
    day = os.path.join(home, "codex", "sessions", "2026", "%02d" % (n % 12 + 1), "%02d" % (n % 28 + 1))
    os.makedirs(day, exist_ok=True)
    with open(os.path.join(day, "rollout-2026-01-01T00-00-00-01a20948-f0cb-7390-9270-%012d.jsonl" % n), "wb") as f:
        f.write(grown)
env = dict(os.environ, HOME=home, CODEX_HOME=os.path.join(home, "codex"),
           CLAUDE_CONFIG_DIR=os.path.join(home, "claude"), XDG_CONFIG_HOME=os.path.join(home, "config"))
times = {b: [] for b in sys.argv[1:]}
print("load average at start: %.2f %.2f %.2f" % os.getloadavg())
for _ in range(runs):
    for b in sys.argv[1:]:
        start = time.perf_counter()
        subprocess.run([b, "-q", "sessions", "--agent", "codex", "--project", project], env=env,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[b].append(time.perf_counter() - start)
print(f"{rollouts} rollouts of {size} MiB (another project's), {runs} runs each, interleaved")
for b, t in times.items():
    t.sort()
    print(f"{b:40} best {t[0]*1e3:8.1f} ms  median {statistics.median(t)*1e3:8.1f} ms  slowest {t[-1]*1e3:8.1f} ms")
print("load average at end: %.2f %.2f %.2f" % os.getloadavg())
subprocess.run(["rm", "-rf", home])
PY
