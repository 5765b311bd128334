//! A temporary index file beside the repository's, removed when dropped: what a snapshot
//! ([`super::snapshot`]) and a project tree ([`super::project_tree`]) are staged in, so
//! that neither touches the repository's own index.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

pub(super) struct TempIndex(PathBuf);

impl TempIndex {
    /// An empty index at `path`: what a killed process left there is removed first.
    pub(super) fn new(path: PathBuf) -> TempIndex {
        let _ = std::fs::remove_file(&path);
        TempIndex(path)
    }

    /// Copies the index file `from` in, so that git re-reads only the files whose stat
    /// changed. The copy keeps the original's modification time: git takes an entry whose
    /// file changed in the same second as the index was written ("racily clean") for
    /// changed only by comparing with the index file's own time, and a copy made now would
    /// hide such a change (a file rewritten, same size, just after a commit: the tree would
    /// hold its old content).
    pub(super) fn seed(&self, from: &Path) -> io::Result<()> {
        std::fs::copy(from, &self.0)?;
        let modified = std::fs::metadata(from)?.modified()?;
        std::fs::File::options()
            .write(true)
            .open(&self.0)?
            .set_modified(modified)
    }

    /// git on this index. It is read back at once and thrown away: no checksum over it
    /// (git 2.40+; older versions ignore the setting).
    pub(super) fn git(&self, root: &Path, args: &[&str]) -> Command {
        let mut c = super::command(root);
        c.env("GIT_INDEX_FILE", &self.0)
            .args(["-c", "index.skipHash=true"])
            .args(args);
        c
    }
}

impl TempIndex {
    /// What the index holds, written as a tree object: its id, `None` when git fails.
    pub(super) fn write_tree(&self, root: &Path) -> Option<String> {
        let out = self.git(root, &["write-tree"]).output().ok()?;
        let tree = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !tree.is_empty()).then_some(tree)
    }
}

impl Drop for TempIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
