#!/usr/bin/env bash
# Events -> actions end to end: `familiar run scripts/default.rhai` on an event-dense transcript
# (short real tool uses and tool results, about one event per line), against `familiar events`
# on the same file, interleaved round by round. Reports events/s of both, best of RUNS
# (default 5), the median and the range, the ratio of the two in each round (best and range),
# the peak RSS of the run and the load (`uptime`) before and after: what docs/performance.md's
# row needs.
# The transcript is built from the real fixtures' own records (assistant records with a
# tool_use block, user records with a tool_result block, under 2 KiB each), repeated to about
# SIZE_MB (default 100) into bench/out/ (never committed).
# Usage: bench/events-to-actions.sh [SIZE_MB]   (builds the release binary)
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${1:-100}
runs=${RUNS:-5}
real=${FAMILIAR_REAL_FIXTURES:-../shared/fixtures/real}
corpus=bench/out/dense-$size_mb.jsonl
if [ ! -f "$corpus" ]; then
  mkdir -p bench/out
  python3 - "$real" "$corpus" "$size_mb" <<'PY'
import json, pathlib, sys
real, out, size_mb = pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
keep = []
for path in sorted(real.glob("v*.jsonl")):
    for line in path.read_bytes().splitlines(keepends=True):
        if len(line) > 2048 or not line.endswith(b"\n"):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        content = (record.get("message") or {}).get("content") if isinstance(record.get("message"), dict) else None
        if not isinstance(content, list):
            continue
        kinds = {block.get("type") for block in content if isinstance(block, dict)}
        if (record.get("type") == "assistant" and "tool_use" in kinds) or (
                record.get("type") == "user" and "tool_result" in kinds):
            keep.append(line)
if not keep:
    sys.exit(f"no short tool records under {real}")
block = b"".join(keep)
with open(out, "wb") as f:
    written = 0
    while written < size_mb * 1024 * 1024:
        f.write(block)
        written += len(block)
PY
fi
cargo build --release --quiet --bin familiar
bin=target/release/familiar
events=$("$bin" events "$corpus" | wc -l)
lines=$(wc -l <"$corpus")
echo "$corpus: $(( $(stat -c %s "$corpus") / 1048576 )) MiB, $lines lines, $events events"
now() { date +%s.%N; }
echo "load before: $(uptime)"
declare -a t_run t_events
for _ in $(seq "$runs"); do
  start=$(now); "$bin" run scripts/default.rhai --input "$corpus" >/dev/null; end=$(now)
  t_run+=("$(awk "BEGIN{print $end - $start}")")
  start=$(now); "$bin" events "$corpus" >/dev/null; end=$(now)
  t_events+=("$(awk "BEGIN{print $end - $start}")")
done
rate() { # label times...: best, median and worst as events/s
  local label=$1; shift
  printf '%s\n' "$@" | sort -g | awk -v n="$events" -v label="$label" '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%-44s best %.3f s = %.0f events/s, median %.3f s = %.0f events/s (range %.0f-%.0f events/s)\n", label, v[1], n / v[1], m, n / m, n / v[NR], n / v[1] }'
}
rate "familiar run scripts/default.rhai" "${t_run[@]}"
rate "familiar events" "${t_events[@]}"
# run's rate over events' rate, round by round (the same load for both).
for i in "${!t_run[@]}"; do awk "BEGIN{print ${t_events[$i]} / ${t_run[$i]}}"; done | sort -g |
  awk '{ v[NR] = $1 } END { printf "%-44s best %.2f (range %.2f-%.2f)\n", "run / events, same round", v[NR], v[1], v[NR] }'
if [ -x /usr/bin/time ]; then
  rss=$(/usr/bin/time -f %M "$bin" run scripts/default.rhai --input "$corpus" 2>&1 >/dev/null | tail -1)
  printf '%-44s %.1f MB\n' "peak RSS of familiar run" "$(awk "BEGIN{print $rss / 1024}")"
fi
echo "load after: $(uptime)"
