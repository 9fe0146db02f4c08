//! Claude Code's own record of its running interactive sessions, a status source that needs no
//! hooks: while an interactive session runs, the CLI keeps `$CLAUDE_CONFIG_DIR/sessions/<pid>.json`
//! with its `sessionId`, `cwd`, `status` (`busy`, `idle`, `waiting`), `waitingFor` (`"permission
//! prompt"`) and `statusUpdatedAt` (epoch milliseconds), rewritten at every change, and removes
//! it on exit (seen written by 2.1.197 and 2.1.332: `fixtures/claude-2.1.332/sessions-file.jsonl`
//! holds every state of one session). `familiar watch` follows that folder
//! (`familiar_tail::status_files`) and hands each state to the session model as a signal, as it
//! does a hook's. Pure: bytes in, events out.

use std::time::{Duration, UNIX_EPOCH};

use familiar_model::{Event, EventKind, Status};
use serde::Deserialize;

/// The folder under Claude Code's config dir.
pub const SESSIONS_DIR: &str = "sessions";

/// The fields of a sessions file that are read; the rest (sockets, names, peers) is not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CliSession {
    pub pid: Option<u32>,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    /// `busy`, `idle` or `waiting`.
    pub status: Option<String>,
    /// What a `waiting` session waits for: `"permission prompt"`, ...
    pub waiting_for: Option<String>,
    pub status_updated_at: Option<u64>,
    /// `interactive`.
    pub kind: Option<String>,
    pub version: Option<String>,
}

impl CliSession {
    /// A file's contents; `None` for what is not a session's state (the CLI writes other
    /// small files there too, and a file may be read half-written).
    pub fn parse(bytes: &[u8]) -> Option<CliSession> {
        let session: CliSession = serde_json::from_slice(bytes).ok()?;
        (session.session_id.is_some() && session.status.is_some()).then_some(session)
    }

    /// The status this state means, if the CLI named one Familiar knows.
    pub fn status(&self) -> Option<Status> {
        match self.status.as_deref()? {
            "busy" => Some(Status::Working),
            "idle" => Some(Status::WaitingForInput),
            "waiting" => Some(
                if self
                    .waiting_for
                    .as_deref()
                    .is_some_and(|what| what.contains("permission"))
                {
                    Status::WaitingForApproval
                } else {
                    Status::WaitingForInput
                },
            ),
            _ => None,
        }
    }

    /// The `status` event this state is, for the session model (as a hook's signal is):
    /// `text` says what it waits for, `ts` when the CLI changed it.
    pub fn status_event(&self) -> Option<Event> {
        let status = self.status()?;
        let mut event = Event::new(EventKind::Status, 0);
        event.session.clone_from(&self.session_id);
        event.status = status;
        event.text.clone_from(&self.waiting_for);
        event.ts = self
            .status_updated_at
            .and_then(|ms| UNIX_EPOCH.checked_add(Duration::from_millis(ms)))
            .map(familiar_model::time::format_timestamp);
        Some(event)
    }
}

/// The session ended: its file was removed, or the process that kept it is gone.
pub fn ended_event(session_id: &str) -> Event {
    let mut event = Event::new(EventKind::Status, 0);
    event.session = Some(session_id.to_owned());
    event.status = Status::Idle;
    event.text = Some("session ended".to_owned());
    event
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every state one real 2.1.332 session went through, as the CLI wrote them.
    fn recorded() -> Vec<CliSession> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/claude-2.1.332/sessions-file.jsonl"
        );
        let text = std::fs::read_to_string(path).expect("fixture");
        text.lines()
            .filter_map(|line| CliSession::parse(line.as_bytes()))
            .collect()
    }

    #[test]
    fn a_real_session_goes_busy_asks_and_goes_idle() {
        let states = recorded();
        let statuses: Vec<Status> = states.iter().filter_map(CliSession::status).collect();
        assert!(statuses.len() >= 6, "{states:?}");
        assert!(
            statuses.contains(&Status::WaitingForApproval),
            "{statuses:?}"
        );
        assert!(statuses.contains(&Status::Working), "{statuses:?}");
        assert_eq!(statuses.last(), Some(&Status::WaitingForInput));
        let asking = states
            .iter()
            .find(|state| state.status() == Some(Status::WaitingForApproval))
            .and_then(CliSession::status_event)
            .expect("an approval event");
        assert_eq!(asking.text.as_deref(), Some("permission prompt"));
        assert!(
            asking.session.is_some() && asking.ts.is_some(),
            "{asking:?}"
        );
    }

    /// Found by the `hook_input` fuzz target: a time 569,000 years away panicked.
    #[test]
    fn regression_a_state_changed_in_an_absurd_year_is_read_without_a_panic() {
        let session = CliSession::parse(
            br#"{"sessionId":"s","status":"busy","statusUpdatedAt":17958023302331228}"#,
        )
        .expect("a session state");
        let event = session.status_event().expect("a status event");
        assert_eq!(event.status, Status::Working);
        assert_eq!(event.ts.as_deref(), Some("9999-12-31T23:59:59.999Z"));
    }

    #[test]
    fn what_is_not_a_session_state_is_passed_over() {
        assert_eq!(
            CliSession::parse(br#"{"peerToken":"x","procStart":"1"}"#),
            None
        );
        assert_eq!(CliSession::parse(b"{\"sessionId\":\"s\",\"stat"), None);
        let odd = CliSession::parse(br#"{"sessionId":"s","status":"dreaming"}"#).expect("parsed");
        assert_eq!(odd.status_event(), None);
    }
}
