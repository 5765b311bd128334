//! Reads what a task's timeline is drawn from (`waymark_core::timeline`): its sessions
//! (hook.json), its three logs, and the ledger's records; the current task, or every task
//! (each finished one from its archive under `tasks/<task>/`).

use std::io;

use super::store::{self, CHECKPOINTS_LOG, HISTORY_LOG};
use crate::runtime::context::Ctx;
use waymark_core::task::Hook;
use waymark_core::timeline::{self, Event, Sources};
use waymark_core::trace::Record;

/// The ledger's waymark records, read whole; lines of another dialect or torn are skipped.
pub fn trace_records(ctx: &Ctx) -> io::Result<Vec<Record>> {
    let path = crate::trace::trace_path(&ctx.project);
    let Some(bytes) = crate::store::found(std::fs::read(&path))? else {
        return Ok(Vec::new());
    };
    let text = String::from_utf8_lossy(&bytes);
    let records = text.lines().filter_map(|l| serde_json::from_str(l).ok());
    Ok(records.collect())
}

/// One task's events, oldest first.
pub fn of_task(ctx: &Ctx, hook: &Hook, trace: &[Record]) -> io::Result<Vec<Event>> {
    let project = &ctx.project;
    let history = store::read_log(project, &hook.task_id, HISTORY_LOG, None)?;
    let checkpoints = store::read_log(project, &hook.task_id, CHECKPOINTS_LOG, None)?;
    let receipts = store::receipts(project, hook)?;
    Ok(timeline::build(&Sources {
        task_id: &hook.task_id,
        sessions: &hook.sessions,
        history: &history,
        checkpoints: &checkpoints,
        receipts: &receipts,
        trace,
        side_effect_commands: &ctx.config.side_effect_commands,
    }))
}

/// The current task and, with `all`, every finished task in its archive (the current one
/// counted once), oldest first. Tasks whose archive cannot be read are named in the error
/// list and left out.
pub fn tasks(ctx: &Ctx, current: Option<Hook>, all: bool) -> io::Result<(Vec<Hook>, Vec<String>)> {
    if !all {
        return Ok((current.into_iter().collect(), Vec::new()));
    }
    let (mut hooks, unreadable) = store::every_task(&ctx.project, current)?;
    hooks.sort_by_key(|h| h.created_at);
    Ok((hooks, unreadable))
}
