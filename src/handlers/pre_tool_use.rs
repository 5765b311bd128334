//! PreToolUse and PermissionDenied: governance before a tool runs.

use crate::claude::event::{Event, PermissionDenied};
use crate::claude::output::Output;
use crate::claude::tool::ToolCall;
use crate::context::Ctx;
use crate::posthooks;

/// Only with `scope_enforcement: "deny"`: a write outside the active intent's scope is
/// denied, and the denial becomes a governance lesson.
pub fn handle(ctx: &Ctx, event: &Event, call: &ToolCall, out: &mut Output) -> anyhow::Result<()> {
    posthooks::before_tool(ctx, event, call, out);
    Ok(())
}

/// Claude Code denied a tool call: a governance lesson.
pub fn denied(
    ctx: &Ctx,
    event: &Event,
    call: &ToolCall,
    denied: &PermissionDenied,
) -> anyhow::Result<()> {
    posthooks::permission_denied(ctx, event, call, &denied.reason);
    Ok(())
}
