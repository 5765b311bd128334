//! Stop, SubagentStop and SessionEnd: the ends of turns and sessions.

use crate::claude::event::{Event, SessionEnd, Stop};
use crate::config::Switch;
use crate::context::Ctx;
use crate::redact::redact;
use crate::task::{CheckpointTrigger, Effect, HookState, MAX_LAST_OUTPUT, SessionStatus};
use crate::text::truncate;

use super::{Need, with_task};

/// Stop: keep the last output, mark the session idle (the turn ended cleanly), checkpoint a
/// context-window crossing, and complete the task when every step is done.
/// SubagentStop: only the output; the main turn goes on.
pub fn stop(ctx: &Ctx, event: &Event, e: &Stop, main: bool) -> anyhow::Result<()> {
    let status = if main {
        SessionStatus::Idle
    } else {
        SessionStatus::Active
    };
    with_task(ctx, event, Need::Existing, Some(status), |hook| {
        if !main {
            return Ok(Vec::new());
        }
        if let Some(c) = hook.current_step.as_mut() {
            c.last_output = truncate(&redact(&e.last_assistant_message), MAX_LAST_OUTPUT);
        }
        let effects = super::prompt::context_threshold(ctx, event, hook);
        if hook.all_steps_completed() && hook.state == HookState::StepPending {
            crate::checkpoint::create(
                ctx,
                hook,
                CheckpointTrigger::StepComplete,
                "Task completed: every step done",
            );
            hook.finish(HookState::Completed, ctx.now)?;
        }
        Ok(effects)
    })?;
    Ok(())
}

/// SessionEnd: `clear` checkpoints first (auto_checkpoint_on_clear), noting what changed
/// since the last checkpoint (verify_before_clear); every reason marks the session ended.
pub fn session_end(ctx: &Ctx, event: &Event, e: &SessionEnd) -> anyhow::Result<()> {
    with_task(
        ctx,
        event,
        Need::Existing,
        Some(SessionStatus::Ended),
        |hook| {
            if let Some(s) = hook.session.as_mut() {
                s.end_reason = Some(e.reason.clone());
            }
            if e.reason != "clear" {
                return Ok(Vec::new());
            }
            if ctx.config.verify_before_clear {
                let since = hook.last_checkpoint().and_then(|c| c.git_commit.clone());
                hook.clear_note = crate::git::diff_stat(&ctx.project.root, since.as_deref()).map(|(files, add, del)| {
                if files == 0 {
                    "Work changed since last checkpoint: nothing.".to_string()
                } else {
                    format!("Work changed since last checkpoint: {files} files, +{add}/−{del} lines")
                }
            });
            }
            Ok(match ctx.config.auto_checkpoint_on_clear {
                Switch::On => vec![Effect::Checkpoint(
                    CheckpointTrigger::Clear,
                    "Before /clear".into(),
                )],
                Switch::Off | Switch::Prompt => Vec::new(),
            })
        },
    )?;
    Ok(())
}
