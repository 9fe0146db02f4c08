//! [`SessionModel`]: inputs in, events out, one state for every session.
//!
//! - this file: the model, its files and sessions, lines in and events out;
//! - `signals`: what time and the signals do to a status: the timers' tick, a hook's or the
//!   CLI's word.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use familiar_model::time::{elapsed, parse_timestamp};
use familiar_model::{Event, EventKind};
use familiar_transcript::{NormalizerConfig, head, parse_line, subagent_link};

use crate::file::{FileState, IDENTITY_TRIES, MAX_HELD};
use crate::input::{FileInfo, FileKind, Input, Output};
use crate::snapshot::{SessionSnapshot, SubagentSnapshot};
use crate::table::{FileId, FileTable};
use crate::timers::Timers;

mod signals;

/// How the model reads records and runs its timers.
#[derive(Debug, Clone, Default)]
pub struct ModelConfig {
    pub normalizer: NormalizerConfig,
    pub timers: Timers,
    /// The clock is the records' own: before each line the model is told the time of its
    /// record (its `timestamp`, read in the one parse of the line), as if a tick came then.
    /// For a transcript read after the fact (a replay, a dry run), whose timers must fire
    /// where they fired when it was written; live, ticks tell the wall clock instead.
    pub recorded_clock: bool,
    /// On the records' clock, the latest time a record may set: one dated later (the year
    /// 9999, a wrong clock) is the record's mistake and moves no clock. `None`: no bound.
    pub latest_record_time: Option<SystemTime>,
}

/// What the model knows of a session beyond its files.
#[derive(Debug, Default)]
struct SessionInfo {
    cwd: Option<String>,
    git_branch: Option<String>,
    model: Option<String>,
    /// Some event already carried `cwd` (or the snapshot did).
    cwd_told: bool,
    /// Some of its lines were backlog: it gets a `snapshot` event before anything else.
    had_backlog: bool,
    /// Its snapshot or first live event went out.
    shown: bool,
    /// Its main agent's plan (`TodoWrite`, the task tools).
    plan: familiar_model::Plan,
}

/// Removed Gemini CLI session files remembered, in case one is written again whole.
const MAX_GONE: usize = 16;

/// The one owner of session state (see the crate docs).
#[derive(Debug, Default)]
pub struct SessionModel {
    config: ModelConfig,
    files: FileTable,
    sessions: BTreeMap<String, SessionInfo>,
    /// Subagent id → the Task/Agent tool_use that started it (agent ids are unique).
    links: HashMap<String, String>,
    /// Task/Agent tool_uses whose result arrived: their subagent is done.
    ended: HashSet<String>,
    /// Gemini CLI session files removed lately, with what was told of them: the CLI may move a
    /// session file away and write it again whole under the same name (its
    /// `rewriteConversationFile`), which the tailer sees as a removal, then a new file.
    gone: VecDeque<(PathBuf, familiar_transcript::Normalizer, Option<String>)>,
    now: Option<SystemTime>,
    scratch: Vec<Event>,
}

impl SessionModel {
    pub fn new(config: ModelConfig) -> SessionModel {
        SessionModel {
            config,
            ..SessionModel::default()
        }
    }

    /// Keep each event's original record (`ev.raw`) from the next line on, or stop: a copy
    /// of every line, worth its memory only while a script reads it.
    pub fn set_keep_raw(&mut self, keep: bool) {
        self.config.normalizer.keep_raw = keep;
        for id in self.files.ids() {
            if let Some(file) = self.files.get_mut(id) {
                file.normalizer.set_keep_raw(keep);
            }
        }
    }

    /// The time of the last [`Input::Tick`].
    pub fn now(&self) -> Option<SystemTime> {
        self.now
    }

