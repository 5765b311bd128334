//! The trailers the prepare-commit-msg wrapper adds to a commit made during a task, with
//! `commit_trailers` on (docs/receipts.md, Commits carry their proof):
//!
//! - `Waymark-Task: <task id>`;
//! - `Waymark-Receipt: <receipt id>`: the newest passing, validly signed receipt of the
//!   task whose tree is the tree being committed (waymark's files aside), if any;
//! - `Waymark-Trace: <N> <link>`: the ledger's line count and its last line's link (the
//!   ledger as the commit holds it, when it is tracked), which
//!   `waymark trace --verify` later checks the ledger against (`trace::anchor`).
//!
//! This module holds their names and writes them into the message; what they say is made
//! by `cmd::git_hooks` (it reads the task, the receipts and the ledger).

use std::path::Path;

pub const TASK: &str = "Waymark-Task";
pub const RECEIPT: &str = "Waymark-Receipt";
pub const TRACE: &str = "Waymark-Trace";

/// Adds `trailers` to the message file, replacing waymark's own of an earlier run (an
/// amended commit). Comment lines and the rest of the message are git's to keep.
pub fn add(root: &Path, file: &Path, trailers: &[(&str, String)]) -> bool {
    let mut git = super::command(root);
    git.args(["interpret-trailers", "--in-place", "--if-exists", "replace"]);
    for (key, value) in trailers {
        git.arg("--trailer").arg(format!("{key}: {value}"));
    }
    git.arg(file).status().is_ok_and(|s| s.success())
}
