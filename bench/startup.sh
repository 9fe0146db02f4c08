#!/usr/bin/env bash
# Start-up time and peak RSS of the headless commands (issue 17: RSS <= 20 MB, start-up <= 2 ms),
# side by side with the tools users run instead: ccusage 20.0.24 (npm, pinned by
# bench/node/package-lock.json) for `stats`, jq for `events`. Every command runs RUNS times,
# interleaved round-robin so that load hits all alike; each row gives the best, median and
# slowest wall time (`true` is the floor of the harness itself: fork + exec from Python), and
# the largest peak RSS of RUNS more runs under GNU time (a child forked from Python would count
# Python's own pages).
# Inputs: the real fixtures (../shared/fixtures/real, 15 transcripts, 14 MiB) as a Claude Code
# config dir; `events`, `run` and `statusline` read its largest transcript (3.1 MiB).
# Usage: bench/startup.sh   (RUNS=31 by default; needs npm, jq, python3; builds the release
# binaries)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-31}
real=${FAMILIAR_REAL_FIXTURES:-../shared/fixtures/real}
# npm 11 refuses `npm ci` on this lock file (it lacks the other platforms' optional packages):
# then the pinned version from package.json, without touching the lock file.
[ -x bench/node/node_modules/.bin/ccusage ] || npm ci --prefix bench/node --no-audit --no-fund >/dev/null \
  || npm install --prefix bench/node --no-audit --no-fund --no-package-lock >/dev/null
cargo build --release --quiet --bins
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/claude/projects/-home-u-p"
cp "$real"/*.jsonl "$work/claude/projects/-home-u-p/"
exec python3 - "$runs" "$work/claude" "$PWD" <<'EOF'
import os, signal, statistics, subprocess, sys, tempfile, time

runs, claude, root = int(sys.argv[1]), sys.argv[2], sys.argv[3]
bin = f"{root}/target/release/familiar"
ccusage = f"{root}/bench/node/node_modules/.bin/ccusage"
project = f"{claude}/projects/-home-u-p"
files = sorted(os.path.join(project, f) for f in os.listdir(project))
largest = max(files, key=os.path.getsize)
env = dict(os.environ, CLAUDE_CONFIG_DIR=claude, NO_COLOR="1", HOME=claude,
           XDG_CONFIG_HOME=f"{claude}/config", FAMILIAR_SOCKET=f"{claude}/hook.sock")
env.pop("RUST_LOG", None)
hook = ('{"hook_event_name":"Status","session_id":"s","transcript_path":"%s",'
        '"model":{"id":"claude-opus-4-8","display_name":"Opus 4.8"}}' % largest).encode()
jq_tools = 'select(.type=="assistant") | .message.content[]? | select(.type=="tool_use") | .name'

def once(argv, stdin=b""):
    """Wall time (s) of one run; output discarded."""
    start = time.perf_counter()
    p = subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=env)
    elapsed = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f"{argv} failed ({p.returncode})")
    return elapsed

def peak_rss(argv, stdin=b""):
    """Peak RSS (KiB) of one run, as GNU time reports it."""
    with tempfile.NamedTemporaryFile("r") as out:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, *argv], input=stdin,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        if p.returncode != 0:
            sys.exit(f"{argv} failed ({p.returncode})")
        return int(out.read().split()[-1])

def watch(rss):
    """`watch --headless --events`: time to its first line (the start-up snapshot of the
    sessions), then Ctrl-C. With `rss`, run under GNU time (which ignores the Ctrl-C) and
    return the peak RSS instead."""
    with tempfile.NamedTemporaryFile("r") as out:
        argv = [bin, "watch", "--headless", "--events", "--all", "--no-notify"]
        if rss:
            argv = ["/usr/bin/time", "-f", "%M", "-o", out.name, *argv]
        start = time.perf_counter()
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        p.stdout.readline()
        elapsed = time.perf_counter() - start
        os.killpg(p.pid, signal.SIGINT)
        p.stdout.read()
        if p.wait() != 0:
            sys.exit("watch --headless failed")
        return int(out.read().split()[-1]) if rss else elapsed

rows = [
    ("true (harness floor)", ["true"], b"", None),
    ("familiar --version", [bin, "--version"], b"", None),
    ("ccusage --version", [ccusage, "--version"], b"", None),
    ("jq --version", ["jq", "--version"], b"", None),
    ("familiar events (3.1 MiB)", [bin, "events", largest], b"", None),
    ("jq -c tool_use names (3.1 MiB)", ["jq", "-c", jq_tools, largest], b"", None),
    # Reading every file, as ccusage does (from its cache of files read it takes 2-3 ms).
    ("familiar stats --json (15 files, 14 MiB)", [bin, "-q", "stats", "--json", "--no-cache", *files], b"", None),
    ("ccusage claude daily --offline (same)", [ccusage, "claude", "daily", "--json", "--offline"], b"", None),
    ("familiar sessions --all", [bin, "sessions", "--all"], b"", None),
    ("familiar statusline (3.1 MiB)", [bin, "statusline"], hook, None),
    ("familiar run default.rhai (3.1 MiB)", [bin, "run", f"{root}/scripts/default.rhai", "--input", largest], b"", None),
    ("familiar watch --headless: first line", None, b"", watch),
]
times = {label: [] for label, *_ in rows}
rss = {label: 0 for label, *_ in rows}
for _ in range(runs):
    for label, argv, stdin, special in rows:
        times[label].append(special(False) if special else once(argv, stdin))
        m = special(True) if special else peak_rss(argv, stdin)
        rss[label] = max(rss[label], m)

print(f"{runs} runs each, interleaved; wall time best / median / slowest, largest peak RSS")
for label, *_ in rows:
    t = sorted(times[label])
    print(f"{label:44} {t[0]*1e3:8.2f} / {statistics.median(t)*1e3:8.2f} / {t[-1]*1e3:8.2f} ms"
          f"  {rss[label]/1024:6.1f} MB")
def ratio(a, b):
    return min(times[b]) / min(times[a])
print(f"familiar --version vs ccusage --version: {ratio('familiar --version', 'ccusage --version'):.1f}x faster (bests)")
print(f"familiar events vs jq: {ratio('familiar events (3.1 MiB)', 'jq -c tool_use names (3.1 MiB)'):.1f}x faster (bests)")
print(f"familiar stats vs ccusage: {ratio('familiar stats --json (15 files, 14 MiB)', 'ccusage claude daily --offline (same)'):.1f}x faster (bests)")
EOF
