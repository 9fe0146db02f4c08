#!/usr/bin/env python3
"""Append -> drawn frame (issue 31, target 1): from the `write` of a line to a Claude Code
transcript to the end of the window frame that shows its event, through the whole path a user
has (tailer, session model, scripts, the pipe to `familiar-window`, Bevy, Mesa's software
renderer, an X server).

`familiar watch --all` runs with its window on an Xvfb of its own, over a HOME holding two
real sessions (copies of the real fixtures), and with FAMILIAR_FRAME_TRACE set, so the window
writes one line per drawn frame that shows new feed input: its CLOCK_REALTIME time just after
the frame was presented, and the events it shows by session and line
(crates/familiar-game/src/frame_trace.rs). Each append's time is time.time_ns() just before its
one write(2); its latency is the first traced frame showing that line's event, less that.

  idle:      a prompt or a tool use appended to one session every 2-4 s (random), so the window
             is in its low-power mode between them (a familiar may still be finishing an
             animation: the samples after more than 100 ms without a frame are also given
             apart);
  animating: the other session gets a tool use every 150 ms (its familiar animates, the
             window draws at 16 fps) while the measured lines go to the first at random
             0.25-1 s intervals.

Usage: python3 bench/frame_latency.py [N] [--cases idle,animating] [--bin DIR] [--fb]
                                      [--screenshot PNG] [--seed S]
  N             appends per case (default 60)
  --bin DIR     where `familiar` and `familiar-window` are (default target/release: first
                `cargo build --release --bin familiar --bin familiar-window`)
  --fb          also poll Xvfb's own framebuffer (`-fbdir`, memory-mapped) in the idle case and
                say how long after the traced time the pixels changed: the trace's error
                (costs a core while it runs, so the latencies of that run are not the figure)
  --screenshot  save the screen as PNG while the animating case runs (needs ImageMagick)
Reports p50 / p99 / max per case, the share before the window applied the input, how long
before each measured frame the previous one was drawn, the frames drawn a second, and the load
average. KEEP=1 keeps the temporary tree (trace, the watcher's log); a failed run keeps it."""
import argparse
import json
import mmap
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

FIXTURES = os.environ.get("FIXTURES", os.path.join(os.path.dirname(__file__), "../../shared/fixtures/real"))
# (project dir, fixture, session id): the measured session, then the busy one.
SESSIONS = [
    ("-home-u-erk", "v2.1.56-erk-api-error-turn-duration.jsonl",
     "393e5f27-e608-4173-adcc-fcef1abcc750"),
    ("-home-u-spotter", "v2.1.39-spotter-compact-queue-progress.jsonl",
     "258c7280-ae70-4798-800f-63464d01a85d"),
]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("n", nargs="?", type=int, default=60)
    p.add_argument("--cases", default="idle,animating")
    p.add_argument("--bin", default="target/release")
    p.add_argument("--fb", action="store_true")
    p.add_argument("--screenshot")
    p.add_argument("--seed", type=int, default=31)
    return p.parse_args()


def start_xvfb(fbdir):
    read, write = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1024x768x24",
                             "-nolisten", "tcp", "-fbdir", fbdir],
                            pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    number = b""
    while not number.endswith(b"\n"):
        chunk = os.read(read, 16)
        if not chunk:
            sys.exit("Xvfb did not start (Debian: apt install xvfb)")
        number += chunk
    os.close(read)
    return xvfb, ":" + number.decode().strip()


class Trace:
    """Follows the trace file on a thread: the first frame that showed each (session, line)."""

    def __init__(self, path):
        self.path = path
        self.first = {}
        self.frames = 0
        self.cond = threading.Condition()
        self.stop = False
        self.alive = True
        threading.Thread(target=self.follow, daemon=True).start()

    def follow(self):
        try:
            self.read()
        finally:
            self.alive = False

    def read(self):
        while not os.path.exists(self.path) and not self.stop:
            time.sleep(0.01)
        with open(self.path, "rb") as f:
            pending = b""
            while not self.stop:
                chunk = f.read()
                if not chunk:
                    time.sleep(0.002)
                    continue
                pending += chunk
                *lines, pending = pending.split(b"\n")
                with self.cond:
                    for line in lines:
                        frame = json.loads(line)
                        self.frames += 1
                        for item in frame["items"]:
                            key = (item.get("session"), item.get("line"))
                            if "event" in item and key not in self.first:
                                self.first[key] = frame
                    self.cond.notify_all()

    def wait(self, predicate, timeout):
        with self.cond:
            return self.cond.wait_for(predicate, timeout)


