//! Checkpoints: recovery points with the git state and snapshots of the step's files.

use std::fs::File;
use std::io::{self, Read};

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use crate::context::Ctx;
use crate::git::GitState;
use crate::project::Project;
use crate::task::{CheckpointTrigger, FileSnapshot, Hook, StepCheckpoint};

/// Files larger than this are snapshotted by size and time only (hash `"too-large"`).
const MAX_HASHED_BYTES: u64 = 64 * 1024 * 1024;

/// Builds a checkpoint of the hook's current step: captures git and file snapshots (I/O)
/// and adds it with [`Hook::push_checkpoint`].
///
/// A git checkpoint that repeats a recent one (see [`already_checkpointed`]) is not
/// added again: that checkpoint's id is returned instead.
pub fn create(ctx: &Ctx, hook: &mut Hook, trigger: CheckpointTrigger, description: &str) -> String {
    let git = crate::git::state(&ctx.project.root);
    if let Some(earlier) = already_checkpointed(hook, trigger, &git) {
        return earlier.to_string();
    }
    let files = files_of(hook);
    let snapshots = if ctx.short_of_time() {
        Vec::new()
    } else {
        files.iter().map(|f| snapshot(&ctx.project, f)).collect()
    };
    let cp = build(hook, trigger, description, git, snapshots, ctx.now);
    let id = cp.checkpoint_id.clone();
    hook.push_checkpoint(cp, ctx.config.max_checkpoints);
    id
}

/// The id of an earlier checkpoint that a `git_commit` / `git_push` checkpoint would
/// repeat: one of the same trigger among the latest checkpoints made at the same HEAD.
///
/// One commit is reported twice when the agent commits through Bash with waymark's git
/// hooks installed: the post-commit hook runs inside `git commit` (`waymark checkpoint
/// --auto --trigger git_commit`), then the PostToolUse Bash handler sees the command. Both
/// record HEAD from `git status` (the full hash), so the second is the same recovery point.
/// Looking past the last checkpoint matters for `git commit && git push`: the hooks make
/// `git_commit` then `git_push` at the same HEAD before the handler makes either.
/// Other triggers always make a checkpoint.
pub fn already_checkpointed<'h>(
    hook: &'h Hook,
    trigger: CheckpointTrigger,
    git: &GitState,
) -> Option<&'h str> {
    let git_trigger = matches!(
        trigger,
        CheckpointTrigger::GitCommit | CheckpointTrigger::GitPush
    );
    if !git_trigger || git.commit.is_none() {
        return None;
    }
    hook.checkpoints
        .iter()
        .rev()
        .take_while(|c| c.git_commit == git.commit)
        .find(|c| c.trigger == trigger)
        .map(|c| c.checkpoint_id.as_str())
}

/// The files a checkpoint covers: the current step's, else the last step that touched any.
fn files_of(hook: &Hook) -> Vec<String> {
    match &hook.current_step {
        Some(c) if !c.files_touched.is_empty() => c.files_touched.clone(),
        _ => hook
            .steps
            .iter()
            .rev()
            .find(|s| !s.files_touched.is_empty())
            .map(|s| s.files_touched.clone())
            .unwrap_or_default(),
    }
}

/// The checkpoint record itself (pure).
pub fn build(
    hook: &Hook,
    trigger: CheckpointTrigger,
    description: &str,
    git: GitState,
    files_snapshot: Vec<FileSnapshot>,
    now: DateTime<Utc>,
) -> StepCheckpoint {
    // The step the checkpoint belongs to: the running one; for a step completion, the step
    // that just completed; else the one to do next.
    let just_completed = || {
        hook.completed_steps()
            .max_by_key(|s| s.completed_at)
            .map(|s| (s.name.clone(), s.index))
    };
    let (step_name, step_index) = match &hook.current_step {
        Some(c) => (c.step_name.clone(), c.step_index),
        None if trigger == CheckpointTrigger::StepComplete => just_completed().unwrap_or_default(),
        None => hook
            .next_step()
            .map(|s| (s.name.clone(), s.index))
            .unwrap_or_default(),
    };
    StepCheckpoint {
        checkpoint_id: new_id("ckpt"),
        created_at: now,
        step_name,
        step_index,
        description: description.to_string(),
        trigger,
        git_branch: git.branch,
        git_commit: git.commit,
        git_dirty: git.dirty,
        artifacts: Vec::new(),
        files_snapshot,
    }
}

impl Hook {
    /// Appends a checkpoint, prunes the oldest past `max`, and points the current step at it.
    pub fn push_checkpoint(&mut self, cp: StepCheckpoint, max: usize) {
        self.updated_at = self.updated_at.max(cp.created_at);
        if let Some(ctx) = self.current_step.as_mut() {
            ctx.current_checkpoint_id = Some(cp.checkpoint_id.clone());
        }
        self.checkpoints.push(cp);
        if self.checkpoints.len() > max {
            let excess = self.checkpoints.len() - max;
            self.checkpoints.drain(..excess);
        }
    }

    pub fn last_checkpoint(&self) -> Option<&StepCheckpoint> {
        self.checkpoints.last()
    }
}

