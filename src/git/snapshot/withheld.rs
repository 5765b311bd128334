//! What a snapshot leaves out, so that no ref reaches it (`git push --mirror` publishes
//! every ref): a file that holds a secret, and an untracked file too large to copy into
//! `.git` at every checkpoint (a growing log). Each is recorded by the SHA-256 of its
//! content; a rewind leaves it as it is (docs/rewind.md).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Stdio;

use serde::{Deserialize, Serialize};

use super::literal;
use crate::git::temp_index::TempIndex;

/// The largest untracked file a snapshot copies; a larger one is recorded by hash only.
pub const LARGE_FILE: u64 = 16 << 20;

/// The largest file read to judge whether it holds a secret: a larger one is kept whole
/// (a secret rarely hides in a file that size, and reading it at every checkpoint costs).
const SECRET_SCAN_LIMIT: u64 = 4 << 20;

/// A file a snapshot left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Withheld {
    /// The name as a person reads it (a name that is not UTF-8 shown with U+FFFD).
    pub path: String,
    /// The name as git has it, bytes; what the snapshot leaves out and a rewind leaves
    /// alone. Not stored: a capture read back names the file by `path`.
    #[serde(skip)]
    pub name: Vec<u8>,
    /// SHA-256 of the content, hex.
    pub sha256: String,
    #[serde(default)]
    pub reason: Reason,
    /// Its size, for a large file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// It changed since HEAD and holds a secret: the snapshot keeps HEAD's version, or no
    /// entry for a new file.
    #[default]
    Secret,
    /// Untracked and larger than [`LARGE_FILE`].
    Large,
    /// An untracked directory that is a git repository of its own: `git add` keeps its
    /// commit, not its files, so no snapshot holds them.
    Nested,
}

impl Withheld {
    /// Why, in words for the brief: `` `path` (it holds a secret) ``.
    pub fn describe(&self) -> String {
        match (self.reason, self.size) {
            (Reason::Large, Some(size)) => format!(
                "`{}` ({} MiB, larger than the {} MiB a snapshot copies)",
                self.path,
                size >> 20,
                LARGE_FILE >> 20
            ),
            (Reason::Nested, _) => format!(
                "`{}/` (a git repository of its own: a snapshot holds its commit, not its files)",
                self.path
            ),
            _ => format!("`{}` (it holds a secret)", self.path),
        }
    }

    /// An untracked nested repository at `path`, which `git add` named.
    pub fn nested(path: &str) -> Withheld {
        Withheld {
            path: path.trim_end_matches('/').to_string(),
            name: path.trim_end_matches('/').as_bytes().to_vec(),
            sha256: String::new(),
            reason: Reason::Nested,
            size: None,
        }
    }
}

/// The untracked nested repositories `git add`'s standard error names (git says so for
/// each it adds as a commit of its own: "adding embedded git repository").
pub(super) fn nested_in(stderr: &[u8]) -> Vec<Withheld> {
    const SAID: &str = "warning: adding embedded git repository: ";
    String::from_utf8_lossy(stderr)
        .lines()
        .filter_map(|l| l.strip_prefix(SAID))
        .map(Withheld::nested)
        .collect()
}

/// The file named `name` (root-relative, git's bytes), whatever its bytes.
fn file(root: &Path, name: &[u8]) -> std::path::PathBuf {
    root.join(OsStr::from_bytes(name))
}

/// The untracked files (ignored ones aside; an untracked repository as `dir/`), one walk
/// of the work tree: those to add, and those larger than [`LARGE_FILE`], withheld before
/// they are added (once added, their blob is in `.git`).
pub(super) fn untracked(
    root: &Path,
    index: &TempIndex,
    lessons: &str,
) -> Option<(Vec<Vec<u8>>, Vec<Withheld>)> {
    let args = ["ls-files", "--others", "--exclude-standard", "-z", "--"];
    let out = index
        .git(root, &args)
        .args(super::super::project_files(lessons))
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let mut added = Vec::new();
    let mut large = Vec::new();
    for name in out.stdout.split(|&b| b == 0).filter(|p| !p.is_empty()) {
        let meta = std::fs::symlink_metadata(file(root, name)).ok();
        match meta.filter(|m| m.is_file() && m.len() > LARGE_FILE) {
            Some(meta) => large.push(Withheld {
                path: String::from_utf8_lossy(name).into_owned(),
                name: name.to_vec(),
                sha256: crate::store::sha256_file(&file(root, name)).unwrap_or_default(),
                reason: Reason::Large,
                size: Some(meta.len()),
            }),
            None => added.push(name.to_vec()),
        }
    }
    Some((added, large))
}

