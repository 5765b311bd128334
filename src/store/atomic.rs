//! Replace a file so that readers see the old content or the new, never a mix.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use waymark_redact::Clean;

/// Writes `content` to `path` through a temp file in the same directory: write, fsync,
/// rename, then fsync the directory so the rename itself survives a power cut.
/// The temp file is removed on any failure, so no `.tmp` is left behind.
pub fn write_atomic(path: &Path, content: &Clean) -> io::Result<()> {
    replace(path, content.as_bytes(), true)
}

/// [`write_atomic`] of bytes written as given, not redacted: for the files that belong to
/// the user (settings.json, their configuration and intent files, which may hold their
/// own tokens on purpose) and a verbatim copy of a corrupt file. (The signing key is
/// written by `receipt::master`, created with its mode.)
pub fn write_verbatim(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace(path, bytes, true)
}

/// [`write_atomic`] without the fsyncs: for files nothing is lost with (a checkpoint
/// capture taken again is the same capture).
pub fn write_replaceable(path: &Path, content: &Clean) -> io::Result<()> {
    replace(path, content.as_bytes(), false)
}

/// Replaces `path` with `bytes` and keeps what it held as `previous` (hook.json and its
/// .bak), creating and freeing no file when both exist.
///
/// Freeing a file's blocks was the dearest part of a save: on a file system mounted with
/// `discard` each free is a TRIM (0.2–0.3 ms measured, more than the fsync), and renaming
/// a new file over the old one, then the old one over the .bak, freed a file per save.
/// Instead the new content goes into the file `previous` names (the state before last,
/// no longer needed), and the names are swapped:
///
/// 1. `bytes` are written into `previous`'s file in place, cut to length, and synced;
/// 2. the two names are exchanged through a third name ([`swap_names`]).
///
/// A reader of `path` sees the old content or the new, never a mix. Killed during 1,
/// `previous` is torn and `path` still old; killed during 2, `path` is old or new, and the
/// next writer removes a `swap` name left. The directory is not synced: after a power cut
/// the names may be as they were before the save (the old state, whole). Without a
/// `previous` to reuse (the first save; a `previous` that is a second name of `path`'s
/// file), this is [`write_atomic`] and a hard link.
pub fn replace_keeping_previous(path: &Path, previous: &Path, content: &Clean) -> io::Result<()> {
    let bytes = content.as_bytes();
    let swap = swap_name(path);
    // A swap name left by a killed writer: finish its swap (it had given `path` the new
    // state and not yet named the old one `previous`) or undo it (it had not begun).
    if fs::symlink_metadata(&swap).is_ok() {
        match fs::symlink_metadata(previous) {
            Err(_) => fs::rename(&swap, previous)?,
            Ok(_) => fs::remove_file(&swap)?,
        }
    }
    let reusable = super::nofollow::open(previous, OpenOptions::new().write(true))
        .ok()
        .filter(|_| fs::symlink_metadata(path).is_ok());
    let Some((file, _)) = reusable else {
        // Nothing to reuse: the usual temp-file write, and the old state linked as
        // `previous` (replacing whatever stood there).
        if fs::symlink_metadata(path).is_ok() {
            let _ = fs::remove_file(previous);
            let _ = fs::hard_link(path, previous);
        }
        return write_atomic(path, content);
    };
    crate::store::faults::at("atomic.write");
    file.write_all_at(bytes, 0)?;
    file.set_len(bytes.len() as u64)?;
    file.sync_all()?;
    drop(file);
    crate::store::faults::at("atomic.rename");
    swap_names(path, previous, &swap)
}

/// Gives `previous`'s file the name `path` and `path`'s the name `previous`, through the
/// third name `swap`: `path`'s file is linked as `swap`, `previous` renamed to `path`,
/// then `swap` to `previous`. Each rename replaces a name in one step, so `path` always
/// names a whole file. (Linux's one-step `renameat2(RENAME_EXCHANGE)` was measured at
/// under 5% of a saving event and dropped: BENCHMARKS.md, "Process tricks".)
fn swap_names(path: &Path, previous: &Path, swap: &Path) -> io::Result<()> {
    fs::hard_link(path, swap)?;
    crate::store::faults::at("atomic.swap");
    fs::rename(previous, path)?;
    fs::rename(swap, previous)
}

/// Writes a file that is regenerated from another one (HOOK.md from hook.json, rule 6)
/// over the old one in place: no new file, no freed file, no fsync. A reader may see it
/// half written for a moment; one killed mid-write leaves it torn until the next write or
/// `waymark regenerate` (SessionStart rebuilds a damaged one).
pub fn write_regenerable(path: &Path, content: &Clean) -> io::Result<()> {
    let bytes = content.as_bytes();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        super::make_dir(dir)?;
    }
    let (file, _) = super::nofollow::open(path, OpenOptions::new().write(true).create(true))?;
    file.write_all_at(bytes, 0)?;
    file.set_len(bytes.len() as u64)
}

/// [`write_regenerable`] unless the file already says `content`, read and written through
/// one open: most saves leave HOOK.md as it was, and one of another length is not read.
pub fn write_regenerable_if_changed(path: &Path, content: &Clean) -> io::Result<()> {
    let bytes = content.as_bytes();
    let mut options = OpenOptions::new();
    let (file, meta) = super::nofollow::open(path, options.read(true).write(true).create(true))?;
    if meta.len() == bytes.len() as u64 {
        let mut now = vec![0; bytes.len()];
        if file.read_exact_at(&mut now, 0).is_ok() && now == bytes {
            return Ok(());
        }
    }
    file.write_all_at(bytes, 0)?;
    file.set_len(bytes.len() as u64)
}