    /// Take one input; what it causes is appended to `out`.
    pub fn apply(&mut self, input: Input<'_>, out: &mut Vec<Output>) {
        match input {
            Input::Opened { path, info } => {
                self.open(path, info, out);
            }
            Input::Line {
                path,
                number,
                bytes,
                backlog,
            } => self.line(path, number, bytes, backlog, out),
            Input::Meta { path, agent_type } => {
                if let Some(file) = self.files.id(path).and_then(|id| self.files.get_mut(id)) {
                    file.info.agent_type = agent_type.map(str::to_owned);
                }
            }
            Input::Removed { path } => {
                if let Some(id) = self.files.id(path) {
                    self.flush(id, out);
                    if let Some(mut file) = self.files.remove(id) {
                        Self::release_held(&mut file, out);
                        if file.normalizer.agent_kind() == familiar_model::AgentKind::Gemini {
                            if self.gone.len() == MAX_GONE {
                                self.gone.pop_front();
                            }
                            self.gone.push_back((
                                path.to_path_buf(),
                                file.normalizer,
                                file.session,
                            ));
                        }
                    }
                }
            }
            Input::CaughtUp => self.caught_up(out),
            Input::Tick(now) => self.tick(now, out),
            Input::Hook(event) => self.hook(event, true, out),
            Input::CliState(event) => self.hook(event, false, out),
        }
    }

    /// [`SessionModel::apply`] returning the events only (diagnostics dropped): for tests
    /// and simple callers.
    pub fn events(&mut self, input: Input<'_>) -> Vec<Event> {
        let mut out = Vec::new();
        self.apply(input, &mut out);
        out.into_iter()
            .filter_map(|output| match output {
                Output::Event(event) => Some(event),
                Output::Skipped { .. } | Output::Unknown { .. } => None,
            })
            .collect()
    }

    fn open(&mut self, path: &Path, info: &FileInfo, out: &mut Vec<Output>) -> FileId {
        let mut file = FileState::new(info.clone(), &self.config.normalizer);
        if let Some(at) = self.gone.iter().position(|(gone, ..)| gone == path)
            && let Some((_, earlier, session)) = self.gone.remove(at)
        {
            // Written again whole under the same name: go on from what was told of it.
            file.normalizer.continue_from(&earlier);
            file.session = session;
        }
        if let Some(id) = self.files.id(path) {
            // A Gemini CLI file rewritten whole goes on where it was: a reply's `success` it
            // holds may yet get the tool calls the CLI adds at its next write.
            let rewritten = self.files.get_mut(id).is_some_and(|old| {
                old.normalizer.agent_kind() == familiar_model::AgentKind::Gemini
            });
            if !rewritten {
                self.flush(id, out);
            }
            if let Some(mut old) = self.files.remove(id) {
                Self::release_held(&mut old, out);
                // A file rewritten whole (Gemini CLI's) goes on from what was told of it.
                file.normalizer.continue_from(&old.normalizer);
                if file.normalizer.agent_kind() == familiar_model::AgentKind::Gemini {
                    file.session = old.session;
                }
            }
        }
        self.files.insert(path, file)
    }

