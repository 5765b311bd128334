//! The trailers the prepare-commit-msg wrapper adds to a commit made during a task, with
//! `commit_trailers` on (docs/receipts.md, Commits carry their proof):
//!
//! - `Waymark-Task: <task id>`;
//! - `Waymark-Receipt: <receipt id>`: the newest passing, validly signed receipt of the
//!   task whose tree is the tree being committed (waymark's files aside), if any;
//! - `Waymark-Trace: <N> <link>`: the ledger's line count and its last line's link (the
//!   ledger as the commit holds it, when it is tracked), which
//!   `waymark trace --verify` later checks the ledger against (`trace::anchor`).

use std::path::Path;

use crate::receipt::{FileKeyManager, KeyManager};
use crate::runtime::context::Ctx;
use waymark_core::task::Hook;
use waymark_core::trace::anchor::Anchor;

pub const TASK: &str = "Waymark-Task";
pub const RECEIPT: &str = "Waymark-Receipt";
pub const TRACE: &str = "Waymark-Trace";

/// The trailers for a commit made now in `hook`'s task, as (key, value).
pub fn for_commit(ctx: &Ctx, hook: &Hook) -> Vec<(&'static str, String)> {
    let mut out = vec![(TASK, hook.task_id.clone())];
    if let Some(id) = receipt_of_index(ctx, hook) {
        out.push((RECEIPT, id));
    }
    let links = links(&ledger(ctx));
    if let Some(last) = links.last() {
        out.push((TRACE, Anchor::value(links.len() as u64, last)));
    }
    out
}

/// The ledger the commit anchors: as the commit will hold it (the index's) when it is
/// tracked, so that checking the commit out later gives a ledger that has the anchored
/// line; else the file as it is.
fn ledger(ctx: &Ctx) -> Vec<u8> {
    let spec = format!(
        ":./{}/{}",
        crate::store::project::STATE_DIR,
        crate::trace::TRACE_FILE
    );
    let staged = super::command(&ctx.project.root)
        .args(["show", &spec])
        .output()
        .ok()
        .filter(|o| o.status.success());
    match staged {
        Some(out) => out.stdout,
        None => std::fs::read(crate::trace::trace_path(&ctx.project)).unwrap_or_default(),
    }
}

/// Each line's link, in order (empty lines skipped, as the chain does).
pub fn links(ledger: &[u8]) -> Vec<String> {
    ledger
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(waymark_core::trace::link)
        .collect()
}

/// The newest passing receipt of the task, signed validly, whose tree is the index's.
fn receipt_of_index(ctx: &Ctx, hook: &Hook) -> Option<String> {
    let receipts = crate::task::store::receipts(&ctx.project, hook).ok()?;
    if !receipts
        .iter()
        .any(|r| r.exit_code == 0 && !r.tree.is_empty())
    {
        return None;
    }
    let tree = super::project_tree::of_index(&ctx.project.root, &ctx.config.agent_md)?;
    let mut km = FileKeyManager::from_config(&ctx.config);
    km.load_existing().ok()?;
    let signer = km.new_signer().ok()?;
    receipts
        .iter()
        .rev()
        .find(|r| r.exit_code == 0 && r.tree == tree && signer.verify(r).is_ok())
        .map(|r| r.receipt_id.clone())
}

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
