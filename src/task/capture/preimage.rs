//! An edit that would otherwise wait for a checkpoint's snapshot: the file as it is before
//! the edit, kept for that snapshot, so that the tool call goes on at once (issue 52;
//! docs/performance.md, "No tool call waits for a snapshot").
//!
//! The capture in flight names itself in `capture.held` (a token). Before an edit whose
//! paths are known (Write, Edit, NotebookEdit, apply_patch), each file is copied
//! to `capture.pre/<token>/<n>.copy`, and its record renamed into place beside it as
//! `<n>.json` once the copy is whole. The capture reads the records after it has staged
//! the work tree, and puts each file back as its preimage had it: in the snapshot and in
//! the step's file records.
//!
//! **Exact.** An edit comes after its preimage. If the capture read the records before
//! that preimage was there, it had staged the tree before the edit too, and the file as
//! staged is the file as it was; if after, it reads the preimage. What a preimage cannot
//! stand for makes the call wait as a Bash command does (`capture::settle`): a link on the
//! way, a file over [`MAX_BYTES`], one that holds a secret, a name that is not UTF-8,
//! something that is not a regular file.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::store::project::{Located, Project};
use waymark_core::task::FileSnapshot;

/// The largest file kept as a preimage; an edit of a larger one waits for the snapshot.
pub const MAX_BYTES: u64 = 4 << 20;

/// Where the preimages of the captures in flight are: `capture.pre/<token>/`.
const DIR: &str = "capture.pre";

/// One file before an edit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preimage {
    /// Root-relative.
    pub path: String,
    /// Git's mode of the file (`100644`, `100755`); `None`: there was no file.
    pub mode: Option<String>,
    /// When it was last modified (a file record's `mod_time`).
    #[serde(default)]
    pub mod_time: String,
    /// Its copy, beside the record.
    #[serde(skip)]
    pub copy: PathBuf,
}

/// The directory of `token`'s preimages.
fn dir(project: &Project, token: &str) -> PathBuf {
    project.state_file(DIR).join(token)
}

/// Removes every capture's preimages: a new capture begins (under the capture lock), and
/// none of the earlier ones is read again.
pub fn clear(project: &Project) {
    let _ = fs::remove_dir_all(project.state_file(DIR));
}

/// Removes the preimages of the hold `token` as it ends (`held`: its `capture.held`, in
/// the state directory).
pub fn clear_token(held: &Path, token: &str) {
    if let Some(state) = held.parent() {
        let _ = fs::remove_dir_all(state.join(DIR).join(token));
    }
}

/// Keeps the files at `paths` (as an event names them, against `cwd`) for the capture
/// `token` before they are edited. `false`: one of them cannot be kept, and the call must
/// wait for the capture instead.
pub fn keep(project: &Project, token: &str, paths: &[&str], cwd: Option<&str>) -> bool {
    let dir = dir(project, token);
    paths.iter().enumerate().all(|(n, path)| {
        let Located::Inside(rel) = project.locate(path, cwd) else {
            // Outside the project: in no snapshot.
            return true;
        };
        keep_one(project, &dir, &rel, n).unwrap_or(false)
    })
}

/// Keeps one root-relative file; `Ok(false)` when it cannot be.
fn keep_one(project: &Project, dir: &Path, rel: &str, n: usize) -> io::Result<bool> {
    // `.git` and the state directory are in no snapshot.
    if waymark_core::rewind::refusal(rel.as_bytes(), crate::store::project::STATE_DIR).is_some() {
        return Ok(true);
    }
    if project.links_on(Path::new(rel)) {
        return Ok(false);
    }
    let file = project.absolute(rel);
    let meta = match fs::symlink_metadata(&file) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(_) => return Ok(false),
    };
    if meta
        .as_ref()
        .is_some_and(|m| !m.is_file() || m.len() > MAX_BYTES)
    {
        return Ok(false);
    }
    // Waymark's own directories: never a link to be written through.
    crate::store::refuse_symlink(&project.state_file(DIR))?;
    crate::store::refuse_symlink(dir)?;
    fs::create_dir_all(dir)?;
    let name = format!("{}-{n}", std::process::id());
    let copy = dir.join(format!("{name}.copy"));
    let mut record = Preimage {
        path: rel.to_string(),
        mode: None,
        mod_time: String::new(),
        copy: copy.clone(),
    };
    if let Some(meta) = meta {
        let bytes = fs::read(&file)?;
        if waymark_redact::holds_secret(&String::from_utf8_lossy(&bytes)) {
            return Ok(false);
        }
        let mut create = fs::OpenOptions::new();
        create.write(true).create_new(true);
        let (mut out, _) = crate::store::open_nofollow(&copy, &mut create)?;
        io::Write::write_all(&mut out, &bytes)?;
        let executable = meta.permissions().mode() & 0o100 != 0;
        record.mode = Some(if executable { "100755" } else { "100644" }.into());
        record.mod_time = meta
            .modified()
            .map(|t| waymark_core::text::stamp(DateTime::<Utc>::from(t)))
            .unwrap_or_default();
    }
    let json = waymark_redact::Clean::json(&record);
    crate::store::write_replaceable(&dir.join(format!("{name}.json")), &json)?;
    Ok(true)
}

/// The preimages kept for capture `token`, oldest first per file: the first one of a path
/// is the file before the first edit.
pub fn read(project: &Project, token: &str) -> Vec<Preimage> {
    let dir = dir(project, token);
    let mut found: Vec<(std::time::SystemTime, Preimage)> = Vec::new();
    for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let Some(stem) = path
            .file_name()
            .and_then(|n| n.to_str()?.strip_suffix(".json"))
        else {
            continue;
        };
        let (Ok(bytes), Ok(meta)) = (fs::read(&path), entry.metadata()) else {
            continue;
        };
        if let Ok(mut p) = serde_json::from_slice::<Preimage>(&bytes) {
            p.copy = dir.join(format!("{stem}.copy"));
            found.push((meta.modified().unwrap_or(std::time::UNIX_EPOCH), p));
        }
    }
    found.sort_by_key(|(at, _)| *at);
    let mut first: Vec<Preimage> = Vec::new();
    for (_, p) in found {
        if !first.iter().any(|f| f.path == p.path) {
            first.push(p);
        }
    }
    first
}

/// The step's file records with each file that has a preimage as the preimage had it.
pub fn over(mut files: Vec<FileSnapshot>, preimages: &[Preimage]) -> Vec<FileSnapshot> {
    for f in &mut files {
        let Some(p) = preimages.iter().find(|p| p.path == f.path) else {
            continue;
        };
        *f = match p.mode {
            // No copy: a file that was not there reads as missing.
            None => super::snapshot_of(&p.path, Path::new("")),
            Some(_) => FileSnapshot {
                mod_time: p.mod_time.clone(),
                ..super::snapshot_of(&p.path, &p.copy)
            },
        };
    }
    files
}
