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

#[cfg(test)]
mod tests {
    use super::*;

    /// A schema-1 file: one session, history (5 more archived), two checkpoints (one with
    /// an inline snapshot), one receipt; `take` reads `null` as absent.
    fn schema_1() -> Value {
        serde_json::json!({
            "version": "1.0", "schema_version": "1.0", "task_id": "old", "workspace_id": "w",
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:10:00Z",
            "state": "step_running", "task_index": 0,
            "steps": [{"id": "1", "name": "Fix", "index": 0, "status": "in_progress",
                "source": "task", "attempt": 1}],
            "history": [
                {"timestamp": "2026-01-01T00:00:00Z", "from_state": "", "to_state": "initializing", "trigger": "task_start"},
                {"timestamp": "2026-01-01T00:00:01Z", "from_state": "initializing", "to_state": "step_pending", "trigger": "setup_complete"}],
            "history_archived": 5,
            "checkpoints": [
                {"checkpoint_id": "ckpt-0", "created_at": "2026-01-01T00:03:00Z", "step_name": "Fix",
                    "step_index": 0, "description": "bare", "trigger": "manual", "git_branch": ""},
                {"checkpoint_id": "ckpt-1", "created_at": "2026-01-01T00:04:00Z", "step_name": "Fix",
                    "step_index": 0, "description": "by hand", "trigger": "manual", "git_branch": "",
                    "git_dirty": false},
                {"checkpoint_id": "ckpt-2", "created_at": "2026-01-01T00:05:00Z", "step_name": "Fix",
                    "step_index": 0, "description": "Commit abc", "trigger": "git_commit",
                    "git_branch": "main", "git_dirty": true,
                    "files_snapshot": [{"path": "src/a.rs", "size": 3, "mod_time": "2026-01-01T00:05:00Z",
                        "sha256": "0011223344556677", "exists": true}]}],
            "receipts": [{"receipt_id": "rcpt-1", "step_name": "Fix", "command": "cargo test",
                "exit_code": 0, "started_at": "2026-01-01T00:06:00Z", "completed_at": "2026-01-01T00:06:01Z",
                "duration": "1s", "stdout_hash": "aa", "stderr_hash": "bb", "key_path": "m/0",
                "signature": "", "sig_version": 2}],
            "unsynced_receipts": null,
            "session": {"session_id": "s-old", "started_at": "2026-01-01T00:00:00Z",
                "last_event_at": "2026-01-01T00:10:00Z", "status": "idle"}
        })
    }

    #[test]
    fn a_schema_1_task_keeps_everything_counted_kept_and_journaled() {
        let m = from_older(schema_1()).unwrap();
        let h = &m.hook;
        assert_eq!(h.schema_version, SCHEMA_VERSION);
        assert_eq!(h.steps[0].name, "Fix");
        assert_eq!(h.sessions.len(), 1);
        assert_eq!(h.sessions[0].session_id, "s-old");
        let counts = (h.history_count, h.checkpoint_count, h.receipt_count);
        assert_eq!(counts, (7, 3, 1));
        let kept: Vec<&str> = h
            .recent_checkpoints
            .iter()
            .map(|c| c.checkpoint_id.as_str())
            .collect();
        assert_eq!(kept, ["ckpt-0", "ckpt-1", "ckpt-2"]);
        assert_eq!(h.recent_receipts[0].receipt_id, "rcpt-1");
        let journal = (
            h.journal.history.len(),
            h.journal.checkpoints.len(),
            h.journal.receipts.len(),
        );
        assert_eq!(journal, (2, 3, 1));
        // A capture for each checkpoint that recorded anything of the tree: its
        // dirtiness, its files, or both.
        let captures: Vec<(&str, Option<bool>, usize)> = m
            .captures
            .iter()
            .map(|c| {
                (
                    c.checkpoint.checkpoint_id.as_str(),
                    c.git_dirty,
                    c.files.len(),
                )
            })
            .collect();
        assert_eq!(
            captures,
            [("ckpt-1", Some(false), 0), ("ckpt-2", Some(true), 1)]
        );
        assert!(m.unsynced_receipts.is_empty());
    }

    /// The old single session joins the sessions unless it is already among them; a file
    /// with no inline logs migrates with none.
    #[test]
    fn the_old_session_is_not_doubled_and_no_logs_make_none() {
        let mut v = schema_1();
        v["sessions"] = serde_json::json!([v["session"].clone()]);
        for key in ["history", "checkpoints", "receipts"] {
            v[key] = serde_json::json!([]);
        }
        let m = from_older(v).unwrap();
        assert_eq!(m.hook.sessions.len(), 1);
        assert_eq!(m.hook.history_count, 0);
        assert!(m.hook.journal.history.is_empty() && m.captures.is_empty());
        assert!(from_older(serde_json::json!([1])).is_err());
        // History alone is migrated all the same.
        let mut v = schema_1();
        v["checkpoints"] = serde_json::json!([]);
        v["receipts"] = serde_json::json!([]);
        let m = from_older(v).unwrap();
        assert_eq!((m.hook.history_count, m.hook.journal.history.len()), (7, 2));
    }

    #[test]
    fn newest_keeps_the_last_n() {
        assert_eq!(newest(&[1, 2, 3], 2), [2, 3]);
        assert_eq!(newest(&[1], 5), [1]);
    }
}
