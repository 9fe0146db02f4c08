//! A mock Anthropic Messages API for `tests/real_claude.rs`: std::net on 127.0.0.1 only,
//! bounded in requests and in time, answering the real Claude Code CLI from a script.
//!
//! The CLI finds its script by a marker in the latest user text that names one
//! (`FAMILIAR-SCRIPT main`, a subagent's prompt `FAMILIAR-SCRIPT sub`), and the step by how many
//! assistant messages follow that text in the request. A compaction request (its last user
//! text asks for a summary) gets a summary; anything else (title, side requests) gets "ok".
//! Answers are streamed as Server-Sent Events the way the real API streams them: message_start,
//! content blocks (text, thinking with a signature, tool_use with input_json_delta),
//! message_delta with usage and stop_reason, message_stop. Errors are 429 / 529 JSON answers.

use std::collections::HashMap;
use std::io::Write as _;
use std::net::TcpStream;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// Requests served before the mock refuses more (a runaway CLI loop ends the test).
const MAX_REQUESTS: usize = 200;
/// The mock stops accepting after this long, whatever happens.
const LIFETIME: Duration = Duration::from_secs(600);

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Answer {
    /// Content blocks, the stop reason and the usage (input, cache read, cache creation).
    Message {
        blocks: Vec<Value>,
        stop: &'static str,
        usage: (u64, u64, u64),
    },
    /// An HTTP error answer: status and the API's error type.
    Error(u16, &'static str),
}

pub fn text(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

pub fn thinking(text: &str) -> Value {
    json!({"type": "thinking", "thinking": text})
}

pub fn tool(name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "name": name, "input": input})
}

pub struct Mock {
    pub url: String,
    pub requests: Arc<AtomicUsize>,
    // Stops the listener when the mock is dropped.
    _listening: crate::common::http::Listening,
}

impl Mock {
    pub fn start(scripts: HashMap<&'static str, Vec<Answer>>) -> Mock {
        let scripts = Arc::new(scripts);
        let ids = Arc::new(Mutex::new(0_u64));
        let listening = crate::common::http::listen(MAX_REQUESTS, LIFETIME, move |stream, _| {
            serve(stream, &scripts, &ids)
        });
        Mock {
            url: listening.base.clone(),
            requests: Arc::clone(&listening.requests),
            _listening: listening,
        }
    }
}

