//! The post-hooks of seed 002 (trace record, IntentProgress, ScopeDrift, SharedBrain,
//! VerificationFailure), run after the core bookkeeping of a tool event, each isolated.

use crate::context::Ctx;
use crate::event::{Event, ToolFailure};
use crate::output::Output;
use crate::project::Located;
use crate::tool::{ToolCall, ToolResponse};

/// Everything the post-hooks may need to know about one finished tool call.
pub struct ToolOutcome<'a> {
    pub event: &'a Event,
    pub call: &'a ToolCall,
    /// PostToolUse: the tool's response.
    pub response: Option<&'a ToolResponse>,
    /// PostToolUseFailure: the failure.
    pub failure: Option<&'a ToolFailure>,
    /// Paths the call wrote, located against the root.
    pub paths: &'a [Located],
    /// Bash: the exit code (0 on PostToolUse, N from "Exit code N" on failure).
    pub exit_code: Option<i32>,
    /// Bash: the redacted, bounded output tail.
    pub output_tail: String,
    /// Bash: the command matched `validation_commands`.
    pub validation: bool,
    pub task_id: Option<String>,
    pub intent_id: Option<String>,
}

/// Runs every post-hook for a finished tool call.
pub fn after_tool(_ctx: &Ctx, _outcome: &ToolOutcome, _out: &mut Output) {}

/// PreToolUse: scope enforcement.
pub fn before_tool(_ctx: &Ctx, _event: &Event, _call: &ToolCall, _out: &mut Output) {}

/// PermissionDenied: a governance lesson.
pub fn permission_denied(_ctx: &Ctx, _event: &Event, _call: &ToolCall, _reason: &str) {}

/// A failed validation (`waymark validate`, or an observed one): a verification-failure
/// lesson in AGENT.md.
pub fn verification_failure(
    _ctx: &Ctx,
    _command: &str,
    _exit_code: i32,
    _output_tail: &str,
    _intent_id: Option<&str>,
) {
}
