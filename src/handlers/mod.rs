//! One file per hook event: what waymark does when Claude Code fires it.
//!
//! The rule of this room: this file only routes. Each event's file tells its whole story
//! in order: it changes the task through `task::current` (one locked read-modify-write,
//! saved only when something changed) and runs the post-hooks of seed 002 through
//! [`posthook::isolated`], so that one failing post-hook costs nothing else.

mod compact;
mod lifecycle;
mod permission_denied;
mod post_tool_use;
mod posthook;
mod pre_tool_use;
mod prompt;
mod session_start;
mod tasks;

use crate::claude::event::{Event, EventKind};
use crate::claude::output::Output;
use crate::context::Ctx;
use crate::log::Level;

/// Handles one event. Errors are logged here; the output holds whatever was produced.
pub fn dispatch(ctx: &Ctx, event: &Event) -> Output {
    let mut out = Output::default();
    crate::faults::at("dispatch");
    let result = match &event.kind {
        EventKind::SessionStart(e) => session_start::handle(ctx, event, e, &mut out),
        EventKind::SessionEnd(e) => lifecycle::session_end(ctx, event, e),
        EventKind::UserPromptSubmit(e) => prompt::handle(ctx, event, e),
        EventKind::PreToolUse(call) => pre_tool_use::handle(ctx, event, call, &mut out),
        EventKind::PostToolUse(call, resp) => {
            post_tool_use::handle(ctx, event, call, Ok(resp), &mut out)
        }
        EventKind::PostToolUseFailure(call, failure) => {
            post_tool_use::handle(ctx, event, call, Err(failure), &mut out)
        }
        EventKind::PermissionDenied(call, denied) => {
            permission_denied::handle(ctx, event, call, denied)
        }
        EventKind::PreCompact(e) => compact::pre(ctx, event, e),
        EventKind::PostCompact(e) => compact::post(ctx, event, e),
        EventKind::Stop(e) => lifecycle::stop(ctx, event, e, true),
        EventKind::SubagentStop(e) => lifecycle::stop(ctx, event, e, false),
        EventKind::TaskCreated(e) => tasks::created(ctx, event, e),
        EventKind::TaskCompleted(e) => tasks::completed(ctx, event, e),
        EventKind::Other(_) => Ok(()),
    };
    if let Err(e) = result {
        ctx.log(Level::Error, event.name(), &format!("{e:#}"));
        eprintln!(
            "waymark: {}: {e:#} (details in .orchestration/waymark.log)",
            event.name()
        );
    }
    out
}
