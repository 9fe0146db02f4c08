//! The tailer's rotation stress run (not a test; `bench/tail-stress.sh` drives it):
//! many randomized runs of the driver in `tests/stress/mod.rs` (appends cut anywhere,
//! copytruncate, rename-and-recreate, delete-and-recreate, a session appearing mid-run,
//! inotify and poll modes), with the totals of lost, doubled, out-of-order, stray and
//! misnumbered lines, and this process's RSS along the way (it must stay flat).
//!
//! usage: tail_stress [--runs N] [--steps N] [--poll-every K] [--first-seed N] [--seed N]
//!   --runs N        runs (default 10000)
//!   --steps N       writer steps per run (default 120)
//!   --poll-every K  every K-th run uses the poll loop instead of inotify (default 5)
//!   --first-seed N  seed of the first run (default 1); run i uses seed first+i
//!   --seed N        replay one run (the seed a failure names), printing its tally

#[path = "../tests/stress/mod.rs"]
mod stress;

use std::process::ExitCode;
use std::time::Instant;

fn arg(args: &[String], name: &str, default: u64) -> Result<u64, String> {
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(at) => args
            .get(at + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{name} needs a number")),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = (|| -> Result<_, String> {
        Ok((
            arg(&args, "--runs", 10_000)?,
            arg(&args, "--steps", 120)? as usize,
            arg(&args, "--poll-every", 5)?.max(1),
            arg(&args, "--first-seed", 1)?,
            args.iter()
                .any(|a| a == "--seed")
                .then(|| arg(&args, "--seed", 0))
                .transpose()?,
        ))
    })();
    let (runs, steps, poll_every, first, replay) = match parsed {
        Ok(parsed) => parsed,
        Err(err) => {
            eprintln!("tail_stress: {err}");
            return ExitCode::from(2);
        }
    };
    if let Some(seed) = replay {
        for poll in [false, true] {
            let tally = stress::run(seed, poll, steps);
            println!("seed {seed} poll={poll}: {tally:?}");
        }
        return ExitCode::SUCCESS;
    }
    let started = Instant::now();
    let rss_start = stress::rss_kib();
    let mut rss_warm = 0;
    let mut rss_max = 0;
    let mut total = stress::Tally::default();
    let mut failed_seeds = Vec::new();
    for i in 0..runs {
        let seed = first + i;
        let poll = i % poll_every == poll_every - 1;
        let tally = stress::run(seed, poll, steps);
        if !tally.clean() {
            eprintln!("seed {seed} poll={poll}: {tally:?}");
            failed_seeds.push(seed);
        }
        total.add(&tally);
        let rss = stress::rss_kib();
        rss_max = rss_max.max(rss);
        if i + 1 == (runs / 10).max(1) {
            rss_warm = rss;
        }
        if (i + 1) % 500 == 0 {
            eprintln!(
                "{} runs, {:.0} s: lost {} doubled {} out of order {} stray {} misnumbered {}, RSS {} KiB",
                i + 1,
                started.elapsed().as_secs_f64(),
                total.lost,
                total.doubled,
                total.out_of_order,
                total.stray,
                total.misnumbered,
                rss
            );
        }
    }
    let rss_end = stress::rss_kib();
    println!(
        "{} runs ({} with --poll) in {:.0} s: {} lines written, {} received, {} cut unread by a \
         truncation ({} bytes reported lost by the tailer); {} rotations over {} generations",
        total.runs,
        runs / poll_every,
        started.elapsed().as_secs_f64(),
        total.written,
        total.received,
        total.truncated,
        total.lost_bytes_reported,
        total.rotations,
        total.generations,
    );
    println!(
        "lost {}, doubled {}, out of order {}, stray {}, misnumbered {}, other errors {}",
        total.lost,
        total.doubled,
        total.out_of_order,
        total.stray,
        total.misnumbered,
        total.errors.len()
    );
    println!(
        "RSS: {rss_start} KiB at start, {rss_warm} KiB after 10% of the runs, {rss_end} KiB at the end (max {rss_max} KiB)"
    );
    for error in total.errors.iter().take(20) {
        println!("error: {error}");
    }
    if total.clean() {
        ExitCode::SUCCESS
    } else {
        println!("failing seeds: {failed_seeds:?}");
        ExitCode::FAILURE
    }
}