    fn line(
        &mut self,
        path: &Path,
        number: u64,
        bytes: &[u8],
        backlog: bool,
        out: &mut Vec<Output>,
    ) {
        let id = match self.files.id(path) {
            Some(id) => id,
            None => self.open(path, &FileInfo::unknown(), out),
        };
        let mut parsed = parse_line(bytes, self.config.normalizer.max_line_bytes);
        if self.config.recorded_clock
            && let Some(at) = parsed
                .as_ref()
                .ok()
                .and_then(|parsed| {
                    parsed
                        .records()
                        .find_map(|record| record.timestamp.as_deref())
                })
                .and_then(parse_timestamp)
            && self.now.is_none_or(|now| at > now)
            && self
                .config
                .latest_record_time
                .is_none_or(|latest| at <= latest)
        {
            // Timers due before this record fire before its events.
            self.tick(at, out);
        }
        self.files.changed(id);
        let now = self.now;
        let Some(file) = self.files.get_mut(id) else {
            return;
        };
        if file.in_backlog && !backlog {
            file.finish_backlog(now, &self.config.timers);
        }
        file.in_backlog |= backlog;
        file.last_line = number;
        if file.identity.is_none() && file.identity_tries < IDENTITY_TRIES {
            file.identity_tries += 1;
            // Most lines are rejected by one substring search; only candidates are parsed.
            file.identity = familiar_transcript::contains!(bytes, b"\"cwd\"")
                .then(|| head::fields(bytes))
                .filter(|fields| fields.cwd.as_deref().is_some_and(|cwd| !cwd.is_empty()));
        }
        if file.info.kind == FileKind::Session
            && let Some(link) = subagent_link(bytes)
        {
            self.links.insert(link.agent_id, link.tool_use_id);
        }
        let mut events = std::mem::take(&mut self.scratch);
        events.clear();
        match &mut parsed {
            Ok(parsed) => file.normalizer.apply(parsed, number, &mut events),
            Err(kind) => {
                file.normalizer.skipped_line();
                out.push(Output::Skipped {
                    path: path.to_path_buf(),
                    diagnostic: familiar_transcript::Diagnostic {
                        line: number,
                        kind: kind.clone(),
                    },
                });
            }
        }
        if file.normalizer.has_unknown_news() {
            let version = file.normalizer.metrics().cli_version.clone();
            for what in file.normalizer.take_unknown_news() {
                out.push(Output::Unknown {
                    path: path.to_path_buf(),
                    what,
                    version: version.clone(),
                });
            }
        }
        if backlog {
            // Backlog events are not told (the snapshot is): nor is a success held for a
            // later record, which would otherwise go out live.
            file.normalizer.flush(&mut events);
        }
        if !file.is_subagent() {
            file.think.carry(&mut events);
        }
        if file.session.is_none() {
            file.session = events
                .iter()
                .find_map(|event| event.session.clone())
                .or_else(|| file.identity.as_ref()?.session_id.clone());
        }
        if let Some(last) = events.last() {
            file.last_kind = Some(last.kind);
        }
        for event in &events {
            if event.kind == EventKind::SubagentEnd
                && let Some(id) = &event.tool_use_id
            {
                self.ended.insert(id.clone());
            }
        }
        if !backlog {
            file.touched(now);
        }
        file.settle(now);
        let is_subagent_file = file.is_subagent();
        if let Some(key) = file.session_key() {
            // Looked up before inserting: a line of a known session allocates no key.
            if !self.sessions.contains_key(key) {
                self.sessions.insert(key.to_owned(), SessionInfo::default());
            }
            if let Some(session) = self.sessions.get_mut(key) {
                session.had_backlog |= backlog;
                if session.cwd.is_none()
                    && let Some(identity) = &file.identity
                {
                    session.cwd.clone_from(&identity.cwd);
                    session.git_branch.clone_from(&identity.git_branch);
                }
                if session.cwd.is_none() && !is_subagent_file {
                    // A Gemini CLI session: its place says where it runs.
                    session.cwd.clone_from(&file.info.cwd);
                }
                // The session's model is its main agent's: a subagent's own model (often
                // another) must not win by whichever file happened to be read last.
                let main_model = events
                    .iter()
                    .rev()
                    .filter(|event| !event.sidechain && event.agent.is_none())
                    .find_map(|event| event.model.as_ref());
                if let Some(model) = main_model.filter(|_| !is_subagent_file) {
                    session.model = Some(model.clone());
                }
                crate::plan::apply(&mut session.plan, &mut events, is_subagent_file);
            }
        }
        if backlog {
            self.scratch = events;
            return;
        }
        self.deliver(id, &mut events, out);
        self.scratch = events;
    }

    /// Let out what a file's normalizer held for a later record (a `success` waiting for
    /// its `turn_duration`): the file ended, or was quiet long enough that none is coming.
    fn flush(&mut self, id: FileId, out: &mut Vec<Output>) {
        let now = self.now;
        let mut events = Vec::new();
        let Some(file) = self.files.get_mut(id) else {
            return;
        };
        file.normalizer.flush(&mut events);
        if let Some(last) = events.last() {
            file.last_kind = Some(last.kind);
        }
        file.settle(now);
        if !events.is_empty() {
            self.deliver(id, &mut events, out);
        }
    }

