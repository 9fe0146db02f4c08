//! A mock OpenAI Responses API for `tests/real_codex.rs`: std::net on 127.0.0.1 only, bounded
//! in requests and in time, answering the real Codex CLI from a script.
//!
//! The CLI finds its script by a marker in the request's user texts (`FAMILIAR-SCRIPT main`);
//! each request of that script gets the next step (the runs are sequential, so a counter per
//! script is enough, and it survives the history rewrite of a compaction). A compaction request
//! (its last user text is Codex's "CONTEXT CHECKPOINT COMPACTION" prompt) gets a summary;
//! anything else gets "ok". Answers are streamed as Server-Sent Events the way the Responses API
//! streams them: `response.created`, per item `response.output_item.added`, text as
//! `response.output_text.delta`, `response.output_item.done`, then `response.completed` with
//! the usage. Errors are JSON answers with their HTTP status (429, 500), shaped as the API's
//! (`{"error": {"type", "code", "message", "param"}}`). An older CLI that offers no
//! `exec_command` gets the same steps through its `shell` tool (`["bash", "-lc", cmd]`, and a
//! patch as `["apply_patch", patch]`), so `FAMILIAR_CODEX_BIN` can run the script on it.

use std::collections::HashMap;
use std::io::Write as _;
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// Requests served before the mock refuses more (a runaway CLI loop ends the test).
const MAX_REQUESTS: usize = 100;
/// The mock stops accepting after this long, whatever happens.
const LIFETIME: Duration = Duration::from_secs(600);
/// The prompts Codex sends to have a conversation summarized (0.169 and 0.171, and 0.50).
const COMPACTION_PROMPTS: [&str; 2] = [
    "CONTEXT CHECKPOINT COMPACTION",
    "write a short memento message for the next agent",
];

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Answer {
    /// Output items and the request's input tokens (output is always 20, 5 of them reasoning,
    /// and half the input is cached).
    Items(Vec<Value>, u64),
    /// An HTTP error answer: status, the API's error `type` and `code`, and its `message`
    /// (the JSON body the Responses API sends).
    Error(u16, &'static str, &'static str),
}

pub fn text(id: &str, text: &str) -> Value {
    json!({"type": "message", "id": id, "role": "assistant",
        "content": [{"type": "output_text", "text": text}]})
}

pub fn reasoning(id: &str, summary: &str) -> Value {
    json!({"type": "reasoning", "id": id,
        "summary": [{"type": "summary_text", "text": summary}],
        "content": null, "encrypted_content": null})
}

pub fn function_call(call_id: &str, name: &str, arguments: Value) -> Value {
    json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id,
        "name": name, "arguments": arguments.to_string()})
}

pub fn custom_tool_call(call_id: &str, name: &str, input: &str) -> Value {
    json!({"type": "custom_tool_call", "id": format!("ctc_{call_id}"), "call_id": call_id,
        "name": name, "input": input})
}

pub struct Mock {
    pub url: String,
    pub requests: Arc<AtomicUsize>,
    // Stops the listener when the mock is dropped.
    _listening: crate::common::http::Listening,
    /// Requests that asked for a compaction summary.
    pub compactions: Arc<AtomicUsize>,
}

struct Shared {
    scripts: HashMap<&'static str, Vec<Answer>>,
    steps: Mutex<HashMap<&'static str, usize>>,
    compactions: Arc<AtomicUsize>,
}

impl Mock {
    pub fn start(scripts: HashMap<&'static str, Vec<Answer>>) -> Mock {
        let compactions = Arc::new(AtomicUsize::new(0));
        let shared = Arc::new(Shared {
            scripts,
            steps: Mutex::new(HashMap::new()),
            compactions: Arc::clone(&compactions),
        });
        let listening = crate::common::http::listen(MAX_REQUESTS, LIFETIME, move |stream, id| {
            serve(stream, &shared, id)
        });
        Mock {
            url: format!("{}/v1", listening.base),
            requests: Arc::clone(&listening.requests),
            _listening: listening,
            compactions,
        }
    }
}

