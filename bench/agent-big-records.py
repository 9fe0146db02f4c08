#!/usr/bin/env python3
"""Every agent's big records (issue 28): each pinned CLI's own fixture with one record's text
made SIZE MB (an escape a line, as a pasted file has), read by `familiar events`, `run
scripts/default.rhai` and `stats`: their peak RSS above the same fixture as written, as a
multiple of the record's size on disk; and (`ordinary`) above the fixture followed by as many
bytes of its own lines again, which separates what the record costs from what reading that
many bytes costs any input (read buffers, an output buffer). The records are the CLI's own lines, one string
replaced in place (their keys keep the CLI's order, by which some agents' records are told):

- Codex: a prompt (`item_completed` UserMessage), a command's output that succeeded
  (`CommandExecution.aggregated_output`);
- Gemini CLI: a prompt (`content[0].text`), a tool's result (`functionResponse.response`);
- Qwen Code: a prompt (`message.parts[0].text`);
- Copilot CLI: a prompt (`user.message`: `content` and `transformedContent`, SIZE/2 each);
- opencode: a prompt's text part, as Familiar's source writes its row (the row's JSON itself
  in `data`), and as it wrote it before 2026-11-28 (a string of the row's JSON; the pinned
  fixture's lines).

usage: bench/agent-big-records.py [--size MB]
env:   FAMILIAR_BIN (default target/release/familiar); FAMILIAR_BEFORE: another build,
       measured beside it
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

# (name, fixture, how to find the record's line, the JSON strings to make big in it)
CASES = [
    ("Codex prompt", "codex-0.171.0/main.jsonl", '"type":"UserMessage"',
     [("payload", "item", "content", 0, "text")]),
    ("Codex command output", "codex-0.171.0/main.jsonl", '"type":"CommandExecution"',
     [("payload", "item", "aggregated_output")]),
    ("Gemini CLI prompt", "gemini-0.61.0/main.jsonl", '"type":"user","content":[{"text":"Work',
     [("content", 0, "text")]),
    ("Gemini CLI tool result", "gemini-0.61.0/main.jsonl", '"toolCalls":[{',
     [("toolCalls", 0, "result", 0, "functionResponse", "response", "output")]),
    ("Qwen Code prompt", "qwen-0.24.4/main.jsonl", '"type":"user"',
     [("message", "parts", 0, "text")]),
    ("Copilot CLI prompt", "copilot-1.0.102/main.jsonl", '"type":"user.message"',
     [("data", "content"), ("data", "transformedContent")]),
    # A path starting with "data()" reaches into the JSON text held by the `data` string; the
    # record is written back with the row's JSON itself in `data` ("data{}") or a string of it.
    ("opencode prompt", "opencode-1.18.33/main.jsonl", '\\"text\\":\\"\\\\\\"Work',
     [("data{}", "text")]),
    ("opencode prompt, a line from before 2026-11-28", "opencode-1.18.33/main.jsonl",
     '\\"text\\":\\"\\\\\\"Work', [("data()", "text")]),
]


def big_text(size):
    line = "    let value = compute(input, &mut state); // a line of some source file\n"
    return (line * (size // len(line) + 1))[:size]


def at(record, path):
    for key in path:
        record = record[key]
    return record


def rewrite(line, paths, size):
    """`line` with the strings at `paths` replaced by SIZE/len(paths) bytes of text each,
    replaced in the line's own text."""
    record = json.loads(line)
    if paths[0][0] in ("data()", "data{}"):
        # The row's JSON, a string in the line: made big inside, then written back.
        data = json.loads(record["data"])
        for path in paths:
            at(data, path[1:-1])[path[-1]] = big_text(size // len(paths))
        typed = json.dumps(record["data"], ensure_ascii=False)
        row = json.dumps(data, separators=(",", ":"))
        return line.replace(typed, row if paths[0][0] == "data{}" else json.dumps(row), 1)
    text = json.dumps(big_text(size // len(paths)))
    for path in paths:
        typed = json.dumps(at(record, path), separators=(",", ":"), ensure_ascii=False)
        if typed not in line:
            sys.exit(f"{path}: {typed[:60]} is not written as expected")
        line = line.replace(typed, text, 1)
    return line


def peak_mb(argv):
    """Peak RSS of `argv` in MB (10^6 bytes), as GNU time reports it."""
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {done.stderr[-2000:]}")
    return int(done.stderr.split()[-1]) * 1024 / 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=50.0, help="MB of text per record")
    args = parser.parse_args()
    size = int(args.size * 1e6)
    builds = [("", os.environ.get("FAMILIAR_BIN", str(ROOT / "target/release/familiar")))]
    if os.environ.get("FAMILIAR_BEFORE"):
        builds.append((" (before)", os.environ["FAMILIAR_BEFORE"]))
    script = str(ROOT / "scripts/default.rhai")
    commands = [("events", ["events"]), ("run", ["run", script, "--input"]),
                ("stats", ["stats", "--no-cache"])]
    with tempfile.TemporaryDirectory(prefix="familiar-agent-big-") as tmp:
        tmp = pathlib.Path(tmp)
        for name, fixture, marker, paths in CASES:
            lines = (FIXTURES / fixture).read_text().splitlines(keepends=True)
            index = next(i for i, line in enumerate(lines) if marker in line)
            big_line = rewrite(lines[index], paths, size)
            small, big = tmp / "small.jsonl", tmp / "big.jsonl"
            ordinary = tmp / "ordinary.jsonl"
            small.write_text("".join(lines))
            big.write_text("".join(lines[:index]) + big_line + "".join(lines[index + 1:]))
            record_bytes = len(big_line.encode())
            # The fixture, then its own lines again until as many bytes as the record.
            fixture = "".join(lines).encode()
            with open(ordinary, "wb") as f:
                f.write(fixture)
                f.write((fixture * (record_bytes // len(fixture) + 1))[:record_bytes]
                        .rsplit(b"\n", 1)[0] + b"\n")
            record_mb = record_bytes / 1e6
            figures = []
            for label, binary in builds:
                for command, argv in commands:
                    level = peak_mb([binary, *argv, str(small)])
                    control = peak_mb([binary, *argv, str(ordinary)])
                    peak = peak_mb([binary, *argv, str(big)])
                    figures.append(f"{command}{label} {(peak - level) / record_mb:.2f}x "
                                   f"(ordinary {(peak - control) / record_mb:.2f}x)")
            print(f"{name} ({record_mb:.1f} MB): " + ", ".join(figures))


if __name__ == "__main__":
    main()
