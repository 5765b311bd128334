//! The tree of the project's files, waymark's own left out (the state directory and the
//! lessons file, as in every diff): what a receipt records as the code its command ran on,
//! and what `waymark verify --range` computes of each commit to match against it. Leaving
//! waymark's files out is what lets a commit that also adds the receipt (or the trace) have
//! the tree its validation ran on.
//!
//! Both are built in a temporary index of their own beside the repository's (never the
//! repository's index, nor the checkpoints' `capture.index`), removed when done
//! ([`super::temp_index`], as snapshots are).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::temp_index::TempIndex;

/// The project's files as they are now (tracked and untracked, ignored ones left out, as
/// `git add -A` takes them), as a tree id. `None` outside git or when git fails.
pub fn of_work_tree(root: &Path, lessons: &str) -> Option<String> {
    let (index, git_dir) = temp_index(root, "work")?;
    let _ = index.seed(&git_dir.join("index"));
    let added = index
        .git(root, &["add", "-A", "--ignore-errors", "--"])
        .args(super::project_files(lessons))
        .stdout(Stdio::null())
        .status()
        .ok()?;
    // `--ignore-errors` exits 1 after skipping an unreadable file; the tree is written all
    // the same. Any other failure (not a repository) has no tree.
    if !added.success() && added.code() != Some(1) {
        return None;
    }
    without_waymark(&index, root, lessons)
}

/// The tree of `commit` with waymark's files left out. `None` when it is no commit.
pub fn of_commit(root: &Path, commit: &str, lessons: &str) -> Option<String> {
    let (index, _) = temp_index(root, "commit")?;
    let read = index
        .git(root, &["read-tree", commit])
        .stdout(Stdio::null())
        .status()
        .ok()?;
    if !read.success() {
        return None;
    }
    without_waymark(&index, root, lessons)
}

/// The tree the commit being made will have, waymark's files left out: the index git
/// commits (`GIT_INDEX_FILE` when git set it for the hook, as `commit -a` does), copied.
pub fn of_index(root: &Path, lessons: &str) -> Option<String> {
    let (index, git_dir) = temp_index(root, "index")?;
    let source =
        std::env::var_os("GIT_INDEX_FILE").map_or_else(|| git_dir.join("index"), PathBuf::from);
    index.seed(&source).ok()?;
    without_waymark(&index, root, lessons)
}

/// An empty temporary index in the git directory (one per process and purpose), and the
/// git directory.
fn temp_index(root: &Path, what: &str) -> Option<(TempIndex, PathBuf)> {
    let git_dir = super::head::find_git_dir(root)?;
    let path = git_dir.join(format!("waymark-{what}-tree.{}.index", std::process::id()));
    Some((TempIndex::new(path), git_dir))
}

/// Takes waymark's files out of `index` and writes its tree.
fn without_waymark(index: &TempIndex, root: &Path, lessons: &str) -> Option<String> {
    let state = crate::store::project::STATE_DIR;
    let removed = index
        .git(
            root,
            &["rm", "--cached", "-r", "-q", "--ignore-unmatch", "--"],
        )
        .args([state, lessons])
        .stdout(Stdio::null())
        .status()
        .ok()?;
    if !removed.success() {
        return None;
    }
    index.write_tree(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::test_git as git;

    /// The work tree's tree is the commit's once committed, whatever waymark's files hold;
    /// an edit (or a new file) makes another tree.
    #[test]
    fn the_work_tree_matches_its_commit_with_waymarks_files_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q"]);
        std::fs::write(d.join("a.txt"), "one\n").unwrap();
        std::fs::create_dir(d.join(".orchestration")).unwrap();
        std::fs::write(d.join(".orchestration/agent_trace.jsonl"), "x\n").unwrap();
        let before = of_work_tree(d, "AGENT.md").unwrap();
        git(d, &["add", "-A"]);
        git(
            d,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "c",
            ],
        );
        std::fs::write(d.join(".orchestration/agent_trace.jsonl"), "x\ny\n").unwrap();
        std::fs::write(d.join("AGENT.md"), "lesson\n").unwrap();
        assert_eq!(of_commit(d, "HEAD", "AGENT.md").unwrap(), before);
        assert_eq!(of_work_tree(d, "AGENT.md").unwrap(), before);
        std::fs::write(d.join("b.txt"), "new\n").unwrap();
        assert_ne!(of_work_tree(d, "AGENT.md").unwrap(), before);
        assert_eq!(of_commit(d, "nope", "AGENT.md"), None);
        let left: Vec<_> = std::fs::read_dir(d.join(".git"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("waymark-"))
            .collect();
        assert!(left.is_empty());
    }
}
