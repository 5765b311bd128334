//! What stands where a rewind must write, looked at before any file is touched (docs/rewind.md,
//! "What a rewind will not do"). A rewind refuses, naming them, what it cannot remove
//! safely: a directory holding files it would not delete (ignored ones) where the checkpoint
//! had a file, and a git repository (a rewind would delete its history with it). And it
//! finds the files no snapshot of now holds (ignored since) that it would overwrite or
//! remove: the undo must hold them, or it could not bring them back.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::snapshot::Change;
use super::tree_path::{Shown, TreePath};

/// At most this many files are named for one directory in the way.
const NAMED: usize = 3;

/// A submodule's entry: not a file a rewind writes.
pub(super) const GITLINK: &str = "160000";

/// What a rewind's plan meets in the work tree.
#[derive(Debug, Default)]
pub struct Survey {
    /// What must be moved first: each path, and what it is.
    pub in_the_way: BTreeMap<String, String>,
    /// Files in no snapshot of now (ignored) that the rewind would overwrite or remove.
    pub unsaved: Vec<TreePath>,
}

impl Survey {
    /// Why the rewind cannot go on, naming what is in the way and what to do; `None` when
    /// nothing is.
    pub fn refusal(&self) -> Option<String> {
        if self.in_the_way.is_empty() {
            return None;
        }
        let lines: String = self
            .in_the_way
            .iter()
            .map(|(path, what)| format!("\n  {path} {what}"))
            .collect();
        Some(format!(
            "not rewinding, no file was changed: what is in the way cannot be removed safely:{lines}\nmove them out of the project (or delete them), then rewind again"
        ))
    }

    fn repository(&mut self, path: String) {
        let what = "is a git repository: a rewind would delete it with its history";
        self.in_the_way.insert(path, what.into());
    }

    /// The directories `path` goes in: a file or link that stands where one must be and
    /// that the plan does not delete is unsaved; one inside a repository is refused.
    /// False when one of them is not a directory.
    fn ancestors(&mut self, root: &Path, path: &TreePath, deleted: &HashSet<&[u8]>) -> bool {
        for dir in path.ancestors() {
            let at = root.join(OsStr::from_bytes(dir));
            let Ok(meta) = at.symlink_metadata() else {
                return true;
            };
            if !meta.is_dir() {
                if !deleted.contains(dir) {
                    self.unsaved.extend(TreePath::new(dir.to_vec()).ok());
                }
                return false;
            }
            if at.join(".git").symlink_metadata().is_ok() {
                self.repository(Shown(dir).to_string());
                return true;
            }
        }
        true
    }

    /// A directory where the checkpoint has a file: in the way unless the plan's deletions
    /// leave nothing in it but empty directories.
    fn directory(&mut self, root: &Path, dir: &[u8], deleted: &HashSet<&[u8]>) {
        let mut kept = Vec::new();
        self.left_behind(root, dir, deleted, &mut kept);
        if kept.is_empty() {
            return;
        }
        kept.sort();
        let mut named: Vec<String> = kept.iter().take(NAMED).map(|k| k.to_string()).collect();
        if kept.len() > NAMED {
            named.push(format!("{} more", kept.len() - NAMED));
        }
        let what = format!(
            "is a directory holding files the rewind would not delete ({}), where the checkpoint has a file",
            named.join(", ")
        );
        self.in_the_way.insert(Shown(dir).to_string(), what);
    }

    /// The files under `dir` (root-relative) that the plan does not delete, into `kept`;
    /// a repository found is in the way by itself.
    fn left_behind(
        &mut self,
        root: &Path,
        dir: &[u8],
        deleted: &HashSet<&[u8]>,
        kept: &mut Vec<String>,
    ) {
        let Ok(entries) = fs::read_dir(root.join(OsStr::from_bytes(dir))) else {
            return kept.push(format!("{} (unreadable)", Shown(dir)));
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let rel = [dir, b"/", name.as_bytes()].concat();
            if name == ".git" {
                return self.repository(Shown(dir).to_string());
            }
            if deleted.contains(rel.as_slice()) {
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                self.left_behind(root, &rel, deleted, kept);
            } else {
                kept.push(Shown(&rel).to_string());
            }
        }
    }
}

/// Looks at what each of `changes` would overwrite or remove in the work tree at `root`.
pub fn survey(root: &Path, changes: &[Change]) -> Survey {
    let deleted: HashSet<&[u8]> = changes
        .iter()
        .filter(|c| c.status == 'A')
        .map(|c| c.path.as_bytes())
        .collect();
    let mut survey = Survey::default();
    for c in changes {
        let meta = || root.join(c.path.as_path()).symlink_metadata().ok();
        if c.status == 'A' {
            // A directory made since that git lists as one entry: a repository.
            if meta().is_some_and(|m| m.is_dir()) {
                survey.repository(c.path.to_string());
            }
            continue;
        }
        if c.mode == GITLINK {
            continue;
        }
        // Under a link or a file where a directory was, what the path names is not the
        // project's (a link's target): nothing there is overwritten.
        if !survey.ancestors(root, &c.path, &deleted) {
            continue;
        }
        let meta = meta();
        if meta.as_ref().is_some_and(|m| m.is_dir()) {
            survey.directory(root, c.path.as_bytes(), &deleted);
        } else if meta.is_some() && c.status == 'D' {
            survey.unsaved.push(c.path.clone());
        }
    }
    survey.unsaved.sort();
    survey.unsaved.dedup();
    survey
}

/// The first directory of `path` (root-relative) that stands in the work tree as something
/// else, a link or a file made since: rewinding `path` alone removes it first.
pub fn not_a_directory(root: &Path, path: &[u8]) -> Option<Vec<u8>> {
    let dirs = path.iter().enumerate().filter(|(_, b)| **b == b'/');
    dirs.map(|(i, _)| &path[..i])
        .find(|d| {
            let meta = root.join(OsStr::from_bytes(d)).symlink_metadata();
            meta.is_ok_and(|m| !m.is_dir())
        })
        .map(<[u8]>::to_vec)
}
