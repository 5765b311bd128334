//! Replace a file so that readers see the old content or the new, never a mix.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

/// How hard [`write_atomic_with`] works to make a replacement survive a power cut. Either
/// way, readers (and a crash of waymark itself) see the old content or the new, never a mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// fsync the file before the rename and the directory after it: after a power cut the
    /// file holds the new content. For state that exists nowhere else (hook.json).
    Durable,
    /// No fsync. For files regenerated from others (HOOK.md from hook.json, DESIGN.md
    /// rule 6): a power cut may leave the previous version, and the next save rewrites it.
    /// An fsync costs a journal commit, milliseconds on a busy disk, on the hot path.
    Regenerable,
}

/// Writes `bytes` to `path` through a temp file in the same directory: write, fsync,
/// rename, then fsync the directory so the rename itself survives a power cut.
/// The temp file is removed on any failure, so no `.tmp` is left behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, bytes, Durability::Durable)
}

/// [`write_atomic`] with the fsyncs chosen by `durability`.
pub fn write_atomic_with(path: &Path, bytes: &[u8], durability: Durability) -> io::Result<()> {
    let sync = durability == Durability::Durable;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        if sync {
            file.sync_all()?;
        }
        drop(file);
        fs::rename(&tmp, path)?;
        if sync {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/state.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["state.json"]);
    }

    #[test]
    fn regenerable_replaces_without_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("HOOK.md");
        write_atomic_with(&p, b"one", Durability::Regenerable).unwrap();
        write_atomic_with(&p, b"two", Durability::Regenerable).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn failure_keeps_old_content() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state.json");
        write_atomic(&p, b"old").unwrap();
        // A directory where the file should be makes the rename fail.
        let blocked = dir.path().join("blocked");
        fs::create_dir_all(blocked.join("x")).unwrap();
        assert!(write_atomic(&blocked, b"new").is_err());
        assert_eq!(fs::read(&p).unwrap(), b"old");
    }
}
