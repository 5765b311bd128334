//! PermissionRequest and PermissionDenied: Claude Code asks the user before a tool call,
//! or refused one.

use super::posthook::isolated;
use crate::claude::event::{Event, PermissionDenied};
use crate::claude::tool::ToolCall;
use crate::governance::{facts::Facts, lessons};
use crate::runtime::context::Ctx;
use crate::task::{Need, SessionStatus, current};
use waymark_core::text::{one_line, truncate};

/// PermissionRequest: the session is mid-turn, waiting for the user; if it ends there, the
/// next session is told what it was waiting for.
pub fn request(ctx: &Ctx, event: &Event, call: &ToolCall) -> anyhow::Result<()> {
    current::change(ctx, Need::Existing, |hook, _| {
        super::note(hook, event, SessionStatus::Active, ctx);
        if let Some(s) = hook.session_mut(&event.common.session_id) {
            let call = truncate(&one_line(&call.describe()), 160);
            s.waiting_for = Some(format!("permission to run {call}"));
        }
    })?;
    Ok(())
}

/// PermissionDenied: the refusal becomes a governance lesson in AGENT.md so that the next
/// agent does not try the same call.
pub fn denied(
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
