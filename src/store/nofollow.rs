//! waymark never writes through a link (docs/design.md rule 3).
//!
//! `.orchestration/` is meant to be committed, so a repository can carry a planted
//! `agent_trace.jsonl -> ~/.bashrc`, a `tasks -> /somewhere`, or a hard link from AGENT.md
//! to a file elsewhere. waymark never creates links there: a file it replaces (hook.json,
//! HOOK.md) has the link itself replaced by the rename; a file it reads, appends to or
//! edits in place is opened through [`open`], which refuses a symbolic link in the open
//! itself (`O_NOFOLLOW`: no check-then-open race) and a file with more than one hard link
//! (writing to it would change a file elsewhere; reading it would copy that file into the
//! project); a directory it writes into is refused if it is a link.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Fails when `path` is a symbolic link (dangling or not); a missing path is fine.
pub fn refuse_symlink(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(symlink_error(path)),
        _ => Ok(()),
    }
}

/// Opens a file of waymark's with `options`, refusing a symbolic link and a file with more
/// than one hard link. Returns the file and its metadata (read once, for the callers that
/// need its size).
pub fn open(path: &Path, options: &mut OpenOptions) -> io::Result<(File, fs::Metadata)> {
    open_beside(path, options, &[])
}

/// [`open`], where the one other name the file may have is one of `companions`: during a
/// save of hook.json its file has a second name for a moment (`.hook.json.swap`, or the
/// .bak after a first save), and a writer killed then leaves it so.
pub fn open_beside(
    path: &Path,
    options: &mut OpenOptions,
    companions: &[&Path],
) -> io::Result<(File, fs::Metadata)> {
    let file = options
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => symlink_error(path),
            _ => e,
        })?;
    let meta = file.metadata()?;
    let is_companion = || {
        companions.iter().any(|c| {
            fs::symlink_metadata(c).is_ok_and(|c| c.ino() == meta.ino() && c.dev() == meta.dev())
        })
    };
    if meta.nlink() > 2 || (meta.nlink() == 2 && !is_companion()) {
        let why = format!(
            "{} has {} hard links: waymark does not write to, or read from, a file that is also elsewhere",
            path.display(),
            meta.nlink()
        );
        return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    }
    Ok((file, meta))
}

/// The whole of a file of waymark's, opened through [`open_beside`].
pub fn read(path: &Path, companions: &[&Path]) -> io::Result<Vec<u8>> {
    Ok(read_at_most(path, companions, u64::MAX)?.unwrap_or_default())
}

/// [`read`], or `None` for a file of more than `max` bytes (read no further than that).
pub fn read_at_most(path: &Path, companions: &[&Path], max: u64) -> io::Result<Option<Vec<u8>>> {
    let (file, meta) = open_beside(path, OpenOptions::new().read(true), companions)?;
    if meta.len() > max {
        return Ok(None);
    }
    // Sized from the metadata just read: `File::read_to_end` asks the kernel for the size
    // and the position again, two system calls more on every event. Read to the end all
    // the same, for a file that grew since.
    let mut bytes = Vec::with_capacity(meta.len() as usize + 1);
    io::Read::read_to_end(
        &mut io::Read::take(&file, max.saturating_add(1)),
        &mut bytes,
    )?;
    Ok((bytes.len() as u64 <= max).then_some(bytes))
}

fn symlink_error(path: &Path) -> io::Error {
    let why = format!(
        "{} is a symbolic link: waymark does not write through links",
        path.display()
    );
    io::Error::new(io::ErrorKind::InvalidInput, why)
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
        let read = || OpenOptions::new().read(true).clone();
        assert!(open(&f, &mut read()).is_ok());
        let err = open(&dir.path().join("l"), &mut read()).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(super::read(&f, &[]).unwrap(), b"x");
        assert_eq!(read_at_most(&f, &[], 1).unwrap().unwrap(), b"x");
        assert_eq!(
            read_at_most(&f, &[], 0).unwrap(),
            None,
            "longer than its bound"
        );
        fs::hard_link(&f, dir.path().join("h")).unwrap();
        let err = open(&f, &mut read()).unwrap_err();
        assert!(err.to_string().contains("2 hard links"), "{err}");
    }
}
