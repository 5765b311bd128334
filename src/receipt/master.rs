//! The master key's file (the key and the derivation of task keys are
//! `waymark_core::receipt::key`).
//!
//! **The master key** is 32 random bytes (from the OS, `getrandom`), stored as 64 lowercase
//! hex characters and a newline in `$XDG_CONFIG_HOME/waymark/keys/master.key`
//! (`~/.config/…` when unset; `key_file` in the config overrides the path). It is created on
//! first use: the directory with mode 0700 if waymark creates it, the file with mode 0600,
//! written to a temporary file and hard-linked into place so that two processes creating
//! it at once both end up with the same key. A key file that the group or others can read
//! (any of mode `0o077`) is refused: a key others can read proves nothing.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

pub use waymark_core::receipt::key::*;

/// Permission bits that must be clear on the key file: nobody but the owner may read it.
const FOREIGN_BITS: u32 = 0o077;

/// A new random key, from the OS.
pub fn generate() -> Result<MasterKey, KeyError> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).map_err(|e| KeyError::Random(e.to_string()))?;
    Ok(MasterKey::from_bytes(b))
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> KeyError + '_ {
    move |source| KeyError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads the key, checking the permissions of the very file opened (no check-then-open race).
pub(super) fn read_key(path: &Path) -> Result<MasterKey, KeyError> {
    let f = crate::store::found(File::open(path)).map_err(io_err(path))?;
    let f = f.ok_or_else(|| KeyError::Missing(path.to_path_buf()))?;
    let meta = f.metadata().map_err(io_err(path))?;
    if !meta.is_file() {
        return Err(KeyError::Malformed {
            path: path.to_path_buf(),
            why: "not a regular file".into(),
        });
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & FOREIGN_BITS != 0 {
        return Err(KeyError::LoosePermissions {
            path: path.to_path_buf(),
            mode,
        });
    }
    // Sized from the metadata read above: one `read` for the whole key, not a doubling
    // buffer's four.
    let mut text = String::with_capacity(meta.len().min(4096) as usize + 1);
    f.take(4096)
        .read_to_string(&mut text)
        .map_err(io_err(path))?;
    MasterKey::from_file_text(&text, path)
}

/// Creates the key file (and its directory, mode 0700). When another process created it
/// first, its key wins and is returned.
pub(super) fn create_key(path: &Path) -> Result<MasterKey, KeyError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io_err(dir))?;
    let key = generate()?;
    let name = path
        .file_name()
        .map_or("master.key".into(), |n| n.to_string_lossy());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let _ = fs::remove_file(&tmp);
    let written = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(key.to_file_text().as_bytes())?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(io_err(path)(e));
    }
    // A hard link never replaces an existing file: the first creator wins.
    let linked = fs::hard_link(&tmp, path);
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(key)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => read_key(path),
        Err(e) => Err(io_err(path)(e)),
    }
}
