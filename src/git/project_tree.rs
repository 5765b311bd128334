//! The tree of the project's files, waymark's own left out: what a receipt records as the
//! code its command ran on, and what `waymark verify --range` computes of each commit to
//! match against it. Leaving waymark's files out is what lets a commit that also adds the
//! receipt (or the trace) have the tree its validation ran on.
//!
//! What the proof leaves out is fixed, not configured: waymark's state directory
//! (`.orchestration/`), and the lessons file only where it cannot be code, a Markdown file
//! at the root (`AGENT.md`, the default). A repository names its lessons file in its own
//! `waymark.json`: were that name left out whatever it is (`src/lib.rs`), an edit of it
//! after the validation would come out proven (docs/receipts.md).
//!
//! The work tree's and the index's trees are built in a temporary index of their own
//! beside the repository's ([`super::temp_index`], as snapshots are); waymark's entries
//! are then taken out of the root tree itself (`ls-tree`, `mktree`), with no index: a
//! commit's tree is read from the commit, whatever git's index would refuse.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::temp_index::TempIndex;

/// The root entries the proof leaves out: the state directory, and `lessons` when it is a
/// Markdown file at the root.
pub fn left_out(lessons: &str) -> Vec<&str> {
    let md = lessons.len() > 3 && lessons.to_ascii_lowercase().ends_with(".md");
    let at_root = !lessons.contains('/') && !lessons.starts_with('.');
    let mut out = vec![crate::store::project::STATE_DIR];
    if md && at_root {
        out.push(lessons);
    }
    out
}

/// The project's files as they are now (tracked and untracked, ignored ones left out, as
/// `git add -A` takes them), as a tree id. `None` outside git or when git fails.
pub fn of_work_tree(root: &Path, lessons: &str) -> Option<String> {
    let (index, git_dir) = temp_index(root, "work")?;
    let _ = index.seed(&git_dir.join("index"));
    let excluded = left_out(lessons)
        .into_iter()
        .map(|e| format!(":(exclude){e}"));
    let added = index
        .git(root, &["add", "-A", "--ignore-errors", "--", "."])
        .args(excluded)
        .stdout(Stdio::null())
        .status()
        .ok()?;
    // `--ignore-errors` exits 1 after skipping an unreadable file; the tree is written all
    // the same. Any other failure (not a repository) has no tree.
    if !added.success() && added.code() != Some(1) {
        return None;
    }
    without_waymark(root, &index.write_tree(root)?, lessons)
}

/// The tree of `commit` with waymark's files left out, read from the commit itself. `None`
/// when it is no commit.
pub fn of_commit(root: &Path, commit: &str, lessons: &str) -> Option<String> {
    let spec = format!("{commit}^{{tree}}");
    let tree = super::run(root, ["rev-parse", "--verify", "-q", &spec])?;
    without_waymark(root, &tree, lessons)
}

/// The tree the commit being made will have, waymark's files left out: the index git
/// commits (`GIT_INDEX_FILE` when git set it for the hook, as `commit -a` does), copied.
pub fn of_index(root: &Path, lessons: &str) -> Option<String> {
    let (index, git_dir) = temp_index(root, "index")?;
    let source =
        std::env::var_os("GIT_INDEX_FILE").map_or_else(|| git_dir.join("index"), PathBuf::from);
    index.seed(&source).ok()?;
    without_waymark(root, &index.write_tree(root)?, lessons)
}

/// An empty temporary index in the git directory (one per process and purpose), and the
/// git directory.
fn temp_index(root: &Path, what: &str) -> Option<(TempIndex, PathBuf)> {
    let git_dir = super::head::find_git_dir(root)?;
    let path = git_dir.join(format!("waymark-{what}-tree.{}.index", std::process::id()));
    Some((TempIndex::new(path), git_dir))
}

/// `tree` with the root entries the proof leaves out ([`left_out`]) taken out: its root
/// listing less those names, made a tree again. The same tree when it has none of them.
fn without_waymark(root: &Path, tree: &str, lessons: &str) -> Option<String> {
    let listing = super::run(root, ["ls-tree", "-z", tree])?;
    let out = left_out(lessons);
    let entries: Vec<&str> = listing.split('\0').filter(|e| !e.is_empty()).collect();
    let kept: Vec<&str> = entries
        .iter()
        .copied()
        .filter(|e| e.split_once('\t').is_some_and(|(_, n)| !out.contains(&n)))
        .collect();
    if kept.len() == entries.len() {
        return Some(tree.to_string());
    }
    let body: String = kept.iter().map(|e| format!("{e}\0")).collect();
    super::with_input(root, &["mktree", "-z"], body.into_bytes()).map(|t| t.trim().to_string())
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