/// The second name `path`'s file has during a save (`.<name>.swap`).
pub fn swap_name(path: &Path) -> std::path::PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.swap"))
}

fn replace(path: &Path, bytes: &[u8], sync: bool) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    super::make_dir(dir)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = create_new(&tmp)?;
        crate::store::faults::at("atomic.write");
        file.write_all(bytes)?;
        if sync {
            file.sync_all()?;
        }
        drop(file);
        crate::store::faults::at("atomic.rename");
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

/// Removes the temp and swap files that killed writers left in `dir` for `names` (file
/// names as given to [`write_atomic`] and [`replace_keeping_previous`]). Call it only while holding the lock that serializes the
/// writers of those files, so no live writer's temp file is taken.
pub fn remove_stale_temps(dir: &Path, names: &[&str]) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let file = file.to_string_lossy();
        let stale = (file.ends_with(".tmp") || file.ends_with(".swap"))
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

    /// HOOK.md after a save says what was rendered, whatever stood there: missing, torn
    /// to the same length, longer; left as it is when it already said it; never written
    /// through a link.
    #[test]
    fn a_regenerable_file_is_written_only_when_it_says_something_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("HOOK.md");
        let md = Clean::text("# HOOK: t\n\nthe plan\n");
        write_regenerable_if_changed(&path, &md).unwrap();
        assert_eq!(fs::read(&path).unwrap(), md.as_bytes(), "missing");
        fs::write(&path, "# HOOK: t\n\nthe PLAN\n").unwrap();
        write_regenerable_if_changed(&path, &md).unwrap();
        assert_eq!(fs::read(&path).unwrap(), md.as_bytes(), "same length");
        fs::write(&path, "# HOOK: t\n\nthe plan\nand more than it says\n").unwrap();
        write_regenerable_if_changed(&path, &md).unwrap();
        assert_eq!(fs::read(&path).unwrap(), md.as_bytes(), "longer");
        let past = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30);
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(past)
            .unwrap();
        write_regenerable_if_changed(&path, &md).unwrap();
        let modified = fs::metadata(&path).unwrap().modified().unwrap();
        assert_eq!(modified, past, "the same: not written");
        let elsewhere = dir.path().join("elsewhere");
        fs::write(&elsewhere, "theirs").unwrap();
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        assert!(write_regenerable_if_changed(&path, &md).is_err());
        assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "theirs");
    }

    #[test]
    fn replaces_content_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/state.json");
        write_atomic(&p, &Clean::text("one")).unwrap();
        write_atomic(&p, &Clean::text("two")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["state.json"]);
    }

    #[test]
    fn replacing_keeps_the_previous_content_and_makes_no_new_file() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let (p, bak) = (dir.path().join("h.json"), dir.path().join("h.json.bak"));
        let ino = |f: &Path| fs::metadata(f).unwrap().ino();
        replace_keeping_previous(&p, &bak, &Clean::text("one")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"one");
        replace_keeping_previous(&p, &bak, &Clean::text("two")).unwrap();
        assert_eq!(fs::read(&bak).unwrap(), b"one");
        let inodes = [ino(&p), ino(&bak)];
        // From now on the two files take turns: no file is made or freed.
        replace_keeping_previous(&p, &bak, &Clean::text("three, longer")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"three, longer");
        assert_eq!(fs::read(&bak).unwrap(), b"two");
        assert_eq!([ino(&bak), ino(&p)], inodes);
        replace_keeping_previous(&p, &bak, &Clean::text("4")).unwrap();
        assert_eq!(
            (fs::read(&p).unwrap(), fs::read(&bak).unwrap()),
            (b"4".to_vec(), b"three, longer".to_vec())
        );
        assert_eq!([ino(&p), ino(&bak)], inodes);
        // A writer killed mid-swap: undone when the .bak is there, finished when not.
        fs::hard_link(&p, dir.path().join(".h.json.swap")).unwrap();
        replace_keeping_previous(&p, &bak, &Clean::text("5")).unwrap();
        assert_eq!(
            (fs::read(&p).unwrap(), fs::read(&bak).unwrap()),
            (b"5".to_vec(), b"4".to_vec())
        );
        fs::rename(&bak, dir.path().join(".h.json.swap")).unwrap();
        replace_keeping_previous(&p, &bak, &Clean::text("6")).unwrap();
        assert_eq!(fs::read(&bak).unwrap(), b"5");
        let mut names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["h.json", "h.json.bak"]);
    }

    /// Exchanging two names twice leaves the contents as they were, and no third name.
    #[test]
    fn names_are_exchanged_through_a_third() {
        let dir = tempfile::tempdir().unwrap();
        let name = |n: &str| dir.path().join(n);
        let (p, bak, swap) = (name("h.json"), name("h.json.bak"), name(".h.json.swap"));
        fs::write(&p, b"old").unwrap();
        fs::write(&bak, b"new").unwrap();
        let contents = || (fs::read(&p).unwrap(), fs::read(&bak).unwrap());
        swap_names(&p, &bak, &swap).unwrap();
        assert_eq!(contents(), (b"new".to_vec(), b"old".to_vec()));
        assert!(!swap.exists());
        swap_names(&p, &bak, &swap).unwrap();
        assert_eq!(contents(), (b"old".to_vec(), b"new".to_vec()));
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn failure_keeps_old_content() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state.json");
        write_atomic(&p, &Clean::text("old")).unwrap();
        // A directory where the file should be makes the rename fail.
        let blocked = dir.path().join("blocked");
        fs::create_dir_all(blocked.join("x")).unwrap();
        assert!(write_atomic(&blocked, &Clean::text("new")).is_err());
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
        write_atomic(&state.join("hook.json"), &Clean::text("new")).unwrap();
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
