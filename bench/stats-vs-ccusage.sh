#!/usr/bin/env bash
# `familiar stats` against ccusage 20.0.24 (npm; pinned by bench/node/package-lock.json):
# 1. equal tokens and cost on every transcript of ../shared/fixtures/real, fixtures/ and
#    fixtures/claude-*/ (what the real CLI wrote), one file at a time (exit 1 on any difference);
# 2. wall time of both on a many-file tree built from the real fixtures (COPIES copies of each,
#    message and request ids made unique per copy), interleaved, RUNS rounds: best, median and
#    range of each, and the ratio of the bests. `familiar stats` runs twice a round: reading
#    every file (`--no-cache`: what its first run costs) and answering from its cache of files
#    read before (what every later run costs while the files stay as they are).
# Usage: bench/stats-vs-ccusage.sh [COPIES]   (needs npm, jq; builds the release binary)
#        FAMILIAR_BIN=target/debug/familiar RUNS=1 bench/stats-vs-ccusage.sh 1   (equality only)
#        FAMILIAR_BEFORE=/tmp/familiar-old bench/stats-vs-ccusage.sh   (also times an older
#        familiar binary, interleaved in the same rounds: before/after under the same load)
# ccusage runs with --offline (its bundled prices) and CLAUDE_CONFIG_DIR pointing at a temp
# tree; nothing under ~/.claude is read.
set -euo pipefail
cd "$(dirname "$0")/.."
copies=${1:-20}
runs=${RUNS:-7}
real=${FAMILIAR_REAL_FIXTURES:-../shared/fixtures/real}
# `npm install`, not `npm ci`: npm 11 writes a lockfile with only this platform's optional
# binary package and then refuses it in `ci` ("Missing: @ccusage/ccusage-darwin-arm64");
# `install` installs the locked versions and leaves the lockfile as it is.
[ -x bench/node/node_modules/.bin/ccusage ] \
  || npm install --prefix bench/node --no-audit --no-fund --loglevel=error >/dev/null
ccusage=bench/node/node_modules/.bin/ccusage
# FAMILIAR_BIN=target/debug/familiar checks equality without a release build (its timings
# then mean nothing).
bin=${FAMILIAR_BIN:-target/release/familiar}
[ -n "${FAMILIAR_BIN:-}" ] || cargo build --release --quiet --bin familiar
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ccusage_totals() { # CONFIG_DIR -> "input output cache_read cache_write cost"
  CLAUDE_CONFIG_DIR=$1 "$ccusage" claude daily --json --offline 2>/dev/null |
    jq -r '.totals | "\(.inputTokens) \(.outputTokens) \(.cacheReadTokens) \(.cacheCreationTokens) \(.totalCost)"'
}
familiar_totals() { # FILES... -> same fields, summed over the per-file rows (every file read)
  "$bin" -q stats --json --no-cache "$@" |
    jq -s -r '"\(map(.tokens.input)|add) \(map(.tokens.output)|add) \(map(.tokens.cache_read)|add) \(map(.tokens.cache_creation)|add) \(map(.cost_usd)|add)"'
}
same() { # two "tokens... cost" lines: tokens equal, costs within familiar's 4-decimal rounding per file
  local files=$3
  awk -v a="$1" -v b="$2" -v n="$files" 'BEGIN {
    split(a, x, " "); split(b, y, " ");
    for (i = 1; i <= 4; i++) if (x[i] != y[i]) exit 1;
    d = x[5] - y[5]; if (d < 0) d = -d; exit !(d <= 0.00005 * n + 1e-9) }'
}

echo "== equal tokens and cost, one file at a time (input output cache_read cache_write cost)"
failures=0
for file in "$real"/*.jsonl fixtures/*.jsonl fixtures/claude-*/*.jsonl; do
  dir=$work/one; rm -rf "$dir"; mkdir -p "$dir/projects/p"; cp "$file" "$dir/projects/p/x.jsonl"
  theirs=$(ccusage_totals "$dir")
  ours=$(familiar_totals "$file" 2>/dev/null || echo "error")
  name=$(basename "$file")
  if same "$ours" "$theirs" 1; then
    printf 'same     %-58s %s\n' "$name" "$ours"
  elif [ "${theirs%% *}" = 0 ] && ! jq -e 'select(.message.usage? and .timestamp)' "$file" >/dev/null 2>&1; then
    # stream-json / --output-format json: no record has a timestamp, and ccusage skips
    # records without one; familiar counts them (the tokens were spent).
    printf 'n/a      %-58s familiar %s; ccusage skips records without a timestamp\n' "$name" "$ours"
  else
    printf 'DIFFER   %-58s familiar %s, ccusage %s\n' "$name" "$ours" "$theirs"
    failures=$((failures + 1))
  fi
done

