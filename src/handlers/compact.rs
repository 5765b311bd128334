//! PreCompact and PostCompact: checkpoint before the context is summarized, keep the summary.

use crate::claude::event::{Event, PostCompact, PreCompact};
use crate::context::Ctx;
use crate::redact::redact;
use crate::task::{CheckpointTrigger, Effect};
use crate::text::truncate;

use super::{Need, with_task};

/// The compaction summary is kept to this many characters.
const MAX_SUMMARY: usize = 2000;

/// A `pre_compact` checkpoint (manual and auto); never blocks compaction.
pub fn pre(ctx: &Ctx, event: &Event, e: &PreCompact) -> anyhow::Result<()> {
    with_task(ctx, event, Need::Existing, None, |_| {
        let how = if e.trigger.is_empty() {
            "compaction".to_string()
        } else {
            format!("{} compaction", e.trigger)
        };
        Ok(vec![Effect::Checkpoint(
            CheckpointTrigger::PreCompact,
            format!("Before {how}"),
        )])
    })?;
    Ok(())
}

pub fn post(ctx: &Ctx, event: &Event, e: &PostCompact) -> anyhow::Result<()> {
    with_task(ctx, event, Need::Existing, None, |hook| {
        if !e.compact_summary.trim().is_empty() {
            hook.compact_summary = Some(truncate(&redact(&e.compact_summary), MAX_SUMMARY));
        }
        Ok(Vec::new())
    })?;
    Ok(())
}
