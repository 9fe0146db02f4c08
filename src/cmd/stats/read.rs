//! Reading `familiar stats`'s inputs: on every core, each file once, or its summary and
//! ledger from the cache of files read before ([`super::cache`]).

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Context as _;
use familiar_transcript::usage;
use familiar_transcript::{
    Diagnostic, DiagnosticKind, Ledger, Normalizer, NormalizerConfig, ReadLine, Summary, Tokens,
};

use super::cache;
use crate::cmd::input_name;

/// What reading one input said on the way (skipped lines), printed in input order once
/// every input is read, whichever core read it.
type Warnings = Vec<String>;

/// What reading one input gave: its warnings, and its result.
type FileRead = (Warnings, anyhow::Result<FileResult>);

/// What is kept of one input until every input is read: its warnings, and its summary as its
/// JSON, one allocation of about a kilobyte instead of a few dozen in maps and strings (5,000
/// transcripts: 51 → 42 MB peak RSS); it reads back exactly.
type FileDone = (Warnings, anyhow::Result<Box<str>>);

/// What reading one input left behind.
struct FileResult {
    /// Without its tokens and cost yet: those wait for every input's ledger (a message may
    /// be counted for another input). The normalizer is dropped as soon as its file is read.
    summary: Summary,
    /// Merged into the one ledger of every input as soon as the input is read whole.
    ledger: Ledger,
}

/// The cache of files read before, opened before any message is hashed (its rows' hashes
/// were taken under its key); `None`, said once, when it cannot be.
pub(super) fn open_cache(config: &NormalizerConfig) -> Option<cache::Cache> {
    let path = cache::default_path()?;
    match cache::Cache::open(&path, &cache::fingerprint(config)) {
        Ok(cache) => Some(cache),
        // Another `stats` is writing it, and keeps what it reads: nothing to tell the user.
        Err(err) if cache::is_busy(&err) => {
            tracing::info!("the cache of files read before is busy ({err:#}): reading every file");
            None
        }
        Err(err) => {
            crate::cmd::style::warning(format_args!(
                "the cache of files read before cannot be used ({err:#}): reading every file \
                 (--no-cache reads them without it, and without this warning)"
            ));
            None
        }
    }
}

/// Read every input, in parallel across cores (largest first), keeping input order in the
/// results; and every input's usage in one ledger. Each input read whole has its ledger
/// merged into that one at once (which record of a message counts does not depend on the
/// order: `familiar_transcript::usage`), so what waits for the last input is one ledger, not
/// one per input: 5,000 transcripts kept 5,000, each with room for 4,096 messages and an
/// index of its own, and then merged them (98.7 MB peak RSS).
///
/// With a `cache`, an input unchanged since a run kept it is taken from there (its ledger
/// merged as if it had been read), and each input read is kept for the next run, written on
/// this thread while the workers read.
pub(super) fn read_all(
    inputs: &[PathBuf],
    stamps: &[Option<cache::Stamp>],
    config: &NormalizerConfig,
    progress: &indicatif::ProgressBar,
    mut cache: Option<cache::Cache>,
) -> (Vec<FileDone>, Ledger) {
    let mut results: Vec<Option<FileDone>> = (0..inputs.len()).map(|_| None).collect();
    let mut ledger = Ledger::new();
    let here = std::env::current_dir().unwrap_or_default();
    // Where a regular file's row is kept: its absolute path.
    let kept_at = |index: usize| stamps[index].map(|stamp| (here.join(&inputs[index]), stamp));
    if let Some(open) = &cache {
        let files = (0..inputs.len()).filter_map(|index| {
            let (path, stamp) = kept_at(index)?;
            Some((index, path, input_name(&inputs[index]), stamp))
        });
        let looked_up = open.lookup(files, |index, kept| {
            // A kept summary that is not JSON (a damaged row) is a file to read again, not an
            // error when the answer is printed. Its fields are not checked here: a parse into
            // `Summary` cost a fifth of a run from the cache, and a row's fields are those this
            // executable wrote (rows of another go with its fingerprint).
            if serde_json::from_str::<serde::de::IgnoredAny>(&kept.summary).is_ok()
                && ledger.merge_encoded(&kept.ledger, index as u32).is_ok()
            {
                progress.inc(stamps[index].map_or(0, |stamp| stamp.size()));
                results[index] = Some((kept.warnings, Ok(kept.summary)));
            }
        });
        if let Err(err) = &looked_up
            && cache::is_busy(err)
        {
            tracing::info!("the cache of files read before is busy ({err:#}): reading the files");
            cache = None;
        } else if let Err(err) = looked_up {
            let damaged = cache::is_damaged(&err);
            crate::cmd::style::warning(format_args!(
                "the cache of files read before cannot be read ({err:#}): reading the files{}",
                if damaged { "; it is made anew" } else { "" }
            ));
            if let Some(damaged) = cache.take().filter(|_| damaged) {
                damaged.discard();
            }
        }
        let unchanged = results.iter().filter(|result| result.is_some()).count();
        tracing::info!(
            "{unchanged} of {} inputs unchanged since a run kept them: not read again",
            inputs.len()
        );
    }
    // Largest first: the last file a worker takes is then a small one, and both cores finish
    // together (a large file taken last would leave the other core idle while it is read).
    let mut order: Vec<(u64, usize)> = (0..inputs.len())
        .filter(|&index| results[index].is_none())
        .map(|index| (stamps[index].map_or(0, |stamp| stamp.size()), index))
        .collect();
    order.sort_by_key(|&(bytes, _)| std::cmp::Reverse(bytes));
    let next = AtomicUsize::new(0);
    let results = Mutex::new(results);
    // Locked once per input, for a merge of its few dozen messages.
    let ledger = Mutex::new(ledger);
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(order.len())
        .max(1);
    // Rows for the cache, written by this thread while the workers read; a few in flight.
    let (keep, kept) = crossbeam_channel::bounded::<cache::Row>(64);
    let keep = cache.as_ref().map(|_| keep);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let keep = keep.clone();
            let (order, next, results, ledger) = (&order, &next, &results, &ledger);
            let kept_at = &kept_at;
            scope.spawn(move || {
                // One read buffer per worker, for all its files.
                let mut chunk = Vec::new();
                while let Some(&(_, index)) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let path = &inputs[index];
                    let (warnings, result) =
                        read_one(path, index as u32, config, progress, &mut chunk);
                    let done = result.and_then(|file| {
                        let json = serde_json::to_string(&file.summary)
                            .context("keeping a summary as JSON")?
                            .into_boxed_str();
                        // Kept only if the file did not change while it was read.
                        if let Some(keep) = &keep
                            && let Some((absolute, stamp)) = kept_at(index)
                            && cache::Stamp::of(path) == Some(stamp)
                        {
                            let row = cache::Row {
                                path: absolute,
                                name: input_name(path),
                                stamp,
                                kept: cache::Kept {
                                    summary: json.clone(),
                                    warnings: warnings.clone(),
                                    ledger: file.ledger.encode(),
                                },
                            };
                            // The writer gone (an error said): nothing more is kept.
                            let _ = keep.send(row);
                        }
                        if let Ok(mut ledger) = ledger.lock() {
                            ledger.merge(file.ledger);
                        }
                        Ok(json)
                    });
                    if let Ok(mut results) = results.lock() {
                        results[index] = Some((warnings, done));
                    }
                }
            });
        }
        drop(keep);
        if let Some(cache) = cache.as_mut() {
            match cache.store(&kept) {
                Ok(0) => {}
                Ok(stored) => tracing::info!("{stored} inputs read kept for the next run"),
                Err(err) if cache::is_busy(&err) => {
                    tracing::info!("the files read were not kept: the cache is busy ({err:#})")
                }
                Err(err) => crate::cmd::style::warning(format_args!(
                    "the files read could not be kept for the next run ({err:#})"
                )),
            }
            // Whatever was not kept: the workers must not wait on a full channel.
            drop(kept);
        }
    });
    let results = results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .zip(inputs)
        .map(|(result, path)| {
            result.unwrap_or_else(|| {
                let err = anyhow::anyhow!("{} was not read", input_name(path));
                (Warnings::new(), Err(err))
            })
        })
        .collect();
    (results, ledger.into_inner().unwrap_or_default())
}