echo "== many-file tree: $copies copies of each real transcript"
tree=$work/tree/projects
for n in $(seq "$copies"); do
  mkdir -p "$tree/copy-$n"
  for file in "$real"/*.jsonl; do
    sed -e "s/\"msg_/\"msg_c${n}_/g" -e "s/\"req_/\"req_c${n}_/g" "$file" >"$tree/copy-$n/$(basename "$file")"
  done
done
mapfile -t files < <(find "$tree" -name '*.jsonl' | sort)
bytes=$(cat "${files[@]}" | wc -c)
ours=$(familiar_totals "${files[@]}" 2>/dev/null)
theirs=$(ccusage_totals "$work/tree")
echo "${#files[@]} files, $((bytes / 1048576)) MiB; familiar: $ours; ccusage: $theirs"
# The tree holds the stream-json fixtures too, which only familiar counts: compare without them.
mapfile -t stamped < <(for f in "${files[@]}"; do case $(basename "$f") in stream-json-*) ;; *) echo "$f" ;; esac; done)
ours_stamped=$(familiar_totals "${stamped[@]}" 2>/dev/null)
if same "$ours_stamped" "$theirs" "${#stamped[@]}"; then
  echo "same totals on the tree (stream-json files left out: ccusage skips them)"
else
  echo "DIFFER on the tree: familiar $ours_stamped, ccusage $theirs"
  failures=$((failures + 1))
fi

echo "load: $(uptime | sed 's/.*load average: //') (1, 5, 15 min; $(nproc) cores)"
now() { date +%s.%N; }
# CPU time (user + system, children included) of a command, into $work/cpu: on a loaded
# machine it says more about the work done than wall time, which the scheduler decides.
timed() {
  if [ -x /usr/bin/time ]; then /usr/bin/time -f '%U %S' -o "$work/cpu" "$@"
  else "$@"; echo "0 0" >"$work/cpu"; fi
}
cpu() { awk '{ print $1 + $2 }' "$work/cpu"; }
declare -a t_familiar t_ccusage t_before t_kept c_familiar c_ccusage c_before c_kept
before=${FAMILIAR_BEFORE:-}
# The cache of files read, in the temp tree (never the user's): filled once, and checked to
# answer what reading every file answers.
export XDG_CACHE_HOME=$work/cache
"$bin" -q stats --json "${files[@]}" >"$work/kept.json"
"$bin" -q stats --json "${files[@]}" >"$work/kept-again.json"
"$bin" -q stats --json --no-cache "${files[@]}" >"$work/read.json"
if cmp -s "$work/kept-again.json" "$work/read.json" && cmp -s "$work/kept.json" "$work/read.json"; then
  echo "the cache answers what reading every file answers, byte for byte"
else
  echo "DIFFER: the cache's answer is not what reading every file answers"
  failures=$((failures + 1))
fi
for _ in $(seq "$runs"); do
  start=$(now); timed "$bin" -q stats --json --no-cache "${files[@]}" >/dev/null; end=$(now)
  t_familiar+=("$(awk "BEGIN{print $end - $start}")"); c_familiar+=("$(cpu)")
  start=$(now); timed "$bin" -q stats --json "${files[@]}" >/dev/null; end=$(now)
  t_kept+=("$(awk "BEGIN{print $end - $start}")"); c_kept+=("$(cpu)")
  if [ -n "$before" ]; then
    # An older binary may not know --no-cache, nor keep anything.
    start=$(now); XDG_CACHE_HOME=$work/cache-before timed "$before" -q stats --json "${files[@]}" >/dev/null; end=$(now)
    t_before+=("$(awk "BEGIN{print $end - $start}")"); c_before+=("$(cpu)")
  fi
  start=$(now); CLAUDE_CONFIG_DIR=$work/tree timed "$ccusage" claude daily --json --offline >/dev/null 2>&1; end=$(now)
  t_ccusage+=("$(awk "BEGIN{print $end - $start}")"); c_ccusage+=("$(cpu)")
done
summary() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
  printf "best %.3f s  median %.3f s  range %.3f-%.3f s", v[1], v[int((NR + 1) / 2)], v[1], v[NR] }'; }
echo "familiar stats --json --no-cache FILES...   $(summary "${t_familiar[@]}")"
echo "familiar stats --json FILES... (cache)  $(summary "${t_kept[@]}")"
echo "ccusage claude daily --offline   $(summary "${t_ccusage[@]}")"
best() { printf '%s\n' "$@" | sort -g | head -1; }
if [ -n "$before" ]; then
  echo "before ($before)   $(summary "${t_before[@]}")"
  awk -v f="$(best "${t_familiar[@]}")" -v b="$(best "${t_before[@]}")" -v c="$(best "${t_ccusage[@]}")" \
    'BEGIN { printf "this binary is %.2fx faster than before (best vs best); before was %.2fx faster than ccusage\n", b / f, c / b }'
fi
worst() { printf '%s\n' "$@" | sort -g | tail -1; }
echo "CPU time (user + system), best: familiar $(best "${c_familiar[@]}") s (from its cache $(best "${c_kept[@]}") s), ccusage $(best "${c_ccusage[@]}") s${before:+, before $(best "${c_before[@]}") s}"
awk -v f="$(best "${t_familiar[@]}")" -v c="$(best "${t_ccusage[@]}")" \
  -v fw="$(worst "${t_familiar[@]}")" -v cw="$(worst "${t_ccusage[@]}")" \
  'BEGIN { printf "familiar reading every file is %.2fx faster (best vs best; %.2fx-%.2fx from slowest to fastest pairings), %d runs interleaved\n", c / f, c / fw, cw / f, '"$runs"' }'
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
awk -v f="$(median "${t_familiar[@]}")" -v k="$(median "${t_kept[@]}")" -v c="$(median "${t_ccusage[@]}")" \
  'BEGIN { printf "medians: familiar reading every file %.2fx faster than ccusage, from its cache %.2fx\n", c / f, c / k }'
exit $((failures > 0))
