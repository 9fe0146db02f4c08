#!/usr/bin/env bash
# Build a benchmark transcript of about SIZE_MB (default 100) by repeating the real fixtures.
# Usage: bench/make-corpus.sh OUT [SIZE_MB]. Never committed (bench/out/ is ignored).
set -euo pipefail
out=${1:?usage: make-corpus.sh OUT [SIZE_MB]}
size_mb=${2:-100}
here=$(cd "$(dirname "$0")" && pwd)
fixtures=${FIXTURES:-$here/../../shared/fixtures/real}
[ -d "$fixtures" ] || { echo "no fixtures at $fixtures (set FIXTURES)" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
: > "$out"
target=$((size_mb * 1024 * 1024))
while [ "$(stat -c %s "$out")" -lt "$target" ]; do
  for f in "$fixtures"/v*.jsonl; do cat "$f" >> "$out"; done
done
echo "$out: $(( $(stat -c %s "$out") / 1024 / 1024 )) MiB"
