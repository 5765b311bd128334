//! A fake Anthropic Messages API on loopback, scripted by the test.
//!
//! Claude Code sends `HEAD /`, then `POST /v1/messages?beta=true` with `"stream": true`;
//! this server answers with Server-Sent Events built from a script of [`Turn`]s and keeps
//! every request body so a test can assert on what the CLI sent (the hook context waymark
//! injected lands in those bodies). Only std: one thread per connection, HTTP/1.1 with
//! keep-alive, `Content-Length` or chunked request bodies.
//!
//! Which turn answers a request is decided from the request itself, so a retried request
//! gets the same answer instead of eating the script:
//! - no `tools` (a title, a summary of the session, a quota probe): a short text, the
//!   script untouched;
//! - the last user message asks for a summary of the conversation (`/compact`, automatic
//!   compaction): a `<summary>…</summary>` text, the script untouched;
//! - the last message carries the `tool_result` of a tool call this server issued at turn
//!   k: turn k + 1;
//! - anything else (a new prompt): the next turn not yet given.
//!
//! When the script runs out the answer is a plain "done" text, so a session always ends.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

/// One scripted answer to a main-loop request.
#[derive(Debug, Clone)]
pub enum Turn {
    /// Assistant text, `stop_reason: end_turn`: the turn ends.
    Text(String),
    /// One tool call, `stop_reason: tool_use`.
    Tool { name: String, input: Value },
    /// A tool call whose result is answered by turn `then`, not the next one: the turns
    /// between are for what the tool starts (a subagent's own requests).
    ToolThen {
        name: String,
        input: Value,
        then: usize,
    },
    /// HTTP 400 `prompt is too long: N tokens > M maximum`: Claude Code compacts and retries.
    TooLong,
    /// HTTP 400 `invalid_request_error` "E2E injected failure", to this request and its
    /// retries: the turn ends on an API error (Claude Code fires StopFailure).
    ApiError,
}

impl Turn {
    pub fn text(s: &str) -> Turn {
        Turn::Text(s.to_string())
    }

    pub fn tool(name: &str, input: Value) -> Turn {
        Turn::Tool {
            name: name.to_string(),
            input,
        }
    }
}

/// The next message or tool call id, across every server of the test run.
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The summary text given to every compaction request; tests look for it after `/compact`.
pub const SUMMARY_MARKER: &str = "E2E-COMPACT-SUMMARY";

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// The JSON body (Null when there was none or it was not JSON).
    pub body: Value,
    /// What the server answered with: `"turn N"`, `"side"`, `"compaction"`, `"other"`.
    pub answered: String,
}

impl Request {
    /// A main-loop Messages request (carries tools).
    pub fn is_main(&self) -> bool {
        self.answered.starts_with("turn") || self.answered == "script-exhausted"
    }

    /// The first text block (or string content) of any message that contains `needle`.
    pub fn find_text(&self, needle: &str) -> Option<String> {
        let messages = self.body.get("messages")?.as_array()?;
        messages.iter().find_map(|m| {
            let blocks = match m.get("content")? {
                Value::String(s) => vec![s.clone()],
                Value::Array(b) => b
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str).map(str::to_string))
                    .collect(),
                _ => vec![],
            };
            blocks.into_iter().find(|t| t.contains(needle))
        })
    }

    /// The first string anywhere in the body that contains `needle` (hook context lands in
    /// text blocks, tool results or system messages, depending on the release).
    pub fn find_string(&self, needle: &str) -> Option<String> {
        fn walk(v: &Value, needle: &str) -> Option<String> {
            match v {
                Value::String(s) if s.contains(needle) => Some(s.clone()),
                Value::Array(a) => a.iter().find_map(|v| walk(v, needle)),
                Value::Object(o) => o.values().find_map(|v| walk(v, needle)),
                _ => None,
            }
        }
        walk(&self.body, needle)
    }

    /// The whole body as text, to search for strings the hooks injected anywhere in it.
    pub fn text(&self) -> String {
        self.body.to_string()
    }
}

#[derive(Default)]
struct State {
    script: Vec<Turn>,
    /// Index of the next turn not yet given out.
    cursor: usize,
    /// tool_use id → the script index of the turn that issued it.
    issued: HashMap<String, usize>,
    /// Script indices of `TooLong` turns already given.
    too_long_given: HashSet<usize>,
    requests: Vec<Request>,
    next_id: u64,
}

/// The server: drop it (or let the test end) to stop accepting.
pub struct FakeApi {
    server: Loopback,
    state: Arc<Mutex<State>>,
}

