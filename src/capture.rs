//! What a checkpoint records of the step's files (size, time, content hash), and how they
//! differ now: the I/O half of a checkpoint, whose record is built in `task::checkpoint`.

use std::fs::File;
use std::io::{self, Read};

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use crate::project::Project;
use crate::task::FileSnapshot;

/// Files larger than this are snapshotted by size and time only (hash `"too-large"`).
const MAX_HASHED_BYTES: u64 = 64 * 1024 * 1024;

/// A snapshot of each of `files` (root-relative).
pub fn snapshots(project: &Project, files: &[String]) -> Vec<FileSnapshot> {
    files.iter().map(|f| snapshot(project, f)).collect()
}

/// A file's state now. A missing file is a snapshot with `exists: false`.
pub fn snapshot(project: &Project, rel: &str) -> FileSnapshot {
    let path = project.absolute(rel);
    let missing = FileSnapshot {
        path: rel.to_string(),
        size: 0,
        mod_time: String::new(),
        sha256: String::new(),
        exists: false,
    };
    let Ok(meta) = std::fs::metadata(&path) else {
        return missing;
    };
    if !meta.is_file() {
        return missing;
    }
    let mod_time = meta
        .modified()
        .ok()
        .map(|t| crate::text::stamp(DateTime::<Utc>::from(t)))
        .unwrap_or_default();
    let sha256 = if meta.len() > MAX_HASHED_BYTES {
        "too-large".to_string()
    } else {
        hash_prefix(&path).unwrap_or_default()
    };
    FileSnapshot {
        path: rel.to_string(),
        size: meta.len(),
        mod_time,
        sha256,
        exists: true,
    }
}

fn hash_prefix(path: &std::path::Path) -> io::Result<String> {
    let mut f = File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(crate::text::hex(&h.finalize()[..8]))
}

/// Files whose state differs from the snapshot (changed, appeared or vanished).
pub fn changed_since(project: &Project, snapshots: &[FileSnapshot]) -> Vec<String> {
    snapshots
        .iter()
        .filter_map(|s| {
            let now = snapshot(project, &s.path);
            match (s.exists, now.exists) {
                (true, false) => Some(format!("`{}` (deleted)", s.path)),
                (false, true) => Some(format!("`{}` (created)", s.path)),
                (true, true) if now.sha256 != s.sha256 || now.size != s.size => Some(format!(
                    "`{}` (modified: {} → {} bytes)",
                    s.path, s.size, now.size
                )),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_and_changes() {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at(dir.path().to_path_buf());
        std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").unwrap();
        let s = snapshot(&p, "a.rs");
        assert!(s.exists);
        assert_eq!(s.size, 10);
        assert_eq!(s.sha256.len(), 16);
        assert!(!snapshot(&p, "nope.rs").exists);
        assert!(changed_since(&p, std::slice::from_ref(&s)).is_empty());
        std::fs::write(dir.path().join("a.rs"), "fn a() { b() }\n").unwrap();
        assert_eq!(changed_since(&p, &[s]).len(), 1);
    }
}
