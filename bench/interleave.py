#!/usr/bin/env python3
"""Time commands in interleaved rounds, so that load varying over the run hits all alike.

Usage: interleave.py RUNS NAME ARGV_JSON [NAME ARGV_JSON ...]
Each round runs every command once, in order, with stdout to /dev/null. Prints one line per
command: NAME<TAB>best s<TAB>slowest s<TAB>peak RSS KB of the best run<TAB>median s<TAB>median CPU s
(user and system, every thread). Wall time is measured here (ns); peak RSS and CPU time by GNU
time around the command, so they are the command's own (a child forked from Python would count
Python's pages)."""
import json, os, subprocess, sys, tempfile, time

def median(values):
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


runs = int(sys.argv[1])
commands = [(sys.argv[i], json.loads(sys.argv[i + 1])) for i in range(2, len(sys.argv), 2)]
results = {name: [] for name, _ in commands}
with tempfile.NamedTemporaryFile("r") as rss_file:
    for _ in range(runs):
        for name, argv in commands:
            start = time.perf_counter_ns()
            subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", rss_file.name, *argv],
                           stdout=subprocess.DEVNULL, check=False)
            wall = (time.perf_counter_ns() - start) / 1e9
            rss_file.seek(0)
            lines = rss_file.read().split()
            rss, cpu = (int(lines[-3]), float(lines[-2]) + float(lines[-1])) if lines else (0, 0.0)
            results[name].append((wall, rss, cpu))
for name, _ in commands:
    best = min(results[name])
    walls = sorted(wall for wall, _, _ in results[name])
    cpus = sorted(cpu for _, _, cpu in results[name])
    print(f"{name}\t{best[0]:.4f}\t{walls[-1]:.4f}\t{best[1]}\t{median(walls):.4f}\t{median(cpus):.2f}")
