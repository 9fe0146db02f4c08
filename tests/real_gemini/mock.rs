//! A mock Gemini API for `tests/real_gemini.rs`: std::net on 127.0.0.1 only, bounded in
//! requests and in time, answering the real Gemini CLI from a script.
//!
//! The CLI (with `GOOGLE_GEMINI_BASE_URL` set to the mock) posts each turn's request to
//! `/v1beta/models/<model>:streamGenerateContent?alt=sse`, as the `@google/genai` SDK does; it
//! finds its script by a marker in the request's user texts (`FAMILIAR-SCRIPT main`), and each
//! request of that script gets the next step. Answers are streamed as Server-Sent Events the
//! way the API streams them: `data: {candidates: [{content: {role: model, parts}, finishReason},
//! usageMetadata, modelVersion}` (one chunk per answer; function calls as `functionCall` parts,
//! thoughts as `text` parts with `thought: true`). Errors are JSON answers with their HTTP
//! status, shaped as the API's (`{"error": {"code", "message", "status"}}`). Every usage sent is
//! kept ([`Mock::sent`]), to compare with what `familiar stats` counts.

use std::collections::HashMap;
use std::io::Write as _;
use std::net::TcpStream;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// Requests served before the mock refuses more (a runaway CLI loop ends the test).
const MAX_REQUESTS: usize = 100;
/// The mock stops accepting after this long, whatever happens.
const LIFETIME: Duration = Duration::from_secs(600);

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Answer {
    /// Parts of the model's reply and the request's prompt tokens (output is always 20 tokens
    /// and thinking 5; 400 prompt tokens are cached when there are more than 400).
    Parts(Vec<Value>, u64),
    /// An HTTP error answer: status, the API's `status` and `message`.
    Error(u16, &'static str, &'static str),
}

pub fn text(text: &str) -> Value {
    json!({"text": text})
}

pub fn thought(text: &str) -> Value {
    json!({"text": text, "thought": true})
}

pub fn call(name: &str, args: Value) -> Value {
    json!({"functionCall": {"name": name, "args": args}})
}

/// The usage of one answer, as the API sends it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt: u64,
    pub cached: u64,
    pub output: u64,
    pub thoughts: u64,
}

impl Usage {
    fn of(prompt: u64) -> Usage {
        Usage {
            prompt,
            cached: if prompt > 400 { 400 } else { 0 },
            output: 20,
            thoughts: 5,
        }
    }

    pub fn total(&self) -> u64 {
        self.prompt + self.output + self.thoughts
    }
}

pub struct Mock {
    pub url: String,
    pub requests: Arc<AtomicUsize>,
    // Stops the listener when the mock is dropped.
    _listening: crate::common::http::Listening,
    /// Every usage sent, with the script it answered.
    pub sent: Arc<Mutex<Vec<(&'static str, Usage)>>>,
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
            url: listening.base.clone(),
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
    let Some((request, mut out)) =
        crate::common::http::read_post(stream, ":streamGenerateContent")?
    else {
        return Ok(());
    };
    let (script, answer) = choose(&request, shared);
    match answer {
        Answer::Error(status, api_status, message) => {
            let mut body = json!({"error": {"code": status, "message": message,
                "status": api_status}});
            if status == 429 {
                // The API says when to try again; the CLI waits that long (not its 5 s).
                body["error"]["details"] = json!([{
                    "@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}]);
            }
            let body = body.to_string();
            write!(
                out,
                "HTTP/1.1 {status} Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
        }
        Answer::Parts(parts, prompt) => {
            let usage = Usage::of(prompt);
            if let Some(script) = script {
                shared
                    .sent
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((script, usage));
            }
            let chunk = json!({
                "candidates": [{"content": {"role": "model", "parts": parts},
                    "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": usage.prompt,
                    "candidatesTokenCount": usage.output,
                    "cachedContentTokenCount": usage.cached,
                    "thoughtsTokenCount": usage.thoughts,
                    "totalTokenCount": usage.total()},
                "modelVersion": "gemini-2.5-pro",
            });
            out.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n")?;
            write!(out, "data: {chunk}\r\n\r\n")?;
            out.flush()
        }
    }
}

/// Texts of the user turns of a request's `contents`, in order.
fn user_texts(request: &Value) -> Vec<&str> {
    let mut texts = Vec::new();
    for content in request["contents"].as_array().into_iter().flatten() {
        if content["role"] != "user" {
            continue;
        }
        for part in content["parts"].as_array().into_iter().flatten() {
            if let Some(text) = part["text"].as_str() {
                texts.push(text);
            }
        }
    }
    texts
}

fn choose(request: &Value, shared: &Shared) -> (Option<&'static str>, Answer) {
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
    let fallback = Answer::Parts(vec![text("ok")], 50);
    let Some(name) = named else {
        return (None, fallback);
    };
    let script = &shared.scripts[name];
    let step = {
        let mut steps = shared.steps.lock().unwrap_or_else(|p| p.into_inner());
        let step = steps.entry(name).or_insert(0);
        *step += 1;
        *step - 1
    };
    let answer = match script.get(step) {
        Some(answer) => answer.clone(),
        // A script of one error answer fails every retry.
        None if matches!(script.last(), Some(Answer::Error(..))) => {
            script[script.len() - 1].clone()
        }
        None => fallback,
    };
    (Some(name), answer)
}
