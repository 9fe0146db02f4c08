#!/usr/bin/env bash
# Start-up cost of priming: `familiar sessions` (the same backlog read and session model as
# `watch` at start) on a config dir holding one transcript of SIZE_MB (default 1024), against
# `tail -c 8M` of the same file, which is the most any reader of the backlog must read.
# Usage: bench/priming.sh [SIZE_MB] [RUNS]. Needs a release build (cargo build --release).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
size_mb=${1:-1024}
runs=${2:-5}
bin=${FAMILIAR:-$here/../target/release/familiar}
corpus=$here/out/corpus-$size_mb.jsonl
[ -f "$corpus" ] || "$here/make-corpus.sh" "$corpus" "$size_mb"
config=$(mktemp -d)
trap 'rm -rf "$config"' EXIT
mkdir -p "$config/projects/-bench"
ln -s "$corpus" "$config/projects/-bench/0b0e5b5e-0000-4000-8000-000000000000.jsonl"
best() { sort -n | head -1; }
ms() { local s e; s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
familiar_ms=$(for _ in $(seq "$runs"); do CLAUDE_CONFIG_DIR=$config ms "$bin" sessions --all; done | best)
tail_ms=$(for _ in $(seq "$runs"); do ms tail -c 8M "$corpus"; done | best)
rss=$( { CLAUDE_CONFIG_DIR=$config /usr/bin/time -f %M "$bin" sessions --all > /dev/null; } 2>&1 | tail -1)
echo "transcript: $(( $(stat -c %s "$corpus") / 1024 / 1024 )) MiB"
echo "familiar sessions: best of $runs ${familiar_ms} ms, peak RSS ${rss} KiB"
echo "tail -c 8M:        best of $runs ${tail_ms} ms"