fn serve(
    stream: TcpStream,
    scripts: &HashMap<&'static str, Vec<Answer>>,
    ids: &Mutex<u64>,
) -> std::io::Result<()> {
    let Some((request, mut out)) = crate::common::http::read_post(stream, "/v1/messages")? else {
        return Ok(());
    };
    let id = {
        let mut next = ids.lock().unwrap_or_else(|p| p.into_inner());
        *next += 1;
        *next
    };
    let answer = choose(&request, scripts);
    let model = request["model"]
        .as_str()
        .unwrap_or("claude-mock")
        .to_owned();
    match answer {
        Answer::Error(status, kind) => {
            let body =
                json!({"type": "error", "error": {"type": kind, "message": "mock"}}).to_string();
            let reason = if status == 429 {
                "Too Many Requests"
            } else {
                "Overloaded"
            };
            write!(
                out,
                "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\nrequest-id: req_mock{id:04}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
        }
        Answer::Message {
            blocks,
            stop,
            usage,
        } => {
            if request["stream"] != Value::Bool(true) {
                let content: Vec<Value> = blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .cloned()
                    .collect();
                let body = json!({"id": format!("msg_mock{id:04}"), "type": "message",
                    "role": "assistant", "model": model, "content": content,
                    "stop_reason": stop, "stop_sequence": null,
                    "usage": {"input_tokens": usage.0, "output_tokens": 20}})
                .to_string();
                return write!(
                    out,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nrequest-id: req_mock{id:04}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
            // `request-id`, as the real API sends it: the CLI writes it as `requestId`, and
            // ccusage deduplicates by message and request id.
            write!(
                out,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nrequest-id: req_mock{id:04}\r\nconnection: close\r\n\r\n"
            )?;
            stream_message(&mut out, id, &model, &blocks, stop, usage)
        }
    }
}

fn sse(out: &mut TcpStream, data: Value) -> std::io::Result<()> {
    let kind = data["type"].as_str().unwrap_or("ping").to_owned();
    write!(out, "event: {kind}\ndata: {data}\n\n")
}

fn stream_message(
    out: &mut TcpStream,
    id: u64,
    model: &str,
    blocks: &[Value],
    stop: &str,
    (input, cache_read, cache_creation): (u64, u64, u64),
) -> std::io::Result<()> {
    sse(
        out,
        json!({"type": "message_start", "message": {"id": format!("msg_mock{id:04}"),
            "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "cache_read_input_tokens": cache_read,
                "cache_creation_input_tokens": cache_creation,
                // The real API breaks cache writes down by lifetime; ccusage counts the parts.
                "cache_creation": {"ephemeral_5m_input_tokens": cache_creation,
                    "ephemeral_1h_input_tokens": 0},
                "output_tokens": 1}}}),
    )?;
    for (index, block) in blocks.iter().enumerate() {
        match block["type"].as_str() {
            Some("thinking") => {
                sse(
                    out,
                    json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
                )?;
                sse(
                    out,
                    json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}),
                )?;
                sse(
                    out,
                    json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "signature_delta", "signature": "bW9jay1zaWduYXR1cmU="}}),
                )?;
            }
            Some("tool_use") => {
                sse(
                    out,
                    json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": format!("toolu_mock{id:04}_{index}"),
                        "name": block["name"], "input": {}}}),
                )?;
                // The input arrives in pieces, as the real API streams it.
                let input = block["input"].to_string();
                let mid = input.len() / 2;
                let mid = (mid..input.len())
                    .find(|&at| input.is_char_boundary(at))
                    .unwrap_or(input.len());
                for part in [&input[..mid], &input[mid..]] {
                    sse(
                        out,
                        json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": part}}),
                    )?;
                }
            }
            _ => {
                sse(
                    out,
                    json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "text", "text": ""}}),
                )?;
                sse(
                    out,
                    json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": block["text"]}}),
                )?;
            }
        }
        sse(out, json!({"type": "content_block_stop", "index": index}))?;
    }
    out.flush()?;
    // The real API sends the stop reason a moment after the last block: the CLI writes the
    // block to the transcript first (so a subagent's last record has `stop_reason: null`).
    std::thread::sleep(Duration::from_millis(300));
    sse(
        out,
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": 20}}),
    )?;
    sse(out, json!({"type": "message_stop"}))?;
    out.flush()
}

/// Text blocks of a message (string content counts as one block).
fn texts(message: &Value) -> Vec<&str> {
    match &message["content"] {
        Value::String(text) => vec![text.as_str()],
        Value::Array(blocks) => blocks
            .iter()
            .filter(|block| block["type"] == "text")
            .filter_map(|block| block["text"].as_str())
            .collect(),
        _ => Vec::new(),
    }
}

fn choose(request: &Value, scripts: &HashMap<&'static str, Vec<Answer>>) -> Answer {
    let fallback = |text: &str| Answer::Message {
        blocks: vec![json!({"type": "text", "text": text})],
        stop: "end_turn",
        usage: (50, 0, 0),
    };
    let empty = Vec::new();
    let messages = request["messages"].as_array().unwrap_or(&empty);
    let last_text = messages
        .last()
        .and_then(|message| texts(message).last().map(|text| text.to_owned()))
        .unwrap_or_default();
    // A background agent's end (2.1.3xx): the CLI tells the main agent in a turn of its own,
    // whose text has a `<summary>` tag: it is not a compaction.
    if messages.last().is_some_and(|message| {
        texts(message)
            .iter()
            .any(|text| text.contains("<task-notification>"))
    }) {
        return fallback("The background agent is done.");
    }
    if last_text.to_lowercase().contains("summary") && !last_text.contains("FAMILIAR-SCRIPT") {
        return fallback("Summary: a scripted session read, edited and wrote files.");
    }
    for (at, message) in messages.iter().enumerate().rev() {
        if message["role"] != "user" {
            continue;
        }
        let named = texts(message).iter().find_map(|text| {
            let rest = &text[text.find("FAMILIAR-SCRIPT ")? + "FAMILIAR-SCRIPT ".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            scripts.get_key_value(name.as_str()).map(|(name, _)| *name)
        });
        if let Some(name) = named {
            let step = messages[at..]
                .iter()
                .filter(|message| message["role"] == "assistant")
                .count();
            let script = &scripts[name];
            return match script.get(step) {
                Some(answer) => answer.clone(),
                // A script of one error answer fails every retry.
                None if matches!(script.last(), Some(Answer::Error(..))) => script[0].clone(),
                None => fallback("ok"),
            };
        }
    }
    fallback("ok")
}
