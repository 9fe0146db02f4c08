#!/usr/bin/env bash
# Every benchmark behind docs/performance.md's figures, one after the other (about 15 minutes on the
# 2-core machine after the release build). Each part can also be run on its own.
set -euo pipefail
cd "$(dirname "$0")/.."
section() { printf '\n== %s\n' "$*"; }

section "throughput: familiar events / stats vs jq (bench/throughput.sh)"
bench/throughput.sh
section "memory: peak RSS at 10 MB, 100 MB, 1 GB (bench/memory.sh)"
bench/memory.sh
section "start-up and peak RSS of the headless commands vs ccusage and jq (bench/startup.sh)"
bench/startup.sh
section "scripts: familiar run default.rhai vs familiar events"
bin=target/release/familiar
/usr/bin/time -f "familiar run scripts/default.rhai: %e s" "$bin" run scripts/default.rhai \
  --input bench/out/corpus-100.jsonl >/dev/null
/usr/bin/time -f "familiar events: %e s" "$bin" events bench/out/corpus-100.jsonl >/dev/null
section "events -> actions end to end on an event-dense transcript (bench/events-to-actions.sh)"
bench/events-to-actions.sh
section "familiar stats vs ccusage 20 on a many-file tree (bench/stats-vs-ccusage.sh)"
bench/stats-vs-ccusage.sh
section "normalizer in memory (criterion)"
cargo bench -q -p familiar-transcript 2>&1 | grep -E "time:|thrpt:"
section "events -> actions through default.rhai (criterion)"
cargo bench -q -p familiar-script --bench events_to_actions 2>&1 | grep -E "^[a-z_/]+ +time:|thrpt:"
section "tailer: append -> event latency, 200 sessions x 10 lines/s"
cargo bench -q -p familiar-tail --bench tail_latency
section "append -> action latency through familiar watch --headless"
python3 bench/action_latency.py 1000 target/release/familiar
python3 bench/remote.py 500 target/release/familiar
section "headless watcher at 1, 10, 100, 200 live sessions"
python3 bench/scale.py 20 target/release/familiar
section "game window under Xvfb (bench/game.sh)"
bench/game.sh