impl FakeApi {
    /// Starts a server on 127.0.0.1 with a free port, answering from `script`.
    pub fn start(script: Vec<Turn>) -> FakeApi {
        let state = Arc::new(Mutex::new(State {
            script,
            ..State::default()
        }));
        let st = state.clone();
        let server = Loopback::start(move |method, path, _, body| {
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let (answered, response) = answer(&st, method, path, &body);
            st.lock().unwrap().requests.push(Request {
                method: method.to_string(),
                path: path.to_string(),
                body,
                answered,
            });
            response
        });
        FakeApi { server, state }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.server.port)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().requests.clone()
    }

    /// The main-loop requests (the ones that carry tools), in order.
    pub fn main_requests(&self) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.is_main())
            .collect()
    }

    /// The text of the tool_result the last user message of `request` carries, if any.
    pub fn tool_result_text(&self, request: &Request) -> Option<String> {
        let last = request
            .body
            .get("messages")?
            .as_array()?
            .iter()
            .rev()
            .find(|m| m["role"] == "user")?;
        let block = last
            .get("content")?
            .as_array()?
            .iter()
            .find(|b| b["type"] == "tool_result")?;
        Some(match &block["content"] {
            Value::String(s) => s.clone(),
            other => message_text(&json!({ "content": other })),
        })
    }

    /// A summary of what was received, for failure messages.
    pub fn describe(&self) -> String {
        self.requests()
            .iter()
            .map(|r| format!("{} {} → {}", r.method, r.path, r.answered))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// What answers one request: its method, path, headers and body, to the response's bytes.
type Handler = dyn Fn(&str, &str, &Headers, Vec<u8>) -> Vec<u8> + Send + Sync;

/// A loopback HTTP/1.1 server on a free port, shared by the fake APIs of both agents: a
/// thread per connection, kept alive until the client closes it or asks to, each request
/// answered by the handler. Dropped, it stops accepting.
pub(crate) struct Loopback {
    pub port: u16,
    stop: Arc<AtomicBool>,
}

impl Loopback {
    pub fn start(
        handle: impl Fn(&str, &str, &Headers, Vec<u8>) -> Vec<u8> + Send + Sync + 'static,
    ) -> Loopback {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().expect("local addr").port();
        let stop = Arc::new(AtomicBool::new(false));
        let handle: Arc<Handler> = Arc::new(handle);
        let sp = stop.clone();
        thread::spawn(move || {
            for conn in listener.incoming() {
                if sp.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let handle = handle.clone();
                thread::spawn(move || serve(conn, &*handle));
            }
        });
        Loopback { port, stop }
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Serves one connection until the client closes it (keep-alive).
fn serve(conn: TcpStream, handle: &Handler) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(120)));
    let Ok(write_half) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    let mut out = write_half;
    while let Some((method, path, headers)) = read_head(&mut reader) {
        let Some(body) = read_body(&mut reader, &headers) else {
            break;
        };
        let close = headers
            .get("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let response = handle(&method, &path, &headers, body);
        if out.write_all(&response).and_then(|_| out.flush()).is_err() || close {
            break;
        }
    }
    let _ = out.shutdown(Shutdown::Both);
}

pub(crate) type Headers = HashMap<String, String>;

pub(crate) fn read_head(reader: &mut impl BufRead) -> Option<(String, String, Headers)> {
    let mut line = String::new();
    // Skip stray blank lines between requests.
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if !line.trim().is_empty() {
            break;
        }
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Headers::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    Some((method, path, headers))
}

pub(crate) fn read_body(reader: &mut impl BufRead, headers: &Headers) -> Option<Vec<u8>> {
    if headers
        .get("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    {
        let mut body = Vec::new();
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?.trim(), 16).ok()?;
            if size == 0 {
                // Trailers, up to the blank line.
                loop {
                    let mut t = String::new();
                    if reader.read_line(&mut t).ok()? == 0 || t.trim().is_empty() {
                        break;
                    }
                }
                return Some(body);
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..]).ok()?;
            let mut crlf = [0u8; 2];
            reader.read_exact(&mut crlf).ok()?;
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

/// Decides the answer to one request: (what it was, the raw HTTP response).
fn answer(state: &Mutex<State>, method: &str, path: &str, body: &Value) -> (String, Vec<u8>) {
    let route = path.split('?').next().unwrap_or(path);
    if method != "POST" || route != "/v1/messages" {
        return answer_other(method, route);
    }
    let mut st = state.lock().unwrap();
    st.next_id += 1;
    // Ids unique across every server of the test run, as the real API's are: a resumed
    // conversation holds the tool calls of several runs, and Claude Code pairs each
    // result with its call by id.
    let serial = NEXT_ID.fetch_add(1, Ordering::SeqCst);
    let msg_id = format!("msg_e2e_{serial}");
    if asks_for_summary(body) {
        let text = format!(
            "<summary>{SUMMARY_MARKER}: the session created steps, edited files and committed.</summary>"
        );
        return (
            "compaction".into(),
            sse(&msg_id, &[Block::Text(text)], "end_turn"),
        );
    }
    let has_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    if !has_tools {
        return (
            "side".into(),
            sse(&msg_id, &[Block::Text("E2E side reply".into())], "end_turn"),
        );
    }
    let index = turn_index(&mut st, body);
    let Some(turn) = st.script.get(index).cloned() else {
        return (
            "script-exhausted".into(),
            sse(&msg_id, &[Block::Text("done".into())], "end_turn"),
        );
    };
    let response = respond(&mut st, turn, index, serial, &msg_id);
    (format!("turn {index}"), response)
}

/// The answer to anything but `POST /v1/messages`: the root, the token count, or a 404.
fn answer_other(method: &str, route: &str) -> (String, Vec<u8>) {
    if method == "HEAD" || method == "GET" && route == "/" {
        return ("other".into(), http(200, "text/plain", b""));
    }
    if method == "POST" && route == "/v1/messages/count_tokens" {
        let body = json!({"input_tokens": 1000}).to_string();
        return (
            "other".into(),
            http(200, "application/json", body.as_bytes()),
        );
    }
    let body =
        json!({"type": "error", "error": {"type": "not_found_error", "message": "not here"}});
    (
        "other".into(),
        http(404, "application/json", body.to_string().as_bytes()),
    )
}

/// The script index of the turn that answers a main-loop request `body` (the turn after
/// the tool call it answers, else the next not yet given), moving the cursor past it.
fn turn_index(st: &mut State, body: &Value) -> usize {
    let mut index = match last_tool_result(body).and_then(|id| st.issued.get(&id).copied()) {
        Some(k) => k + 1,
        None => st.cursor,
    };
    // The request retried after a "prompt is too long" ends like the one that got it: the
    // 400 is given once, the retry gets the turn after it.
    while matches!(st.script.get(index), Some(Turn::TooLong)) && st.too_long_given.contains(&index)
    {
        index += 1;
    }
    st.cursor = st.cursor.max(index + 1);
    index
}

/// The raw HTTP response of script turn `index`, noting the tool calls it issues and the
/// errors it gives.
fn respond(st: &mut State, turn: Turn, index: usize, serial: u64, msg_id: &str) -> Vec<u8> {
    match turn {
        Turn::Text(t) => sse(msg_id, &[Block::Text(t)], "end_turn"),
        Turn::Tool { name, input } => {
            let id = format!("toolu_e2e_{serial:04}");
            st.issued.insert(id.clone(), index);
            sse(msg_id, &[Block::Tool { id, name, input }], "tool_use")
        }
        Turn::ToolThen { name, input, then } => {
            let id = format!("toolu_e2e_{serial:04}");
            st.issued.insert(id.clone(), then - 1);
            sse(msg_id, &[Block::Tool { id, name, input }], "tool_use")
        }
        Turn::ApiError => {
            // Retries get it too: the turn does end on the error.
            st.cursor = index;
            let body = json!({
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "E2E injected failure"}
            });
            http(400, "application/json", body.to_string().as_bytes())
        }
        Turn::TooLong => {
            st.too_long_given.insert(index);
            let body = json!({
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 250000 tokens > 200000 maximum"
                }
            });
            http(400, "application/json", body.to_string().as_bytes())
        }
    }
}

