//! Changing a text file in place under its lock (AGENT.md, intent_map.md): a pure addition
//! at the end is one append, so a reader never sees the file without its earlier text;
//! any other change replaces the file atomically.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

use super::{FileLock, write_atomic};

/// Reads `path` ("" when missing) under its lock and writes what `f` makes of it. `f`
/// returns `None` to leave the file as it is; its value is passed back.
pub fn edit_text<R>(
    path: &Path,
    f: impl FnOnce(&str) -> Option<(String, R)>,
) -> io::Result<Option<R>> {
    let _critical = crate::deadline::enter();
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let _lock = FileLock::acquire(path).map_err(io::Error::other)?;
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let Some((new_text, value)) = f(&text) else {
        return Ok(None);
    };
    match new_text.strip_prefix(text.as_str()) {
        Some(suffix) if !text.is_empty() => OpenOptions::new()
            .append(true)
            .open(path)?
            .write_all(suffix.as_bytes())?,
        _ => write_atomic(path, new_text.as_bytes())?,
    }
    Ok(Some(value))
}
