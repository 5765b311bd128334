//! Putting files back as a snapshot had them (`waymark rewind`, docs/rewind.md).
//!
//! Before the first file is touched, the whole plan (which files, to which blobs) is
//! written to `.orchestration/rewind.json`; each file is then replaced by a rename (or
//! removed), so a file is always either as it was or as the snapshot had it. A rewind cut
//! short (a crash, a kill) leaves the journal, and `waymark rewind --continue` applies the
//! plan again from the start: applying it is idempotent. The journal goes when the rewind
//! is recorded in the task.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::snapshot::{self, Change};
use crate::store::landing::Last;
use crate::store::project::Project;

/// The journal of a rewind in progress, in the state directory.
pub const JOURNAL: &str = "rewind.json";

/// A rewind's plan, kept until it is done and recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    pub task_id: String,
    pub checkpoint_id: String,
    /// The ref of the snapshot the files go back to.
    pub snapshot: String,
    /// What to rewind to for an undo: the `pre_rewind` checkpoint of the current task, or
    /// with no task a bare snapshot (`pre-rewind-<time>`).
    pub undo: Option<String>,
    pub started_at: DateTime<Utc>,
    pub changes: Vec<Change>,
}

impl Journal {
    /// Root-relative paths restored (or recreated) and deleted, for people (a name that is
    /// not UTF-8 has its bytes escaped).
    pub fn split(&self) -> (Vec<String>, Vec<String>) {
        let (deleted, restored) = self.deletions_first();
        let paths = |v: Vec<&Change>| v.into_iter().map(|c| c.path.to_string()).collect();
        (paths(restored), paths(deleted))
    }

    /// The files made since the snapshot (to delete), and the others (to restore).
    fn deletions_first(&self) -> (Vec<&Change>, Vec<&Change>) {
        self.changes.iter().partition(|c| c.status == 'A')
    }
}

/// The journal of a rewind that did not finish, if any.
pub fn pending(project: &Project) -> io::Result<Option<Journal>> {
    let path = project.state_file(JOURNAL);
    let Some(bytes) = crate::store::found(fs::read(&path))? else {
        return Ok(None);
    };
    // Its paths are checked as they are read: a journal is a file anyone can edit.
    let read = serde_json::from_slice::<Journal>(&bytes).map_err(|e| e.to_string());
    let checked = read.and_then(|j| match snapshot::through_a_link(&j.changes) {
        Some(why) => Err(format!("it holds {why}")),
        None => Ok(Some(j)),
    });
    checked.map_err(|e| {
        io::Error::other(format!(
            "{} is damaged or unsafe, nothing was rewound from it ({e}); look at it, then remove it with `waymark rewind --abort`",
            path.display()
        ))
    })
}

/// Writes the journal (synced) before any file is touched.
pub fn begin(project: &Project, journal: &Journal) -> io::Result<()> {
    let json = waymark_redact::Clean::json_pretty(journal);
    crate::store::write_atomic(&project.state_file(JOURNAL), &json)
}

/// Removes the journal: the rewind is done and recorded.
pub fn finish(project: &Project) -> io::Result<()> {
    crate::store::remove_if_there(&project.state_file(JOURNAL))
}

/// Applies the journal's changes to the work tree: files made since are removed first (a
/// file may stand where the snapshot had a directory, or the other way round), then every
/// other file is written from its blob with its mode. A path outside the project is
/// refused, never followed.
pub fn apply(project: &Project, journal: &Journal) -> io::Result<()> {
    let root = &project.root;
    let wanted: Vec<&str> = journal
        .changes
        .iter()
        .filter(|c| c.status != 'A' && c.mode != super::in_the_way::GITLINK)
        .map(|c| c.blob.as_str())
        .collect();
    let blobs = if wanted.is_empty() {
        HashMap::new()
    } else {
        snapshot::read_blobs(root, &wanted)?
    };
    let (deletions, restores) = journal.deletions_first();
    for c in deletions.into_iter().chain(restores) {
        // The file itself is replaced or removed, never followed: where its directory
        // really lands (a link on the way resolved, made by an earlier change or not) must
        // be inside the project, outside `.git` and the state directory.
        let path = project
            .landing(c.path.as_path(), Last::Replaced)
            .map_err(|why| io::Error::other(format!("{why}: not rewound")))?;
        crate::store::faults::at("rewind.file");
        if c.status == 'A' {
            let top = if path.starts_with(root) {
                root.as_path()
            } else {
                project.real_root()
            };
            remove(top, &path)?;
        } else if c.mode != super::in_the_way::GITLINK {
            let content = blobs.get(&c.blob).ok_or_else(|| {
                io::Error::other(format!("{}: blob {} is not in git", c.path, c.blob))
            })?;
            restore(&path, &c.mode, content)?;
        }
    }
    Ok(())
}

/// Replaces `path` by a file (or symlink) holding `content`, by rename.
fn restore(path: &Path, mode: &str, content: &[u8]) -> io::Result<()> {
    let dir = path.parent().expect("a path under the root");
    fs::create_dir_all(dir)?;
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(".waymark-rewind");
    let tmp = dir.join(name);
    let _ = fs::remove_file(&tmp);
    if mode == "120000" {
        // A link's target is bytes too.
        std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(content), &tmp)?;
    } else {
        fs::write(&tmp, content)?;
        let bits = if mode == "100755" { 0o755 } else { 0o644 };
        fs::set_permissions(&tmp, fs::Permissions::from_mode(bits))?;
    }
    // A directory where the file goes (left empty by the deletions) makes way.
    if path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        remove_empty_dirs(path)?;
    }
    fs::rename(&tmp, path)
}

/// Removes `dir` and the directories in it, all of them empty (git keeps no directory, so
/// an empty one is nothing lost); a file in it fails (`git::in_the_way` refused it first).
fn remove_empty_dirs(dir: &Path) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            remove_empty_dirs(&entry.path())?;
        }
    }
    fs::remove_dir(dir)
}

/// Removes a file made since the snapshot, and the directories it leaves empty.
fn remove(root: &Path, path: &Path) -> io::Result<()> {
    crate::store::remove_if_there(path)?;
    for dir in path.ancestors().skip(1) {
        if dir == root || !dir.starts_with(root) || fs::remove_dir(dir).is_err() {
            break;
        }
    }
    Ok(())
}
