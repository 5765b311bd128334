//! What a hook prints: Claude Code's hook-output JSON, and only when there is something to say.

use serde_json::{Value, json};

/// The result of handling one event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    /// Text for the agent (`hookSpecificOutput.additionalContext`).
    pub context: Vec<String>,
    pub decision: Answer,
}

/// A PreToolUse decision other than "go ahead", with its reason.
pub type Answer = Option<(Decision, String)>;

/// What a PreToolUse hook can answer besides nothing (Claude Code's `permissionDecision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Ask the user before the tool runs.
    Ask,
    /// Refuse the tool call; the reason goes to the model.
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

impl Output {
    pub fn is_empty(&self) -> bool {
        self.context.is_empty() && self.decision.is_none()
    }

    /// Adds `text` for the agent, inert ([`waymark_core::text::inert`], line ends kept):
    /// what it quotes (a path, a command, a step name) acts on nothing that shows it.
    pub fn say(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !text.is_empty() {
            self.context
                .push(waymark_core::text::inert(&text, true).into_owned());
        }
    }

    /// The JSON to print for `event`, or `None` when nothing should be printed.
    /// Only the events whose protocol carries context get it; a deny only on PreToolUse.
    pub fn to_json(&self, event: &str) -> Option<Value> {
        match event {
            // The reason quotes what the agent wrote (a command, a path, a step name): it
            // is made inert as what `say` adds is, here where every reason passes.
            "PreToolUse" => self.decision.as_ref().map(|(decision, reason)| {
                json!({"hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": decision.as_str(),
                    "permissionDecisionReason": waymark_core::text::inert(reason, true),
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
    fn a_reason_is_inert_as_context_is() {
        let o = Output {
            context: Vec::new(),
            decision: Some((
                Decision::Deny,
                "step \"x\u{1b}]52;c;Y3VybA==\u{7}\" ran".into(),
            )),
        };
        let json = o.to_json("PreToolUse").unwrap().to_string();
        assert!(!json.contains("\\u001b]52"), "{json}");
        assert!(json.contains("step"), "{json}");
    }

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
    fn decisions_only_on_pre_tool_use() {
        for (d, word) in [(Decision::Deny, "deny"), (Decision::Ask, "ask")] {
            let o = Output {
                decision: Some((d, "no".into())),
                ..Default::default()
            };
            let json = o.to_json("PreToolUse").unwrap();
            assert_eq!(json["hookSpecificOutput"]["permissionDecision"], word);
            assert_eq!(o.to_json("PostToolUse"), None);
        }
    }
}
