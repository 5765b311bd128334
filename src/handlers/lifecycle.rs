//! Stop, SubagentStop and SessionEnd: the ends of turns and sessions.

use crate::claude::event::{Event, SessionEnd, Stop};
use crate::config::Switch;
use crate::context::Ctx;
use crate::task::{
    CheckpointTrigger, Effect, HookState, MAX_LAST_OUTPUT, Need, SessionStatus, current,
};
use crate::text::truncate;

/// Stop: keep the last output, checkpoint a context-window crossing, complete the task
/// when every step is done, and mark the session idle (the turn ended cleanly).
/// SubagentStop: the session is still working; only that is noted.
pub fn stop(ctx: &Ctx, event: &Event, e: &Stop, main: bool) -> anyhow::Result<()> {
    let changed = current::change(ctx, Need::Existing, |hook, effects| {
        if main {
            if let Some(c) = hook.current_step.as_mut() {
                c.last_output = truncate(&e.last_assistant_message, MAX_LAST_OUTPUT);
            }
            effects.extend(super::prompt::context_threshold(ctx, event, hook));
            if hook.state == HookState::StepPending && hook.all_steps_completed() {
                effects.push(Effect::Checkpoint(
                    CheckpointTrigger::StepComplete,
                    "Task completed: every step done".into(),
                    None,
                ));
                hook.finish(HookState::Completed, ctx.now)?;
            }
        }
        let status = if main {
            SessionStatus::Idle
        } else {
            SessionStatus::Active
        };
        super::note(hook, event, status, ctx);
        anyhow::Ok(())
    })?;
    changed.map(|(r, _)| r).transpose()?;
    Ok(())
}

/// SessionEnd: `clear` notes what changed since the last checkpoint (verify_before_clear)
/// and checkpoints (auto_checkpoint_on_clear); every reason marks the session ended.
pub fn session_end(ctx: &Ctx, event: &Event, e: &SessionEnd) -> anyhow::Result<()> {
    current::change(ctx, Need::Existing, |hook, effects| {
        if let Some(s) = hook.session_mut(&event.common.session_id) {
            s.end_reason = Some(e.reason.clone());
        }
        if e.reason == "clear" {
            if ctx.config.verify_before_clear {
                hook.clear_note = crate::recovery::changed_since(ctx, hook)
                    .map(|d| format!("Work changed since last checkpoint: {d}."));
            }
            if ctx.config.auto_checkpoint_on_clear == Switch::On {
                let description = "Before /clear".to_string();
                effects.push(Effect::Checkpoint(
                    CheckpointTrigger::Clear,
                    description,
                    None,
                ));
            }
        }
        super::note(hook, event, SessionStatus::Ended, ctx);
    })?;
    Ok(())
}
