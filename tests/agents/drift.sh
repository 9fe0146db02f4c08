#!/usr/bin/env bash
# The drift check: the agents change weekly, and this says how the newest published CLIs differ
# from the pinned ones, the day they do. Not in CI (it needs the registry's latest versions).
#
#   tests/agents/drift.sh                               # Claude Code, Codex, Gemini CLI,
#                                                       # Qwen Code and Copilot CLI at `latest`
#   tests/agents/drift.sh 2.1.340 0.172.0 0.62.0 0.25.0 1.0.103 # or at given versions
#
# For each agent it installs the CLI into a temporary prefix, runs the same real-CLI suites CI
# runs against the pinned one (`tests/real_claude.rs`, `tests/real_codex.rs`, each without its
# previous-generation tests, `tests/real_gemini.rs`, `tests/real_qwen.rs`, `tests/real_copilot.rs` and `tests/real_opencode.rs`), keeps what the CLI wrote (FAMILIAR_DRIFT_DIR), and prints:
#   - the versions, pinned and tried;
#   - what the CLI wrote that Familiar does not know (record, subtype, attachment and Codex item
#     types, from `familiar stats --json`'s `unknown`), with counts;
#   - hook events the new CLI has that the pinned one has not (from the CLI's own list);
#   - which checks failed, with their first lines.
# It exits 0 when the suites pass and nothing is unknown, 1 otherwise. Needs cargo, npm and jq.
set -uo pipefail
cd "$(dirname "$0")/../.."

claude_version=${1:-latest}
codex_version=${2:-latest}
gemini_version=${3:-latest}
qwen_version=${4:-latest}
copilot_version=${5:-latest}
opencode_version=${6:-latest}
work=$(mktemp -d "${TMPDIR:-/tmp}/familiar-drift.XXXXXX")
trap 'rm -rf "$work"' EXIT
drift=0

say() { printf '%s\n' "$*"; }
heading() { printf '\n== %s\n' "$*"; }

install() { # prefix package@version
  npm install --prefix "$1" "$2" --no-audit --no-fund --loglevel=error >"$1.log" 2>&1 \
    || { say "cannot install $2:"; tail -5 "$1.log"; return 1; }
}

pinned() { # agent folder, package
  jq -r --arg p "$2" '.packages["node_modules/" + $p].version // "?"' \
    "tests/agents/$1/package-lock.json"
}

# The hook events a Claude Code binary knows: the longest list of them in its code.
hook_events() {
  grep -ao '"PreToolUse","PostToolUse"[^]]*' "$1" 2>/dev/null \
    | awk '{ if (length($0) > length(best)) best = $0 } END { print best }' \
    | tr ',' '\n' | tr -d '"' | sed '/^$/d' | sort -u
}

# Run one suite; print its verdict and its failures' first lines.
suite() { # name, log, cargo test args...
  local name=$1 log=$2
  shift 2
  if cargo test --workspace --locked "$@" >"$log" 2>&1; then
    say "$name: every check passed"
  else
    drift=1
    say "$name: FAILED"
    grep -E '^test .* FAILED$' "$log" | sed 's/^/  /'
    grep -E -A3 "panicked at" "$log" | grep -vE '^(--|stack backtrace:)' | head -40 | sed 's/^/    /'
  fi
}

# What `familiar stats --json` found unknown in the files a suite kept.
unknown_in() { # dir
  local files
  files=$(find "$1" -name '*.jsonl' -not -name 'sessions-file.jsonl' -not -path '*/hooks/*' 2>/dev/null)
  if [ -z "$files" ]; then
    say "  (the suite kept no files)"
    return
  fi
  local stats
  # shellcheck disable=SC2086
  stats=$(target/debug/familiar stats --json $files 2>/dev/null)
  jq -rs '[.[] | select(.unknown) | {v: (.cli_version // "?"), u: .unknown}]
        | map(.v as $v | .u | to_entries[] | {k: ("CLI " + $v + ": " + .key), n: .value})
        | group_by(.k) | map({k: .[0].k, n: (map(.n) | add)})
        | if length == 0 then "  nothing unknown: every record, subtype and type is known"
          else (.[] | "  unknown to Familiar: \(.k) ×\(.n)") end' <<<"$stats"
  if jq -e -s 'any(.[]; .unknown)' >/dev/null <<<"$stats"; then
    drift=1
  fi
}

cargo build --workspace --locked --quiet || exit 1

