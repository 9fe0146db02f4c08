//! What a record says about the session around it, beyond its events: the subagent a
//! parent's records tie to a Task/Agent call ([`subagent_link`]) and where the session runs
//! ([`record_identity`]: `cwd`, git branch, CLI version). The session model
//! (`familiar-session`) reads these per line; they live here because they parse the record
//! format, which only this crate knows.

use memchr::memmem;
use serde::Deserialize;
use serde_json::value::RawValue;

/// A subagent tied to the Task/Agent tool_use that spawned it, as the parent session's own
/// records tell: `progress` records of type `agent_progress` (`parentToolUseID`,
/// `data.agentId`) and the Task tool_result's `toolUseResult.agentId`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentLink {
    pub agent_id: String,
    pub tool_use_id: String,
}

/// The link a main-chain record reveals, if any. Most lines are rejected by two substring
/// searches; only candidates are parsed.
pub fn subagent_link(line: &[u8]) -> Option<SubagentLink> {
    #[derive(Deserialize)]
    struct Progress {
        #[serde(rename = "isSidechain")]
        is_sidechain: Option<bool>,
        #[serde(rename = "parentToolUseID")]
        parent_tool_use_id: Option<String>,
        data: Option<ProgressData>,
    }
    #[derive(Deserialize)]
    struct ProgressData {
        #[serde(rename = "type")]
        kind: Option<String>,
        #[serde(rename = "agentId")]
        agent_id: Option<String>,
    }
    #[derive(Deserialize)]
    struct ToolResult<'a> {
        #[serde(rename = "isSidechain")]
        is_sidechain: Option<bool>,
        #[serde(rename = "toolUseResult", borrow)]
        tool_use_result: Option<&'a RawValue>,
        #[serde(borrow)]
        message: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct AgentResult {
        #[serde(rename = "agentId")]
        agent_id: Option<String>,
    }
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        content: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Block {
        #[serde(rename = "type")]
        kind: Option<String>,
        tool_use_id: Option<String>,
    }
    memmem::find(line, b"\"agentId\"")?;
    if memmem::find(line, b"\"agent_progress\"").is_some() {
        let record: Progress = serde_json::from_slice(line).ok()?;
        let data = record.data?;
        if record.is_sidechain == Some(true) || data.kind.as_deref() != Some("agent_progress") {
            return None;
        }
        return Some(SubagentLink {
            agent_id: data.agent_id?,
            tool_use_id: record.parent_tool_use_id?,
        });
    }
    memmem::find(line, b"\"toolUseResult\"")?;
    let record: ToolResult = serde_json::from_slice(line).ok()?;
    if record.is_sidechain == Some(true) {
        return None;
    }
    let result: AgentResult = serde_json::from_str(record.tool_use_result?.get()).ok()?;
    let message: Message = serde_json::from_str(record.message?.get()).ok()?;
    let blocks: Vec<Block> = serde_json::from_str(message.content?.get()).ok()?;
    let tool_use_id = blocks
        .into_iter()
        .find(|block| block.kind.as_deref() == Some("tool_result"))?
        .tool_use_id?;
    Some(SubagentLink {
        agent_id: result.agent_id?,
        tool_use_id,
    })
}

/// Where a session runs, from the envelope fields most records carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordIdentity {
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub version: Option<String>,
}

/// The identity fields of one record line (`None` when the line carries none of them, or is
/// not a JSON object). Lines without `"cwd"` are rejected by one substring search.
pub fn record_identity(line: &[u8]) -> Option<RecordIdentity> {
    #[derive(Deserialize)]
    struct Envelope {
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
        cwd: Option<String>,
        #[serde(rename = "gitBranch")]
        git_branch: Option<String>,
        version: Option<String>,
    }
    memmem::find(line, b"\"cwd\"")?;
    let envelope: Envelope = serde_json::from_slice(line).ok()?;
    let identity = RecordIdentity {
        session_id: envelope.session_id,
        cwd: envelope.cwd.filter(|cwd| !cwd.is_empty()),
        git_branch: envelope.git_branch.filter(|branch| !branch.is_empty()),
        version: envelope.version,
    };
    (identity.cwd.is_some()).then_some(identity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subagent_links_come_from_progress_and_tool_results() {
        let progress = br#"{"isSidechain":false,"type":"progress","parentToolUseID":"toolu_1","data":{"type":"agent_progress","agentId":"a1"}}"#;
        assert_eq!(
            subagent_link(progress),
            Some(SubagentLink {
                agent_id: "a1".into(),
                tool_use_id: "toolu_1".into()
            })
        );
        let result = br#"{"isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"done"}]},"toolUseResult":{"status":"completed","agentId":"a2"}}"#;
        assert_eq!(
            subagent_link(result).map(|link| (link.agent_id, link.tool_use_id)),
            Some(("a2".into(), "toolu_2".into()))
        );
        let sidechain = br#"{"isSidechain":true,"agentId":"a3","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_3","content":"x"}]},"toolUseResult":{"agentId":"a3"}}"#;
        assert_eq!(subagent_link(sidechain), None);
        assert_eq!(subagent_link(b"{\"type\":\"user\"}"), None);
    }

    #[test]
    fn identity_comes_from_the_envelope() {
        let line = br#"{"type":"user","sessionId":"s1","cwd":"/home/u/proj","gitBranch":"main","version":"2.1.59","message":{"role":"user","content":"hi"}}"#;
        assert_eq!(
            record_identity(line),
            Some(RecordIdentity {
                session_id: Some("s1".into()),
                cwd: Some("/home/u/proj".into()),
                git_branch: Some("main".into()),
                version: Some("2.1.59".into()),
            })
        );
        assert_eq!(
            record_identity(br#"{"type":"summary","summary":"x"}"#),
            None
        );
        assert_eq!(record_identity(br#"{"cwd":""}"#), None);
        assert_eq!(record_identity(b"not json \"cwd\""), None);
    }
}
