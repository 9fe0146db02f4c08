#!/usr/bin/env bash
# Tailer rotation stress (issue 12): many randomized runs of the tailer at line level, each
# with appends cut anywhere (mid-line, mid-UTF-8), copytruncate, rename-and-recreate,
# delete-and-recreate and a second session appearing mid-run, against real files, real
# inotify and (every 5th run) the poll loop. Reports lines lost / doubled / out of order /
# stray / misnumbered (all must be 0; lines a truncation cut before they were read are
# counted apart: gone from disk) and the driver's RSS, which must stay flat.
# CI runs the short version: `cargo test -p familiar-tail --test rotation` (32 runs).
#
# usage: bench/tail-stress.sh [RUNS] [STEPS]     (defaults: 10000 runs of 120 steps)
#        bench/tail-stress.sh --seed N           replay one run
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--seed" ]; then
  exec cargo run --release --quiet -p familiar-tail --example tail_stress -- --seed "${2:?seed}"
fi
runs=${1:-10000}
steps=${2:-120}
exec cargo run --release --quiet -p familiar-tail --example tail_stress -- --runs "$runs" --steps "$steps"
