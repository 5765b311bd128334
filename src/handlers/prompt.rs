//! UserPromptSubmit: the prompt is what the agent is working on until a step says better.

use crate::claude::event::{Event, UserPromptSubmit};
use crate::context::Ctx;
use crate::redact::redact;
use crate::task::{CheckpointTrigger, Effect, Hook, SessionStatus};
use crate::text::{one_line, truncate};

use super::{Need, with_task};

/// Prompts are kept to this many characters.
const MAX_PROMPT: usize = 300;

pub fn handle(ctx: &Ctx, event: &Event, e: &UserPromptSubmit) -> anyhow::Result<()> {
    with_task(
        ctx,
        event,
        Need::Create,
        Some(SessionStatus::Active),
        |hook| {
            if !e.prompt.trim().is_empty() {
                hook.last_prompt = Some(truncate(&one_line(&redact(&e.prompt)), MAX_PROMPT));
            }
            Ok(context_threshold(ctx, event, hook))
        },
    )?;
    Ok(())
}

/// One `context_threshold` checkpoint each time context usage (read from the transcript's
/// last `usage`) rises past `checkpoint_threshold_percent`.
pub(super) fn context_threshold(ctx: &Ctx, event: &Event, hook: &mut Hook) -> Vec<Effect> {
    let Some(path) = event.common.transcript_path.as_deref() else {
        return Vec::new();
    };
    let Some(tokens) = crate::claude::transcript::last_context_tokens(std::path::Path::new(path))
    else {
        return Vec::new();
    };
    let percent =
        (tokens.saturating_mul(100) / ctx.config.context_window_tokens.max(1)).min(255) as u8;
    let threshold = ctx.config.checkpoint_threshold_percent;
    let before = hook.context_percent.replace(percent).unwrap_or(0);
    if before < threshold && percent >= threshold {
        vec![Effect::Checkpoint(
            CheckpointTrigger::ContextThreshold,
            format!("Context window at {percent}% ({tokens} tokens), past {threshold}%"),
        )]
    } else {
        Vec::new()
    }
}