fn serve(stream: TcpStream, shared: &Shared, id: u64) -> std::io::Result<()> {
    let Some((request, mut out)) = crate::common::http::read_post(stream, "/v1/responses")? else {
        return Ok(());
    };
    match choose(&request, shared, id) {
        Answer::Error(status, code, message) => {
            let body = json!({"error": {"type": code, "code": code, "message": message,
                "param": null}})
            .to_string();
            let reason = match status {
                429 => "Too Many Requests",
                500 => "Internal Server Error",
                502 => "Bad Gateway",
                503 => "Service Unavailable",
                _ => "Error",
            };
            write!(
                out,
                "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\nretry-after: 0\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
        }
        Answer::Items(items, input) => {
            out.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n")?;
            stream_response(&mut out, id, &items, input)
        }
    }
}

fn sse(out: &mut TcpStream, data: Value) -> std::io::Result<()> {
    let kind = data["type"].as_str().unwrap_or("ping").to_owned();
    write!(out, "event: {kind}\ndata: {data}\n\n")
}

fn stream_response(
    out: &mut TcpStream,
    id: u64,
    items: &[Value],
    input: u64,
) -> std::io::Result<()> {
    let response = format!("resp_mock{id:04}");
    sse(
        out,
        json!({"type": "response.created", "response": {"id": response}}),
    )?;
    for (index, item) in items.iter().enumerate() {
        let mut added = item.clone();
        if item["type"] == "message" {
            added["content"] = json!([]);
        }
        sse(
            out,
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        )?;
        if item["type"] == "message" {
            sse(
                out,
                json!({"type": "response.output_text.delta", "output_index": index,
                    "content_index": 0, "item_id": item["id"],
                    "delta": item["content"][0]["text"]}),
            )?;
        }
        sse(
            out,
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        )?;
    }
    sse(
        out,
        json!({"type": "response.completed", "response": {"id": response, "usage": {
            "input_tokens": input, "input_tokens_details": {"cached_tokens": input / 2},
            "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 5},
            "total_tokens": input + 20}}}),
    )?;
    out.flush()
}

/// Texts of the user messages of a request's input, in order.
fn user_texts(request: &Value) -> Vec<&str> {
    let mut texts = Vec::new();
    for item in request["input"].as_array().into_iter().flatten() {
        if item["role"] != "user" {
            continue;
        }
        for block in item["content"].as_array().into_iter().flatten() {
            if let Some(text) = block["text"].as_str() {
                texts.push(text);
            }
        }
    }
    texts
}

fn choose(request: &Value, shared: &Shared, id: u64) -> Answer {
    let texts = user_texts(request);
    if texts
        .last()
        .is_some_and(|text| COMPACTION_PROMPTS.iter().any(|p| text.contains(p)))
    {
        shared.compactions.fetch_add(1, Ordering::SeqCst);
        return Answer::Items(
            vec![text(
                &format!("msg_summary{id}"),
                "Summary: a scripted session read, failed and patched files.",
            )],
            300,
        );
    }
    let named = texts.iter().rev().find_map(|text| {
        let rest = &text[text.find("FAMILIAR-SCRIPT ")? + "FAMILIAR-SCRIPT ".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        shared
            .scripts
            .get_key_value(name.as_str())
            .map(|(name, _)| *name)
    });
    let fallback = Answer::Items(vec![text(&format!("msg_ok{id}"), "ok")], 50);
    let Some(name) = named else {
        return fallback;
    };
    let script = &shared.scripts[name];
    let step = {
        let mut steps = shared.steps.lock().unwrap_or_else(|p| p.into_inner());
        let step = steps.entry(name).or_insert(0);
        *step += 1;
        *step - 1
    };
    match script.get(step) {
        Some(Answer::Items(items, input)) => Answer::Items(for_tools(items, request), *input),
        Some(answer) => answer.clone(),
        // A script of one error answer fails every retry.
        None if matches!(script.last(), Some(Answer::Error(..))) => script[0].clone(),
        None => fallback,
    }
}

/// The scripted items in the tools the request offers: `exec_command` and the freeform
/// `apply_patch` when offered, else the older `shell` tool.
fn for_tools(items: &[Value], request: &Value) -> Vec<Value> {
    let offered = |name: &str| {
        request["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|tool| tool["name"] == name))
    };
    if offered("exec_command") || !offered("shell") {
        return items.to_vec();
    }
    items
        .iter()
        .map(|item| {
            let command = match (item["type"].as_str(), item["name"].as_str()) {
                (Some("function_call"), Some("exec_command")) => {
                    let arguments: Value =
                        serde_json::from_str(item["arguments"].as_str().unwrap_or("{}"))
                            .unwrap_or(Value::Null);
                    json!(["bash", "-lc", arguments["cmd"]])
                }
                (Some("custom_tool_call"), Some("apply_patch")) => {
                    json!(["apply_patch", item["input"]])
                }
                _ => return item.clone(),
            };
            let call_id = item["call_id"].as_str().unwrap_or("call");
            function_call(call_id, "shell", json!({"command": command}))
        })
        .collect()
}
