//! What a hook prints: Claude Code's hook-output JSON, and only when there is something to say.

use serde_json::{Value, json};

/// The result of handling one event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    /// Text for the agent (`hookSpecificOutput.additionalContext`).
    pub context: Vec<String>,
    /// A PreToolUse deny, with its reason.
    pub deny: Option<String>,
    /// The event could not be applied before the deadline (another process held the
    /// task's lock) and must be kept for the next event (`handlers::pending`).
    pub deferred: bool,
}

impl Output {
    pub fn is_empty(&self) -> bool {
        self.context.is_empty() && self.deny.is_none()
    }

    pub fn say(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !text.is_empty() {
            self.context.push(text);
        }
    }

    /// The JSON to print for `event`, or `None` when nothing should be printed.
    /// Only the events whose protocol carries context get it; a deny only on PreToolUse.
    pub fn to_json(&self, event: &str) -> Option<Value> {
        match event {
            "PreToolUse" => self.deny.as_ref().map(|reason| {
                json!({"hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }})
            }),
            "SessionStart" | "PostToolUse" | "PostToolUseFailure" | "UserPromptSubmit"
                if !self.context.is_empty() =>
            {
                Some(json!({"hookSpecificOutput": {
                    "hookEventName": event,
                    "additionalContext": self.context.join("\n\n"),
                }}))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_to_say_prints_nothing() {
        assert_eq!(Output::default().to_json("PostToolUse"), None);
        let mut o = Output::default();
        o.say("x");
        assert_eq!(o.to_json("Stop"), None);
        assert_eq!(
            o.to_json("SessionStart").unwrap()["hookSpecificOutput"]["additionalContext"],
            "x"
        );
    }

    #[test]
    fn deny_only_on_pre_tool_use() {
        let o = Output {
            deny: Some("no".into()),
            ..Default::default()
        };
        assert_eq!(
            o.to_json("PreToolUse").unwrap()["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
        assert_eq!(o.to_json("PostToolUse"), None);
    }
}
