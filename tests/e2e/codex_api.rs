//! A fake OpenAI Responses API on loopback for Codex CLI, scripted by the test (the
//! contract measured with Codex CLI 0.169.0: /work/shared/docs/codex-facts-measured.md).
//!
//! Codex sends `POST /v1/responses` (plain JSON, `stream: true`, the whole history in
//! `input` every time) and reads Server-Sent Events: `response.created`, then
//! `response.output_item.added` / `.done` per output item, then `response.completed` with
//! the usage. Which turn answers a request is decided from it:
//! - a compaction (`x-codex-turn-metadata` says `"request_kind":"compaction"`): a summary
//!   message, the script untouched;
//! - a thread's title (the interactive TUI asks one for each new thread, on its first
//!   prompt, on a thread of its own: `"thread_source":"thread_title"`): a title, the
//!   script untouched;
//! - the input ends with the output of a tool call this server issued at turn k: turn k + 1;
//! - anything else (a new prompt, the history after a compaction): the next turn not yet
//!   given.
//!
//! When the script runs out the answer is a plain "done" text, so a turn always ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::fake_api::{Headers, Loopback, http};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum CTurn {
    /// Assistant text: the turn ends.
    Text(String),
    /// One `exec_command` call (Codex's shell tool, `Bash` to hooks).
    Shell(String),
    /// One `apply_patch` call with this patch text.
    Patch(String),
    /// The turn, answered with a usage far over any compaction limit (Codex compacts).
    Heavy(Box<CTurn>),
}

/// The text every compaction request gets.
pub const SUMMARY_MARKER: &str = "E2E-CODEX-SUMMARY";

/// One request the server received.
#[derive(Debug, Clone)]
pub struct CRequest {
    pub body: Value,
    /// `"turn N"`, `"compaction"`, `"title"`, `"script-exhausted"`, `"other"`.
    pub answered: String,
}

impl CRequest {
    /// The whole body as text, to look for what hooks injected anywhere in it.
    pub fn text(&self) -> String {
        self.body.to_string()
    }

