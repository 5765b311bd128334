//! The work tree's state for a checkpoint: branch, HEAD, dirtiness, and how much changed.

use std::path::Path;

use super::run;

/// A pathspec that leaves out waymark's state directory.
const EXCLUDE_STATE: &str = ":(exclude).orchestration";

/// Version-control state recorded on a checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitState {
    pub branch: String,
    pub commit: Option<String>,
    pub dirty: bool,
}

/// Branch, HEAD and dirtiness; empty when `root` is not in a git work tree.
pub fn state(root: &Path) -> GitState {
    // waymark's own files do not make the work tree dirty.
    let Some(status) = run(
        root,
        &[
            "status",
            "--porcelain=v2",
            "--branch",
            "--untracked-files=normal",
            "--",
            ".",
            EXCLUDE_STATE,
        ],
    ) else {
        return GitState::default();
    };
    let mut st = GitState::default();
    for line in status.lines() {
        if let Some(oid) = line.strip_prefix("# branch.oid ") {
            st.commit = (oid != "(initial)").then(|| oid.to_string());
        } else if let Some(head) = line.strip_prefix("# branch.head ") {
            st.branch = head.to_string();
        } else if !line.starts_with('#') && !line.is_empty() {
            st.dirty = true;
        }
    }
    st
}

/// Lines added and deleted in the work tree against `since` (a commit), and files changed.
pub fn diff_stat(root: &Path, since: Option<&str>) -> Option<(usize, u64, u64)> {
    let base = since.unwrap_or("HEAD");
    let out = run(root, &["diff", "--numstat", base, "--", ".", EXCLUDE_STATE])?;
    let mut files = 0;
    let (mut add, mut del) = (0u64, 0u64);
    for line in out.lines() {
        let mut parts = line.split('\t');
        let a = parts
            .next()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0);
        let d = parts
            .next()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0);
        files += 1;
        add += a;
        del += d;
    }
    let untracked = run(
        root,
        &[
            "ls-files",
            "--others",
            "--exclude-standard",
            "--",
            ".",
            EXCLUDE_STATE,
        ],
    )
    .map(|o| o.lines().count())
    .unwrap_or(0);
    Some((files + untracked, add, del))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn state_of_a_real_repo() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        git(d, &["config", "user.email", "t@example.com"]);
        git(d, &["config", "user.name", "t"]);
        let st = state(d);
        assert_eq!(st.branch, "main");
        assert_eq!(st.commit, None);
        std::fs::write(d.join("a.txt"), "a\n").unwrap();
        git(d, &["add", "a.txt"]);
        git(d, &["commit", "-qm", "one"]);
        let st = state(d);
        assert_eq!(st.commit.as_ref().map(String::len), Some(40));
        assert!(!st.dirty);
        // waymark's own state does not count.
        std::fs::create_dir_all(d.join(".orchestration")).unwrap();
        std::fs::write(d.join(".orchestration/hook.json"), "{}").unwrap();
        assert!(!state(d).dirty);
        assert_eq!(diff_stat(d, None), Some((0, 0, 0)));
        std::fs::write(d.join("a.txt"), "a\nb\n").unwrap();
        assert!(state(d).dirty);
        assert_eq!(diff_stat(d, None), Some((1, 1, 0)));
    }

    #[test]
    fn not_a_repo_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(state(dir.path()), GitState::default());
    }
}
