//! TaskCreated and TaskCompleted: Claude Code's own task events feed the step plan
//! (`task::tools`, where the task tools land too).

use crate::claude::event::{Event, TaskEvent};
use crate::context::Ctx;
use crate::task::{Need, SessionStatus, current, tools};

pub fn created(ctx: &Ctx, event: &Event, e: &TaskEvent) -> anyhow::Result<()> {
    current::change(ctx, Need::Create, |hook, _| {
        tools::created(hook, e, ctx.now);
        let c = &event.common;
        let transcript = c.transcript_path.as_deref();
        hook.note_session(&c.session_id, transcript, SessionStatus::Active, ctx.now);
    })?;
    Ok(())
}

pub fn completed(ctx: &Ctx, event: &Event, e: &TaskEvent) -> anyhow::Result<()> {
    let changed = current::change(ctx, Need::Existing, |hook, effects| {
        let made = tools::completed(hook, e, ctx.config.max_attempts, ctx.now)?;
        effects.extend(made);
        let c = &event.common;
        let transcript = c.transcript_path.as_deref();
        hook.note_session(&c.session_id, transcript, SessionStatus::Active, ctx.now);
        anyhow::Ok(())
    })?;
    changed.map(|(r, _)| r).transpose()?;
    Ok(())
}
