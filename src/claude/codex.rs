//! Codex CLI's hook wire format, turned into the one waymark's handlers take.
//!
//! Codex CLI (0.169.0) runs `waymark hook --agent codex <Event>` with a JSON input much like
//! Claude Code's (its schemas: `codex-rs/hooks/schema/generated/` in openai/codex). This thin
//! adapter rewrites what differs before [`crate::claude::event::from_value`] reads it, so
//! the same handlers run; the Claude Code path never comes here.
//!
//! What differs, and what the adapter does:
//! - the shell tool reaches hooks as `Bash` with `tool_input.command`, as Claude Code's;
//!   its PostToolUse `tool_response` is the command's output as one string, with no exit
//!   code ([`bash_output`]); the exit code is in the model's copy of the output in the
//!   rollout ("Process exited with code N"), written only after PostToolUse returns, so
//!   the verdict is read there at the session's next event (`cmd::hook`, [`exit_code`]);
//! - edits are `apply_patch` calls, the patch text under `tool_input.command`
//!   ([`crate::claude::tool::PatchInput`] reads the files from its headers);
//! - `Interrupt` (the user stopped the turn) ends the turn as a Stop does;
//! - PreToolUse cannot answer `ask` (Codex rejects it: "unsupported permissionDecision:ask"):
//!   an ask becomes a deny whose reason says what to ask the user ([`output`]).

use serde_json::Value;

/// Which agent sent an event: Claude Code unless the command line names another.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Agent {
    #[default]
    Claude,
    Codex,
}

impl Agent {
    /// From `--agent NAME`: `claude` (or `claude-code`) and `codex`.
    pub fn parse(name: &str) -> Option<Agent> {
        match name.to_ascii_lowercase().as_str() {
            "claude" | "claude-code" | "claudecode" => Some(Agent::Claude),
            "codex" | "codex-cli" => Some(Agent::Codex),
            _ => None,
        }
    }

    /// The Agent Trace `tool.name` of its records.
    pub fn tool_name(self) -> &'static str {
        match self {
            Agent::Claude => waymark_core::trace::TOOL_NAME,
            Agent::Codex => "codex",
        }
    }

    /// How records name it (a trace record's `metadata.waymark.agent`, a kept event's
    /// `agent`): nothing for Claude Code, the first client.
    pub fn recorded(self) -> Option<String> {
        (self == Agent::Codex).then(|| "codex".to_string())
    }

    /// The agent a record names ([`Agent::recorded`]).
    pub fn of_record(name: Option<&str>) -> Agent {
        name.and_then(Agent::parse).unwrap_or_default()
    }

    /// The environment variable holding its version, where it sets one: neither tells
    /// hooks its version.
    pub fn version_var(self) -> &'static str {
        match self {
            Agent::Claude => "CLAUDE_CODE_VERSION",
            Agent::Codex => "CODEX_VERSION",
        }
    }

    /// How a person names it.
    pub fn title(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code",
            Agent::Codex => "Codex CLI",
        }
    }
}

/// Codex's events waymark registers for, in the order a session fires them.
pub const EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "Interrupt",
    "SessionEnd",
];

/// Rewrites one Codex input in place into Claude Code's shape; returns the event name the
/// handlers know it by.
pub fn adapt(name: &str, value: &mut Value) -> String {
    match name {
        "Interrupt" => {
            let said = "[the user interrupted the turn]".into();
            set(value, "last_assistant_message", said);
            set(value, "hook_event_name", "Stop".into());
            "Stop".into()
        }
        "PostToolUse" if tool_name(value) == "Bash" => {
            let output = bash_output(&value["tool_response"]);
            let response =
                serde_json::json!({"stdout": output, "stderr": "", "interrupted": false});
            set(value, "tool_response", response);
            name.into()
        }
        _ => name.into(),
    }
}