    /// The developer messages (where Codex puts each hook's additionalContext), joined.
    pub fn developer_text(&self) -> String {
        let items = self.body["input"].as_array().cloned().unwrap_or_default();
        items
            .iter()
            .filter(|i| i["role"] == "developer")
            .flat_map(|i| i["content"].as_array().cloned().unwrap_or_default())
            .filter_map(|c| c["text"].as_str().map(str::to_string))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[derive(Default)]
struct State {
    script: Vec<CTurn>,
    cursor: usize,
    /// call_id → the script index of the turn that issued it.
    issued: HashMap<String, usize>,
    requests: Vec<CRequest>,
    next_id: u64,
}

pub struct CodexApi {
    server: Loopback,
    state: Arc<Mutex<State>>,
}

impl CodexApi {
    pub fn start(script: Vec<CTurn>) -> CodexApi {
        let state = Arc::new(Mutex::new(State {
            script,
            ..State::default()
        }));
        let st = state.clone();
        let server = Loopback::start(move |method, path, headers, body| {
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let (answered, response) = respond(&st, method, path, headers, &body);
            st.lock()
                .unwrap()
                .requests
                .push(CRequest { body, answered });
            response
        });
        CodexApi { server, state }
    }

    /// What `base_url` of Codex's model provider is.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.server.port)
    }

    pub fn requests(&self) -> Vec<CRequest> {
        self.state.lock().unwrap().requests.clone()
    }

    /// The requests of the main loop (not compactions, not titles), in order.
    pub fn turns(&self) -> Vec<CRequest> {
        let all = self.requests();
        all.into_iter()
            .filter(|r| !matches!(r.answered.as_str(), "compaction" | "title" | "other"))
            .collect()
    }

    pub fn describe(&self) -> String {
        self.requests()
            .iter()
            .map(|r| format!("POST /v1/responses → {}", r.answered))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The answer to one request: what it was answered with, and the response's bytes.
fn respond(
    state: &Mutex<State>,
    method: &str,
    path: &str,
    headers: &Headers,
    body: &Value,
) -> (String, Vec<u8>) {
    if method != "POST" || !path.starts_with("/v1/responses") {
        return ("other".to_string(), http(404, "application/json", b"{}"));
    }
    let kind = match headers.get("x-codex-turn-metadata") {
        Some(m) if m.contains("\"compaction\"") => Side::Compaction,
        Some(m) if m.contains("\"thread_title\"") => Side::Title,
        _ => Side::Main,
    };
    answer(state, body, kind)
}

/// What a request is for: the main loop, or one of the requests beside it.
enum Side {
    Main,
    Compaction,
    Title,
}

fn answer(state: &Mutex<State>, body: &Value, kind: Side) -> (String, Vec<u8>) {
    let mut st = state.lock().unwrap();
    st.next_id += 1;
    let rid = format!("resp_{}", st.next_id);
    match kind {
        Side::Compaction => {
            let item = message(&format!("{SUMMARY_MARKER}: the work so far, summarized."));
            return ("compaction".into(), sse(&rid, &[item], 100));
        }
        // The title is asked with a JSON schema `{"title": …}`.
        Side::Title => {
            let item = message(&json!({"title": "E2E thread"}).to_string());
            return ("title".into(), sse(&rid, &[item], 100));
        }
        Side::Main => {}
    }
    let index = match last_output_call(body).and_then(|id| st.issued.get(&id).copied()) {
        Some(k) => k + 1,
        None => {
            st.cursor += 1;
            st.cursor - 1
        }
    };
    st.cursor = st.cursor.max(index + 1);
    let Some(turn) = st.script.get(index).cloned() else {
        return (
            "script-exhausted".into(),
            sse(&rid, &[message("done")], 100),
        );
    };
    let (turn, tokens) = match turn {
        CTurn::Heavy(t) => (*t, 900_000),
        t => (t, 100),
    };
    let call_id = format!("call_{rid}");
    let item = match turn {
        CTurn::Text(t) => message(&t),
        CTurn::Shell(cmd) => {
            st.issued.insert(call_id.clone(), index);
            json!({"type": "function_call", "name": "exec_command", "call_id": call_id,
                   "arguments": json!({"cmd": cmd}).to_string()})
        }
        CTurn::Patch(patch) => {
            st.issued.insert(call_id.clone(), index);
            json!({"type": "custom_tool_call", "name": "apply_patch", "call_id": call_id, "input": patch})
        }
        CTurn::Heavy(_) => unreachable!("unwrapped above"),
    };
    (format!("turn {}", index + 1), sse(&rid, &[item], tokens))
}

/// The call id of the tool output the input ends with, if it does.
fn last_output_call(body: &Value) -> Option<String> {
    let last = body["input"].as_array()?.last()?;
    let kind = last["type"].as_str()?;
    kind.ends_with("_call_output")
        .then(|| last["call_id"].as_str().map(str::to_string))
        .flatten()
}

fn message(text: &str) -> Value {
    json!({"type": "message", "role": "assistant",
           "content": [{"type": "output_text", "text": text}]})
}

fn sse(rid: &str, items: &[Value], tokens: u64) -> Vec<u8> {
    let mut events = vec![(
        "response.created",
        json!({"type": "response.created", "response": {"id": rid}}),
    )];
    for (i, item) in items.iter().enumerate() {
        for kind in ["response.output_item.added", "response.output_item.done"] {
            events.push((kind, json!({"type": kind, "output_index": i, "item": item})));
        }
    }
    let usage = json!({"input_tokens": tokens, "input_tokens_details": null,
                       "output_tokens": 10, "output_tokens_details": null,
                       "total_tokens": tokens + 10});
    events.push((
        "response.completed",
        json!({"type": "response.completed", "response": {"id": rid, "usage": usage}}),
    ));
    let mut body = String::new();
    for (name, data) in events {
        body.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    http(200, "text/event-stream", body.as_bytes())
}
