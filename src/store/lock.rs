//! An advisory exclusive lock on a sibling `.lock` file, with a timeout.
//!
//! waymark runs as many short processes at once (Claude Code runs parallel tool calls'
//! hooks concurrently), so every read-modify-write of a shared file happens under one of
//! these. The lock file is separate from the data file so that an atomic rename of the
//! data file never invalidates a held lock.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use fs4::{FileExt, TryLockError};

/// How long a writer waits for a lock before giving up (DESIGN.md rule 2).
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a waiting writer retries.
pub const LOCK_RETRY: Duration = Duration::from_millis(50);

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot open lock file {path}: {source}")]
    Open { path: PathBuf, source: io::Error },
    #[error("timed out after {0:?} waiting for lock {1}")]
    Timeout(Duration, PathBuf),
}

/// Held lock; released on drop.
#[derive(Debug)]
pub struct FileLock {
    file: File,
}

impl FileLock {
    /// Locks `<path>.lock`, waiting up to [`LOCK_TIMEOUT`].
    pub fn acquire(path: &Path) -> Result<FileLock, LockError> {
        Self::acquire_with(path, LOCK_TIMEOUT)
    }

    pub fn acquire_with(path: &Path, timeout: Duration) -> Result<FileLock, LockError> {
        let lock_path = lock_path(path);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|source| LockError::Open {
                path: lock_path.clone(),
                source,
            })?;
        let start = Instant::now();
        loop {
            match FileExt::try_lock(&file) {
                Ok(()) => return Ok(FileLock { file }),
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(source)) => {
                    return Err(LockError::Open {
                        path: lock_path,
                        source,
                    });
                }
            }
            if start.elapsed() >= timeout {
                return Err(LockError::Timeout(timeout, lock_path));
            }
            thread::sleep(LOCK_RETRY);
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = FileExt::unlock(&self.file);
    }
}

fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_locker_times_out_then_succeeds_after_release() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.json");
        let held = FileLock::acquire(&p).unwrap();
        let err = FileLock::acquire_with(&p, Duration::from_millis(120)).unwrap_err();
        assert!(matches!(err, LockError::Timeout(..)));
        drop(held);
        FileLock::acquire_with(&p, Duration::from_millis(120)).unwrap();
    }
}
