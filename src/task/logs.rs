//! Where a task's files are (`tasks/<id>/`) and its logs read back: below both the store,
//! which writes them, and the captures, which live in the task's folder too.

use std::io;
use std::path::PathBuf;

use super::model::StepCheckpoint;
use crate::store;
use crate::store::project::Project;
pub use waymark_core::task::sanitize;

/// The task's logs, in its folder `tasks/<id>/`: appended to, never rewritten.
pub const HISTORY_LOG: &str = "history.jsonl";
pub const CHECKPOINTS_LOG: &str = "checkpoints.jsonl";
pub const RECEIPTS_LOG: &str = "receipts.jsonl";
/// The plan at the start of each turn, what a rewound conversation puts it back to.
pub const TURNS_LOG: &str = "turns.jsonl";
pub const TASKS_DIR: &str = "tasks";

pub fn task_dir(project: &Project, task_id: &str) -> PathBuf {
    project.state_dir().join(TASKS_DIR).join(sanitize(task_id))
}

/// The task's checkpoints: the newest `max` (`max_checkpoints`) of its log.
pub fn checkpoints(
    project: &Project,
    task_id: &str,
    max: usize,
) -> io::Result<Vec<StepCheckpoint>> {
    read_log(project, task_id, CHECKPOINTS_LOG, Some(max))
}

/// The newest `newest` entries of a task's log (all when `None`), oldest first; lines
/// that do not parse (a torn last line, a hand edit) are skipped.
pub fn read_log<T: serde::de::DeserializeOwned>(
    project: &Project,
    task_id: &str,
    name: &str,
    newest: Option<usize>,
) -> io::Result<Vec<T>> {
    let path = task_dir(project, task_id).join(name);
    let lines = match newest {
        Some(n) => store::read_tail_lines(&path, n, (n as u64 + 1) * 64 * 1024)?.lines,
        None => {
            let bytes = store::found(store::read(&path, &[]))?.unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes);
            text.lines().map(str::to_string).collect()
        }
    };
    let entries = lines.iter().filter_map(|l| serde_json::from_str(l).ok());
    Ok(entries.collect())
}
