//! Changing a text file in place under its lock (AGENT.md, intent_map.md): a pure addition
//! at the end is one append, so a reader never sees the file without its earlier text;
//! any other change replaces the file atomically.

use std::fs::OpenOptions;
use std::io::{self, Read, Write};
use std::path::Path;

use super::{FileLock, write_atomic};
use waymark_redact::Clean;

/// Reads `path` ("" when missing) under the lock `lock` (a file of its own, `<lock>.lock`:
/// a file people commit, like AGENT.md, keeps its lock in the state directory) and writes
/// what `f` makes of it. `f` returns `None` to leave the file as it is; its value is passed
/// back. What is written is redacted: only the addition when `f` added to the end (text a
/// person wrote earlier is not rewritten), the whole file when it changed more.
pub fn edit_text<R>(
    path: &Path,
    lock: &Path,
    f: impl FnOnce(&str) -> Option<(String, R)>,
) -> io::Result<Option<R>> {
    let _critical = crate::store::deadline::enter();
    let _lock = FileLock::acquire(lock).map_err(io::Error::other)?;
    let mut options = OpenOptions::new();
    options.read(true).append(true);
    let (mut file, text) = match super::nofollow::open(path, &mut options) {
        Ok((mut file, _)) => {
            let mut text = String::new();
            file.read_to_string(&mut text)?;
            (Some(file), text)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => (None, String::new()),
        Err(e) => return Err(e),
    };
    let Some((new_text, value)) = f(&text) else {
        return Ok(None);
    };
    match (new_text.strip_prefix(text.as_str()), file.as_mut()) {
        (Some(suffix), Some(file)) if !text.is_empty() => {
            file.write_all(Clean::text(suffix).as_bytes())?
        }
        _ => write_atomic(path, &Clean::text(&new_text))?,
    }
    Ok(Some(value))
}

/// Opens a small file of waymark's own bookkeeping, rewritten in place and never renamed
/// (`events.seen`), locked on itself (waited for at most `wait`): no lock file of its own,
/// no temporary file and no sync, for a file whose loss costs nothing but a repeated
/// check. Read and write through [`FileLock::file`].
pub fn open_in_place(path: &Path, wait: std::time::Duration) -> io::Result<FileLock> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    let (file, _) = super::nofollow::open(path, &mut options)?;
    FileLock::hold(file, path, wait).map_err(io::Error::other)
}
