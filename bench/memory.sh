#!/usr/bin/env bash
# Peak RSS of `familiar events` and `familiar replay --headless` on 10 MB, 100 MB and 1 GB transcripts built from the real
# fixtures (generated into bench/out/, never committed). Memory must not grow with file size.
# Also prints the binary's own baseline (`familiar --version`; the game window is another
# executable, so Bevy is not part of it).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin familiar
bin=target/release/familiar
/usr/bin/time -f "baseline (familiar --version): peak RSS %M KB" "$bin" --version >/dev/null
for size in 10 100 1000; do
  corpus=bench/out/corpus-$size.jsonl
  [ -f "$corpus" ] || bench/make-corpus.sh "$corpus" "$size" >/dev/null
  /usr/bin/time -f "events, $size MB: %e s, peak RSS %M KB" "$bin" events "$corpus" >/dev/null
  # time appends its report to fd 3 (our stderr); the command's own stderr is silenced.
  /usr/bin/time -a -o /dev/fd/3 -f "replay --headless (scripts + sinks), $size MB: %e s, peak RSS %M KB" \
    "$bin" replay --headless --max-gap 0 --no-notify "$corpus" 3>&2 >/dev/null 2>/dev/null
done