heading "Claude Code"
claude_prefix="$work/claude"
if install "$claude_prefix" "@anthropic-ai/claude-code@$claude_version"; then
  claude="$claude_prefix/node_modules/.bin/claude"
  tried=$("$claude" --version 2>/dev/null | awk '{print $1}')
  say "pinned $(pinned claude @anthropic-ai/claude-code), tried $tried"
  FAMILIAR_CLAUDE_BIN="$claude" FAMILIAR_DRIFT_DIR="$work/claude-files" \
    suite "tests/real_claude.rs" "$work/claude-tests.log" --test real_claude -- --skip previous
  unknown_in "$work/claude-files"
  new_binary=$(find "$claude_prefix/node_modules/@anthropic-ai" -path '*linux-x64/claude' -type f | head -1)
  old_binary=$(find tests/agents/claude/node_modules/@anthropic-ai -path '*linux-x64/claude' -type f 2>/dev/null | head -1)
  if [ -n "$new_binary" ] && [ -n "$old_binary" ]; then
    new_events=$(comm -13 <(hook_events "$old_binary") <(hook_events "$new_binary"))
    if [ -n "$new_events" ]; then
      say "  new hook events: $(echo "$new_events" | tr '\n' ' ')"
    else
      say "  no new hook events"
    fi
  fi
else
  drift=1
fi

heading "Codex"
codex_prefix="$work/codex"
if install "$codex_prefix" "@openai/codex@$codex_version"; then
  codex="$codex_prefix/node_modules/.bin/codex"
  tried=$("$codex" --version 2>/dev/null | awk '{print $NF}')
  say "pinned $(pinned codex @openai/codex), tried $tried"
  FAMILIAR_CODEX_BIN="$codex" FAMILIAR_DRIFT_DIR="$work/codex-files" \
    suite "tests/real_codex.rs" "$work/codex-tests.log" --test real_codex -- --skip previous
  unknown_in "$work/codex-files"
else
  drift=1
fi

heading "Gemini CLI"
gemini_prefix="$work/gemini"
if install "$gemini_prefix" "@google/gemini-cli@$gemini_version"; then
  gemini="$gemini_prefix/node_modules/.bin/gemini"
  # Even `--version` writes to the CLI's dir: a throwaway HOME, never the user's.
  tried=$(HOME="$work/gemini-home" "$gemini" --version 2>/dev/null | tail -1)
  say "pinned $(pinned gemini @google/gemini-cli), tried $tried"
  FAMILIAR_GEMINI_BIN="$gemini" FAMILIAR_DRIFT_DIR="$work/gemini-files" \
    suite "tests/real_gemini.rs" "$work/gemini-tests.log" --test real_gemini
  unknown_in "$work/gemini-files"
else
  drift=1
fi

heading "Qwen Code"
qwen_prefix="$work/qwen"
if install "$qwen_prefix" "@qwen-code/qwen-code@$qwen_version"; then
  qwen="$qwen_prefix/node_modules/.bin/qwen"
  # A throwaway HOME for `--version` too, never the user's.
  tried=$(HOME="$work/qwen-home" "$qwen" --version 2>/dev/null | tail -1)
  say "pinned $(pinned qwen @qwen-code/qwen-code), tried $tried"
  FAMILIAR_QWEN_BIN="$qwen" FAMILIAR_DRIFT_DIR="$work/qwen-files" \
    suite "tests/real_qwen.rs" "$work/qwen-tests.log" --test real_qwen
  unknown_in "$work/qwen-files"
else
  drift=1
fi

heading "Copilot CLI"
copilot_prefix="$work/copilot"
if install "$copilot_prefix" "@github/copilot@$copilot_version"; then
  copilot="$copilot_prefix/node_modules/.bin/copilot"
  # A throwaway HOME for `--version` too (the CLI unpacks itself under ~/.cache), never the
  # user's; no update check.
  tried=$(HOME="$work/copilot-home" COPILOT_AUTO_UPDATE=false "$copilot" --version 2>/dev/null \
    | head -1)
  say "pinned $(pinned copilot @github/copilot), tried $tried"
  FAMILIAR_COPILOT_BIN="$copilot" FAMILIAR_DRIFT_DIR="$work/copilot-files" \
    suite "tests/real_copilot.rs" "$work/copilot-tests.log" --test real_copilot
  unknown_in "$work/copilot-files"
else
  drift=1
fi

heading "opencode"
opencode_prefix="$work/opencode"
if install "$opencode_prefix" "opencode-ai@$opencode_version"; then
  opencode="$opencode_prefix/node_modules/.bin/opencode"
  # A throwaway HOME for `--version` too, never the user's; no update check.
  tried=$(HOME="$work/opencode-home" OPENCODE_DISABLE_AUTOUPDATE=1 "$opencode" --version \
    2>/dev/null | head -1)
  say "pinned $(pinned opencode opencode-ai), tried $tried"
  FAMILIAR_OPENCODE_BIN="$opencode" FAMILIAR_DRIFT_DIR="$work/opencode-files" \
    suite "tests/real_opencode.rs" "$work/opencode-tests.log" --test real_opencode
  unknown_in "$work/opencode-files"
else
  drift=1
fi

heading "verdict"
if [ "$drift" -eq 0 ]; then
  say "no drift: the newest CLIs write nothing Familiar does not know, and every check passes"
else
  say "drift: see above (logs were in $work, removed on exit; rerun a suite by hand to keep them)"
fi
exit "$drift"
