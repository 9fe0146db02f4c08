//! A mock OpenAI-compatible chat completions API for `tests/real_qwen.rs`: std::net on
//! 127.0.0.1 only, bounded in requests and in time, answering the real Qwen Code CLI from a
//! script.
//!
//! The CLI (its `openai` auth, `OPENAI_BASE_URL` at the mock's `/v1`) posts each turn's request
//! to `/v1/chat/completions` with `stream: true` and `stream_options.include_usage`; the mock
//! finds its script by a marker in the request's user messages (`FAMILIAR-SCRIPT main`), and
//! each request of that script gets the next step. Answers are Server-Sent Events as the API
//! streams them: `data: {choices: [{delta}]}` chunks (`reasoning_content`, `content`,
//! `tool_calls`), one with the `finish_reason`, one with `usage` (`prompt_tokens`,
//! `completion_tokens`, `prompt_tokens_details.cached_tokens`,
//! `completion_tokens_details.reasoning_tokens`), then `data: [DONE]`. Errors are JSON answers
//! with their HTTP status and a `retry-after` of zero, so the CLI's retries (every attempt is
//! answered the same) end in seconds. Every usage sent is kept ([`Mock::sent_for`]).

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
    /// A reply: its reasoning, its text, at most one tool call (name, arguments), and the
    /// request's prompt tokens (completion is always 20 tokens, 5 of them reasoning; 400 prompt
    /// tokens are cached when there are more than 400).
    Reply {
        thought: Option<&'static str>,
        text: Option<&'static str>,
        call: Option<(&'static str, Value)>,
        prompt: u64,
    },
    /// An HTTP error answer: status and message.
    Error(u16, &'static str),
    /// The summary the CLI asks for when it compacts the history: a text answer (of 50
    /// prompt tokens) that no record of the session holds, its usage kept apart (as
    /// `compaction`).
    Summary(&'static str),
}

pub fn call(name: &'static str, args: Value, prompt: u64) -> Answer {
    Answer::Reply {
        thought: None,
        text: None,
        call: Some((name, args)),
        prompt,
    }
}

pub fn say(text: &'static str, prompt: u64) -> Answer {
    Answer::Reply {
        thought: None,
        text: Some(text),
        call: None,
        prompt,
    }
}

/// The usage of one answer, as the API sends it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt: u64,
    pub cached: u64,
    /// `completion_tokens`, reasoning included.
    pub completion: u64,
    pub reasoning: u64,
}

impl Usage {
    fn of(prompt: u64) -> Usage {
        Usage {
            prompt,
            cached: if prompt > 400 { 400 } else { 0 },
            completion: 20,
            reasoning: 5,
        }
    }

    pub fn total(&self) -> u64 {
        self.prompt + self.completion
    }
}

pub struct Mock {
    pub url: String,
    pub requests: Arc<AtomicUsize>,
    // Stops the listener when the mock is dropped.
    _listening: crate::common::http::Listening,
    sent: Arc<Mutex<Vec<(&'static str, Usage)>>>,
}

struct Shared {
    scripts: HashMap<&'static str, Vec<Answer>>,
    steps: Mutex<HashMap<&'static str, usize>>,
    sent: Arc<Mutex<Vec<(&'static str, Usage)>>>,
}

impl Mock {
    pub fn start(scripts: HashMap<&'static str, Vec<Answer>>) -> Mock {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::new(Shared {
            scripts,
            steps: Mutex::new(HashMap::new()),
            sent: Arc::clone(&sent),
        });
        let listening = crate::common::http::listen(MAX_REQUESTS, LIFETIME, move |stream, _| {
            serve(stream, &shared)
        });
        Mock {
            url: format!("{}/v1", listening.base),
            requests: Arc::clone(&listening.requests),
            _listening: listening,
            sent,
        }
    }

    /// The usages sent for `script`, in order.
    pub fn sent_for(&self, script: &str) -> Vec<Usage> {
        self.sent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|(name, _)| *name == script)
            .map(|(_, usage)| *usage)
            .collect()
    }
}

