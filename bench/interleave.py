#!/usr/bin/env python3
"""Time commands in interleaved rounds, so that load varying over the run hits all alike.

Usage: interleave.py RUNS NAME ARGV_JSON [NAME ARGV_JSON ...]
Each round runs every command once, in order, with stdout to /dev/null. Prints one line per
command: NAME<TAB>best s<TAB>slowest s<TAB>peak RSS KB of the best run. Wall time is measured
here (ns); peak RSS by GNU time around the command, so it is the command's own (a child forked
from Python would count Python's pages)."""
import json, os, subprocess, sys, tempfile, time

runs = int(sys.argv[1])
commands = [(sys.argv[i], json.loads(sys.argv[i + 1])) for i in range(2, len(sys.argv), 2)]
results = {name: [] for name, _ in commands}
with tempfile.NamedTemporaryFile("r") as rss_file:
    for _ in range(runs):
        for name, argv in commands:
            start = time.perf_counter_ns()
            subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file.name, *argv],
                           stdout=subprocess.DEVNULL, check=False)
            wall = (time.perf_counter_ns() - start) / 1e9
            rss_file.seek(0)
            lines = rss_file.read().split()
            results[name].append((wall, int(lines[-1]) if lines else 0))
for name, _ in commands:
    best = min(results[name])
    slowest = max(wall for wall, _ in results[name])
    print(f"{name}\t{best[0]:.4f}\t{slowest:.4f}\t{best[1]}")
