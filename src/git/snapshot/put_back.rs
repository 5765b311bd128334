//! Files put back in a staged snapshot as they were before an edit made after the moment
//! the snapshot stands for: the edit went on without waiting for the snapshot, its files
//! kept first (`task::capture::preimage`).

use std::collections::HashSet;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Stdio;

use super::{Reason, Staged, literal};

/// A file before the edit: `None` when there was none, else its git mode and its copy.
pub struct Before<'a> {
    pub path: &'a [u8],
    pub file: Option<(&'a str, &'a Path)>,
}

impl Staged {
    /// Puts `files` back as they were: one that was not there goes; one that was is added
    /// from its copy where the snapshot holds that path or left it out only for what the
    /// edit put in it (a file git ignores stays out). Whether the tree differs from HEAD
    /// is then asked again.
    pub fn put_back(&mut self, root: &Path, files: &[Before], lessons: &str) {
        if files.is_empty() {
            return;
        }
        let listed = self.listed(root, files);
        // `<mode> <blob>\t<path>\0` per file put back; `<path>\0` per file that goes.
        let (mut info, mut gone) = (Vec::new(), Vec::new());
        for f in files {
            let left_out = self.withheld.iter().position(|w| w.name == f.path);
            match f.file {
                None => gone.extend_from_slice(&[f.path, b"\0"].concat()),
                Some(_) if left_out.is_none() && !listed.contains(f.path) => continue,
                Some((mode, copy)) => {
                    let Some(blob) = self.blob(root, f.path, copy) else {
                        continue;
                    };
                    let line = [format!("{mode} {blob}\t").as_bytes(), f.path, b"\0"].concat();
                    info.extend_from_slice(&line);
                }
            }
            if let Some(i) = left_out {
                self.withheld.remove(i);
            }
        }
        self.update(root, &["--index-info"], info);
        self.update(root, &["--force-remove", "--stdin"], gone);
        self.dirty = self.differs(root, lessons);
    }

    /// Which of `files` the staged index holds.
    fn listed(&self, root: &Path, files: &[Before]) -> HashSet<Vec<u8>> {
        let out = self
            .index
            .git(root, &["ls-files", "-z", "--"])
            .args(files.iter().map(|f| literal(f.path)))
            .stderr(Stdio::null())
            .output();
        let stdout = out.map(|o| o.stdout).unwrap_or_default();
        stdout
            .split(|&b| b == 0)
            .filter(|n| !n.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    }

    /// The copy of `path` stored as a blob, with the filters git applies to that path.
    fn blob(&self, root: &Path, path: &[u8], copy: &Path) -> Option<String> {
        let mut at = std::ffi::OsString::from("--path=");
        at.push(std::ffi::OsStr::from_bytes(path));
        let out = self
            .index
            .git(root, &["hash-object", "-w"])
            .arg(at)
            .arg(copy)
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !id.is_empty()).then_some(id)
    }

    /// `git update-index -z <how>` with `input` on its stdin, when there is any.
    fn update(&self, root: &Path, how: &[&str], input: Vec<u8>) {
        if !input.is_empty() {
            let mut c = self.index.git(root, &["update-index", "-z"]);
            let _ = crate::git::fed(c.args(how), input);
        }
    }

    /// Whether the project's files differ from HEAD: the index, or a file left out for
    /// its size or a secret (each a change).
    fn differs(&self, root: &Path, lessons: &str) -> bool {
        let left_out = self.withheld.iter().any(|w| w.reason != Reason::Nested);
        let Some(head) = &self.head else {
            return self.dirty;
        };
        let same = self
            .index
            .git(root, &["diff-index", "--cached", "--quiet", head, "--"])
            .args(crate::git::project_files(lessons))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        left_out || !same
    }
}