/// A Bash PostToolUse whose exit code is known: a non-zero one becomes the
/// PostToolUseFailure Claude Code sends for a failing command (`Exit code N\n<output>`).
pub fn with_exit_code(name: &str, value: &mut Value, code: Option<i32>) -> String {
    match code {
        Some(0) => name.into(),
        Some(code) => {
            let output = String::from(value["tool_response"]["stdout"].as_str().unwrap_or(""));
            set(value, "error", format!("Exit code {code}\n{output}").into());
            set(value, "hook_event_name", "PostToolUseFailure".into());
            "PostToolUseFailure".into()
        }
        // Not known: the command's end was not seen (its session was killed).
        None => {
            if let Some(r) = value.get_mut("tool_response") {
                r["interrupted"] = true.into();
            }
            name.into()
        }
    }
}

/// Whether this input is a Bash PostToolUse (whose verdict waits for the rollout).
pub fn awaits_exit_code(name: &str, value: &Value) -> bool {
    name == "PostToolUse" && tool_name(value) == "Bash"
}

fn tool_name(value: &Value) -> &str {
    value["tool_name"].as_str().unwrap_or_default()
}

fn set(value: &mut Value, key: &str, v: Value) {
    if let Some(o) = value.as_object_mut() {
        o.insert(key.to_string(), v);
    }
}

/// The shell command's output from a Codex `tool_response`: a string (0.169.0), or the
/// text of whatever else it is.
fn bash_output(response: &Value) -> String {
    let whole = match response {
        Value::String(s) => s.as_str(),
        Value::Null => "",
        other => match other.get("output").and_then(Value::as_str) {
            Some(s) => s,
            None => return tail_of(&other.to_string()),
        },
    };
    tail_of(whole)
}

/// The most of a Codex shell call's output kept, its end (as Claude Code's Bash output is
/// ended by the client): the call is held until its verdict, and a 50 MB output held
/// whole cost its hook 300 MiB. What the ledger and an observed receipt see of a longer
/// output is its last [`KEPT_OUTPUT`] bytes.
pub const KEPT_OUTPUT: usize = 1 << 20;

fn tail_of(output: &str) -> String {
    let mut start = output.len().saturating_sub(KEPT_OUTPUT);
    while !output.is_char_boundary(start) {
        start += 1;
    }
    output[start..].to_string()
}

/// The exit code in the text the model sees for a shell call ("Process exited with code
/// N", Codex's `exec_command` output) or a patch ("Exit code: N").
pub fn exit_code(text: &str) -> Option<i32> {
    text.lines().find_map(|l| {
        let l = l.trim();
        l.strip_prefix("Process exited with code ")
            .or_else(|| l.strip_prefix("Exit code: "))
            .and_then(|n| n.trim().parse().ok())
    })
}

/// The output the model got for call `call_id`, from one rollout line
/// (`{"type":"response_item","payload":{"type":"function_call_output","call_id":…,"output":…}}`).
pub fn call_output(line: &str, call_id: &str) -> Option<String> {
    if !line.contains(call_id) || !line.contains("_call_output") {
        return None;
    }
    let v: Value = serde_json::from_str(line).ok()?;
    let p = v.get("payload")?;
    let kind = p.get("type")?.as_str()?;
    if !kind.ends_with("_call_output") || p.get("call_id")?.as_str()? != call_id {
        return None;
    }
    Some(match p.get("output")? {
        Value::String(s) => s.clone(),
        Value::Array(items) => texts(items),
        Value::Object(o) => match o.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(items)) => texts(items),
            _ => String::new(),
        },
        _ => String::new(),
    })
}

fn texts(items: &[Value]) -> String {
    items
        .iter()
        .filter_map(|i| i.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What to print for Codex: Claude Code's output made Codex's ([`output`]); a PreToolUse
/// with context and no decision carries the context (Codex takes it there).
pub fn answer(out: &super::output::Output, name: &str) -> Option<Value> {
    if name == "PreToolUse" && out.decision.is_none() && !out.context.is_empty() {
        return Some(serde_json::json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": out.context.join("\n\n"),
        }}));
    }
    out.to_json(name).map(output)
}

