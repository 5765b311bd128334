//! TaskCreated and TaskCompleted: Claude Code's own task events feed the step plan
//! (`task::tools`, where the task tools land too).

use crate::claude::event::{Event, TaskEvent};
use crate::runtime::context::Ctx;
use crate::task::{Need, SessionStatus, current, tools};

pub fn created(ctx: &Ctx, event: &Event, e: &TaskEvent) -> anyhow::Result<()> {
    current::change(ctx, Need::Create, |hook, _| {
        tools::created(hook, e, ctx.now);
        super::note(hook, event, SessionStatus::Active, ctx);
    })?;
    Ok(())
}

pub fn completed(ctx: &Ctx, event: &Event, e: &TaskEvent) -> anyhow::Result<()> {
    let changed = current::change(ctx, Need::Existing, |hook, effects| {
        let made = tools::completed(hook, e, ctx.config.max_attempts, ctx.now)?;
        effects.extend(made);
        super::note(hook, event, SessionStatus::Active, ctx);
        anyhow::Ok(())
    })?;
    changed.map(|(r, _)| r).transpose()?;
    Ok(())
}
