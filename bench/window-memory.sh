#!/usr/bin/env bash
# The game window's size and memory (issue 31, target 3): what the window executable is made of
# (code, unwind tables, symbol names, relocations), then the RSS of `game-demo` (the window's game
# with invented sessions, linked as `familiar-window` is) with N sessions animating, split into
# anonymous memory, the executable's own pages and Mesa's LLVM (llvmpipe renders on the CPU, so
# GPU memory is the process's own here). Several builds are measured in interleaved rounds.
#
#   bench/window-memory.sh                                   # release build, 10 sessions, 3 rounds
#   SESSIONS=3 ROUNDS=5 bench/window-memory.sh
#   bench/window-memory.sh /tmp/game-demo-before target/release/game-demo   # before/after
#   WINDOW_EXE=/tmp/familiar-window-before bench/window-memory.sh           # also its sections
#
# Needs what bench/game.sh needs (xvfb, mesa-vulkan-drivers, ...); with DISPLAY unset it starts
# its own Xvfb.
set -euo pipefail
cd "$(dirname "$0")/.."

sessions=${SESSIONS:-10}
rounds=${ROUNDS:-3}
wait_s=${WAIT_SECONDS:-25}
# Steps per second over all sessions: 2 per session, as bench/game.sh plays its 3 sessions.
rate=${RATE:-$((sessions * 2))}
target=${CARGO_TARGET_DIR:-target}
bins=("$@")
if [[ ${#bins[@]} -eq 0 ]]; then
  cargo build -q --release -p familiar -p familiar-game-tools --bin familiar-window --bin game-demo
  bins=("$target/release/game-demo")
fi
windows=("$target/release/familiar-window")
[[ -n "${WINDOW_EXE:-}" ]] && windows=("$WINDOW_EXE" "${windows[@]}")

xvfb_pid=
cleanup() { [[ -n "$xvfb_pid" ]] && kill "$xvfb_pid" 2>/dev/null || true; }
trap cleanup EXIT
if [[ -z "${DISPLAY:-}" ]]; then
  n=90
  while [[ -e /tmp/.X11-unix/X$n || -e /tmp/.X$n-lock ]]; do n=$((n + 1)); done
  Xvfb ":$n" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb_pid=$!
  for _ in $(seq 1 100); do [[ -e /tmp/.X11-unix/X$n ]] && break; sleep 0.1; done
  export DISPLAY=":$n"
fi

mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

# The executable's bytes by what they are for (its section headers).
sections() {
  [[ -f "$1" ]] || return 0
  readelf -S -W "$1" | python3 -c '
import os, re, sys
exe = sys.argv[1]
groups = {"code": 0, "unwind tables": 0, "data": 0, "relocations": 0, "symbols": 0}
for line in sys.stdin:
    m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+\S+\s+\S+\s+([0-9a-f]+)", line)
    if not m:
        continue
    name, size = m.group(1), int(m.group(2), 16)
    group = {".text": "code", ".eh_frame": "unwind tables", ".eh_frame_hdr": "unwind tables",
             ".gcc_except_table": "unwind tables", ".rodata": "data", ".data.rel.ro": "data",
             ".data": "data", ".symtab": "symbols", ".strtab": "symbols"}.get(name)
    if name.startswith(".rela"):
        group = "relocations"
    if group:
        groups[group] += size
total = os.path.getsize(exe)
other = total - sum(groups.values())
mb = lambda b: f"{b / 1048576:.1f}"
print(f"{exe}: {mb(total)} MiB = " + ", ".join(f"{k} {mb(v)}" for k, v in groups.items()) + f", other {mb(other)}")
' "$1"
}

# RSS of one mapping's pages, by path (kB).
mapped_kb() {
  awk -v want="$2" '/^[0-9a-f]+-/ { name = $6 } /^Rss:/ && index(name, want) { s += $2 } END { print s + 0 }' \
    "/proc/$1/smaps"
}

measure() {
  local bin=$1 log pid
  log=$(mktemp)
  "$bin" --stats --sessions "$sessions" --rate "$rate" 2>"$log" >/dev/null &
  pid=$!
  sleep "$wait_s"
  local status exe
  status=$(cat "/proc/$pid/status")
  exe=$(readlink -f "/proc/$pid/exe")
  local rss hwm anon file own llvm
  rss=$(awk '/^VmRSS/ { print $2 }' <<<"$status")
  hwm=$(awk '/^VmHWM/ { print $2 }' <<<"$status")
  anon=$(awk '/^RssAnon/ { print $2 }' <<<"$status")
  file=$(awk '/^RssFile/ { print $2 }' <<<"$status")
  own=$(mapped_kb "$pid" "$exe")
  llvm=$(mapped_kb "$pid" libLLVM)
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  local fps
  fps=$(grep '^fps' "$log" | tail -n 2 | awk '{ s += $2; n++ } END { if (n) printf "%.1f", s / n; else print "?" }')
  rm -f "$log"
  printf '%-40s RSS %6s MiB (peak %6s): anonymous %6s, files %6s (the executable %5s, libLLVM %5s)  fps %s\n' \
    "$bin" "$(mb $((rss * 1024)))" "$(mb $((hwm * 1024)))" "$(mb $((anon * 1024)))" \
    "$(mb $((file * 1024)))" "$(mb $((own * 1024)))" "$(mb $((llvm * 1024)))" "$fps"
}

echo "window executable, $(date -u +%FT%TZ), $(uptime)"
for exe in "${windows[@]}"; do sections "$exe"; done
echo "game-demo, $sessions sessions at $rate steps/s, RSS after ${wait_s} s, $rounds rounds, DISPLAY=$DISPLAY"
for round in $(seq 1 "$rounds"); do
  for bin in "${bins[@]}"; do measure "$bin"; done
done