/// Claude Code's hook output made Codex's: the same `hookSpecificOutput`, except that a
/// PreToolUse `ask` (which Codex rejects) becomes a deny telling the agent to ask.
pub fn output(mut json: Value) -> Value {
    let Some(spec) = json.get_mut("hookSpecificOutput") else {
        return json;
    };
    if spec.get("permissionDecision").and_then(Value::as_str) == Some("ask") {
        let reason = String::from(spec["permissionDecisionReason"].as_str().unwrap_or(""));
        spec["permissionDecision"] = "deny".into();
        spec["permissionDecisionReason"] = format!(
            "{reason}\n[waymark] Codex CLI cannot ask the user from a hook: this call was held back. Ask the user whether to run it, and run it only once they agree."
        )
        .into();
    }
    json
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A 50 MB output is kept by its end: what decides the verdict is there.
    #[test]
    fn a_huge_shell_output_is_kept_by_its_end() {
        let big = format!("{}é\ntest result: ok", "x".repeat(50 << 20));
        let mut v =
            json!({"tool_name":"Bash","tool_input":{"command":"cargo test"},"tool_response": big});
        adapt("PostToolUse", &mut v);
        let kept = v["tool_response"]["stdout"].as_str().unwrap();
        assert!(kept.len() <= KEPT_OUTPUT && kept.len() > KEPT_OUTPUT - 4);
        assert!(kept.ends_with("é\ntest result: ok"));
    }

    #[test]
    fn bash_output_becomes_claude_codes_response_and_a_failure_when_known() {
        let mut v = json!({"tool_name":"Bash","tool_input":{"command":"cargo test"},"tool_response":"test result: FAILED\n"});
        assert!(awaits_exit_code("PostToolUse", &v));
        assert_eq!(adapt("PostToolUse", &mut v), "PostToolUse");
        assert_eq!(v["tool_response"]["stdout"], "test result: FAILED\n");
        assert_eq!(
            with_exit_code("PostToolUse", &mut v, Some(101)),
            "PostToolUseFailure"
        );
        assert_eq!(v["error"], "Exit code 101\ntest result: FAILED\n");
        let mut ok = json!({"tool_name":"Bash","tool_response":"x"});
        adapt("PostToolUse", &mut ok);
        assert_eq!(
            with_exit_code("PostToolUse", &mut ok, Some(0)),
            "PostToolUse"
        );
        assert_eq!(with_exit_code("PostToolUse", &mut ok, None), "PostToolUse");
        assert_eq!(ok["tool_response"]["interrupted"], true);
    }

    #[test]
    fn exit_codes_from_what_the_model_sees() {
        let shell = "Chunk ID: 1\nWall time: 0.0 seconds\nProcess exited with code 3\nOriginal token count: 0\nOutput:\nx";
        assert_eq!(exit_code(shell), Some(3));
        assert_eq!(
            exit_code("Exit code: 0\nWall time: 0 seconds\nOutput:\n"),
            Some(0)
        );
        assert_eq!(exit_code("Process running with session ID 4"), None);
        let line = r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"Process exited with code 2\nOutput:\n"}}"#;
        assert_eq!(exit_code(&call_output(line, "call_1").unwrap()), Some(2));
        assert_eq!(call_output(line, "call_2"), None);
        let items = r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"Process exited with code 0"}]}}"#;
        assert_eq!(exit_code(&call_output(items, "c").unwrap()), Some(0));
    }

    #[test]
    fn interrupt_is_a_stop_and_ask_is_a_deny() {
        let mut v = json!({"session_id":"s","turn_id":"t"});
        assert_eq!(adapt("Interrupt", &mut v), "Stop");
        let out = output(
            json!({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"outside scope"}}),
        );
        assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
        let reason = out["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(reason.starts_with("outside scope") && reason.contains("Ask the user"));
        assert_eq!(Agent::parse("Codex"), Some(Agent::Codex));
        assert_eq!(Agent::parse("gemini"), None);
    }
}
