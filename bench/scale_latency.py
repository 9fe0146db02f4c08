"""Append -> action latency under load: one probe session gets a prompt record at a time
(waiting for its `quest` action from the shipped default.rhai, then 20 ms) while 200 other
sessions (SESSIONS=N for another count) are appended 10 real fixture lines/s each, all followed by one
`familiar watch --headless --all`. Reports p50/p99/max over N probes and the 1-minute load.
Usage: python3 bench/scale_latency.py BINARY [N]   (N = 300)"""
import glob, json, os, select, subprocess, sys, tempfile, threading, time
binary = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 300
here = os.path.dirname(os.path.abspath(__file__))
fixtures = os.environ.get("FAMILIAR_REAL_FIXTURES", os.path.join(here, "../../shared/fixtures/real"))
lines = []
for path in sorted(glob.glob(os.path.join(fixtures, "v2.1.*.jsonl"))):
    with open(path, "rb") as f:
        lines.extend(l for l in f if len(l) < 20000)
sessions = int(os.environ.get("SESSIONS", "200"))
home = tempfile.mkdtemp(prefix="familiar-latload-")
project = os.path.join(home, ".claude", "projects", "-work-scale")
os.makedirs(project)
files = [open(os.path.join(project, f"00000000-0000-4000-8000-{n:012d}.jsonl"), "ab") for n in range(sessions)]
probe_path = os.path.join(project, "00000000-0000-4000-8000-999999999999.jsonl")
open(probe_path, "w").close()
env = dict(os.environ, HOME=home, CLAUDE_CONFIG_DIR=os.path.join(home, ".claude"),
           XDG_CONFIG_HOME=os.path.join(home, ".config"), FAMILIAR_SOCKET=os.path.join(home, "sock"),
           DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent")
watch = subprocess.Popen([binary, "watch", "--headless", "--no-notify", "--all"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
time.sleep(1.5)
stop = False
def writer():
    i = 0; interval = 1.0 / (sessions * 10); next_at = time.monotonic()
    while not stop:
        f = files[i % len(files)]; f.write(lines[i % len(lines)]); f.flush(); i += 1
        next_at += interval; d = next_at - time.monotonic()
        if d > 0: time.sleep(d)
t = threading.Thread(target=writer); t.start()
time.sleep(1)
lat = []
buf = b""
with open(probe_path, "a") as out:
    for n in range(count):
        record = {"type": "user", "sessionId": "latency", "isSidechain": False,
                  "timestamp": "2026-02-11T10:00:00.000Z", "cwd": home,
                  "message": {"role": "user", "content": f"probe {n}"}}
        start = time.perf_counter()
        out.write(json.dumps(record) + "\n"); out.flush()
        needle = f'"text":"probe {n}"'.encode()
        while True:
            r, _, _ = select.select([watch.stdout], [], [], 10)
            if not r: sys.exit("timeout")
            chunk = os.read(watch.stdout.fileno(), 1 << 20)
            buf += chunk
            if needle in buf and b'"action":"quest"' in buf[buf.find(needle)-300 if buf.find(needle) > 300 else 0:]:
                buf = b""; break
            if len(buf) > 1 << 20: buf = buf[-4096:]
        lat.append((time.perf_counter() - start) * 1000)
        time.sleep(0.02)
stop = True; t.join(); watch.terminate(); watch.wait()
subprocess.run(["rm", "-rf", home])
lat.sort()
print(f"{binary}: probe append -> action with {sessions} sessions writing: p50 {lat[len(lat)//2]:.2f} ms, p99 {lat[int(len(lat)*0.99)]:.2f} ms, max {lat[-1]:.2f} ms; load %.1f" % os.getloadavg()[0])