class Framebuffer:
    """Xvfb's screen as an XWD file it keeps mapped (-fbdir): polled for changes."""

    def __init__(self, fbdir):
        f = open(os.path.join(fbdir, "Xvfb_screen0"), "rb")
        self.map = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        fields = struct.unpack(">25I", self.map[:100])
        header, bytes_per_line, ncolors = fields[0], fields[12], fields[19]
        start = header + ncolors * 12
        # The window sits at the top left (no window manager): its 640 rows.
        self.region = (start, start + bytes_per_line * 640)
        self.changes = []
        self.stop = False
        threading.Thread(target=self.poll, daemon=True).start()

    def poll(self):
        a, b = self.region
        last = self.map[a:b]
        while not self.stop:
            now = self.map[a:b]
            if now != last:
                self.changes.append(time.time_ns())
                last = now
            time.sleep(0.0005)

    def first_change_after(self, t):
        return next((c for c in self.changes if c > t), None)


def prompt(session, cwd, n):
    return {"type": "user", "sessionId": session, "isSidechain": False, "cwd": cwd,
            "uuid": f"bench-prompt-{n}", "timestamp": now_iso(),
            "message": {"role": "user", "content": f"bench prompt {n}: draw me"}}


def tool_use(session, cwd, n):
    return {"type": "assistant", "sessionId": session, "isSidechain": False, "cwd": cwd,
            "uuid": f"bench-tool-{n}", "timestamp": now_iso(), "requestId": f"req_bench_{n}",
            "message": {"id": f"msg_bench_{n}", "type": "message", "role": "assistant",
                        "model": "claude-opus-4-6",
                        "content": [{"type": "tool_use", "id": f"toolu_bench_{n}", "name": "Read",
                                     "input": {"file_path": f"/src/file{n}.rs"}}],
                        "usage": {"input_tokens": 2, "cache_read_input_tokens": 40000,
                                  "output_tokens": 20}}}


def now_iso():
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % (int(t * 1000) % 1000)


class Transcript:
    def __init__(self, path, session):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        with open(path, "rb") as f:
            text = f.read()
        self.lines = text.count(b"\n")
        # The session's own working directory, so its plate keeps its project.
        cwds = [json.loads(line).get("cwd") for line in text.splitlines()[-50:]]
        self.session, self.cwd = session, next((c for c in reversed(cwds) if c), "/tmp")

    def append(self, make, n):
        """Writes one record in one write(2); returns (its line number, time just before)."""
        data = (json.dumps(make(self.session, self.cwd, n)) + "\n").encode()
        self.lines += 1
        t = time.time_ns()
        os.write(self.fd, data)
        return self.lines, t