    /// Send a file's new events, or hold them until its session is known.
    fn deliver(&mut self, id: FileId, events: &mut Vec<Event>, out: &mut Vec<Output>) {
        // Events before the session is known wait for it (a `summary` written ahead of the
        // first record of its session belongs to that session, not to a phantom one).
        let held_before = self.files.get(id).is_some_and(|file| !file.held.is_empty());
        // Known from the records, or from the path (`<sessionId>.jsonl`): only a file whose
        // place says nothing (a replayed file, a pipe) waits for its records to tell.
        let session_known = self
            .files
            .get(id)
            .is_some_and(|file| file.session.is_some() || file.info.session_id.is_some());
        if session_known && held_before {
            let held = self
                .files
                .get_mut(id)
                .map(|file| std::mem::take(&mut file.held))
                .unwrap_or_default();
            for event in held {
                self.emit(id, event, out);
            }
        }
        for event in events.drain(..) {
            if session_known || event.session.is_some() {
                self.emit(id, event, out);
            } else if let Some(file) = self.files.get_mut(id) {
                file.held.push(event);
                if file.held.len() > MAX_HELD {
                    let mut file_events = std::mem::take(&mut file.held);
                    for event in file_events.drain(..) {
                        self.emit(id, event, out);
                    }
                }
            }
        }
    }

    /// Send one live event: tagged from its file, after its session's snapshot, carrying
    /// the session's `cwd` the first time it is known.
    fn emit(&mut self, id: FileId, mut event: Event, out: &mut Vec<Output>) {
        if let Some(file) = self.files.get(id) {
            file.tag(&mut event);
            if event.session.is_none() {
                event.session.clone_from(&file.info.session_id);
            }
        }
        if let Some(key) = event.session.as_deref() {
            let needs_snapshot = self
                .sessions
                .get(key)
                .is_some_and(|session| session.had_backlog && !session.shown);
            if needs_snapshot {
                self.show(key, out);
            }
            if !self.sessions.contains_key(key) {
                self.sessions.insert(key.to_owned(), SessionInfo::default());
            }
            if let Some(session) = self.sessions.get_mut(key) {
                session.shown = true;
                if !session.cwd_told && session.cwd.is_some() {
                    event.cwd.clone_from(&session.cwd);
                    event.git_branch.clone_from(&session.git_branch);
                    session.cwd_told = true;
                }
            }
        }
        out.push(Output::Event(event));
    }

    /// Let out what a file held back, with whatever session it can be given.
    fn release_held(file: &mut FileState, out: &mut Vec<Output>) {
        for mut event in std::mem::take(&mut file.held) {
            file.tag(&mut event);
            if event.session.is_none() {
                event.session.clone_from(&file.info.session_id);
            }
            out.push(Output::Event(event));
        }
    }

    fn caught_up(&mut self, out: &mut Vec<Output>) {
        let now = self.now;
        for id in self.files.ids() {
            if let Some(file) = self.files.get_mut(id).filter(|file| file.in_backlog) {
                file.finish_backlog(now, &self.config.timers);
                self.files.changed(id);
            }
        }
        // Every backlog is finished: the snapshots are made from the files grouped by session
        // in one pass (a scan of every file per session took 5.7 s to catch up with 5,000).
        let snapshots: Vec<SessionSnapshot> = {
            let by_session = self.files_by_session();
            self.sessions
                .iter()
                .filter(|(_, session)| session.had_backlog && !session.shown)
                .filter_map(|(key, _)| {
                    self.snapshot_from(key, by_session.get(key.as_str()).map_or(&[], Vec::as_slice))
                })
                .collect()
        };
        for snapshot in snapshots {
            if let Some(session) = self.sessions.get_mut(&snapshot.session) {
                session.shown = true;
                session.cwd_told |= session.cwd.is_some();
            }
            out.push(Output::Event(snapshot.to_event()));
        }
    }

