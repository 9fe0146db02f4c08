#!/usr/bin/env bash
# Throughput and peak memory of `familiar events` and `familiar stats` on a ~100 MB transcript
# built from the real fixtures, next to a plain Python loop making the same counts
# (bench/py_counts.py) and jq doing a simpler extraction (tool_use names).
# Usage: bench/throughput.sh [SIZE_MB]   (needs jq and GNU time; builds the release binary)
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${1:-100}
corpus=bench/out/corpus-$size_mb.jsonl
[ -f "$corpus" ] || bench/make-corpus.sh "$corpus" "$size_mb" >/dev/null
cargo build --release --quiet --bin familiar
bin=target/release/familiar
bytes=$(stat -c %s "$corpus")
runs=${RUNS:-5}

# best-of-N wall time (s) and the peak RSS (KB) of that run
measure() {
  local best="" rss=""
  for _ in $(seq "$runs"); do
    local out
    out=$( { /usr/bin/time -f "%e %M" "$@" >/dev/null; } 2>&1 | tail -1)
    local t=${out% *} m=${out#* }
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; rss=$m; fi
  done
  echo "$best $rss"
}

printf '%-40s %9s %10s %10s\n' "command ($((bytes / 1048576)) MiB)" "best s" "MB/s" "peak RSS"
report() {
  local name=$1; shift
  read -r t rss < <(measure "$@")
  local mbs
  mbs=$(awk "BEGIN{ if ($t > 0) printf \"%.0f\", $bytes / 1000000 / $t; else print \"inf\" }")
  printf '%-40s %9s %10s %8s MB\n' "$name" "$t" "$mbs" "$((rss / 1024))"
}
report "familiar events" "$bin" events "$corpus"
report "familiar stats" "$bin" stats "$corpus"
report "familiar stats --json" "$bin" stats --json "$corpus"
report "python3 json.loads loop (counts)" python3 bench/py_counts.py "$corpus"
if command -v jq >/dev/null; then
  report "jq -c (tool_use names only)" jq -c 'select(.type=="assistant") | .message.content[]? | select(.type=="tool_use") | .name' "$corpus"
fi
