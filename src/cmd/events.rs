//! `familiar events`: transcripts in, normalized events out as NDJSON (`docs/events.md`).
//!
//! Each input has a normalizer of its own, so several inputs are read at once, one per core,
//! and printed in input order: the reader of input k + 1 writes its lines into a small bounded
//! queue while input k is printed, and waits when the queue is full (memory stays flat
//! however long an input is). Warnings go through the same queues, so stderr keeps the input
//! order too.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use familiar_transcript::{NormalizerConfig, Threads};

use super::{InputOptions, inputs_or_stdin, is_broken_pipe, read_transcript};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Transcript files (JSONL, stream-json or a JSON array); `-` or nothing reads stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub input: InputOptions,
}

/// What the reader of one input hands to the printer, in order.
enum Piece {
    /// NDJSON lines, about [`PIECE_BYTES`] of them.
    Lines(Vec<u8>),
    Warning(String),
    /// The input could not be read (the events before the failure came first).
    Failed(anyhow::Error),
    /// The input was read to its end.
    Done,
}

/// Bytes of NDJSON handed over at once.
const PIECE_BYTES: usize = 64 << 10;
/// Pieces an input may hold waiting for its turn: 1 MiB.
const QUEUED_PIECES: usize = 16;

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = args.input.load_normalizer_config()?;
    let inputs = inputs_or_stdin(&args.files);
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(inputs.len());
    let printed = if workers < 2 || one_input_dominates(&inputs) {
        print_in_turn(&inputs, &config, &mut out)
    } else {
        print_at_once(&inputs, &config, workers, &mut out)
    };
    let failed = match printed {
        Ok(failed) => failed,
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
        Err(err) => return Err(err.into()),
    };
    match out.flush() {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
        other => other?,
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Whether one input holds most of the bytes: reading the inputs at once would then leave the
/// other cores idle while it is parsed on one, where reading it alone parses it on two.
fn one_input_dominates(inputs: &[PathBuf]) -> bool {
    let sizes: Vec<u64> = inputs
        .iter()
        .map(|path| std::fs::metadata(path).map_or(0, |meta| meta.len()))
        .collect();
    let largest = sizes.iter().copied().max().unwrap_or(0);
    largest > sizes.iter().sum::<u64>() / 2
}

/// One input after the other, on this thread. `Ok(true)` when an input failed.
fn print_in_turn(
    inputs: &[PathBuf],
    config: &NormalizerConfig,
    out: &mut impl Write,
) -> io::Result<bool> {
    let mut failed = false;
    for path in inputs {
        let result = read_transcript(path, config, Threads::Two, super::style::warning, |event| {
            serde_json::to_writer(&mut *out, &event)?;
            out.write_all(b"\n")
        });
        match result {
            Ok(_) => {}
            Err(err) if is_broken_pipe(&err) => return Err(io::ErrorKind::BrokenPipe.into()),
            Err(err) => {
                super::style::error(format_args!("{err:#}"));
                failed = true;
            }
        }
    }
    Ok(failed)
}

/// `workers` inputs at a time, each read on a thread of its own, printed here in input order.
/// `Ok(true)` when an input failed.
fn print_at_once(
    inputs: &[PathBuf],
    config: &NormalizerConfig,
    workers: usize,
    out: &mut impl Write,
) -> io::Result<bool> {
    // Each sender goes to the reader that claims its input, so a queue closes when its reader
    // ends, even by a panic (a bug): the printer then goes on to the next input.
    let (senders, receivers): (Vec<_>, Vec<_>) = inputs
        .iter()
        .map(|_| {
            let (sender, receiver) = crossbeam_channel::bounded::<Piece>(QUEUED_PIECES);
            (Mutex::new(Some(sender)), receiver)
        })
        .unzip();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let (Some(path), Some(sender)) = (inputs.get(index), senders.get(index)) else {
                        break;
                    };
                    let sender = sender.lock().ok().and_then(|mut sender| sender.take());
                    if let Some(sender) = sender {
                        read_one(path, config, &sender);
                    }
                }
            });
        }
        let printed = print_in_order(receivers, out);
        // Printing stopped early (the reader of stdout went away): the readers stop too, and
        // any of them waiting on a full queue wakes up, since the queues are gone.
        stop.store(true, Ordering::Relaxed);
        printed
    })
}

/// Read `path` into pieces for the printer; stops early when the printer is gone.
fn read_one(path: &Path, config: &NormalizerConfig, sender: &crossbeam_channel::Sender<Piece>) {
    let gone = || io::Error::from(io::ErrorKind::BrokenPipe);
    let mut lines = Vec::with_capacity(PIECE_BYTES + 4096);
    // Parsed on this thread alone: the other cores read the other inputs.
    let result = read_transcript(
        path,
        config,
        Threads::One,
        |warning| {
            let _ = sender.send(Piece::Warning(warning));
        },
        |event| {
            serde_json::to_writer(&mut lines, &event)?;
            lines.push(b'\n');
            if lines.len() >= PIECE_BYTES {
                let full = std::mem::replace(&mut lines, Vec::with_capacity(PIECE_BYTES + 4096));
                sender.send(Piece::Lines(full)).map_err(|_| gone())?;
            }
            Ok(())
        },
    );
    if !lines.is_empty() {
        let _ = sender.send(Piece::Lines(lines));
    }
    let last = match result {
        Err(err) if !is_broken_pipe(&err) => Piece::Failed(err),
        _ => Piece::Done,
    };
    let _ = sender.send(last);
}

/// Print every input's pieces, input after input. `Ok(true)` when an input failed.
fn print_in_order(
    receivers: Vec<crossbeam_channel::Receiver<Piece>>,
    out: &mut impl Write,
) -> io::Result<bool> {
    let mut failed = false;
    for receiver in receivers {
        // A queue closed before `Done`: its reader panicked (a bug).
        while let Ok(piece) = receiver.recv() {
            match piece {
                Piece::Lines(lines) => out.write_all(&lines)?,
                Piece::Warning(warning) => {
                    out.flush()?;
                    super::style::warning(warning);
                }
                Piece::Failed(err) => {
                    out.flush()?;
                    super::style::error(format_args!("{err:#}"));
                    failed = true;
                    break;
                }
                Piece::Done => break,
            }
        }
    }
    Ok(failed)
}
