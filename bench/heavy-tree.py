#!/usr/bin/env python3
"""A heavy user's tree (issue 31): a year of Claude Code and Codex use, generated from real
transcripts, and what `familiar` does with it.

Builds TRANSCRIPTS Claude Code transcripts over PROJECTS projects and ROLLOUTS Codex rollouts
(defaults 5,000, 50 and 2,000; about GIGABYTES, default 5, in all), each a real transcript's
records (`../shared/fixtures/real`, `fixtures/codex-0.171.0`) repeated with ids made unique
(session, message and request ids: nothing is counted twice), most of them months old (their
mtimes spread over the past year). Then measures, warm (and cold when the page cache can be
dropped, as root), in interleaved rounds:

- `familiar sessions` of one project and `--all`: the answer (sessions not written for a day
  are dormant: counted, not read); `--since all` reads every one;
- `familiar watch --headless` of one project: until it says it caught up;
- `familiar watch --headless --all -v`: until it says it caught up (every session's snapshot
  printed), then Ctrl-C;
- `familiar stats FILES...` over every Claude transcript, beside `ccusage claude daily --json
  --offline` (the pinned ccusage of bench/node) on the same tree, with their token totals:
  reading every file (`--no-cache`), its first run (reading every file and filling its cache of
  files read, the tree's own `~/.cache/familiar`), and a run after it (answering from that).

For each: wall time (median and range), bytes read (`rchar` of the child, as the kernel counts
its read calls), peak RSS. Nothing under ~/.claude or ~/.codex is read.

usage: bench/heavy-tree.py OUT_DIR [--transcripts N] [--rollouts N] [--projects N]
                           [--gigabytes G] [--rounds N] [--keep]
env:   FAMILIAR_BIN (default target/release/familiar), FAMILIAR_REAL_FIXTURES
"""

import argparse
import json
import os
import pathlib
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
DAY = 86400


def rchar():
    """Bytes this process and its waited-for children read, as the kernel counts them."""
    with open("/proc/self/io") as io:
        for line in io:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


def build(out, transcripts, rollouts, projects, gigabytes, rng):
    real = pathlib.Path(os.environ.get("FAMILIAR_REAL_FIXTURES", ROOT.parent / "shared/fixtures/real"))
    sources = []
    for path in sorted(real.glob("*.jsonl")):
        lines = [l for l in path.read_bytes().splitlines(keepends=True)
                 if l.startswith(b"{") and l.endswith(b"\n") and b'"timestamp"' in l]
        if len(lines) > 20:
            sources.append(lines)
    if not sources:
        sys.exit(f"no fixtures under {real}")
    codex = [l for l in (ROOT / "fixtures/codex-0.171.0/main.jsonl").read_bytes().splitlines(keepends=True)
             if l.startswith(b"{")]
    home = out / "home"
    config = home / "claude"
    per_file = int(gigabytes * 1e9 / max(1, transcripts + rollouts))
    now = time.time()
    ids = re.compile(rb'"(msg|req)_([A-Za-z0-9]+)"')
    session = re.compile(rb'"sessionId":"[^"]*"')
    cwd = re.compile(rb'"cwd":"[^"]*"')
    written = 0
    for n in range(transcripts):
        project = out / "code" / f"project-{n % projects:03d}"
        encoded = "".join(c if c.isalnum() else "-" for c in str(project))
        folder = config / "projects" / encoded
        folder.mkdir(parents=True, exist_ok=True)
        sid = f"{n:08x}-0000-4000-8000-{rng.getrandbits(48):012x}"
        lines = rng.choice(sources)
        path = folder / f"{sid}.jsonl"
        size, copy = 0, 0
        with open(path, "wb") as f:
            while size < per_file:
                tag = f"{n}x{copy}".encode()
                for line in lines:
                    if size >= per_file:
                        break
                    line = ids.sub(lambda m: b'"' + m.group(1) + b"_" + tag + b"_" + m.group(2) + b'"', line)
                    line = session.sub(b'"sessionId":"' + sid.encode() + b'"', line)
                    line = cwd.sub(b'"cwd":"' + str(project).encode() + b'"', line)
                    f.write(line)
                    size += len(line)
                copy += 1
        written += size
        # A year of sessions, a dozen or so a day: most of them months old.
        age = rng.random() * 365 * DAY
        os.utime(path, (now - age, now - age))
    for n in range(rollouts):
        age = rng.random() * 365 * DAY
        day = time.gmtime(now - age)
        folder = home / ".codex/sessions" / f"{day.tm_year:04d}/{day.tm_mon:02d}/{day.tm_mday:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        rid = f"{n:08x}-0000-7000-8000-{rng.getrandbits(48):012x}"
        stamp = time.strftime("%Y-%m-%dT%H-%M-%S", day)
        path = folder / f"rollout-{stamp}-{rid}.jsonl"
        project = out / "code" / f"project-{n % projects:03d}"
        size = 0
        with open(path, "wb") as f:
            first = True
            while size < per_file:
                for line in codex:
                    if size >= per_file and not first:
                        break
                    if line.startswith(b'{"timestamp"') and b'"session_meta"' in line:
                        if not first:
                            continue
                        record = json.loads(line)
                        record["payload"]["id"] = rid
                        record["payload"]["cwd"] = str(project)
                        # Compact, as Codex writes it (Familiar reads either spelling:
                        # crates/familiar-transcript/tests/usage_one_parse.rs).
                        line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
                    f.write(line)
                    size += len(line)
                first = False
        written += size
        os.utime(path, (now - age, now - age))
    return home, written


