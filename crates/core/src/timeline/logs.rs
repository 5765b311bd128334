//! The task's checkpoints and receipts as events.

use serde_json::Value;

use super::{Event, Sources, event, kind};
use crate::task::CheckpointTrigger;

/// Every checkpoint, with its trigger; one made before a compaction is a `compaction`.
pub(super) fn checkpoints<'a>(src: &'a Sources<'a>) -> impl Iterator<Item = Event> + 'a {
    src.checkpoints.iter().map(move |c| {
        let kind = match c.trigger {
            CheckpointTrigger::PreCompact => kind::COMPACTION,
            _ => kind::CHECKPOINT,
        };
        let what = format!("checkpoint ({}): {}", c.trigger.as_str(), c.description);
        let details = [
            ("checkpoint_id", Value::from(&*c.checkpoint_id)),
            ("trigger", Value::from(c.trigger.as_str())),
            ("description", Value::from(&*c.description)),
            ("git_branch", Value::from(&*c.git_branch)),
            (
                "git_commit",
                c.git_commit.as_deref().map_or(Value::Null, Value::from),
            ),
        ];
        event(src, c.created_at, kind, what, Some(&c.step_name), details)
    })
}

/// Every receipt, at the time its command finished: passed (exit 0) or failed.
pub(super) fn receipts<'a>(src: &'a Sources<'a>) -> impl Iterator<Item = Event> + 'a {
    src.receipts.iter().map(move |r| {
        let passed = r.exit_code == 0;
        let what = format!(
            "receipt: {} {} (exit {})",
            r.command,
            if passed { "passed" } else { "failed" },
            r.exit_code
        );
        let details = [
            ("receipt_id", Value::from(&*r.receipt_id)),
            ("command", Value::from(&*r.command)),
            ("exit_code", Value::from(r.exit_code)),
            ("passed", Value::from(passed)),
            ("duration", Value::from(&*r.duration)),
            ("observed", Value::from(r.observed)),
        ];
        let step = Some(r.step_name.as_str());
        event(src, r.completed_at, kind::RECEIPT, what, step, details)
    })
}
