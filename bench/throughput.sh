#!/usr/bin/env bash
# Throughput and peak memory of `familiar events` and `familiar stats` on a ~100 MB transcript
# built from the real fixtures, next to a plain Python loop making the same counts
# (bench/py_counts.py), jq doing a simpler extraction (tool_use names) and `cat` (the rate of
# reading the bytes at all); then `familiar events`, jq and cat again on many files (COPIES,
# default 8, copies of every real fixture). Ratios are of the bests of the same run.
# Usage: bench/throughput.sh [SIZE_MB]   (needs jq and GNU time; builds the release binary)
# BASELINE=/path/to/an/older/familiar also times that binary's `events` in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${1:-100}
corpus=bench/out/corpus-$size_mb.jsonl
[ -f "$corpus" ] || bench/make-corpus.sh "$corpus" "$size_mb" >/dev/null
cargo build --release --quiet --bin familiar
bin=target/release/familiar
bytes=$(stat -c %s "$corpus")
runs=${RUNS:-5}

# best-of-N wall time (s), the worst (the noise range) and the peak RSS (KB) of the best run
measure() {
  local best="" worst="" rss=""
  for _ in $(seq "$runs"); do
    # Wall time in ns (cat takes a few ms: /usr/bin/time's 10 ms steps are too coarse).
    local start end m t
    start=$(date +%s%N)
    m=$( { /usr/bin/time -f "%M" "$@" >/dev/null; } 2>&1 | tail -1)
    end=$(date +%s%N)
    t=$(awk "BEGIN{printf \"%.4f\", ($end - $start) / 1e9}")
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; rss=$m; fi
    if [ -z "$worst" ] || awk "BEGIN{exit !($t > $worst)}"; then worst=$t; fi
  done
  echo "$best $worst $rss"
}

# The README rows give the load each figure was measured under.
echo "load: $(uptime | sed 's/.*load average: //') (1, 5, 15 min; $(nproc) cores)"
printf '%-40s %9s %10s %10s  %s\n' "command ($((bytes / 1048576)) MiB)" "best s" "MB/s" "peak RSS" "range s"
declare -A best_of
report() {
  local name=$1; shift
  read -r t worst rss < <(measure "$@")
  best_of[$name]=$t
  local mbs
  mbs=$(awk "BEGIN{ if ($t > 0) printf \"%.0f\", $bytes / 1000000 / $t; else print \"inf\" }")
  printf '%-40s %9s %10s %8s MB  %s-%s\n' "$name" "$t" "$mbs" "$((rss / 1024))" "$t" "$worst"
}
ratios() { # label: familiar events against jq and cat, from the bests above
  awk -v f="${best_of[familiar events]}" -v j="${best_of[jq -c (tool_use names only)]:-0}" \
    -v c="${best_of[cat]}" -v label="$1" 'BEGIN {
    printf "%s: familiar events is %.1fx jq; it reaches %.0f%% of cat'"'"'s rate\n", label, (f > 0 ? j / f : 0), (f > 0 ? c / f * 100 : 0) }'
}
jq_filter='select(.type=="assistant") | .message.content[]? | select(.type=="tool_use") | .name'
report "familiar events" "$bin" events "$corpus"
baseline() { # the older binary, same input, same run
  [ -n "${BASELINE:-}" ] || return 0
  report "events, BASELINE binary" "$BASELINE" events "$@"
  awk -v f="${best_of[familiar events]}" -v b="${best_of[events, BASELINE binary]}" 'BEGIN {
    printf "familiar events is %.2fx the BASELINE binary\n", (f > 0 ? b / f : 0) }'
}
baseline "$corpus"
report "familiar stats" "$bin" stats "$corpus"
report "familiar stats --json" "$bin" stats --json "$corpus"
report "python3 json.loads loop (counts)" python3 bench/py_counts.py "$corpus"
report "jq -c (tool_use names only)" jq -c "$jq_filter" "$corpus"
report "cat" cat "$corpus"
ratios "one file"
awk -v s="${best_of[familiar stats]}" -v p="${best_of[python3 json.loads loop (counts)]}" 'BEGIN {
  printf "one file: familiar stats is %.1fx the Python loop making the same counts\n", (s > 0 ? p / s : 0) }'

copies=${COPIES:-8}
many=bench/out/many-$copies
real=${FAMILIAR_REAL_FIXTURES:-../shared/fixtures/real}
if [ ! -d "$many" ]; then
  for n in $(seq "$copies"); do
    mkdir -p "$many/copy-$n"
    cp "$real"/*.jsonl "$many/copy-$n/"
  done
fi
mapfile -t files < <(find "$many" -name '*.jsonl' | sort)
bytes=$(cat "${files[@]}" | wc -c)
echo
printf '%-40s %9s %10s %10s  %s\n' "command (${#files[@]} files, $((bytes / 1048576)) MiB)" "best s" "MB/s" "peak RSS" "range s"
report "familiar events" "$bin" events "${files[@]}"
baseline "${files[@]}"
report "jq -c (tool_use names only)" jq -c "$jq_filter" "${files[@]}"
report "cat" cat "${files[@]}"
ratios "many files"
