//! Tailer benchmark (not a test; run `cargo bench -p familiar-tail --bench tail_latency`).
//!
//! 1. Append-to-line latency through real inotify: append one real transcript line, time
//!    until it comes off the channel; p50 / p99 / max over `LATENCY_APPENDS` appends.
//! 2. Load: `SESSIONS` session files each appended at `LINES_PER_SEC` lines/s (real records
//!    from the fixtures) for `LOAD_SECS`; CPU time of the tailer's threads (the `familiar-tail`
//!    thread and notify's inotify thread, from `/proc/self/task/*/schedstat`) as a share of
//!    one core.
//!
//! Environment overrides: `TAIL_BENCH_APPENDS`, `TAIL_BENCH_SESSIONS`, `TAIL_BENCH_SECS`;
//! `TAIL_BENCH_POLL=1` runs both parts with the 250 ms poll loop instead of inotify.

use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use familiar_tail::{Selector, TailMessage, TailerConfig, TailerHandle};

/// One probe line per this many load lines.
const PROBE_EVERY: u64 = 20;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Complete lines of the real transcripts (newline included).
fn real_lines() -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    for path in familiar_testkit::real_fixtures() {
        let bytes = fs::read(&path).expect("read fixture");
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            if line.ends_with(b"\n") && line.len() > 1 {
                lines.push(line.to_vec());
            }
        }
    }
    lines
}

