//! A transcript read to its end (a file, stdin, the bundled demo) through the session model:
//! `run`, `test`, `replay` and `demo` all read this way, so a dry run sees what `watch` sees.
//! The model's clock is each line's recorded time ([`super::Clock::Recorded`]): the timers
//! fire where they fired when the transcript was written, however fast it is read.
//!
//! Reading and the session model run on a thread of their own while the caller's thread runs
//! the scripts, in event order: the two overlap instead of taking turns (issue 17), and a
//! bounded channel of batches keeps memory flat whatever the input's size.

use std::io::{self, Read};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use familiar_model::text::printable_line;
use familiar_session::{FileInfo, Input, ModelConfig, Output, SessionModel};
use familiar_transcript::{Diagnostic, DiagnosticKind, ReadLine};

use super::Item;
use crate::Error;
use crate::report::{self, SkippedLines};

/// Events handed over at once when reading a file; a pipe, which may be written live, hands
/// over each event as it comes.
const BATCH: usize = 128;

/// A transcript to read to its end.
pub struct Recorded {
    name: String,
    /// What the session model calls the file (a pipe and the demo get a name of their own).
    path: PathBuf,
    reader: Box<dyn Read + Send>,
    /// The input's size when known (not a pipe): a line longer than a read gets room for the
    /// rest at once ([`familiar_transcript::read_lines_with`]).
    len: Option<u64>,
    /// What the file's place says (a subagent's file, a session id in its name), as the
    /// tailer tells the model for the same file.
    info: FileInfo,
    /// Hand over events one by one (a pipe) rather than in batches.
    streaming: bool,
}

/// What the place of a file given by hand says, as the tailer would tell the model: a
/// subagent's file is its agent's; its name is its session's only when shaped like a session
/// id (Claude Code names a session's file after it; a copy or a file named by hand says
/// nothing of its session, and its records say it).
fn place_of(path: &Path) -> FileInfo {
    let Some(info) = familiar_tail::discovery::classify(path) else {
        return FileInfo::unknown();
    };
    let mut info = super::live::file_info(&info);
    // A Gemini CLI session's project, from its folder (its records never say).
    info.cwd = familiar_tail::discovery::gemini_chat(path)
        .and_then(familiar_tail::discovery::gemini_project_root);
    info.session_id = info
        .session_id
        .filter(|id| familiar_tail::discovery::is_session_id(id));
    info
}

/// What a read found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Events handed over.
    pub events: u64,
    /// Lines read (an unfinished last line not counted).
    pub lines: u64,
    /// Lines that are not records (an unfinished last line not counted).
    pub bad: u64,
}

impl Recorded {
    /// The file at `path`, or stdin for `-`.
    pub fn open(path: &Path) -> Result<Recorded, Error> {
        if path == Path::new("-") {
            return Ok(Recorded {
                name: "<stdin>".to_owned(),
                path: PathBuf::from("stdin.jsonl"),
                reader: Box::new(io::stdin()),
                len: None,
                info: FileInfo::unknown(),
                streaming: true,
            });
        }
        let name = path.display().to_string();
        // An opencode session (`<database>#<session id>`): its rows, read now, as the lines
        // the live source sends (`familiar_tail::opencode`).
        if let Some((db, session)) = familiar_tail::opencode::parse_address(path)
            && db.is_file()
        {
            let lines = familiar_tail::opencode::read_session(&db, &session).map_err(|err| {
                Error::Open {
                    name: name.clone(),
                    cause: io::Error::other(err.to_string()),
                }
            })?;
            return Ok(Recorded {
                name,
                path: path.to_owned(),
                len: Some(lines.len() as u64),
                reader: Box::new(io::Cursor::new(lines)),
                info: FileInfo::unknown(),
                streaming: false,
            });
        }
        let file = std::fs::File::open(path).map_err(|cause| Error::Open {
            name: name.clone(),
            cause,
        })?;
        let len = file
            .metadata()
            .ok()
            .filter(|meta| meta.is_file())
            .map(|meta| meta.len());
        Ok(Recorded {
            name,
            path: path.to_owned(),
            len,
            reader: Box::new(file),
            info: place_of(path),
            streaming: false,
        })
    }

    /// A transcript built into the binary (the demo), called `name` in messages.
    pub fn bytes(name: &str, bytes: &'static [u8]) -> Recorded {
        Recorded {
            name: name.to_owned(),
            path: PathBuf::from("demo.jsonl"),
            reader: Box::new(bytes),
            len: Some(bytes.len() as u64),
            info: FileInfo::unknown(),
            streaming: false,
        }
    }

    /// Any reader (tests), called `name`.
    pub fn reader(name: &str, reader: impl Read + Send + 'static) -> Recorded {
        Recorded {
            name: name.to_owned(),
            path: PathBuf::from(name),
            reader: Box::new(reader),
            len: None,
            info: FileInfo::unknown(),
            streaming: false,
        }
    }

