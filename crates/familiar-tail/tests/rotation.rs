//! The randomized rotation test (the short version of `bench/tail-stress.sh`): appends cut
//! anywhere, copytruncate, rename-and-recreate, delete-and-recreate and a session appearing
//! mid-run, against real files, real inotify and the poll loop. Nothing lost (except lines a
//! truncation cut before they were read), doubled, out of order, stray or misnumbered. Seeded:
//! a failure names its seed, and `cargo run --example tail_stress -- --seed N` replays it.
//! Each run is bounded: the driver gives up waiting after 10 s and counts what is missing.

#[path = "stress/mod.rs"]
mod stress;

fn runs(first_seed: u64, count: u64, poll: bool) -> stress::Tally {
    let mut total = stress::Tally::default();
    for seed in first_seed..first_seed + count {
        let tally = stress::run(seed, poll, 120);
        assert!(tally.clean(), "seed {seed} poll={poll}: {tally:?}");
        total.add(&tally);
    }
    total
}

#[test]
fn random_appends_and_rotations_lose_double_reorder_and_invent_nothing() {
    let mut total = runs(1, 24, false);
    total.add(&runs(1_000, 8, true));
    eprintln!("{total:?}");
    assert!(total.clean(), "{total:?}");
    // The runs did what they are meant to: rotate often, with many lines.
    assert!(total.rotations > 100, "{total:?}");
    assert!(total.written > 1_000, "{total:?}");
    assert_eq!(total.received + total.truncated, total.written, "{total:?}");
}
