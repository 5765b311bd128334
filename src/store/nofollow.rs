//! waymark never writes through a symbolic link (DESIGN.md rule 3).
//!
//! `.orchestration/` is meant to be committed, so a repository can carry a planted
//! `agent_trace.jsonl -> ~/.bashrc` or `tasks -> /somewhere`. waymark never creates links
//! there: a file it replaces (hook.json, HOOK.md) has the link itself replaced by the
//! rename; a file it appends to or locks, or a directory it writes into, is refused if it
//! is a link. (The hostile-input test found the log and the lock followed such links.)

use std::fs;
use std::io;
use std::path::Path;

/// Fails when `path` is a symbolic link (dangling or not); a missing path is fine.
pub fn refuse_symlink(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a symbolic link: waymark does not write through links",
                path.display()
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_refused_files_and_missing_paths_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        fs::write(&f, "x").unwrap();
        std::os::unix::fs::symlink(&f, dir.path().join("l")).unwrap();
        std::os::unix::fs::symlink("/nonexistent", dir.path().join("d")).unwrap();
        assert!(refuse_symlink(&f).is_ok());
        assert!(refuse_symlink(&dir.path().join("missing")).is_ok());
        assert!(refuse_symlink(&dir.path().join("l")).is_err());
        assert!(refuse_symlink(&dir.path().join("d")).is_err());
    }
}