    /// The input's name in messages: its path, `<stdin>`, or what the caller called it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Read every line through a session model of `config` on a thread of its own, handing
    /// each event, and the model's clock after each line ([`Item`]), to `on_item` on this
    /// thread, in order, until the input ends or `on_item` says `Break`. Skipped lines are told as every command tells them ([`SkippedLines`]);
    /// an input none of whose lines is a record is an error ([`Error::NotATranscript`]).
    /// Events read before a failure are still handed over.
    pub fn play(
        self,
        config: ModelConfig,
        mut on_item: impl FnMut(Item) -> ControlFlow<()>,
    ) -> Result<Tally, Error> {
        let batch_size = if self.streaming { 1 } else { BATCH };
        let name = self.name.clone();
        let (send, receive) = crossbeam_channel::bounded::<Vec<Item>>(4);
        // Batches handed back once their items are handed on, to be dropped (and their room
        // used again) on the reader's thread: an event's strings were allocated there, and
        // freeing them from this thread took mimalloc's cross-thread path, a seventh of this
        // thread's time on an event-dense transcript. What the caller keeps of an event (its
        // `Arc`) is dropped wherever the caller drops it.
        let (give_back, given_back) = crossbeam_channel::bounded::<Vec<Item>>(8);
        let read = std::thread::scope(|scope| {
            let reader = scope.spawn(move || {
                let mut batch = Vec::with_capacity(batch_size);
                let read = self.feed(config, &mut |item| {
                    batch.push(item);
                    if batch.len() >= batch_size {
                        let empty = match given_back.try_recv() {
                            Ok(mut used) => {
                                used.clear();
                                used
                            }
                            Err(_) => Vec::with_capacity(batch_size),
                        };
                        let full = std::mem::replace(&mut batch, empty);
                        // The caller stopped: stop reading too.
                        if send.send(full).is_err() {
                            return ControlFlow::Break(());
                        }
                    }
                    ControlFlow::Continue(())
                });
                if !batch.is_empty() {
                    let _ = send.send(batch);
                }
                read
            });
            'batches: for batch in &receive {
                for item in &batch {
                    if on_item(item.clone()).is_break() {
                        break 'batches;
                    }
                }
                // Full (the reader is behind on taking them back): dropped here instead.
                let _ = give_back.try_send(batch);
            }
            drop(receive);
            reader
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })?;
        if read.lines > 0 && read.lines == read.bad {
            return Err(Error::NotATranscript {
                name,
                bad: read.bad,
            });
        }
        Ok(read)
    }

    /// Every line through a fresh session model, on this thread; `on_item` may stop it.
    fn feed(
        self,
        config: ModelConfig,
        on_item: &mut dyn FnMut(Item) -> ControlFlow<()>,
    ) -> Result<Tally, Error> {
        let Recorded {
            name,
            path,
            reader,
            len,
            info,
            ..
        } = self;
        let cap = config.normalizer.max_line_bytes;
        // The model's clock is each record's own time.
        let mut model = SessionModel::new(ModelConfig {
            recorded_clock: true,
            ..config
        });
        let mut out = Vec::new();
        let mut read = Tally::default();
        let mut skipped = SkippedLines::new(&name);
        // The last time handed on.
        let mut told: Option<SystemTime> = None;
        model.apply(
            Input::Opened {
                path: &path,
                info: &info,
            },
            &mut out,
        );
        // The outputs so far, then the clock (`tick`) when it moved.
        let mut deliver =
            |out: &mut Vec<Output>, read: &mut Tally, tick: Option<SystemTime>| -> io::Result<()> {
                for output in out.drain(..) {
                    match output {
                        Output::Event(event) => {
                            read.events += 1;
                            if on_item(Item::Event(Arc::new(event))).is_break() {
                                return Err(io::Error::other(Stopped));
                            }
                        }
                        Output::Skipped { diagnostic, .. } => {
                            if !matches!(diagnostic.kind, DiagnosticKind::Unfinished { .. }) {
                                read.bad += 1;
                            }
                            if let Some(warning) = skipped.skip(&diagnostic) {
                                report::warning(warning);
                            }
                        }
                        Output::Unknown { what, .. } => tracing::info!(
                            "{}: {} not known to Familiar",
                            printable_line(&name),
                            printable_line(&what)
                        ),
                    }
                }
                if let Some(now) = tick
                    && on_item(Item::Tick(now)).is_break()
                {
                    return Err(io::Error::other(Stopped));
                }
                Ok(())
            };
        let result =
            familiar_transcript::read_lines_with(reader, len, cap, &mut Vec::new(), |line| {
                if !matches!(line, ReadLine::Unfinished { .. }) {
                    read.lines += 1;
                }
                match line {
                    ReadLine::Line { number, bytes } => model.apply(
                        Input::Line {
                            path: &path,
                            number,
                            bytes,
                            backlog: false,
                        },
                        &mut out,
                    ),
                    ReadLine::TooLong { number, len } => out.push(Output::Skipped {
                        path: path.clone(),
                        diagnostic: Diagnostic {
                            line: number,
                            kind: DiagnosticKind::TooLong {
                                len,
                                cap: cap as u64,
                            },
                        },
                    }),
                    ReadLine::Unfinished { number, len } => out.push(Output::Skipped {
                        path: path.clone(),
                        diagnostic: Diagnostic {
                            line: number,
                            kind: DiagnosticKind::Unfinished { len },
                        },
                    }),
                }
                // The clock after the line: the scripts' timers due by now fire before the
                // next line's events, as they do live.
                let tick = model.now().filter(|_| model.now() != told);
                told = model.now();
                deliver(&mut out, &mut read, tick)
            })
            .and_then(|()| {
                // The input ended: what the model held for a later record goes out.
                model.apply(Input::Removed { path: &path }, &mut out);
                deliver(&mut out, &mut read, None)
            });
        if let Some(summary) = skipped.summary() {
            report::warning(summary);
        }
        match result {
            Err(err) if err.get_ref().is_some_and(|inner| inner.is::<Stopped>()) => Ok(read),
            Err(cause) => Err(Error::Read { name, cause }),
            Ok(()) => Ok(read),
        }
    }
}

/// Marks the end of a read its caller asked for.
#[derive(Debug)]
struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped")
    }
}

impl std::error::Error for Stopped {}
