//! One followed transcript inside the model: its normalizer, the events held back until its
//! session is known, and the status its timers and hooks gave it.

use std::time::SystemTime;

use familiar_model::time::{elapsed, parse_timestamp};
use familiar_model::{Event, EventKind, Status};
use familiar_transcript::head::HeadFields;
use familiar_transcript::{Normalizer, NormalizerConfig};

use crate::input::{FileInfo, FileKind};
use crate::timers::{Timers, timer_status};

/// Lines searched for the envelope's `cwd` before giving up (a transcript names it on nearly
/// every user and assistant record, so a few are plenty).
pub const IDENTITY_TRIES: u16 = 64;
/// Events held back while a transcript's session is still unknown (a `summary` written before
/// the first record of its session); past this they go out as they are.
pub const MAX_HELD: usize = 256;

#[derive(Debug)]
pub struct FileState {
    pub info: FileInfo,
    pub normalizer: Normalizer,
    /// The session of its records (the first record that names one).
    pub session: Option<String>,
    pub held: Vec<Event>,
    /// Where the session runs (`cwd`, branch), from the first record that says.
    pub identity: Option<HeadFields>,
    pub identity_tries: u16,
    pub last_line: u64,
    pub last_kind: Option<EventKind>,
    /// Model time of the last line read live; after a backlog, the last record's own time.
    pub last_activity: Option<SystemTime>,
    pub timer_status: Option<Status>,
    pub hook_status: Option<Status>,
    /// The status last told (by an event or a snapshot), and since when.
    pub status: Status,
    pub status_since: Option<SystemTime>,
    /// Lines of this file so far were backlog (read silently at start-up).
    pub in_backlog: bool,
    /// The thinking intensity of its current turn.
    pub(crate) think: crate::think::TurnThink,
}

impl FileState {
    pub fn new(info: FileInfo, config: &NormalizerConfig) -> FileState {
        let mut config = config.clone();
        // A subagent's file: every record of it is that subagent's (see `subagent`).
        if info.kind == crate::input::FileKind::Subagent {
            config.subagent.clone_from(&info.agent_id);
        }
        FileState {
            info,
            normalizer: Normalizer::new(config),
            session: None,
            held: Vec::new(),
            identity: None,
            identity_tries: 0,
            last_line: 0,
            last_kind: None,
            last_activity: None,
            timer_status: None,
            hook_status: None,
            status: Status::Unknown,
            status_since: None,
            in_backlog: false,
            think: Default::default(),
        }
    }

    /// The session this file's state belongs to: its records' own, else its path's.
    pub fn session_key(&self) -> Option<&str> {
        self.session.as_deref().or(self.info.session_id.as_deref())
    }

    pub fn is_subagent(&self) -> bool {
        self.info.kind == FileKind::Subagent
    }

    /// What a person should be told the status is: a hook's word, else a timer's, else what
    /// the records say.
    pub fn effective_status(&self) -> Status {
        self.hook_status
            .or(self.timer_status)
            .unwrap_or_else(|| self.normalizer.status())
    }

    /// Fill what a record left empty from the file: its session, and in a subagent's own
    /// transcript the agent id. Fields the records set are never changed.
    pub fn tag(&self, event: &mut Event) {
        if event.session.is_none() {
            event.session.clone_from(&self.session);
        }
        if event.agent.is_none() && self.is_subagent() {
            event.agent.clone_from(&self.info.agent_id);
        }
    }

    /// A line was read live: timers and hook signals start over.
    pub fn touched(&mut self, now: Option<SystemTime>) {
        self.last_activity = now.or(self.last_activity);
        self.timer_status = None;
        self.hook_status = None;
    }

    /// Note the status the records now give, dating a change at `now`.
    pub fn settle(&mut self, now: Option<SystemTime>) {
        let status = self.effective_status();
        if status != self.status {
            self.status = status;
            self.status_since = now.or(self.status_since);
        }
    }

    /// The backlog is read: date the last activity from the last record's own timestamp (a
    /// session that went quiet an hour ago is idle now, not in five minutes) and let the
    /// timers say what that silence means.
    pub fn finish_backlog(&mut self, now: Option<SystemTime>, timers: &Timers) {
        self.in_backlog = false;
        let last_record = self
            .normalizer
            .metrics()
            .last_ts
            .as_deref()
            .and_then(parse_timestamp);
        let last = match (last_record, now) {
            (Some(record), Some(now)) => Some(record.min(now)),
            (record, now) => record.or(now),
        };
        self.last_activity = last;
        if let (Some(last), Some(now)) = (last, now) {
            self.timer_status = timer_status(
                timers,
                elapsed(last, now),
                self.last_kind,
                self.normalizer.status(),
            );
        }
        self.status = self.effective_status();
        self.status_since = last;
    }

    /// The `status` event for a change to `status` at `now`, carrying the file's state.
    pub fn status_event(&self, status: Status, now: Option<SystemTime>) -> Event {
        let mut event = Event::new(EventKind::Status, self.last_line);
        event.session = self.session_key().map(str::to_owned);
        event.sidechain = self.is_subagent();
        self.tag(&mut event);
        event.ts = now.map(familiar_model::time::format_timestamp);
        event.context_used = self.normalizer.context_used();
        event.context_limit = self.normalizer.context_limit();
        event.agent_kind = self.normalizer.agent_kind();
        event.status = status;
        event.previous_status = Some(self.status);
        event.duration_ms = match (self.status_since, now) {
            (Some(since), Some(now)) => Some(elapsed(since, now).as_millis() as u64),
            _ => None,
        };
        event
    }
}