/// What staging found against HEAD: whether anything changed, and the files taken back
/// out because they hold a secret.
pub(super) struct Changes {
    /// Whether the project's files differ from `head` (with no commit yet: whether there
    /// are any), a file taken out included.
    pub dirty: bool,
    pub withheld: Vec<Withheld>,
}

/// Compares the staged tree `index` with `head` and takes the files that changed and hold
/// a secret back out of it; `None` when git could not (no tree is written rather than one
/// with the secret). One git process answers both. Their blobs, written while staging,
/// are reachable from no ref: never pushed or fetched, pruned by `git gc`.
pub(super) fn take_out_secrets(
    root: &Path,
    index: &TempIndex,
    lessons: &str,
    head: Option<&str>,
) -> Option<Changes> {
    let changed = changed_since(root, index, lessons, head)?;
    let dirty = !changed.is_empty();
    let withheld: Vec<Withheld> = changed
        .into_iter()
        .filter(|(content, _)| *content)
        .filter_map(|(_, name)| secret_file(root, &name))
        .collect();
    if withheld.is_empty() {
        return Some(Changes { dirty, withheld });
    }
    // Back to HEAD's entry, or out of the index when HEAD has none.
    let mut undo = match head {
        Some(head) => index.git(root, &["reset", "-q", head, "--"]),
        None => index.git(root, &["rm", "-q", "--cached", "--"]),
    };
    let done = undo
        .args(withheld.iter().map(|w| literal(&w.name)))
        .stdout(Stdio::null())
        .status();
    done.ok()?.success().then_some(Changes { dirty, withheld })
}

/// The files of the staged tree `index` that differ from `head`, each with whether it has
/// content a secret may be in (added, modified or retyped; a deletion holds none). With no
/// commit yet, every staged file is new (the empty tree's id depends on the repository's
/// hash, so the index is listed instead).
fn changed_since(
    root: &Path,
    index: &TempIndex,
    lessons: &str,
    head: Option<&str>,
) -> Option<Vec<(bool, Vec<u8>)>> {
    let args: &[&str] = match head {
        Some(head) => &[
            "diff-index",
            "--cached",
            "--name-status",
            "-z",
            "--no-renames",
            head,
            "--",
        ],
        None => &["ls-files", "--cached", "-z", "--"],
    };
    let out = index
        .git(root, args)
        .args(super::super::project_files(lessons))
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let mut fields = out.stdout.split(|&b| b == 0).filter(|f| !f.is_empty());
    let mut changed = Vec::new();
    if head.is_none() {
        changed.extend(fields.map(|name| (true, name.to_vec())));
        return Some(changed);
    }
    // `<status>\0<path>\0` per file.
    while let (Some(status), Some(name)) = (fields.next(), fields.next()) {
        changed.push((matches!(status, b"A" | b"M" | b"T"), name.to_vec()));
    }
    Some(changed)
}

/// Whether the file at `path` (root-relative, git's bytes) holds a secret.
pub fn holds_secret(root: &Path, name: &[u8]) -> bool {
    secret_file(root, name).is_some()
}

/// `name` (root-relative, git's bytes) judged: withheld when it holds a secret.
fn secret_file(root: &Path, name: &[u8]) -> Option<Withheld> {
    let full = file(root, name);
    let meta = std::fs::symlink_metadata(&full).ok()?;
    if !meta.is_file() || meta.len() > SECRET_SCAN_LIMIT {
        return None;
    }
    let bytes = std::fs::read(&full).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    waymark_redact::holds_secret(&text).then(|| Withheld {
        path: String::from_utf8_lossy(name).into_owned(),
        name: name.to_vec(),
        sha256: waymark_core::receipt::sha256_hex(&bytes),
        reason: Reason::Secret,
        size: None,
    })
}
