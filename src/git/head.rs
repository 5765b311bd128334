//! The commit HEAD points at, read from the repository's files.
//!
//! Every trace record carries `vcs.revision`. Spawning `git rev-parse HEAD` costs a
//! process start (several milliseconds) on every PostToolUse, over the whole hook budget,
//! so the revision is read the way git itself resolves it: `.git/HEAD`, then the loose
//! ref, then `packed-refs`. A linked worktree's `.git` is a file (`gitdir: …`) whose
//! directory holds HEAD while refs live in the common dir named by `commondir`.

use std::fs;
use std::path::{Path, PathBuf};

/// The full commit id HEAD resolves to, for the repository holding `root` (the root or
/// one of its ancestors). `None` outside git, on an unborn branch, or when the files do
/// not say (a ref format this reader does not know, such as reftable).
pub fn head_revision(root: &Path) -> Option<String> {
    head(root).and_then(|h| h.commit)
}

pub use waymark_core::task::checkpoint::Head;

/// HEAD of the repository holding `root`; `None` outside git.
pub fn head(root: &Path) -> Option<Head> {
    let git_dir = find_git_dir(root)?;
    let common = common_dir(&git_dir);
    let text = fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let mut target = text.trim().to_string();
    let branch = match target.strip_prefix("ref:") {
        Some(name) => {
            let name = name.trim();
            name.strip_prefix("refs/heads/").unwrap_or(name).to_string()
        }
        None => "(detached)".to_string(),
    };
    // A symbolic ref may point at another symbolic ref; git allows a few levels.
    let mut commit = None;
    for _ in 0..5 {
        let Some(name) = target.strip_prefix("ref:").map(|r| r.trim().to_string()) else {
            commit = is_object_id(&target).then_some(target);
            break;
        };
        let Some(t) = read_ref(&git_dir, &common, &name) else {
            break;
        };
        target = t;
    }
    Some(Head { branch, commit })
}

/// `<dir>/.git` for the nearest ancestor that has one; follows a `gitdir:` file.
pub(crate) fn find_git_dir(root: &Path) -> Option<PathBuf> {
    for dir in root.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = fs::metadata(&dot_git) else {
            continue;
        };
        if meta.is_dir() {
            return Some(dot_git);
        }
        let text = fs::read_to_string(&dot_git).ok()?;
        let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
        // An absolute target replaces `dir` in the join.
        return Some(dir.join(target));
    }
    None
}

/// Where shared refs live: the `commondir` of a linked worktree, else the git dir itself.
pub(crate) fn common_dir(git_dir: &Path) -> PathBuf {
    // An absolute `commondir` replaces `git_dir` in the join.
    match fs::read_to_string(git_dir.join("commondir")) {
        Ok(text) => git_dir.join(text.trim()),
        Err(_) => git_dir.to_path_buf(),
    }
}

/// The value of ref `name` (`refs/heads/main`): a loose ref file in the worktree's own
/// git dir or the common dir, else its line in `packed-refs`.
fn read_ref(git_dir: &Path, common: &Path, name: &str) -> Option<String> {
    if name.contains("..") {
        return None;
    }
    for dir in [git_dir, common] {
        if let Ok(text) = fs::read_to_string(dir.join(name)) {
            let v = text.trim();
            if !v.is_empty() {
                return Some(v.to_string());
            }
        }
    }
    let packed = fs::read_to_string(common.join("packed-refs")).ok()?;
    packed.lines().find_map(|line| {
        let (oid, r) = line.split_once(' ')?;
        (r.trim() == name && is_object_id(oid)).then(|| oid.to_string())
    })
}

/// A SHA-1 (40) or SHA-256 (64) hex object id.
fn is_object_id(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::test_git as git;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        git(d, &["config", "user.email", "t@example.com"]);
        git(d, &["config", "user.name", "t"]);
        dir
    }

    #[test]
    fn loose_packed_detached_and_unborn() {
        let dir = repo();
        let d = dir.path();
        assert_eq!(head_revision(d), None, "unborn branch");
        assert_eq!(head(d).unwrap().branch, "main");
        fs::write(d.join("a"), "a").unwrap();
        git(d, &["add", "a"]);
        git(d, &["commit", "-qm", "one"]);
        let head = git(d, &["rev-parse", "HEAD"]);
        assert_eq!(head_revision(d).as_deref(), Some(head.as_str()));
        fs::create_dir_all(d.join("sub/dir")).unwrap();
        assert_eq!(head_revision(&d.join("sub/dir")), Some(head.clone()));
        git(d, &["pack-refs", "--all"]);
        assert!(!d.join(".git/refs/heads/main").exists());
        assert_eq!(head_revision(d), Some(head.clone()));
        assert_eq!(super::head(d).unwrap().branch, "main");
        git(d, &["checkout", "-q", "--detach"]);
        assert_eq!(head_revision(d), Some(head));
        assert_eq!(super::head(d).unwrap().branch, "(detached)");
    }

    #[test]
    fn linked_worktree() {
        let dir = repo();
        let d = dir.path();
        fs::write(d.join("a"), "a").unwrap();
        git(d, &["add", "a"]);
        git(d, &["commit", "-qm", "one"]);
        let wt = d.join("wt");
        git(
            d,
            &["worktree", "add", "-q", "-b", "side", wt.to_str().unwrap()],
        );
        fs::write(wt.join("b"), "b").unwrap();
        git(&wt, &["add", "b"]);
        git(&wt, &["commit", "-qm", "two"]);
        assert!(wt.join(".git").is_file());
        assert_eq!(head_revision(&wt), Some(git(&wt, &["rev-parse", "HEAD"])));
        assert_ne!(head_revision(&wt), head_revision(d));
    }

    #[test]
    fn not_a_repo() {
        let dir = tempfile::tempdir().unwrap();
        // A temp dir may sit under a repository on some machines; only assert when not.
        if dir.path().ancestors().all(|a| !a.join(".git").exists()) {
            assert_eq!(head_revision(dir.path()), None);
        }
    }
}