def pick(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def summary(name, samples):
    def line(label, chosen):
        lat = [s["latency"] for s in chosen]
        print(f"{label}: {len(lat)} appends: append -> drawn frame p50 {pick(lat, .5):.1f} ms, "
              f"p99 {pick(lat, .99):.1f} ms, max {max(lat):.1f} ms (min {min(lat):.1f})")

    line(name, samples)
    applied = [s["applied"] for s in samples]
    render = [s["latency"] - s["applied"] for s in samples]
    gap = [s["since_previous"] for s in samples]
    print(f"  append -> applied by the window p50 {pick(applied, .5):.1f}, p99 {pick(applied, .99):.1f} ms; "
          f"applied -> presented p50 {pick(render, .5):.1f}, p99 {pick(render, .99):.1f} ms")
    print(f"  previous frame drawn before it: p50 {pick(gap, .5):.0f} ms, min {min(gap):.0f}, "
          f"max {max(gap):.0f} ms")
    asleep = [s for s in samples if s["since_previous"] > 100]
    if name == "idle" and asleep and len(asleep) < len(samples):
        line(f"  of which after more than 100 ms without a frame (low power)", asleep)
    first, last = samples[0], samples[-1]
    seconds = (last["presented_ns"] - first["presented_ns"]) / 1e9
    if seconds > 0:
        print(f"  {(last['frame'] - first['frame']) / seconds:.1f} frames a second drawn over the case")


def main():
    # Killed, still stop the watcher, its window and the X server (the `finally` below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args = parse_args()
    rng = random.Random(args.seed)
    familiar = os.path.abspath(os.path.join(args.bin, "familiar"))
    for exe in (familiar, os.path.join(args.bin, "familiar-window")):
        if not os.access(exe, os.X_OK):
            sys.exit(f"{exe} missing: cargo build --release --bin familiar --bin familiar-window")
    root = tempfile.mkdtemp(prefix="familiar-frame-")
    fbdir = os.path.join(root, "fb")
    os.mkdir(fbdir)
    home = os.path.join(root, "home")
    transcripts = []
    for project, fixture, session in SESSIONS:
        folder = os.path.join(home, ".claude", "projects", project)
        os.makedirs(folder)
        path = os.path.join(folder, session + ".jsonl")
        shutil.copy(os.path.join(FIXTURES, fixture), path)
        transcripts.append(Transcript(path, session))
    trace_path = os.path.join(root, "trace.ndjson")
    xvfb, display = start_xvfb(fbdir)
    env = {k: v for k, v in os.environ.items()
           if k not in ("WAYLAND_DISPLAY", "FAMILIAR_CONFIG", "RUST_LOG", "CODEX_HOME",
                        "GEMINI_CLI_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR", "COPILOT_HOME")}
    env.update(HOME=home, CLAUDE_CONFIG_DIR=os.path.join(home, ".claude"),
               XDG_CONFIG_HOME=os.path.join(home, ".config"),
               XDG_DATA_HOME=os.path.join(home, ".local/share"),
               FAMILIAR_SOCKET=os.path.join(root, "hook.sock"),
               DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent", DISPLAY=display,
               FAMILIAR_FRAME_TRACE=trace_path)
    log = open(os.path.join(root, "watch.log"), "w")
    watch = subprocess.Popen([familiar, "watch", "--all", "--no-notify"], env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    trace = Trace(trace_path)
    fb = None
    done = False
    try:
        started = time.time()
        if not trace.wait(lambda: trace.frames > 0, 60):
            sys.exit(f"no traced frame within 60 s; see {root}/watch.log")
        print(f"first traced frame {time.time() - started:.2f} s after start; "
              f"DISPLAY={display}, trace {trace_path}")
        # The entrance, and the first moments at full rate; a familiar holds still after 8 s.
        time.sleep(10)
        if args.fb:
            fb = Framebuffer(fbdir)
        main, busy = transcripts
        results = {}
        n = 0
        for case in args.cases.split(","):
            samples = []
            stop_busy = threading.Event()
            if case == "animating":
                def keep_busy():
                    k = 0
                    while not stop_busy.wait(0.15):
                        busy.append(tool_use, 100000 + k)
                        k += 1
                threading.Thread(target=keep_busy, daemon=True).start()
                time.sleep(3)
            elif case != "idle":
                sys.exit(f"unknown case {case}")
            for i in range(args.n):
                time.sleep(rng.uniform(2.0, 4.0) if case == "idle" else rng.uniform(0.25, 1.0))
                line, t = main.append(prompt if i % 2 == 0 else tool_use, n)
                n += 1
                key = (main.session, line)
                if not trace.wait(lambda: key in trace.first, 10):
                    with open(trace_path) as f:
                        mentioned = f'"line":{line},' in f.read()
                    sys.exit(f"line {line} of {main.session} not drawn within 10 s (in the trace "
                             f"file: {mentioned}; follower alive: {trace.alive}); see {root}")
                frame = trace.first[key]
                samples.append({
                    "latency": (frame["presented_ns"] - t) / 1e6,
                    "applied": (frame["applied_ns"] - t) / 1e6,
                    "since_previous": frame["since_previous_ns"] / 1e6,
                    "presented_ns": frame["presented_ns"], "write_ns": t, "frame": frame["frame"],
                })
                if case == "animating" and i == args.n // 2 and args.screenshot:
                    subprocess.run(["convert", "xwd:" + os.path.join(fbdir, "Xvfb_screen0"),
                                    "-crop", "960x640+0+0", args.screenshot], check=False)
            stop_busy.set()
            results[case] = samples
            if case == "animating":
                time.sleep(1)
        print(f"familiar-window frame trace, {args.n} appends per case, "
              f"{time.strftime('%Y-%m-%d %H:%M %Z')}, {os.cpu_count()} cores")
        for case, samples in results.items():
            summary(case, samples)
        if fb is not None and "idle" in results:
            # The first change from 5 ms before the traced time on: an earlier one is another
            # frame's (a timer's), a later one would say the trace is early.
            deltas = []
            for s in results["idle"]:
                change = fb.first_change_after(s["presented_ns"] - 5_000_000)
                if change is not None:
                    deltas.append((change - s["presented_ns"]) / 1e6)
            if deltas:
                print(f"  Xvfb's framebuffer changed after the traced time by: p50 "
                      f"{pick(deltas, .5):.2f} ms, min {min(deltas):.2f}, max {max(deltas):.2f} ms "
                      f"over {len(deltas)} (polled every ~0.5 ms plus a copy of the window)")
        print("load average (1, 5, 15 min): %.2f %.2f %.2f" % os.getloadavg())
        done = True
    finally:
        trace.stop = True
        if fb is not None:
            fb.stop = True
        watch.terminate()
        try:
            watch.wait(10)
        except subprocess.TimeoutExpired:
            watch.kill()
        xvfb.terminate()
        xvfb.wait()
        if done and os.environ.get("KEEP") is None:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"kept {root}")


if __name__ == "__main__":
    main()
