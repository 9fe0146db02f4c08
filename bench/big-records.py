#!/usr/bin/env python3
"""A live watcher's memory around big records (issue 28): how far above its level before them
does `familiar watch --headless --events` peak while it reads a record of SIZE MB, and does it
come back?

Starts the watcher on a throwaway Claude Code config dir with one session, lets it settle,
then appends COUNT records of SIZE MB each as Claude Code writes a big tool result (a user
record whose `tool_result` content is the text of a file, lines of about 80 characters, so
its JSON has an escape every line; `--no-escapes` writes one long line of letters instead),
each followed by a small prompt that says it was read (`--prompt`: a prompt of that size
instead, whose text the event carries; `--blocks`: that prompt as a text block beside an image,
as Claude Code writes a prompt with a pasted image). Prints the RSS before, the peak (the
kernel's high-water mark) and what it is 2 s after the last, and the peak above the level
before as a multiple of one record's size on disk; and above its peak while it read as many
bytes of ordinary lines (1 KB prompts) appended first, which separates what a big record
costs from what reading that many bytes costs any input.

With `--bulk`, the same records go into a file, read by the commands that read a file whole
(`familiar events`, `run scripts/default.rhai`, `stats`): each one's peak RSS (its own
high-water mark) above what it peaks at on the file without the big records, and on the file
with as many bytes of ordinary lines in their place, as a multiple of one record's size.

usage: bench/big-records.py [--size MB] [--count N] [--no-escapes] [--prompt [--blocks]] [--bulk [--first]]
env:   FAMILIAR_BIN (default target/release/familiar)
"""

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def status(pid, field):
    """`field` of /proc/PID/status, in MB (10^6 bytes, as the records' sizes)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024 / 1e6
    return 0.0


def record(kind, text, n, cwd):
    stamp = "2026-11-28T10:00:%02d.000Z" % (n % 60)
    if kind == "prompt":
        message = {"role": "user", "content": text}
    elif kind == "blocks":
        message = {"role": "user", "content": [
            {"type": "text", "text": text},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "iVBORw0KGgo="}}]}
    else:
        message = {"role": "user", "content": [
            {"tool_use_id": f"toolu_{n:06d}", "type": "tool_result", "content": text}]}
    return json.dumps({
        "parentUuid": None, "isSidechain": False, "userType": "external",
        "cwd": cwd, "sessionId": "big-records", "version": "2.1.59",
        "type": "user", "message": message, "uuid": f"u-{n}", "timestamp": stamp,
    }, separators=(",", ":")) + "\n"


def big_text(size, escapes):
    if not escapes:
        return "x" * size
    line = "    let value = compute(input, &mut state); // a line of some source file\n"
    return (line * (size // len(line) + 1))[:size]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=50.0, help="MB per record")
    parser.add_argument("--count", type=int, default=3)
    parser.add_argument("--no-escapes", action="store_true")
    parser.add_argument("--prompt", action="store_true",
                        help="a prompt of that size (its text is the event's) instead")
    parser.add_argument("--blocks", action="store_true",
                        help="with --prompt: its text in a text block beside an image")
    parser.add_argument("--bulk", action="store_true",
                        help="the commands that read a file whole, not a live watcher")
    parser.add_argument("--first", action="store_true",
                        help="with --bulk: the first big record is the file's first line")
    args = parser.parse_args()
    big_kind = ("blocks" if args.blocks else "prompt") if args.prompt else "tool_result"
    binary = os.environ.get("FAMILIAR_BIN", str(ROOT / "target/release/familiar"))
    size = int(args.size * 1e6)
    if args.bulk:
        return bulk(binary, size, args)
    with tempfile.TemporaryDirectory(prefix="familiar-big-") as tmp:
        tmp = pathlib.Path(tmp)
        project = tmp / "work/p"
        project.mkdir(parents=True)
        # Claude Code names the folder by the path, every other character than a letter or digit a dash.
        sessions = tmp / "claude/projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project))
        sessions.mkdir(parents=True)
        transcript = sessions / "big-records.jsonl"
        transcript.write_text(record("prompt", "start", 0, str(project)))
        env = dict(os.environ, CLAUDE_CONFIG_DIR=str(tmp / "claude"), HOME=str(tmp),
                   XDG_CONFIG_HOME=str(tmp / ".config"), XDG_DATA_HOME=str(tmp / ".local"),
                   DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent", NO_COLOR="1")
        out_path = tmp / "out.ndjson"
        with open(out_path, "wb") as out, open(tmp / "err.log", "wb") as err:
            watcher = subprocess.Popen(
                [binary, "-v", "watch", "--headless", "--events", "--no-notify"],
                cwd=project, env=env, stdout=out, stderr=err)
            try:
                deadline = time.time() + 30
                while b"caught up" not in (tmp / "err.log").read_bytes():
                    if time.time() > deadline or watcher.poll() is not None:
                        sys.exit("the watcher did not catch up: "
                                 + (tmp / "err.log").read_text(errors="replace"))
                    time.sleep(0.05)
                time.sleep(1.0)
                before = status(watcher.pid, "VmRSS")
                text = big_text(size, not args.no_escapes)
                # As many bytes of ordinary lines first (prompts of about 1 KB): what reading
                # that much costs any input (read buffers), apart from what a big record costs.
                on_disk = len(record(big_kind, text, 1, str(project)))
                ordinary, n = [], 0
                while sum(map(len, ordinary)) < on_disk:
                    n += 1
                    ordinary.append(record("prompt", f"ordinary {n} " + "y" * 1000, n, str(project)))
                with open(transcript, "a") as f:
                    f.writelines(ordinary)
                    f.write(record("prompt", "read-ordinary", 9_999, str(project)))
                del ordinary
                deadline = time.time() + 120
                while b"read-ordinary" not in out_path.read_bytes()[-4096:]:
                    if time.time() > deadline or watcher.poll() is not None:
                        sys.exit("the ordinary lines were not read")
                    time.sleep(0.02)
                time.sleep(1.0)
                control = status(watcher.pid, "VmHWM")
                for n in range(1, args.count + 1):
                    line = record(big_kind, text, n, str(project))
                    on_disk = len(line)
                    sentinel = f"read-{n}"
                    with open(transcript, "a") as f:
                        f.write(line)
                        f.write(record("prompt", sentinel, 10_000 + n, str(project)))
                    deadline = time.time() + 120
                    while sentinel.encode() not in out_path.read_bytes()[-4096:]:
                        if time.time() > deadline or watcher.poll() is not None:
                            sys.exit(f"record {n} was not read: "
                                     + (tmp / "err.log").read_text(errors="replace")[-2000:]
                                     + out_path.read_bytes()[-1000:].decode(errors="replace"))
                        time.sleep(0.02)
                peak = status(watcher.pid, "VmHWM")
                time.sleep(2.0)
                after = status(watcher.pid, "VmRSS")
            finally:
                watcher.terminate()
                watcher.wait(timeout=10)
    mb = on_disk / 1e6
    kind = {"blocks": "prompts in a text block", "prompt": "prompts"}.get(big_kind, "tool results")
    print(f"{args.count} {kind} of {mb:.1f} MB ({'no escapes' if args.no_escapes else 'an escape a line'}): "
          f"RSS before {before:.1f} MB, peak {peak:.1f} MB "
          f"({(peak - before) / mb:.2f}x a record above it; {(peak - control) / mb:.2f}x above "
          f"its peak of {control:.1f} MB while it read as many bytes of ordinary lines), "
          f"2 s after {after:.1f} MB")


def bulk(binary, size, args):
    text = big_text(size, not args.no_escapes)
    kind = ("blocks" if args.blocks else "prompt") if args.prompt else "tool_result"
    with tempfile.TemporaryDirectory(prefix="familiar-big-") as tmp:
        tmp = pathlib.Path(tmp)
        small, big = tmp / "small.jsonl", tmp / "big.jsonl"
        ordinary = tmp / "ordinary.jsonl"
        on_disk = 0
        with open(small, "w") as s, open(big, "w") as b, open(ordinary, "w") as o:
            for f in (s, o) if args.first else (s, b, o):
                f.write(record("prompt", "start", 0, str(tmp)))
            for n in range(1, args.count + 1):
                line = record(kind, text, n, str(tmp))
                on_disk = len(line)
                b.write(line)
                # As many bytes of ordinary lines (1 KB prompts) in the control file.
                written = 0
                while written < on_disk:
                    filler = record("prompt", f"ordinary {n} {written} " + "y" * 1000, n, str(tmp))
                    o.write(filler)
                    written += len(filler)
                for f in (s, b, o):
                    f.write(record("prompt", f"read-{n}", 10_000 + n, str(tmp)))
        mb = on_disk / 1e6
        print(f"{args.count} {dict(blocks='prompts in a text block').get(kind, kind.replace('_', ' ') + 's')} of {mb:.1f} MB "
              f"({'no escapes' if args.no_escapes else 'an escape a line'}), read from a file:")
        script = str(ROOT / "scripts/default.rhai")
        del text  # not held while the commands run
        for name, argv in [("events", ["events"]), ("run default.rhai", ["run", script, "--input"]),
                           ("stats", ["stats", "--no-cache"])]:
            level = measure([binary, *argv, str(small)])
            control = measure([binary, *argv, str(ordinary)])
            peak = measure([binary, *argv, str(big)])
            print(f"  {name}: {level:.1f} MB without them, {control:.1f} MB with as many bytes "
                  f"of ordinary lines instead, peak {peak:.1f} MB ({(peak - level) / mb:.2f}x a "
                  f"record above the first, {(peak - control) / mb:.2f}x above the second)")


def measure(argv):
    """Peak RSS of `argv` in MB, as GNU time reports it (as bench/memory.sh does): a child
    forked from this Python would count its pages, which hold the records' text."""
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {done.stderr[-2000:]}")
    return int(done.stderr.split()[-1]) * 1024 / 1e6


if __name__ == "__main__":
    main()
