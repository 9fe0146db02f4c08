"""Append -> action latency of the whole pipeline: `familiar watch --headless` follows a
transcript in a temporary Claude dir; each appended prompt record must come out as the
`quest` action of the shipped default.rhai. Reports p50/p99/max over N appends.
Usage: python3 bench/action_latency.py [N] [BINARY]   (default 1000, target/release/familiar)"""
import atexit
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/familiar"
home = tempfile.mkdtemp(prefix="familiar-latency-")
atexit.register(shutil.rmtree, home, ignore_errors=True)
transcript = os.path.join(home, "session.jsonl")
open(transcript, "w").close()
env = dict(os.environ, HOME=home, CLAUDE_CONFIG_DIR=os.path.join(home, ".claude"),
           XDG_CONFIG_HOME=os.path.join(home, ".config"), FAMILIAR_SOCKET=os.path.join(home, "sock"),
           DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent")
watch = subprocess.Popen([binary, "watch", "--headless", "--no-notify", "--file", transcript],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
# Runs before the home is removed (atexit runs the last registered first), on any exit.
atexit.register(lambda: (watch.kill(), watch.wait()))
time.sleep(1.0)  # let it start watching
latencies = []
with open(transcript, "a") as out:
    for n in range(count):
        record = {"type": "user", "sessionId": "latency", "isSidechain": False,
                  "timestamp": "2026-02-11T10:00:00.000Z", "cwd": home,
                  "message": {"role": "user", "content": f"prompt {n}"}}
        start = time.perf_counter()
        out.write(json.dumps(record) + "\n")
        out.flush()
        while True:
            ready, _, _ = select.select([watch.stdout], [], [], 10)
            if not ready:
                sys.exit(f"no action for prompt {n} within 10 s")
            line = watch.stdout.readline().decode()
            if f'"text":"prompt {n}"' in line and '"action":"quest"' in line:
                break
        latencies.append((time.perf_counter() - start) * 1000)
watch.terminate()
latencies.sort()
pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
print(f"append -> action over {count} appends: p50 {pick(0.5):.2f} ms, "
      f"p99 {pick(0.99):.2f} ms, max {latencies[-1]:.2f} ms")
print("load average (1, 5, 15 min): %.2f %.2f %.2f" % os.getloadavg())
