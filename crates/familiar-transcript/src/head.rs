//! The few fields a tailer needs from a record before it follows a file: the `cwd` that places
//! a session in a project, the `sessionId` that names a legacy `agent-<id>.jsonl`'s session,
//! and the `timestamp` that dates a file's last activity. Kept here, beside the other record
//! views ([`crate::record`]), so the transcript format is parsed in this crate only; the tailer's
//! discovery calls these on the lines it reads from a file's head or end.

use serde::Deserialize;

/// What one record says about where it belongs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeadFields {
    /// The working directory the session ran in.
    pub cwd: Option<String>,
    /// `sessionId` (or `session_id` in headless `stream-json` output).
    pub session_id: Option<String>,
    /// The git branch of `cwd`, when the CLI recorded one.
    pub git_branch: Option<String>,
}

/// The `cwd` and session id of one line (without its newline). A line that is not a JSON
/// object, or lacks the fields, gives empty fields.
pub fn fields(line: &[u8]) -> HeadFields {
    #[derive(Deserialize)]
    struct Envelope {
        cwd: Option<String>,
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
        #[serde(rename = "session_id")]
        session_id_snake: Option<String>,
        #[serde(rename = "gitBranch")]
        git_branch: Option<String>,
        #[serde(rename = "type")]
        kind: Option<String>,
        /// Codex rollouts: `session_meta` and `turn_context` say where they run.
        payload: Option<CodexPayload>,
        /// Copilot CLI sessions: `session.start` says where it runs.
        data: Option<CopilotData>,
    }
    #[derive(Deserialize)]
    struct CopilotData {
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
        context: Option<CopilotContext>,
    }
    #[derive(Deserialize)]
    struct CopilotContext {
        cwd: Option<String>,
        branch: Option<String>,
    }
    #[derive(Deserialize)]
    struct CodexPayload {
        id: Option<String>,
        cwd: Option<String>,
        git: Option<CodexGit>,
    }
    #[derive(Deserialize)]
    struct CodexGit {
        branch: Option<String>,
    }
    match serde_json::from_slice::<Envelope>(line) {
        Ok(envelope) => {
            let codex = envelope.payload.filter(|_| {
                matches!(
                    envelope.kind.as_deref(),
                    Some("session_meta" | "turn_context")
                )
            });
            let (codex_id, codex_cwd, codex_branch) = match codex {
                Some(payload) => {
                    let is_meta = envelope.kind.as_deref() == Some("session_meta");
                    (
                        payload.id.filter(|_| is_meta),
                        payload.cwd,
                        payload.git.and_then(|git| git.branch),
                    )
                }
                None => (None, None, None),
            };
            let copilot = envelope
                .data
                .filter(|_| envelope.kind.as_deref() == Some("session.start"));
            let (copilot_id, copilot_cwd, copilot_branch) = match copilot {
                Some(data) => {
                    let context = data.context;
                    let (cwd, branch) = context.map_or((None, None), |c| (c.cwd, c.branch));
                    (data.session_id, cwd, branch)
                }
                None => (None, None, None),
            };
            HeadFields {
                cwd: envelope.cwd.or(codex_cwd).or(copilot_cwd),
                session_id: envelope
                    .session_id
                    .or(envelope.session_id_snake)
                    .or(codex_id)
                    .or(copilot_id),
                git_branch: envelope
                    .git_branch
                    .or(codex_branch)
                    .or(copilot_branch)
                    .filter(|branch| !branch.is_empty()),
            }
        }
        Err(_) => HeadFields::default(),
    }
}

/// Only the `cwd` of one line.
pub fn cwd_of(line: &[u8]) -> Option<String> {
    fields(line).cwd
}

/// The record's `timestamp` as written (RFC 3339), if any.
pub fn timestamp_of(line: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Stamp<'a> {
        #[serde(borrow)]
        timestamp: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_slice::<Stamp<'_>>(line)
        .ok()?
        .timestamp
        .map(std::borrow::Cow::into_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_and_session_come_from_either_spelling() {
        let record = br#"{"type":"user","cwd":"/p","sessionId":"s1","timestamp":"2026-02-11T21:29:00.366Z"}"#;
        assert_eq!(cwd_of(record).as_deref(), Some("/p"));
        assert_eq!(fields(record).session_id.as_deref(), Some("s1"));
        assert_eq!(
            timestamp_of(record).as_deref(),
            Some("2026-02-11T21:29:00.366Z")
        );
        let init = br#"{"type":"system","subtype":"init","session_id":"s2","cwd":"/q"}"#;
        assert_eq!(fields(init).session_id.as_deref(), Some("s2"));
        assert_eq!(fields(b"{\"type\":\"summary\"}"), HeadFields::default());
        assert_eq!(fields(b"not json"), HeadFields::default());
        assert_eq!(timestamp_of(b"[1,2]"), None);
    }

    #[test]
    fn a_codex_rollout_says_where_it_runs_in_its_session_meta() {
        let meta = br#"{"timestamp":"2026-11-23T16:21:59.658Z","type":"session_meta","payload":{"id":"01a2","cwd":"/p","git":{"branch":"main"},"cli_version":"0.169.0"}}"#;
        let meta = fields(meta);
        assert_eq!(meta.cwd.as_deref(), Some("/p"));
        assert_eq!(meta.session_id.as_deref(), Some("01a2"));
        assert_eq!(meta.git_branch.as_deref(), Some("main"));
        // A turn's context names its cwd, not the session.
        let turn =
            br#"{"type":"turn_context","payload":{"turn_id":"t1","cwd":"/q","model":"gpt-5.5"}}"#;
        assert_eq!(fields(turn).cwd.as_deref(), Some("/q"));
        assert_eq!(fields(turn).session_id, None);
        // Other records' payloads say nothing about it.
        let item = br#"{"type":"response_item","payload":{"type":"message","id":"m1","cwd":"/x"}}"#;
        assert_eq!(fields(item), HeadFields::default());
    }

    #[test]
    fn a_copilot_session_says_where_it_runs_in_its_session_start() {
        let fixture = include_str!("../../../fixtures/copilot-1.0.102/main.jsonl");
        let start = fields(fixture.lines().next().unwrap().as_bytes());
        assert_eq!(start.cwd.as_deref(), Some("/tmp/cp/proj"));
        assert_eq!(
            start.session_id.as_deref(),
            Some("a59f8f81-7352-43fd-96e6-3e4569a13695")
        );
        let other =
            br#"{"type":"user.message","data":{"context":{"cwd":"/x"}},"id":"i","parentId":null}"#;
        assert_eq!(fields(other), HeadFields::default());
    }
}