def run_measured(argv, env, cwd, until=None):
    """Run `argv`; return (seconds, bytes read, peak RSS in KB). With `until`, a stderr text
    after which the process is interrupted (a watcher), the time being the time to it. The
    peak RSS is GNU time's (`%M`): a child forked from this Python would count the Python's
    pages as its own."""
    before = rchar()
    argv = ["/usr/bin/time", "-f", "maxrss %M", *argv]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    seconds = None
    rss = 0
    for line in proc.stderr:
        if until is not None and seconds is None and until.encode() in line:
            seconds = time.perf_counter() - start
            # GNU time ignores Ctrl-C while it waits: the group's familiar gets it.
            os.killpg(proc.pid, signal.SIGINT)
        if line.startswith(b"maxrss "):
            rss = int(line.split()[1])
    proc.wait()
    if until is None:
        seconds = time.perf_counter() - start
    elif seconds is None:
        sys.exit(f"{argv[3]} never said {until!r}")
    return seconds, rchar() - before, rss


def drop_caches():
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--transcripts", type=int, default=5000)
    parser.add_argument("--rollouts", type=int, default=2000)
    parser.add_argument("--projects", type=int, default=50)
    parser.add_argument("--gigabytes", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep an existing tree")
    args = parser.parse_args()
    out = pathlib.Path(args.out).resolve()
    binary = os.environ.get("FAMILIAR_BIN", str(ROOT / "target/release/familiar"))
    ccusage = ROOT / "bench/node/node_modules/.bin/ccusage"
    if not (args.keep and (out / "home").is_dir()):
        shutil.rmtree(out, ignore_errors=True)
        t = time.perf_counter()
        home, written = build(out, args.transcripts, args.rollouts, args.projects,
                              args.gigabytes, random.Random(31))
        print(f"tree: {args.transcripts} transcripts in {args.projects} projects, "
              f"{args.rollouts} rollouts, {written / 1e9:.2f} GB, built in "
              f"{time.perf_counter() - t:.0f} s", flush=True)
    home = out / "home"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / "claude"),
        "CODEX_HOME": str(home / ".codex"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "FAMILIAR_SOCKET": str(out / "hook.sock"),
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent",
        "NO_COLOR": "1",
    }
    project = out / "code/project-000"
    project.mkdir(parents=True, exist_ok=True)
    files = sorted(str(p) for p in (home / "claude/projects").rglob("*.jsonl"))
    commands = {
        "familiar sessions (one project)": ([binary, "sessions"], None),
        "familiar watch --headless (one project, caught up)":
            ([binary, "-v", "watch", "--headless", "--no-notify"], "caught up"),
        "familiar sessions --all": ([binary, "sessions", "--all"], None),
        "familiar sessions --all --since all": ([binary, "sessions", "--all", "--since", "all"], None),
        "familiar watch --headless --all (to caught up)":
            ([binary, "-v", "watch", "--headless", "--all", "--no-notify"], "caught up"),
        "familiar stats --no-cache (every Claude transcript)":
            ([binary, "-q", "stats", "--json", "--no-cache", *files], None),
        # Its first run: the cache emptied first (by the shell the binary then replaces).
        "familiar stats, filling its cache (the same)":
            (["sh", "-c", 'rm -rf "$HOME/.cache/familiar" && exec "$0" "$@"',
              binary, "-q", "stats", "--json", *files], None),
        "familiar stats, from its cache (the same)": ([binary, "-q", "stats", "--json", *files], None),
    }
    # The cache filled, and its answer checked against reading every file.
    kept = subprocess.run([binary, "-q", "stats", "--json", *files], env=env, cwd=str(project),
                          capture_output=True, check=True).stdout
    kept_again = subprocess.run([binary, "-q", "stats", "--json", *files], env=env,
                                cwd=str(project), capture_output=True, check=True).stdout
    read = subprocess.run([binary, "-q", "stats", "--json", "--no-cache", *files], env=env,
                          cwd=str(project), capture_output=True, check=True).stdout
    if kept != read or kept_again != read:
        sys.exit("familiar stats: the cache's answer is not what reading every file answers")
    print("familiar stats: the cache answers what reading every file answers, byte for byte")
    rows = [json.loads(line) for line in read.splitlines()]
    ours = [sum(row["tokens"][key] for row in rows)
            for key in ("input", "output", "cache_read", "cache_creation")]
    print(f"familiar stats totals: tokens {ours}, cost {sum(row['cost_usd'] for row in rows):.2f}")
    if ccusage.exists():
        theirs = json.loads(subprocess.run(
            [str(ccusage), "claude", "daily", "--json", "--offline"], env=env, cwd=str(project),
            capture_output=True, check=True).stdout)["totals"]
        theirs_tokens = [theirs[key] for key in
                         ("inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens")]
        print(f"ccusage totals:        tokens {theirs_tokens}, cost {theirs['totalCost']:.2f}"
              f" ({'the same tokens' if theirs_tokens == ours else 'TOKENS DIFFER'})")
    if ccusage.exists():
        commands["ccusage claude daily --json --offline"] = (
            [str(ccusage), "claude", "daily", "--json", "--offline"], None)
    else:
        print(f"(no {ccusage}: `npm install --prefix bench/node` for the comparison)")
    results = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, (argv, until) in commands.items():
            results[name].append(run_measured(argv, env, str(project), until))
    cold = {}
    if drop_caches():
        for name, (argv, until) in commands.items():
            drop_caches()
            cold[name] = run_measured(argv, env, str(project), until)
    print(f"{'command':52} {'warm s (median, range)':>26} {'cold s':>8} {'read MB':>9} {'RSS MB':>7}")
    for name, rows in results.items():
        times = [r[0] for r in rows]
        read = statistics.median(r[1] for r in rows) / 1e6
        rss = max(r[2] for r in rows) / 1024
        c = f"{cold[name][0]:.3f}" if name in cold else "-"
        print(f"{name:52} {statistics.median(times):9.3f} ({min(times):.3f}-{max(times):.3f})"
              f" {c:>8} {read:9.1f} {rss:7.1f}")
    if not args.keep:
        print(f"(tree left in {out}; --keep reuses it)")


if __name__ == "__main__":
    main()