fn serve(stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    let Some((request, mut out)) = crate::common::http::read_post(stream, "/chat/completions")?
    else {
        return Ok(());
    };
    let model = request["model"].as_str().unwrap_or("").to_owned();
    let (script, answer) = choose(&request, shared);
    match answer {
        Answer::Error(status, message) => {
            let body = json!({"error": {"message": message, "type": "mock_error",
                "code": status.to_string()}})
            .to_string();
            write!(
                out,
                "HTTP/1.1 {status} Error\r\ncontent-type: application/json\r\nretry-after: 0\r\nretry-after-ms: 1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
        }
        Answer::Reply { .. } | Answer::Summary(_) => {
            let (thought, text, call, prompt, script) = match answer {
                Answer::Reply {
                    thought,
                    text,
                    call,
                    prompt,
                } => (thought, text, call, prompt, script),
                Answer::Summary(text) => (None, Some(text), None, 50, Some("compaction")),
                Answer::Error(..) => return Ok(()),
            };
            let usage = Usage::of(prompt);
            let step = script.map(|script| {
                let mut sent = shared.sent.lock().unwrap_or_else(|p| p.into_inner());
                sent.push((script, usage));
                format!("{script}_{}", sent.len())
            });
            let id = format!("chatcmpl-{}", step.as_deref().unwrap_or("other"));
            let chunk = |choices: Value| {
                json!({"id": id, "object": "chat.completion.chunk", "created": 1_795_840_000,
                    "model": model, "choices": choices})
            };
            out.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n")?;
            let mut send = |value: Value| write!(out, "data: {value}\n\n");
            if let Some(thought) = thought {
                send(chunk(json!([{"index": 0, "finish_reason": null,
                    "delta": {"role": "assistant", "reasoning_content": thought}}])))?;
            }
            if let Some(text) = text {
                send(chunk(json!([{"index": 0, "finish_reason": null,
                    "delta": {"role": "assistant", "content": text}}])))?;
            }
            let finish = match &call {
                Some((name, args)) => {
                    let call_id = format!("call_{}", step.as_deref().unwrap_or("other"));
                    send(chunk(json!([{"index": 0, "finish_reason": null,
                        "delta": {"role": "assistant", "tool_calls": [{"index": 0,
                            "id": call_id, "type": "function",
                            "function": {"name": name, "arguments": args.to_string()}}]}}])))?;
                    "tool_calls"
                }
                None => "stop",
            };
            send(chunk(
                json!([{"index": 0, "finish_reason": finish, "delta": {}}]),
            ))?;
            let mut last = chunk(json!([]));
            last["usage"] = json!({"prompt_tokens": usage.prompt,
                "completion_tokens": usage.completion, "total_tokens": usage.total(),
                "prompt_tokens_details": {"cached_tokens": usage.cached},
                "completion_tokens_details": {"reasoning_tokens": usage.reasoning}});
            send(last)?;
            out.write_all(b"data: [DONE]\n\n")?;
            out.flush()
        }
    }
}

/// Texts of the user messages of a request, in order (a string `content`, or its text parts).
fn user_texts(request: &Value) -> Vec<&str> {
    let mut texts = Vec::new();
    for message in request["messages"].as_array().into_iter().flatten() {
        if message["role"] != "user" {
            continue;
        }
        match &message["content"] {
            Value::String(text) => texts.push(text.as_str()),
            Value::Array(parts) => texts.extend(parts.iter().filter_map(|p| p["text"].as_str())),
            _ => {}
        }
    }
    texts
}

/// How Copilot CLI (1.0.102) asks for the summary of a compaction.
const COPILOT_SUMMARY: &str = "Please create a detailed summary of the conversation so far.";

/// The system messages' texts of a request.
fn system_texts(request: &Value) -> impl Iterator<Item = &str> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|message| message["role"] == "system")
        .filter_map(|message| message["content"].as_str())
}

/// How opencode (1.18.33) asks for a session's title (no record of the session holds its
/// answer) and for the summary of a compaction.
const OPENCODE_TITLE: &str = "You are a title generator.";
const OPENCODE_SUMMARY: &str = "You are a context summarization agent.";

fn choose(request: &Value, shared: &Shared) -> (Option<&'static str>, Answer) {
    if system_texts(request).any(|text| text.starts_with(OPENCODE_TITLE)) {
        return (None, say("Familiar test", 50));
    }
    let named = user_texts(request).iter().rev().find_map(|text| {
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
    let fallback = say("ok", 50);
    let Some(name) = named else {
        return (None, fallback);
    };
    // Copilot CLI compacts in the background: its summary request comes beside the agent's
    // next one, in either order, and takes no step of the script.
    if user_texts(request)
        .last()
        .is_some_and(|text| text.starts_with(COPILOT_SUMMARY))
        || system_texts(request).any(|text| text.starts_with(OPENCODE_SUMMARY))
    {
        return (Some(name), Answer::Summary("<summary>a.txt read</summary>"));
    }
    let script = &shared.scripts[name];
    let step = {
        let mut steps = shared.steps.lock().unwrap_or_else(|p| p.into_inner());
        let step = steps.entry(name).or_insert(0);
        *step += 1;
        *step - 1
    };
    let answer = match script.get(step) {
        Some(answer) => answer.clone(),
        // A script ending in an error answers every retry so.
        None if matches!(script.last(), Some(Answer::Error(..))) => {
            script[script.len() - 1].clone()
        }
        None => fallback,
    };
    (Some(name), answer)
}