/// The text of every content block of a message (string content or text blocks).
fn message_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A compaction request: its last user message asks for a summary of the conversation.
fn asks_for_summary(body: &Value) -> bool {
    let Some(last) = body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
    else {
        return false;
    };
    // Both releases ask to "create a detailed summary of the conversation"; a brief or a
    // compacted conversation's first message only mentions a summary.
    message_text(last)
        .to_lowercase()
        .contains("summary of the conversation")
}

/// The tool_use id answered by the last user message, if it is a tool result. (Claude Code
/// 2.1.332 may send a system message after it, a note about the tools.)
fn last_tool_result(body: &Value) -> Option<String> {
    let last = body
        .get("messages")?
        .as_array()?
        .iter()
        .rev()
        .find(|m| m["role"] == "user")?;
    last.get("content")?
        .as_array()?
        .iter()
        .rev()
        .find(|b| b["type"] == "tool_result")
        .and_then(|b| b.get("tool_use_id")?.as_str().map(str::to_string))
}

enum Block {
    Text(String),
    Tool {
        id: String,
        name: String,
        input: Value,
    },
}

fn sse(msg_id: &str, blocks: &[Block], stop_reason: &str) -> Vec<u8> {
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929", "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 1200, "output_tokens": 1,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        }}),
    )];
    for (index, block) in blocks.iter().enumerate() {
        match block {
            Block::Text(text) => {
                events.push((
                    "content_block_start",
                    json!({"type": "content_block_start", "index": index,
                           "content_block": {"type": "text", "text": ""}}),
                ));
                events.push((
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index,
                           "delta": {"type": "text_delta", "text": text}}),
                ));
            }
            Block::Tool { id, name, input } => {
                events.push((
                    "content_block_start",
                    json!({"type": "content_block_start", "index": index,
                           "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                ));
                events.push((
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
                ));
            }
        }
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": 20}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    let mut body = String::new();
    for (name, data) in events {
        body.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    http(200, "text/event-stream", body.as_bytes())
}

pub(crate) fn http(status: u16, content_type: &str, body: &[u8]) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        _ => "Status",
    };
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         request-id: req_e2e\r\nConnection: keep-alive\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}
