//! Typed models of the JSON Claude Code writes to a hook's stdin.
//!
//! Every model is tolerant: unknown fields are ignored (Claude Code adds fields between
//! releases) and every field that is not needed to route the event is optional. What a
//! handler needs but does not find is its own business; parsing only fails when the bytes
//! are not a JSON object at all.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::claude::tool::{ToolCall, ToolResponse};

/// The hook events waymark knows. Anything else parses as [`EventKind::Other`].
pub const EVENTS: &[&str] = &[
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionDenied",
    "PreCompact",
    "PostCompact",
    "Stop",
    "SubagentStop",
    "TaskCreated",
    "TaskCompleted",
    "StopFailure",
    "SubagentStart",
    "PermissionRequest",
    "CwdChanged",
];

/// Fields every hook input carries.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Common {
    pub session_id: String,
    pub transcript_path: Option<String>,
    pub cwd: Option<String>,
    pub prompt_id: Option<String>,
    pub permission_mode: Option<String>,
    pub hook_event_name: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    /// Present on SessionStart (and some other events) when Claude Code knows it.
    pub model: Option<String>,
    /// How long the tool ran (PostToolUse, PostToolUseFailure).
    pub duration_ms: Option<u64>,
}

/// One parsed hook input.
#[derive(Debug, Clone)]
pub struct Event {
    pub common: Common,
    pub kind: EventKind,
    /// Who sent it: Claude Code unless the command line named another agent.
    pub agent: crate::claude::codex::Agent,
    /// The event's name as Claude Code spells it (the one [`EventKind`] was read as).
    name: String,
}

