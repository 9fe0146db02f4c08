//! What a record says about the session around it, beyond its events: the subagent a
//! parent's records tie to a Task/Agent call, Gemini CLI's `invoke_agent`, Qwen Code's
//! `agent`, or Copilot CLI's `task` ([`subagent_link`]). The session model
//! (`familiar-session`) reads it per line (and where the session runs from [`crate::head`]);
//! it lives here because it parses the record format, which only this crate knows.

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
    // Every line of every session is looked at here.
    if !crate::contains!(line, b"\"agentId\"") {
        // Qwen Code names no `agentId` in the parent's records: its `agent` call's result does.
        return crate::contains!(line, b"\"toolCallResult\"")
            .then(|| qwen_link(line))
            .flatten();
    }
    if crate::contains!(line, b"\"subagent.started\"") {
        return copilot_link(line);
    }
    if crate::contains!(line, b"\"invoke_agent\"") {
        return gemini_link(line);
    }
    if crate::contains!(line, b"\"agent_progress\"") {
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
    if !crate::contains!(line, b"\"toolUseResult\"") {
        return None;
    }
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

/// Gemini CLI: a model's message whose `invoke_agent` call ran (`toolCalls[].agentId`, the
/// subagent's session id, which names its file `chats/<session>/<agentId>.jsonl`).
fn gemini_link(line: &[u8]) -> Option<SubagentLink> {
    #[derive(Deserialize)]
    struct Message {
        #[serde(rename = "type")]
        kind: Option<String>,
        #[serde(rename = "toolCalls", default)]
        tool_calls: Vec<Call>,
    }
    #[derive(Deserialize)]
    struct Call {
        id: Option<String>,
        name: Option<String>,
        #[serde(rename = "agentId")]
        agent_id: Option<String>,
    }
    let message: Message = serde_json::from_slice(line).ok()?;
    if message.kind.as_deref() != Some("gemini") {
        return None;
    }
    message.tool_calls.into_iter().find_map(|call| {
        (call.name.as_deref() == Some("invoke_agent")).then_some(())?;
        Some(SubagentLink {
            agent_id: call.agent_id?,
            tool_use_id: call.id?,
        })
    })
}

/// Copilot CLI: `subagent.started`, written in the parent's file with the subagent's
/// `agentId` (which its own records carry) and the `task` call's `toolCallId`.
fn copilot_link(line: &[u8]) -> Option<SubagentLink> {
    #[derive(Deserialize)]
    struct Record {
        #[serde(rename = "type")]
        kind: Option<String>,
        #[serde(rename = "agentId")]
        agent_id: Option<String>,
        data: Option<Data>,
    }
    #[derive(Deserialize)]
    struct Data {
        #[serde(rename = "toolCallId")]
        tool_call_id: Option<String>,
    }
    let record: Record = serde_json::from_slice(line).ok()?;
    (record.kind.as_deref() == Some("subagent.started")).then_some(())?;
    Some(SubagentLink {
        agent_id: record.agent_id?,
        tool_use_id: record.data?.tool_call_id?,
    })
}

/// Qwen Code: the result of an `agent` call that started a subagent in the background
/// (`Background agent launched successfully.\ntask_id: <agent id> (…`): the subagent's id,
/// which names its file `subagents/<session>/agent-<agent id>.jsonl`, and the call's id.
fn qwen_link(line: &[u8]) -> Option<SubagentLink> {
    #[derive(Deserialize)]
    struct Record {
        #[serde(rename = "type")]
        kind: Option<String>,
        #[serde(rename = "isSidechain")]
        is_sidechain: Option<bool>,
        #[serde(rename = "toolCallResult")]
        result: Option<CallResult>,
        message: Option<Message>,
    }
    #[derive(Deserialize)]
    struct CallResult {
        #[serde(rename = "callId")]
        call_id: Option<String>,
    }
    #[derive(Deserialize)]
    struct Message {
        #[serde(default)]
        parts: Vec<serde_json::Value>,
    }
    let record: Record = serde_json::from_slice(line).ok()?;
    if record.kind.as_deref() != Some("tool_result") || record.is_sidechain == Some(true) {
        return None;
    }
    let answer = record
        .message?
        .parts
        .into_iter()
        .find_map(|part| part.get("functionResponse").cloned())?;
    if answer.get("name")?.as_str()? != "agent" {
        return None;
    }
    let output = answer.get("response")?.get("output")?.as_str()?;
    let rest = &output[output.find("task_id: ")? + "task_id: ".len()..];
    let agent_id = rest.split_whitespace().next()?;
    Some(SubagentLink {
        agent_id: agent_id.to_owned(),
        tool_use_id: record.result?.call_id?,
    })
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
        let gemini = br#"{"id":"m1","type":"gemini","content":"","toolCalls":[{"id":"invoke_agent__1","name":"invoke_agent","args":{},"status":"success","agentId":"56cd6550"}]}"#;
        assert_eq!(
            subagent_link(gemini).map(|link| (link.agent_id, link.tool_use_id)),
            Some(("56cd6550".into(), "invoke_agent__1".into()))
        );
        let qwen = br#"{"uuid":"u","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"call_1","name":"agent","response":{"output":"Background agent launched successfully.\ntask_id: general-purpose-call_1 (internal ID)"}}}]},"toolCallResult":{"callId":"call_1","status":"success"}}"#;
        assert_eq!(
            subagent_link(qwen).map(|link| (link.agent_id, link.tool_use_id)),
            Some(("general-purpose-call_1".into(), "call_1".into()))
        );
        let copilot = br#"{"type":"subagent.started","data":{"toolCallId":"call_7_0","agentName":"explore"},"id":"e","timestamp":"2026-11-28T05:53:55.340Z","parentId":"p","agentId":"ac28570b"}"#;
        assert_eq!(
            subagent_link(copilot).map(|link| (link.agent_id, link.tool_use_id)),
            Some(("ac28570b".into(), "call_7_0".into()))
        );
    }
}
