//! Replace a file so that readers see the old content or the new, never a mix.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` through a temp file in the same directory: write, fsync,
/// rename, then fsync the directory so the rename itself survives a power cut.
/// The temp file is removed on any failure, so no `.tmp` is left behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace(path, bytes, true)
}

/// Like [`write_atomic`] but without the fsyncs, for files that are regenerated from
/// another one (HOOK.md from hook.json, rule 6): readers still never see a half-written
/// file, and the writer does not hold the hook.json lock through two more disk flushes
/// (which, measured, doubled the time 32 racing hooks queue for it).
pub fn write_regenerable(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace(path, bytes, false)
}

fn replace(path: &Path, bytes: &[u8], sync: bool) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = create_new(&tmp)?;
        crate::faults::at("atomic.write");
        file.write_all(bytes)?;
        if sync {
            file.sync_all()?;
        }
        drop(file);
        crate::faults::at("atomic.rename");
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

/// Creates the temp file exclusively. Whatever already sits at its name (a temp file of a
/// killed process whose pid was reused, or a planted symlink) is removed, never followed:
/// `O_EXCL` does not follow symlinks, so a link to a file outside the project cannot make
/// waymark truncate that file.
fn create_new(tmp: &Path) -> io::Result<File> {
    let open = || OpenOptions::new().write(true).create_new(true).open(tmp);
    match open() {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            fs::remove_file(tmp)?;
            open()
        }
        other => other,
    }
}

/// Removes the temp files that killed writers left in `dir` for `names` (file names as
/// given to [`write_atomic`]). Call it only while holding the lock that serializes the
/// writers of those files, so no live writer's temp file is taken.
pub fn remove_stale_temps(dir: &Path, names: &[&str]) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let file = file.to_string_lossy();
        let stale = file.ends_with(".tmp")
            && names.iter().any(|n| {
                file.strip_prefix('.')
                    .and_then(|f| f.strip_prefix(*n))
                    .is_some_and(|rest| rest.starts_with('.'))
            });
        if stale {
            let _ = fs::remove_file(e.path());
        }
    }
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

    #[test]
    fn a_planted_temp_symlink_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, b"keep me").unwrap();
        let state = dir.path().join("state");
        fs::create_dir_all(&state).unwrap();
        let tmp = state.join(format!(".hook.json.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        write_atomic(&state.join("hook.json"), b"new").unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"keep me");
        assert_eq!(fs::read(state.join("hook.json")).unwrap(), b"new");
        assert!(!tmp.exists());
    }

    #[test]
    fn stale_temps_of_the_named_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            ".hook.json.123.tmp",
            ".HOOK.md.9.tmp",
            ".other.json.5.tmp",
            "hook.json",
        ] {
            fs::write(dir.path().join(f), b"x").unwrap();
        }
        remove_stale_temps(dir.path(), &["hook.json", "HOOK.md"]);
        let mut left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, [".other.json.5.tmp", "hook.json"]);
    }
}
