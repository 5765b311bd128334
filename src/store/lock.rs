//! An advisory exclusive lock on a sibling `.lock` file, with a timeout.
//!
//! waymark runs as many short processes at once (Claude Code runs parallel tool calls'
//! hooks concurrently), so every read-modify-write of a shared file happens under one of
//! these. The lock file is separate from the data file so that an atomic rename of the
//! data file never invalidates a held lock.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use fs4::{FileExt, TryLockError};

/// How long a writer waits for a lock before giving up (DESIGN.md rule 2).
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a waiting writer retries when it cannot wait in the kernel's queue.
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
        match FileExt::try_lock(&file) {
            Ok(()) => Ok(FileLock { file }),
            Err(TryLockError::WouldBlock) => wait_in_queue(file, lock_path, timeout),
            Err(TryLockError::Error(source)) => Err(LockError::Open {
                path: lock_path,
                source,
            }),
        }
    }
}

/// Waits for a held lock in the kernel's queue, from a helper thread so that the wait can
/// time out. A waiter there is woken the moment the lock is released, roughly in order of
/// arrival; retrying every [`LOCK_RETRY`] instead left the lock idle between tries and let
/// newcomers overtake old waiters, so that with 32 processes at once some waited past the
/// hook deadline and their events were lost. A lock the helper gets after the timeout is
/// released at once: nobody receives it, so its file is closed.
fn wait_in_queue(file: File, lock_path: PathBuf, timeout: Duration) -> Result<FileLock, LockError> {
    let waiter = file.try_clone();
    let (tx, rx) = mpsc::channel();
    let spawned = waiter.map(|waiter| {
        thread::Builder::new()
            .name("waymark-lock".into())
            .spawn(move || {
                let got = FileExt::lock(&waiter).map(|()| waiter);
                let _ = tx.send(got);
            })
    });
    if !matches!(spawned, Ok(Ok(_))) {
        return poll(file, lock_path, timeout);
    }
    match rx.recv_timeout(timeout) {
        Ok(Ok(file)) => Ok(FileLock { file }),
        Ok(Err(source)) => Err(LockError::Open {
            path: lock_path,
            source,
        }),
        Err(_) => Err(LockError::Timeout(timeout, lock_path)),
    }
}

/// The fallback when no thread can be started: try every [`LOCK_RETRY`].
fn poll(file: File, lock_path: PathBuf, timeout: Duration) -> Result<FileLock, LockError> {
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

    #[test]
    fn waiters_queue_and_none_is_lost() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("count");
        std::fs::write(&p, "0").unwrap();
        thread::scope(|s| {
            for _ in 0..16 {
                s.spawn(|| {
                    for _ in 0..20 {
                        let _held = FileLock::acquire(&p).unwrap();
                        let n: u32 = std::fs::read_to_string(&p).unwrap().parse().unwrap();
                        std::fs::write(&p, (n + 1).to_string()).unwrap();
                    }
                });
            }
        });
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "320");
    }
}
