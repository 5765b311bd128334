//! One file per hook event: what waymark does when Claude Code fires it.
//!
//! Every handler works through [`with_task`], which takes the hook.json lock once, lets the
//! handler change the task, makes the checkpoints the change called for, and saves (and
//! regenerates HOOK.md) only when something changed.

mod compact;
mod lifecycle;
mod post_tool_use;
mod pre_tool_use;
mod prompt;
mod session_start;
mod tasks;

use anyhow::Context as _;
use chrono::Duration;

use crate::claude::event::{Event, EventKind};
use crate::claude::output::Output;
use crate::context::Ctx;
use crate::log::Level;
use crate::task::store::{self, StoreError};
use crate::task::{Effect, Hook, Session, SessionStatus, StepSource};

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
        EventKind::PermissionDenied(call, denied) => pre_tool_use::denied(ctx, event, call, denied),
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

/// Whether an event may start a task when there is none (or the last one finished).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    /// Only act on an existing, unfinished task.
    Existing,
    /// Start a task if needed ("created on first need").
    Create,
}

/// Runs `f` on the current task under the hook.json lock, then makes the checkpoints it
/// asked for and notes the session. Returns the hook as saved.
pub(crate) fn with_task(
    ctx: &Ctx,
    event: &Event,
    need: Need,
    session: Option<SessionStatus>,
    f: impl FnOnce(&mut Hook) -> anyhow::Result<Vec<Effect>>,
) -> anyhow::Result<Option<Hook>> {
    let updated = store::update(&ctx.project, ctx.now, |slot| -> anyhow::Result<()> {
        let live = slot.as_ref().is_some_and(|h| !h.state.is_terminal());
        if !live && need == Need::Existing {
            return Ok(());
        }
        let hook = live_task(ctx, slot);
        let effects = f(hook)?;
        for Effect::Checkpoint(trigger, description) in effects {
            crate::checkpoint::create(ctx, hook, trigger, &description);
        }
        if let Some(status) = session {
            note_session(hook, event, status, ctx.now);
        }
        Ok(())
    });
    let updated = match updated {
        Ok(u) => u,
        Err(e @ (StoreError::Schema { .. } | StoreError::Corrupt(_))) => {
            return Err(anyhow::Error::new(e).context("task state not updated"));
        }
        Err(e) => return Err(e).context("cannot update .orchestration/hook.json"),
    };
    if let Some(note) = &updated.note.restored {
        ctx.log(Level::Warn, event.name(), note);
        eprintln!("waymark: {note}");
    }
    updated.value?;
    Ok(updated.hook)
}

/// The unfinished task in `slot`, starting a new one when there is none or the last one
/// finished ("created on first need").
pub(crate) fn live_task<'a>(ctx: &Ctx, slot: &'a mut Option<Hook>) -> &'a mut Hook {
    if slot.as_ref().is_none_or(|h| h.state.is_terminal()) {
        *slot = Some(new_task(ctx, slot.as_ref()));
    }
    slot.as_mut().expect("a live task")
}

/// A new task: bound to the active intent when there is one (task id = intent id, the
/// intent's `steps` as the plan), else `task-YYYYMMDD-HHMMSS`.
pub(crate) fn new_task(ctx: &Ctx, previous: Option<&Hook>) -> Hook {
    let intents = match crate::governance::intent::load(&ctx.project) {
        Ok(f) => f,
        Err(e) => {
            ctx.log(Level::Error, "intents", &e.to_string());
            None
        }
    };
    let chosen = crate::governance::intent::chosen(&ctx.project);
    let intent = intents
        .as_ref()
        .and_then(|f| f.active(chosen.as_deref(), None));
    let id = match intent {
        Some(i) => i.id.clone(),
        None => format!("task-{}", ctx.now.format("%Y%m%d-%H%M%S")),
    };
    let workspace = ctx
        .project
        .root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let index = store::next_task_index(&ctx.project, previous);
    let mut hook = Hook::new(&id, &workspace, index, ctx.now);
    if let Some(i) = intent {
        hook.intent_id = Some(i.id.clone());
        for (n, name) in i.steps.iter().enumerate() {
            hook.add_step(
                &format!("intent-{}", n + 1),
                name,
                "",
                None,
                StepSource::Intent,
                ctx.now,
            );
        }
    }
    hook
}

/// Records which session is working on the task and whether it is mid-turn. The
/// timestamp is refreshed at most once a minute so that a quiet event costs no write.
fn note_session(
    hook: &mut Hook,
    event: &Event,
    status: SessionStatus,
    now: chrono::DateTime<chrono::Utc>,
) {
    let id = &event.common.session_id;
    match hook.session.as_mut() {
        Some(s) if &s.session_id == id => {
            if s.status != status || now - s.last_event_at > Duration::seconds(60) {
                s.status = status;
                s.last_event_at = now;
            }
        }
        _ => {
            hook.session = Some(Session {
                session_id: id.clone(),
                started_at: now,
                last_event_at: now,
                status,
                transcript_path: event.common.transcript_path.clone(),
                end_reason: None,
            });
        }
    }
}
