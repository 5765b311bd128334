//! hook.json of schemas 1 and 2, read as schema 3 (docs/state.md, "Migrations"). Pure: the
//! store reads the file and writes what comes out at the next save; nothing is lost.
//!
//! - Schema 2 kept the plan inline (`steps`), with bookkeeping of its own writer (`outline`,
//!   `plan_sum`, `listed`, `redacted_by`: dropped, they are derived or were speed-ups), and
//!   `unsynced_receipts`, receipts hook.json held until their log was known to be on disk:
//!   given back to the log when it lacks them.
//! - Schema 1 also kept one `session`, and the history, checkpoints (with their file
//!   snapshots inline) and receipts inline: they go to the task's logs, the snapshots to
//!   capture records.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::model::{
    FileSnapshot, Hook, HookEvent, Journal, RECENT_CHECKPOINTS, RECENT_RECEIPTS, ReceiptSummary,
    SCHEMA_VERSION, Session, Step, StepCheckpoint,
};
use crate::receipt::ValidationReceipt;

/// A task of an older schema, as schema 3 holds it, and what its file held that belongs
/// elsewhere now.
#[derive(Debug, Clone, PartialEq)]
pub struct Migrated {
    /// The task; its journal holds the schema-1 logs, and its plan is to be written.
    pub hook: Hook,
    /// Schema 1's inline file snapshots, one per checkpoint that had any: capture records.
    pub captures: Vec<InlineCapture>,
    /// Schema 2's receipts not known to be in their log yet.
    pub unsynced_receipts: Vec<ValidationReceipt>,
}

/// A checkpoint's capture as schema 1 kept it inline.
#[derive(Debug, Clone, PartialEq)]
pub struct InlineCapture {
    pub checkpoint: StepCheckpoint,
    pub git_dirty: Option<bool>,
    pub files: Vec<FileSnapshot>,
}

/// The schema-3 task an older file (an object with `schema_version` 1.x or 2.x) holds.
pub fn from_older(mut file: Value) -> Result<Migrated, serde_json::Error> {
    let Some(object) = file.as_object_mut() else {
        return Err(serde::de::Error::custom("not an object"));
    };
    let steps: Vec<Step> = take(object, "steps")?;
    let session: Option<Session> = take(object, "session")?;
    let history: Vec<HookEvent> = take(object, "history")?;
    let archived: u64 = take(object, "history_archived")?;
    let checkpoints: Vec<Value> = take(object, "checkpoints")?;
    let receipts: Vec<ValidationReceipt> = take(object, "receipts")?;
    let unsynced_receipts: Vec<ValidationReceipt> = take(object, "unsynced_receipts")?;
    for derived in ["outline", "plan_sum", "listed", "redacted_by"] {
        object.remove(derived);
    }
    let mut hook: Hook = serde_json::from_value(file)?;
    hook.steps = steps;
    if let Some(s) = session.filter(|s| hook.sessions.iter().all(|k| k.session_id != s.session_id))
    {
        hook.sessions.push(s);
    }
    let captures = inline_logs(&mut hook, history, archived, &checkpoints, receipts)?;
    hook.version = SCHEMA_VERSION.into();
    hook.schema_version = SCHEMA_VERSION.into();
    hook.plan_version = 0;
    Ok(Migrated {
        hook,
        captures,
        unsynced_receipts,
    })
}

/// Schema 1's inline history, checkpoints and receipts: counted, the newest kept in the
/// task, all of them in its journal (for its logs); the checkpoints' inline snapshots.
fn inline_logs(
    hook: &mut Hook,
    history: Vec<HookEvent>,
    archived: u64,
    checkpoints: &[Value],
    receipts: Vec<ValidationReceipt>,
) -> Result<Vec<InlineCapture>, serde_json::Error> {
    if history.is_empty() && checkpoints.is_empty() && receipts.is_empty() {
        return Ok(Vec::new());
    }
    let mut captures = Vec::new();
    let mut parsed = Vec::new();
    for c in checkpoints {
        let checkpoint: StepCheckpoint = serde_json::from_value(c.clone())?;
        let git_dirty = c.get("git_dirty").and_then(Value::as_bool);
        let files: Vec<FileSnapshot> = match c.get("files_snapshot") {
            Some(f) => serde_json::from_value(f.clone())?,
            None => Vec::new(),
        };
        if git_dirty.is_some() || !files.is_empty() {
            captures.push(InlineCapture {
                checkpoint: checkpoint.clone(),
                git_dirty,
                files,
            });
        }
        parsed.push(checkpoint);
    }
    hook.history_count = archived + history.len() as u64;
    hook.checkpoint_count = parsed.len() as u64;
    hook.receipt_count = receipts.len() as u64;
    hook.recent_checkpoints = newest(&parsed, RECENT_CHECKPOINTS).to_vec();
    hook.recent_receipts = newest(&receipts, RECENT_RECEIPTS)
        .iter()
        .map(ReceiptSummary::of)
        .collect();
    hook.journal = Journal {
        history,
        checkpoints: parsed,
        receipts,
        turns: Vec::new(),
    };
    Ok(captures)
}

/// The last `n` of `items`.
fn newest<T>(items: &[T], n: usize) -> &[T] {
    &items[items.len().saturating_sub(n)..]
}

/// Member `key` of `object`, taken out, its default when absent.
fn take<T: DeserializeOwned + Default>(
    object: &mut Map<String, Value>,
    key: &str,
) -> Result<T, serde_json::Error> {
    match object.remove(key) {
        Some(Value::Null) | None => Ok(T::default()),
        Some(v) => serde_json::from_value(v),
    }
}