    /// The followed files of each session, in one pass over the files.
    fn files_by_session(&self) -> HashMap<&str, Vec<(&Arc<Path>, &FileState)>> {
        let mut groups: HashMap<&str, Vec<(&Arc<Path>, &FileState)>> = HashMap::new();
        for (_, path, file) in self.files.iter() {
            if let Some(key) = file.session_key() {
                groups.entry(key).or_default().push((path, file));
            }
        }
        groups
    }

    /// Emit a session's `snapshot` event.
    fn show(&mut self, key: &str, out: &mut Vec<Output>) {
        let now = self.now;
        for id in self.files.ids() {
            if let Some(file) = self.files.get_mut(id)
                && file.in_backlog
                && file.session_key() == Some(key)
            {
                file.finish_backlog(now, &self.config.timers);
                self.files.changed(id);
            }
        }
        let Some(snapshot) = self.snapshot_of(key) else {
            return;
        };
        if let Some(session) = self.sessions.get_mut(key) {
            session.shown = true;
            session.cwd_told |= session.cwd.is_some();
        }
        out.push(Output::Event(snapshot.to_event()));
    }

    /// Every session's state now, most recently active first.
    pub fn snapshot(&self) -> Vec<SessionSnapshot> {
        let by_session = self.files_by_session();
        let mut snapshots: Vec<SessionSnapshot> = self
            .sessions
            .keys()
            .filter_map(|key| {
                self.snapshot_from(key, by_session.get(key.as_str()).map_or(&[], Vec::as_slice))
            })
            .collect();
        snapshots.sort_by(|a, b| {
            b.last_activity_ms
                .cmp(&a.last_activity_ms)
                .then_with(|| a.session.cmp(&b.session))
        });
        snapshots
    }

    /// One session's state now; `None` for a session with no file followed any more.
    pub fn snapshot_of(&self, key: &str) -> Option<SessionSnapshot> {
        let files: Vec<(&Arc<Path>, &FileState)> = self
            .files
            .iter()
            .filter(|(_, _, file)| file.session_key() == Some(key))
            .map(|(_, path, file)| (path, file))
            .collect();
        self.snapshot_from(key, &files)
    }

    /// Session `key`'s state from its followed `files`.
    fn snapshot_from(
        &self,
        key: &str,
        files: &[(&Arc<Path>, &FileState)],
    ) -> Option<SessionSnapshot> {
        let session = self.sessions.get(key)?;
        let (main_path, main) = files
            .iter()
            .filter(|(_, file)| !file.is_subagent())
            .max_by_key(|(_, file)| file.last_activity)
            .or_else(|| files.iter().max_by_key(|(_, file)| file.last_activity))
            .copied()?;
        let status_for = match (main.status_since, self.now) {
            (Some(since), Some(now)) => Some(elapsed(since, now)),
            _ => None,
        };
        let subagents = files
            .iter()
            .filter(|(_, file)| file.is_subagent() && !self.finished_subagent(file))
            .filter(|(_, file)| file.status != familiar_model::Status::Idle)
            .filter_map(|(_, file)| {
                let agent = file.info.agent_id.clone()?;
                Some(SubagentSnapshot {
                    tool_use_id: self.links.get(&agent).cloned(),
                    agent,
                    agent_type: file.info.agent_type.clone(),
                    status: file.status,
                    context_used: file.normalizer.context_used(),
                    context_limit: file.normalizer.context_limit(),
                })
            })
            .collect();
        Some(SessionSnapshot {
            session: key.to_owned(),
            cwd: session.cwd.clone(),
            git_branch: session.git_branch.clone(),
            agent_kind: main.normalizer.agent_kind(),
            model: session.model.clone(),
            status: main.status,
            status_for,
            context_used: main.normalizer.context_used(),
            context_limit: main.normalizer.context_limit(),
            last_record: main.normalizer.metrics().last_ts.clone(),
            last_activity_ms: SessionSnapshot::last_activity(main.last_activity),
            line: main.last_line,
            tools: main.normalizer.metrics().tool_calls.to_map(),
            transcript: Some(PathBuf::from(&**main_path)),
            subagents,
            plan: session.plan.items(),
            host: None,
        })
    }
}

#[cfg(test)]
#[path = "../due_tests.rs"]
mod due_tests;
