//! TaskCreated and TaskCompleted: Claude Code's own task events feed the step plan.

use crate::claude::event::{Event, TaskEvent};
use crate::context::Ctx;
use crate::task::{SessionStatus, StepSource, StepStatus};

use super::{Need, with_task};

pub fn created(ctx: &Ctx, event: &Event, e: &TaskEvent) -> anyhow::Result<()> {
    with_task(
        ctx,
        event,
        Need::Create,
        Some(SessionStatus::Active),
        |hook| {
            let id = if e.task_id.is_empty() {
                hook.next_step_id("")
            } else {
                e.task_id.clone()
            };
            hook.add_step(
                &id,
                &e.task_subject,
                &e.task_description,
                None,
                StepSource::Task,
                ctx.now,
            );
            Ok(Vec::new())
        },
    )?;
    Ok(())
}

pub fn completed(ctx: &Ctx, event: &Event, e: &TaskEvent) -> anyhow::Result<()> {
    with_task(
        ctx,
        event,
        Need::Existing,
        Some(SessionStatus::Active),
        |hook| {
            if hook.step(&e.task_id).is_none() && !e.task_subject.is_empty() {
                hook.add_step(
                    &e.task_id,
                    &e.task_subject,
                    &e.task_description,
                    None,
                    StepSource::Task,
                    ctx.now,
                );
            }
            Ok(hook.set_step_status(
                &e.task_id,
                StepStatus::Completed,
                ctx.config.max_attempts,
                ctx.now,
            )?)
        },
    )?;
    Ok(())
}
