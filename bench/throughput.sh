#!/usr/bin/env bash
# Throughput and peak memory of `familiar events` and `familiar stats` on a ~100 MB transcript
# built from the real fixtures, next to a plain Python loop making the same counts
# (bench/py_counts.py), jq doing a simpler extraction (tool_use names) and `cat` (the rate of
# reading the bytes at all); then `familiar events`, jq and cat again on many files (COPIES,
# default 8, copies of every real fixture). Each group's commands run in RUNS (default 5)
# interleaved rounds; ratios are of the bests of the same rounds.
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

# docs/performance.md's rows give the load each figure was measured under.
echo "load: $(uptime | sed 's/.*load average: //') (1, 5, 15 min; $(nproc) cores)"
jq_filter='select(.type=="assistant") | .message.content[]? | select(.type=="tool_use") | .name'
declare -A best_of
# One table: every command of the group timed in RUNS interleaved rounds (bench/interleave.py),
# so that load changing during the run hits all alike; then the ratios of the bests.
# Arguments: the group's label, then NAME COMMAND-AS-JSON pairs.
table() {
  local label=$1; shift
  printf '%-40s %9s %10s %10s  %-15s %s\n' "command ($label)" "best s" "MB/s" "peak RSS" "range s" "median s"
  while IFS=$'\t' read -r name t worst rss median _cpu; do
    best_of[$name]=$t
    local mbs
    mbs=$(awk "BEGIN{ if ($t > 0) printf \"%.0f\", $bytes / 1000000 / $t; else print \"inf\" }")
    printf '%-40s %9s %10s %8s MB  %-15s %s\n' "$name" "$t" "$mbs" "$((rss / 1024))" "$t-$worst" "$median"
  done < <(python3 bench/interleave.py "$runs" "$@")
}
json() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@"; }
ratios() { # label: familiar events against jq and cat, from the bests above
  awk -v f="${best_of[familiar events]}" -v j="${best_of[jq -c (tool_use names only)]:-0}" \
    -v c="${best_of[cat]}" -v label="$1" 'BEGIN {
    printf "%s: familiar events is %.1fx jq; it reaches %.0f%% of cat'"'"'s rate\n", label, (f > 0 ? j / f : 0), (f > 0 ? c / f * 100 : 0) }'
}
baseline() { # the older binary against this one, from the same rounds
  [ -n "${BASELINE:-}" ] || return 0
  awk -v f="${best_of[familiar events]}" -v b="${best_of[events, BASELINE binary]}" 'BEGIN {
    printf "familiar events is %.2fx the BASELINE binary\n", (f > 0 ? b / f : 0) }'
}
with_baseline() { # NAME/JSON pair of the BASELINE binary on FILES..., when one is given
  [ -n "${BASELINE:-}" ] || return 0
  printf '%s\n%s\n' "events, BASELINE binary" "$(json "$BASELINE" events "$@")"
}

mapfile -t extra < <(with_baseline "$corpus")
table "$((bytes / 1048576)) MiB" \
  "familiar events" "$(json "$bin" events "$corpus")" \
  "${extra[@]}" \
  "familiar stats" "$(json "$bin" stats --no-cache "$corpus")" \
  "familiar stats --json" "$(json "$bin" stats --no-cache --json "$corpus")" \
  "python3 json.loads loop (counts)" "$(json python3 bench/py_counts.py "$corpus")" \
  "jq -c (tool_use names only)" "$(json jq -c "$jq_filter" "$corpus")" \
  "cat" "$(json cat "$corpus")"
baseline
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
mapfile -t extra < <(with_baseline "${files[@]}")
table "${#files[@]} files, $((bytes / 1048576)) MiB" \
  "familiar events" "$(json "$bin" events "${files[@]}")" \
  "${extra[@]}" \
  "jq -c (tool_use names only)" "$(json jq -c "$jq_filter" "${files[@]}")" \
  "cat" "$(json cat "${files[@]}")"
baseline
ratios "many files"
