#!/usr/bin/env bash
# Seed the fuzz corpora. The normalizer's, from the real transcripts: every fixture cut into small
# inputs (single records, and runs of consecutive records so the session state is exercised),
# each under 16 KiB so the fuzzer stays fast. The corpus is not committed (fuzz/.gitignore).
#
# usage: fuzz/seed.sh [FIXTURES_DIR]   (default: $FAMILIAR_REAL_FIXTURES or ../shared/fixtures/real)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
fixtures="${1:-${FAMILIAR_REAL_FIXTURES:-$here/../../shared/fixtures/real}}"
out="$here/corpus/normalizer"
mkdir -p "$out"
python3 - "$fixtures" "$out" <<'PY'
import hashlib, pathlib, sys

fixtures, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
MAX = 16 * 1024
written = 0

def save(data: bytes):
    global written
    if not data or len(data) > MAX:
        return
    name = out / hashlib.sha1(data).hexdigest()
    if not name.exists():
        name.write_bytes(data)
        written += 1

for path in sorted(fixtures.glob("*.jsonl")):
    lines = path.read_bytes().splitlines(keepends=True)
    small = [l for l in lines if len(l) <= MAX]
    # Up to 120 single records per file, spread over the whole session.
    step = max(1, len(small) // 120)
    for line in small[::step]:
        save(line)
    # Runs of 2..12 consecutive records, packed up to the size limit.
    i = 0
    while i < len(lines):
        run = b""
        j = i
        while j < len(lines) and j - i < 12 and len(run) + len(lines[j]) <= MAX:
            run += lines[j]
            j += 1
        if j - i >= 2:
            save(run)
        i = max(j, i + 1) + step * 4
print(f"{written} new inputs in {out}")
PY

# The hook input target: every recorded hook input, sessions-file state and status line
# input of the project's own fixtures, one per file.
hooks="$here/corpus/hook_input"
mkdir -p "$hooks"
python3 - "$here/../fixtures" "$hooks" <<'PY'
import hashlib, pathlib, sys

fixtures, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
written = 0
sources = sorted(fixtures.glob("hooks/*.jsonl")) + sorted(fixtures.glob("claude-*/sessions-file.jsonl"))
inputs = [line for path in sources for line in path.read_bytes().splitlines() if line.strip()]
inputs += [path.read_bytes() for path in sorted(fixtures.glob("statusline/*.json"))]
for data in inputs:
    name = out / hashlib.sha1(data).hexdigest()
    if not name.exists():
        name.write_bytes(data)
        written += 1
print(f"{written} new inputs in {out}")
PY
