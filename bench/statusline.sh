#!/usr/bin/env bash
# Wall time of `familiar statusline` (Claude Code runs it after every update) on a ~100 MB
# transcript: the corpus of bench/make-corpus.sh (its last compaction is a few MiB from the
# end), and a worst case with no compaction at all (one real session repeated to 100 MB, so the
# whole 8 MiB tail budget is parsed). Target: <= 50 ms. `familiar --version` is timed alongside
# as the floor (process start-up).
# Usage: bench/statusline.sh [SIZE_MB]   (builds the release binary)
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${1:-100}
runs=${RUNS:-21}
real=${FAMILIAR_REAL_FIXTURES:-../shared/fixtures/real}
corpus=bench/out/corpus-$size_mb.jsonl
[ -f "$corpus" ] || bench/make-corpus.sh "$corpus" "$size_mb" >/dev/null
worst=bench/out/no-compaction-$size_mb.jsonl
if [ ! -f "$worst" ]; then
  : >"$worst"
  while [ "$(stat -c %s "$worst")" -lt $((size_mb * 1048576)) ]; do
    cat "$real/v2.1.56-erk-api-error-turn-duration.jsonl" >>"$worst"
  done
fi
cargo build --release --quiet --bin familiar
bin=target/release/familiar
input() { printf '{"hook_event_name":"Status","session_id":"s","transcript_path":"%s","model":{"id":"claude-opus-4-8[1m]","display_name":"Opus 4.8"}}' "$PWD/$1"; }
now() { date +%s%N; }
time_ms() { # label, stdin, command...
  local label=$1 stdin=$2; shift 2
  local times=()
  for _ in $(seq "$runs"); do
    local start end
    start=$(now); "$@" <<<"$stdin" >/dev/null; end=$(now)
    times+=("$(( (end - start) / 1000 ))")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v label="$label" '{ v[NR] = $1 } END {
    printf "%-52s best %6.1f ms  median %6.1f ms  max %6.1f ms\n", label, v[1] / 1000, v[int((NR + 1) / 2)] / 1000, v[NR] / 1000 }'
}
echo "$($bin statusline <<<"$(input "$corpus")")   <- corpus"
echo "$($bin statusline <<<"$(input "$worst")")   <- no compaction"
time_ms "familiar --version (start-up floor)" "" "$bin" --version
time_ms "statusline, $(( $(stat -c %s "$corpus") / 1048576 )) MiB corpus" "$(input "$corpus")" "$bin" statusline
time_ms "statusline, $(( $(stat -c %s "$worst") / 1048576 )) MiB, no compaction (8 MiB parsed)" "$(input "$worst")" "$bin" statusline