/// `<prefix>-<8 hex>`, random.
pub fn new_id(prefix: &str) -> String {
    let mut b = [0u8; 4];
    if getrandom::fill(&mut b).is_err() {
        b = (std::process::id() ^ Utc::now().timestamp_subsec_nanos()).to_le_bytes();
    }
    format!("{prefix}-{:02x}{:02x}{:02x}{:02x}", b[0], b[1], b[2], b[3])
}

/// A file's state now. A missing file is a snapshot with `exists: false`.
pub fn snapshot(project: &Project, rel: &str) -> FileSnapshot {
    let path = project.absolute(rel);
    let missing = FileSnapshot {
        path: rel.to_string(),
        size: 0,
        mod_time: String::new(),
        sha256: String::new(),
        exists: false,
    };
    let Ok(meta) = std::fs::metadata(&path) else {
        return missing;
    };
    if !meta.is_file() {
        return missing;
    }
    let mod_time = meta
        .modified()
        .ok()
        .map(|t| crate::text::stamp(DateTime::<Utc>::from(t)))
        .unwrap_or_default();
    let sha256 = if meta.len() > MAX_HASHED_BYTES {
        "too-large".to_string()
    } else {
        hash_prefix(&path).unwrap_or_default()
    };
    FileSnapshot {
        path: rel.to_string(),
        size: meta.len(),
        mod_time,
        sha256,
        exists: true,
    }
}

fn hash_prefix(path: &std::path::Path) -> io::Result<String> {
    let mut f = File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(crate::text::hex(&h.finalize()[..8]))
}

/// Files whose state differs from the snapshot (changed, appeared or vanished).
pub fn changed_since(project: &Project, snapshots: &[FileSnapshot]) -> Vec<String> {
    snapshots
        .iter()
        .filter_map(|s| {
            let now = snapshot(project, &s.path);
            match (s.exists, now.exists) {
                (true, false) => Some(format!("`{}` (deleted)", s.path)),
                (false, true) => Some(format!("`{}` (created)", s.path)),
                (true, true) if now.sha256 != s.sha256 || now.size != s.size => Some(format!(
                    "`{}` (modified: {} → {} bytes)",
                    s.path, s.size, now.size
                )),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_and_changes() {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at(dir.path().to_path_buf());
        std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").unwrap();
        let s = snapshot(&p, "a.rs");
        assert!(s.exists);
        assert_eq!(s.size, 10);
        assert_eq!(s.sha256.len(), 16);
        assert!(!snapshot(&p, "nope.rs").exists);
        assert!(changed_since(&p, std::slice::from_ref(&s)).is_empty());
        std::fs::write(dir.path().join("a.rs"), "fn a() { b() }\n").unwrap();
        assert_eq!(changed_since(&p, &[s]).len(), 1);
    }

    #[test]
    fn a_git_checkpoint_at_an_already_checkpointed_head_is_a_repeat() {
        let now = Utc::now();
        let mut h = Hook::new("t", "w", 0, now);
        let at = |c: &str| GitState {
            branch: "main".into(),
            commit: Some(c.into()),
            dirty: false,
        };
        let (commit, push) = (CheckpointTrigger::GitCommit, CheckpointTrigger::GitPush);
        let cp = build(&h, commit, "c", at("aaa"), vec![], now);
        let id = cp.checkpoint_id.clone();
        h.push_checkpoint(cp, 10);
        assert_eq!(
            already_checkpointed(&h, commit, &at("aaa")),
            Some(id.as_str())
        );
        assert_eq!(already_checkpointed(&h, commit, &at("bbb")), None);
        assert_eq!(already_checkpointed(&h, push, &at("aaa")), None);
        assert_eq!(
            already_checkpointed(&h, CheckpointTrigger::Manual, &at("aaa")),
            None
        );
        assert_eq!(already_checkpointed(&h, commit, &GitState::default()), None);
        // `git commit && git push`: the hooks made both before the handler sees either.
        let cp = build(&h, push, "p", at("aaa"), vec![], now);
        let push_id = cp.checkpoint_id.clone();
        h.push_checkpoint(cp, 10);
        assert_eq!(
            already_checkpointed(&h, commit, &at("aaa")),
            Some(id.as_str())
        );
        assert_eq!(
            already_checkpointed(&h, push, &at("aaa")),
            Some(push_id.as_str())
        );
        // Once HEAD has moved on, an older checkpoint at that commit does not count.
        h.push_checkpoint(build(&h, commit, "c2", at("bbb"), vec![], now), 10);
        assert_eq!(already_checkpointed(&h, push, &at("aaa")), None);
    }

    #[test]
    fn pruned_fifo() {
        let now = Utc::now();
        let mut h = Hook::new("t", "w", 0, now);
        for i in 0..5 {
            let cp = build(
                &h,
                CheckpointTrigger::Manual,
                &format!("c{i}"),
                GitState::default(),
                vec![],
                now,
            );
            h.push_checkpoint(cp, 3);
        }
        let d: Vec<_> = h
            .checkpoints
            .iter()
            .map(|c| c.description.as_str())
            .collect();
        assert_eq!(d, ["c2", "c3", "c4"]);
        assert!(new_id("ckpt").starts_with("ckpt-") && new_id("ckpt").len() == 13);
    }
}
