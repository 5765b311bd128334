//! One file per hook event: what waymark does when Claude Code fires it.
//!
//! The rule of this room: this file only routes. Each event's file tells its whole story
//! in order: it changes the task through `task::current` (one locked read-modify-write,
//! saved only when something changed) and runs the post-hooks (docs/design.md) through
//! [`posthook::isolated`], so that one failing post-hook costs nothing else.

mod compact;
mod lifecycle;
pub mod once;
pub mod pending;
mod permission;
mod post_tool_use;
mod posthook;
mod pre_tool_use;
mod prompt;
pub mod rewound;
mod session_start;
mod tasks;
pub mod verdicts;

use crate::claude::event::{Event, EventKind};
use crate::claude::output::Output;
use crate::runtime::context::Ctx;
use waymark_core::task::{Hook, SessionStatus};

/// What handling one event gave.
#[derive(Debug, Default)]
pub struct Handled {
    /// What to tell Claude Code: whatever was produced, errors or not.
    pub out: Output,
    /// The event could not be applied before the deadline (another process held the
    /// task's lock) and must be kept for the next event ([`pending`]).
    pub deferred: bool,
}

/// Handles one event. Errors are logged here.
pub fn dispatch(ctx: &Ctx, event: &Event) -> Handled {
    let mut out = Output::default();
    crate::task::store::begin_event();
    crate::store::faults::at("dispatch");
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
        EventKind::PermissionDenied(call, denied) => permission::denied(ctx, event, call, denied),
        EventKind::PreCompact(e) => compact::pre(ctx, event, e),
        EventKind::PostCompact(e) => compact::post(ctx, event, e),
        EventKind::Stop(e) => lifecycle::stop(ctx, event, e, true),
        EventKind::SubagentStop(e) => lifecycle::stop(ctx, event, e, false),
        EventKind::TaskCreated(e) => tasks::created(ctx, event, e),
        EventKind::TaskCompleted(e) => tasks::completed(ctx, event, e),
        EventKind::StopFailure(e) => lifecycle::stop_failure(ctx, event, e),
        EventKind::SubagentStart => lifecycle::subagent(ctx, event, true),
        EventKind::PermissionRequest(call) => permission::request(ctx, event, call),
        EventKind::CwdChanged(e) => lifecycle::cwd_changed(ctx, event, e),
        EventKind::Other(_) => Ok(()),
    };
    let busy = |e: &anyhow::Error| {
        use crate::task::store::StoreError;
        e.chain()
            .any(|c| matches!(c.downcast_ref(), Some(StoreError::Busy(_))))
    };
    let deferred = match result {
        Ok(()) => false,
        Err(e) if busy(&e) => {
            let why = format!(
                "{e:#}; the event is kept in {} for the next event",
                pending::PENDING
            );
            ctx.log(crate::store::log::Level::Warn, event.name(), &why);
            true
        }
        Err(e) => {
            crate::store::log::report(&ctx.project.state_dir(), event.name(), &format!("{e:#}"));
            false
        }
    };
    Handled { out, deferred }
}

/// Dispatches an event applied after its own hook (a `kept` event, a `held` Codex call),
/// at the time it was received and as not this process's own ([`Ctx::late`]): a panic is
/// logged and the event dropped (`None`), not met again by every hook after.
fn dispatch_late(
    ctx: &mut Ctx,
    event: &Event,
    what: &str,
    received_at: chrono::DateTime<chrono::Utc>,
) -> Option<Handled> {
    ctx.now = received_at;
    ctx.late = true;
    let run = std::panic::AssertUnwindSafe(|| dispatch(ctx, event));
    let handled = std::panic::catch_unwind(run);
    ctx.late = false;
    handled
        .map_err(|payload| {
            let msg = waymark_core::text::panic_message(payload.as_ref());
            let why = format!("a {what} {} event panicked, dropped: {msg}", event.name());
            ctx.log(crate::store::log::Level::Error, what, &why);
        })
        .ok()
}

/// Whether this is an event applied late (a kept event, a held Codex call) of a session
/// that has ended (its crash declared): it is recorded, but it neither brings the session
/// back mid-turn (a crash declared again) nor moves the plan (an attempt spent again).
fn ended_late(ctx: &Ctx, hook: &Hook, session: &str) -> bool {
    ctx.late
        && hook
            .sessions
            .iter()
            .any(|s| s.session_id == session && s.status == SessionStatus::Ended)
}

/// Records that the event's session sent it, leaving the session in `status`.
fn note(hook: &mut Hook, event: &Event, status: SessionStatus, ctx: &Ctx) {
    let c = &event.common;
    if ended_late(ctx, hook, &c.session_id) {
        return;
    }
    hook.note_session(&c.session_id, c.transcript_path.as_deref(), status, ctx.now);
    if event.agent != crate::claude::codex::Agent::Claude {
        if let Some(s) = hook.session_mut(&c.session_id) {
            s.client = Some(event.agent.title().to_string());
        }
    }
    // A session first seen after its SessionStart (which came before the task existed)
    // is told apart from others by its process, like one seen at SessionStart: without
    // it, a live session would count as gone. Not from an event applied late: this
    // process is then another session's.
    if !ctx.late
        && hook
            .session_mut(&c.session_id)
            .is_some_and(|s| s.owner.is_none())
    {
        hook.set_owner(&c.session_id, crate::runtime::process::owner());
    }
    // A subagent's directory (an isolated worktree) is not where its session works.
    if let Some(cwd) = c.cwd.as_deref().filter(|_| c.agent_id.is_none()) {
        hook.set_cwd(&c.session_id, where_from(ctx, cwd));
    }
}

/// Where an event's working directory is, as a session records it: `None` at the project
/// root (nearly every event: told without looking at the disk), else root-relative (a
/// worktree under `.claude/worktrees/`, a subdirectory) or absolute.
pub(super) fn where_from(ctx: &Ctx, cwd: &str) -> Option<String> {
    if std::path::Path::new(cwd) == ctx.project.root {
        return None;
    }
    let located = ctx.project.locate(cwd, None);
    Some(located.display().to_string()).filter(|p| !p.is_empty())
}
