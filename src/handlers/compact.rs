//! PreCompact and PostCompact: a checkpoint before the context is summarized (never
//! blocking compaction), and the summary kept for HOOK.md.

use crate::claude::event::{Event, PostCompact, PreCompact};
use crate::runtime::context::Ctx;
use crate::task::{CheckpointTrigger, Effect, Need, current};
use waymark_core::text::truncate;

/// The compaction summary is kept to this many characters.
const MAX_SUMMARY: usize = 2000;

pub fn pre(ctx: &Ctx, _event: &Event, e: &PreCompact) -> anyhow::Result<()> {
    current::change(ctx, Need::Existing, |_, effects| {
        let description = match e.trigger.as_str() {
            "" => "Before compaction".to_string(),
            how => format!("Before {how} compaction"),
        };
        let checkpoint = Effect::Checkpoint(CheckpointTrigger::PreCompact, description, None);
        effects.push(checkpoint);
    })?;
    Ok(())
}

pub fn post(ctx: &Ctx, _event: &Event, e: &PostCompact) -> anyhow::Result<()> {
    current::change(ctx, Need::Existing, |hook, _| {
        if !e.compact_summary.trim().is_empty() {
            hook.compact_summary = Some(truncate(&e.compact_summary, MAX_SUMMARY));
        }
    })?;
    Ok(())
}