fn mode_name() -> &'static str {
    if std::env::var_os("TAIL_BENCH_POLL").is_some() {
        "poll 250 ms"
    } else {
        "inotify"
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn start(config_dir: &Path) -> TailerHandle {
    let mut config = TailerConfig::new(config_dir.to_path_buf(), vec![Selector::All]);
    config.channel_capacity = 65_536;
    if std::env::var_os("TAIL_BENCH_POLL").is_some() {
        config.mode = familiar_tail::WatchMode::DEFAULT_POLL;
    }
    let handle = familiar_tail::spawn(config).expect("start the tailer");
    loop {
        match handle.receiver().recv_timeout(Duration::from_secs(30)) {
            Ok(TailMessage::CaughtUp) => return handle,
            Ok(_) => {}
            Err(err) => panic!("no CaughtUp: {err}"),
        }
    }
}

fn latency(lines: &[Vec<u8>]) {
    let appends = env_or("TAIL_BENCH_APPENDS", 5000) as usize;
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("projects/-bench");
    fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("latency.jsonl");
    let handle = start(tmp.path());
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .expect("create");
    // An assistant text record, one line per append.
    let line = lines
        .iter()
        .find(|l| {
            let s = String::from_utf8_lossy(l);
            s.contains("\"type\":\"assistant\"")
                && s.contains("\"type\":\"text\"")
                && !s.contains("tool_use")
                && l.len() < 4096
        })
        .expect("an assistant text line");
    let mut samples = Vec::with_capacity(appends);
    for n in 1..=appends as u64 {
        let started = Instant::now();
        file.write_all(line).expect("append");
        loop {
            match handle.receiver().recv_timeout(Duration::from_secs(10)) {
                Ok(TailMessage::Lines { lines, .. }) if lines.iter().any(|l| l.number == n) => {
                    break;
                }
                Ok(_) => {}
                Err(err) => panic!("no line {n}: {err}"),
            }
        }
        samples.push(started.elapsed());
        // Let the tailer go back to sleep: each sample measures a wake-up from idle (appends
        // closer together than BATCH_INTERVAL are batched; the load run measures that case).
        std::thread::sleep(Duration::from_millis(5));
    }
    samples.sort();
    println!(
        "append-to-line latency over {appends} appends ({} B line, {}): \
         p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        line.len(),
        mode_name(),
        percentile(&samples, 0.50).as_secs_f64() * 1e3,
        percentile(&samples, 0.99).as_secs_f64() * 1e3,
        samples.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
}

/// CPU time (ns) of this process's threads whose name starts with one of `names`.
fn threads_cpu_ns(names: &[&str]) -> u64 {
    let mut total = 0;
    let Ok(tasks) = fs::read_dir("/proc/self/task") else {
        return 0;
    };
    for task in tasks.flatten() {
        let comm = fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !names.iter().any(|n| comm.trim_end().starts_with(n)) {
            continue;
        }
        let schedstat = fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
        total += schedstat
            .split_whitespace()
            .next()
            .and_then(|ns| ns.parse::<u64>().ok())
            .unwrap_or(0);
    }
    total
}

fn load(lines: &[Vec<u8>]) {
    let sessions = env_or("TAIL_BENCH_SESSIONS", 200) as usize;
    let seconds = env_or("TAIL_BENCH_SECS", 20);
    let rate = 10u64;
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut files: Vec<File> = Vec::new();
    for s in 0..sessions {
        let dir = tmp.path().join(format!("projects/-bench-{}", s % 20));
        fs::create_dir_all(&dir).expect("mkdir");
        let path = dir.join(format!("session-{s}.jsonl"));
        // Some history to warm up on, like real sessions.
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .expect("create");
        for line in lines.iter().skip(s * 7).take(50) {
            file.write_all(line).expect("write");
        }
        files.push(file);
    }
    let handle = start(tmp.path());
    let events = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let receiver = handle.receiver().clone();
    // Probe lines (a `summary` record with a numbered text) measure latency under load.
    let probes = (rate * sessions as u64 * seconds / PROBE_EVERY) as usize + 1;
    let sent: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; probes]));
    let consumer = {
        let events = Arc::clone(&events);
        let done = Arc::clone(&done);
        let sent = Arc::clone(&sent);
        std::thread::spawn(move || {
            let mut latencies = Vec::new();
            while !done.load(Ordering::Relaxed) {
                if let Ok(TailMessage::Lines { lines, .. }) =
                    receiver.recv_timeout(Duration::from_millis(100))
                {
                    events.fetch_add(lines.len() as u64, Ordering::Relaxed);
                    for line in &lines {
                        let Some(n) = probe_number(&line.bytes) else {
                            continue;
                        };
                        let at = sent.lock().ok().and_then(|s| s.get(n).copied().flatten());
                        if let Some(at) = at {
                            latencies.push(at.elapsed());
                        }
                    }
                }
            }
            latencies
        })
    };
    let probe_dir = tmp.path().join("projects/-bench-probe");
    fs::create_dir_all(&probe_dir).expect("mkdir");
    let mut probe_file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(probe_dir.join("probe.jsonl"))
        .expect("create");
    std::thread::sleep(Duration::from_millis(100));
    let names = ["familiar-tail", "notify-rs"];
    let cpu_before = threads_cpu_ns(&names);
    let notify_before = threads_cpu_ns(&["notify-rs"]);
    let started = Instant::now();
    let interval = Duration::from_secs_f64(1.0 / (rate as f64 * sessions as f64));
    let mut written = 0u64;
    let mut bytes = 0u64;
    let mut next = started;
    let total = rate * sessions as u64 * seconds;
    while written < total {
        let file = &mut files[(written as usize) % sessions];
        let line = &lines[(written as usize * 31) % lines.len()];
        file.write_all(line).expect("append");
        bytes += line.len() as u64;
        written += 1;
        if written.is_multiple_of(PROBE_EVERY) {
            let n = (written / PROBE_EVERY) as usize;
            let probe =
                format!("{{\"type\":\"summary\",\"summary\":\"probe-{n}\",\"leafUuid\":\"p\"}}\n");
            if let Ok(mut sent) = sent.lock()
                && let Some(slot) = sent.get_mut(n)
            {
                *slot = Some(Instant::now());
            }
            probe_file.write_all(probe.as_bytes()).expect("probe");
        }
        next += interval;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
    }
    let wall = started.elapsed();
    // Let the tailer finish what was written before reading its CPU time.
    std::thread::sleep(Duration::from_millis(500));
    let cpu = Duration::from_nanos(threads_cpu_ns(&names).saturating_sub(cpu_before));
    let notify_cpu =
        Duration::from_nanos(threads_cpu_ns(&["notify-rs"]).saturating_sub(notify_before));
    done.store(true, Ordering::Relaxed);
    let mut latencies = consumer.join().unwrap_or_default();
    latencies.sort();
    let stats = handle.stats();
    println!(
        "{} {sessions} sessions x {rate} lines/s for {:.1} s ({written} lines, {:.1} MB, {} lines received): \
         tailer CPU {:.3} s = {:.1} % of one core (of which notify's thread {:.1} %; \
         channel full {} times)",
        mode_name(),
        wall.as_secs_f64(),
        bytes as f64 / 1e6,
        events.load(Ordering::Relaxed),
        cpu.as_secs_f64(),
        cpu.as_secs_f64() / wall.as_secs_f64() * 100.0,
        notify_cpu.as_secs_f64() / wall.as_secs_f64() * 100.0,
        stats.channel_full,
    );
    if !latencies.is_empty() {
        println!(
            "latency under that load over {} probe appends: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
            latencies.len(),
            percentile(&latencies, 0.50).as_secs_f64() * 1e3,
            percentile(&latencies, 0.99).as_secs_f64() * 1e3,
            latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        );
    }
}

/// `n` of a probe line `{"type":"summary","summary":"probe-<n>",...}`.
fn probe_number(line: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(line).ok()?;
    let rest = text.strip_prefix("{\"type\":\"summary\",\"summary\":\"probe-")?;
    rest.split('"').next()?.parse().ok()
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` would too: run either way, briefly
    // under test.
    let lines = real_lines();
    assert!(lines.len() > 1000, "real fixtures found");
    latency(&lines);
    load(&lines);
}