#[derive(Debug, Clone)]
pub enum EventKind {
    SessionStart(SessionStart),
    SessionEnd(SessionEnd),
    UserPromptSubmit(UserPromptSubmit),
    PreToolUse(ToolCall),
    PostToolUse(ToolCall, ToolResponse),
    PostToolUseFailure(ToolCall, ToolFailure),
    PermissionDenied(ToolCall, PermissionDenied),
    PreCompact(PreCompact),
    PostCompact(PostCompact),
    Stop(Stop),
    SubagentStop(Stop),
    TaskCreated(TaskEvent),
    TaskCompleted(TaskEvent),
    StopFailure(StopFailure),
    SubagentStart,
    PermissionRequest(ToolCall),
    CwdChanged(CwdChanged),
    Other(String),
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SessionStart {
    /// `startup`, `resume`, `clear` or `compact`.
    pub source: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SessionEnd {
    /// `clear`, `logout`, `prompt_input_exit`, `other`, …
    pub reason: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct UserPromptSubmit {
    pub prompt: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ToolFailure {
    /// `"Exit code N\n<output>"` for a failing Bash command.
    pub error: String,
    pub is_interrupt: bool,
}

impl ToolFailure {
    /// The exit code Claude Code reports at the head of a Bash failure, if any.
    pub fn exit_code(&self) -> Option<i32> {
        let first = self.error.lines().next()?;
        first.strip_prefix("Exit code ")?.trim().parse().ok()
    }

    /// The output part of the error, without the `Exit code N` line.
    pub fn output(&self) -> &str {
        match self.error.split_once('\n') {
            Some((first, rest)) if first.starts_with("Exit code ") => rest,
            _ => &self.error,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PermissionDenied {
    pub reason: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PreCompact {
    /// `manual` or `auto`.
    pub trigger: String,
    pub custom_instructions: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PostCompact {
    pub trigger: String,
    pub compact_summary: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Stop {
    pub stop_hook_active: bool,
    pub last_assistant_message: String,
}

/// A turn that ended on an API error (Claude Code 2.1.332).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct StopFailure {
    /// Its kind: `rate_limit`, `invalid_request`, `server_error`, `unknown`, …
    pub error: String,
    /// The API's answer, when Claude Code gives it.
    pub error_details: Option<String>,
    /// What Claude Code showed: `API Error: 400 …`.
    pub last_assistant_message: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CwdChanged {
    pub old_cwd: String,
    pub new_cwd: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TaskEvent {
    pub task_id: String,
    pub task_subject: String,
    pub task_description: String,
}

/// Why an input could not be turned into an [`Event`].
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("stdin is empty")]
    Empty,
    #[error("stdin is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the hook input is not a JSON object")]
    NotObject,
    #[error("no event name: pass it as `waymark hook <Event>` or in `hook_event_name`")]
    NoName,
    #[error("`{field}` has the wrong type: {source}")]
    Field {
        field: &'static str,
        source: serde_json::Error,
    },
}

/// The outcome of parsing: the event plus a note when the argument and the payload's
/// `hook_event_name` disagree (the argument wins; the caller logs the note).
#[derive(Debug)]
pub struct Parsed {
    pub event: Event,
    pub mismatch: Option<String>,
}

/// Parses one hook input. `name` is the event named on the command line; the payload's
/// `hook_event_name` is the fallback.
pub fn parse(name: Option<&str>, bytes: &[u8]) -> Result<Parsed, ParseError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ParseError::Empty);
    }
    let value: Value = serde_json::from_slice(bytes)?;
    from_value(name, value)
}

/// The event's name: the one given on the command line, else the input's
/// `hook_event_name`.
pub fn name_of(name: Option<&str>, value: &Value) -> Result<String, ParseError> {
    let named = value.get("hook_event_name").and_then(Value::as_str);
    name.filter(|n| !n.is_empty())
        .or(named.filter(|n| !n.is_empty()))
        .map(str::to_string)
        .ok_or(ParseError::NoName)
}

/// Same as [`parse`] for an already decoded JSON value (used by `waymark replay`).
pub fn from_value(name: Option<&str>, mut value: Value) -> Result<Parsed, ParseError> {
    if !value.is_object() {
        return Err(ParseError::NotObject);
    }
    let common: Common = field(&value, "common")?;
    let named = common.hook_event_name.clone();
    let name = name_of(name, &value)?;
    let mismatch = match named.as_deref() {
        Some(n) if !n.is_empty() && n != name => Some(format!(
            "event named `{name}` on the command line but `{n}` in hook_event_name; using `{name}`"
        )),
        _ => None,
    };
    let kind = kind(&name, &mut value)?;
    Ok(Parsed {
        event: Event {
            common,
            kind,
            agent: Default::default(),
            name,
        },
        mismatch,
    })
}

fn kind(name: &str, value: &mut Value) -> Result<EventKind, ParseError> {
    let tool = |value: &mut Value| ToolCall::from_payload(value);
    Ok(match name {
        "SessionStart" => EventKind::SessionStart(field(value, "source")?),
        "SessionEnd" => EventKind::SessionEnd(field(value, "reason")?),
        "UserPromptSubmit" => EventKind::UserPromptSubmit(field(value, "prompt")?),
        "PreToolUse" => EventKind::PreToolUse(tool(value)),
        "PostToolUse" => {
            let call = tool(value);
            let response = ToolResponse::from_payload(&call, value);
            EventKind::PostToolUse(call, response)
        }
        "PostToolUseFailure" => {
            let failure = field(value, "error")?;
            EventKind::PostToolUseFailure(tool(value), failure)
        }
        "PermissionDenied" => {
            let denied = field(value, "reason")?;
            EventKind::PermissionDenied(tool(value), denied)
        }
        "PreCompact" => EventKind::PreCompact(field(value, "trigger")?),
        "PostCompact" => EventKind::PostCompact(field(value, "compact_summary")?),
        "Stop" => EventKind::Stop(field(value, "last_assistant_message")?),
        "SubagentStop" => EventKind::SubagentStop(field(value, "last_assistant_message")?),
        "TaskCreated" => EventKind::TaskCreated(field(value, "task_id")?),
        "TaskCompleted" => EventKind::TaskCompleted(field(value, "task_id")?),
        "StopFailure" => EventKind::StopFailure(field(value, "error")?),
        "SubagentStart" => EventKind::SubagentStart,
        "PermissionRequest" => EventKind::PermissionRequest(tool(value)),
        "CwdChanged" => EventKind::CwdChanged(field(value, "new_cwd")?),
        other => EventKind::Other(other.to_string()),
    })
}

fn field<T: DeserializeOwned>(value: &Value, field: &'static str) -> Result<T, ParseError> {
    T::deserialize(value).map_err(|source| ParseError::Field { field, source })
}

impl Event {
    /// The event's name as Claude Code spells it.
    pub fn name(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_wins_and_mismatch_is_reported() {
        let p = parse(
            Some("Stop"),
            br#"{"hook_event_name":"SessionEnd","session_id":"s","reason":"x"}"#,
        )
        .unwrap();
        assert_eq!(p.event.name(), "Stop");
        assert!(p.mismatch.unwrap().contains("SessionEnd"));
    }

    #[test]
    fn payload_name_is_the_fallback() {
        let p = parse(
            None,
            br#"{"hook_event_name":"SessionEnd","reason":"clear"}"#,
        )
        .unwrap();
        match p.event.kind {
            EventKind::SessionEnd(e) => assert_eq!(e.reason, "clear"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_inputs_are_errors_not_panics() {
        assert!(matches!(parse(None, b"  \n"), Err(ParseError::Empty)));
        assert!(matches!(parse(None, b"{"), Err(ParseError::Json(_))));
        assert!(matches!(parse(None, b"[1]"), Err(ParseError::NotObject)));
        assert!(matches!(parse(None, b"{}"), Err(ParseError::NoName)));
        assert!(matches!(
            parse(Some("SessionStart"), br#"{"source":5}"#),
            Err(ParseError::Field {
                field: "source",
                ..
            })
        ));
    }

    #[test]
    fn unknown_events_and_fields_are_tolerated() {
        let p = parse(Some("Notification"), br#"{"whatever":[1,2]}"#).unwrap();
        assert!(matches!(p.event.kind, EventKind::Other(ref n) if n == "Notification"));
    }

    #[test]
    fn bash_failure_exit_code() {
        let f = ToolFailure {
            error: "Exit code 101\ntest result: FAILED".into(),
            is_interrupt: false,
        };
        assert_eq!(f.exit_code(), Some(101));
        assert_eq!(f.output(), "test result: FAILED");
    }
}