fn read_one(
    path: &Path,
    source: u32,
    config: &NormalizerConfig,
    progress: &indicatif::ProgressBar,
    chunk: &mut Vec<u8>,
) -> FileRead {
    let mut warnings = Warnings::new();
    let result = read_one_warning(path, source, config, progress, chunk, &mut warnings);
    (warnings, result)
}

/// [`read_one`], its skipped lines told to `warnings` ([`crate::cmd::SkippedLines`]).
fn read_one_warning(
    path: &Path,
    source: u32,
    config: &NormalizerConfig,
    progress: &indicatif::ProgressBar,
    chunk: &mut Vec<u8>,
    warnings: &mut Warnings,
) -> anyhow::Result<FileResult> {
    let crate::cmd::Input { name, reader, len } = crate::cmd::open_input(path)?;
    let mut normalizer = Normalizer::new(config.clone());
    let mut ledger = Ledger::new();
    ledger.set_source(source);
    let cap = config.max_line_bytes;
    let mut skipped = crate::cmd::SkippedLines::new(&name);
    let mut report = |diagnostic: Diagnostic| warnings.extend(skipped.skip(&diagnostic));
    // One pass over each line, on this thread: the files already keep every core busy, and
    // one parse of the line, where it lies in the read buffer, feeds the normalizer and the
    // usage ledger.
    let mut events = Vec::new();
    let read = familiar_transcript::read_lines_with(
        Counted {
            inner: reader,
            progress,
        },
        len,
        cap,
        chunk,
        |line| {
            match line {
                ReadLine::Line { number, bytes } => {
                    if let Err(diagnostic) =
                        usage::push_line(&mut normalizer, &mut ledger, bytes, number, &mut events)
                    {
                        report(diagnostic);
                    }
                    events.clear();
                }
                ReadLine::TooLong { number, len } => {
                    normalizer.skipped_line();
                    report(Diagnostic {
                        line: number,
                        kind: DiagnosticKind::TooLong {
                            len,
                            cap: cap as u64,
                        },
                    });
                }
                ReadLine::Unfinished { number, len } => report(Diagnostic {
                    line: number,
                    kind: DiagnosticKind::Unfinished { len },
                }),
            }
            Ok(())
        },
    )
    .with_context(|| format!("reading {name}"));
    warnings.extend(skipped.summary());
    read?;
    // The input ended: a turn's `success` held for its `turn_duration` counts as it is.
    normalizer.flush(&mut events);
    let summary = Summary::new(&name, &normalizer, Tokens::default(), 0.0);
    Ok(FileResult { summary, ledger })
}

/// A reader that counts the bytes it passes on, on the progress bar.
struct Counted<'p, R> {
    inner: R,
    progress: &'p indicatif::ProgressBar,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.progress.inc(read as u64);
        Ok(read)
    }
}
