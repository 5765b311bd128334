//! PermissionDenied: Claude Code refused a tool call; the refusal becomes a governance
//! lesson in AGENT.md so that the next agent does not try the same call.

use super::posthook::isolated;
use crate::claude::event::{Event, PermissionDenied};
use crate::claude::tool::ToolCall;
use crate::context::Ctx;
use crate::governance::{facts::Facts, lessons};

pub fn handle(
    ctx: &Ctx,
    event: &Event,
    call: &ToolCall,
    denied: &PermissionDenied,
) -> anyhow::Result<()> {
    isolated(ctx, event.name(), "shared_brain", || {
        lessons::permission_denied(ctx, &mut Facts::new(None), event, call, &denied.reason)
    });
    Ok(())
}
