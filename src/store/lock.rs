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
use std::time::Duration;

use fs4::{FileExt, TryLockError};

/// How long a writer waits for a lock before giving up (docs/design.md rule 2).
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(5);

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
    /// Always `Some` but in [`FileLock::release`], which takes it out.
    file: Option<File>,
}

impl FileLock {
    /// Locks `<path>.lock`, waiting up to [`LOCK_TIMEOUT`], and in a hook never past what
    /// its deadline leaves ([`crate::store::deadline::lock_wait`]).
    pub fn acquire(path: &Path) -> Result<FileLock, LockError> {
        Self::acquire_with(path, crate::store::deadline::lock_wait(LOCK_TIMEOUT))
    }

    /// Locks `<path>.lock` if nobody holds it; `None` when somebody does.
    pub fn try_acquire(path: &Path) -> Result<Option<FileLock>, LockError> {
        match Self::acquire_with(path, Duration::ZERO) {
            Ok(lock) => Ok(Some(lock)),
            Err(LockError::Timeout(..)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub fn acquire_with(path: &Path, timeout: Duration) -> Result<FileLock, LockError> {
        let lock_path = lock_path(path);
        let open = || {
            let mut options = OpenOptions::new();
            options.create(true).truncate(false).write(true);
            super::nofollow::open(&lock_path, &mut options).map(|(f, _)| f)
        };
        // The directory is made only when it is missing: most locks are taken in one that
        // exists, and checking first would cost every event a system call.
        let opened = match open() {
            Err(e) if e.kind() == io::ErrorKind::NotFound => lock_path
                .parent()
                .map_or(Ok(()), super::make_dir)
                .and_then(|()| open()),
            other => other,
        };
        let file = opened.map_err(|source| LockError::Open {
            path: lock_path.clone(),
            source,
        })?;
        Self::hold(file, &lock_path, timeout)
    }

    /// Locks `file` itself (opened by the caller, named `path`), waiting up to `timeout`:
    /// for a small file rewritten in place, never replaced by a rename, whose lock needs
    /// no file of its own (`events.seen`).
    pub fn hold(file: File, path: &Path, timeout: Duration) -> Result<FileLock, LockError> {
        let lock_path = path.to_path_buf();
        match FileExt::try_lock(&file) {
            Ok(()) => return Ok(FileLock { file: Some(file) }),
            Err(TryLockError::WouldBlock) if timeout.is_zero() => {
                return Err(LockError::Timeout(timeout, lock_path));
            }
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(source)) => {
                return Err(LockError::Open {
                    path: lock_path,
                    source,
                });
            }
        }
        wait_in_queue(file, &lock_path, timeout)
    }

    /// The locked file, to read and write through (a lock [`FileLock::hold`] took).
    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("held")
    }

    /// Unlocks, keeping the file open: it is locked again later with [`FileLock::hold`].
    pub fn release(mut self) -> File {
        let file = self.file.take().expect("held");
        let _ = FileExt::unlock(&file);
        file
    }

    /// Lets the lock outlive this process's hold of it: a process that forks hands its
    /// copy of the locked file to the child, and leaves without unlocking (an unlock would
    /// release the child's hold too: a `flock` belongs to the open file, which both
    /// share). The lock goes when the last of them closes it, at the child's exit.
    pub fn hand_to_child(self) {
        std::mem::forget(self);
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        if let Some(file) = &self.file {
            let _ = FileExt::unlock(file);
        }
    }
}

/// Waits for a contended lock in the kernel's queue (a blocking `flock` on a duplicate of
/// the descriptor, in a helper thread) rather than by polling: 32 hooks racing for one
/// hook.json each get the lock the moment it is released, in turn, where polling every
/// 50 ms starved some of them past the hook deadline (the concurrency test found it).
/// If the timeout passes first, the helper lets go of the lock as soon as it gets it.
fn wait_in_queue(file: File, lock_path: &Path, timeout: Duration) -> Result<FileLock, LockError> {
    let open_err = |source| LockError::Open {
        path: lock_path.to_path_buf(),
        source,
    };
    let waiter = file.try_clone().map_err(open_err)?;
    let (tx, rx) = mpsc::channel();
    thread::Builder::new()
        .name("waymark-lock".into())
        .spawn(move || {
            let got = FileExt::lock(&waiter);
            let held = got.is_ok();
            if tx.send(got).is_err() && held {
                // Nobody waits any more: hand the lock straight back.
                let _ = FileExt::unlock(&waiter);
            }
        })
        .map_err(open_err)?;
    match rx.recv_timeout(timeout) {
        Ok(Ok(())) => Ok(FileLock { file: Some(file) }),
        Ok(Err(source)) => Err(open_err(source)),
        Err(_) => Err(LockError::Timeout(timeout, lock_path.to_path_buf())),
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
    fn a_waiter_gets_the_lock_as_soon_as_it_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.json");
        let held = FileLock::acquire(&p).unwrap();
        let p2 = p.clone();
        let waiter = thread::spawn(move || {
            let start = std::time::Instant::now();
            let lock = FileLock::acquire_with(&p2, Duration::from_secs(5)).unwrap();
            (start.elapsed(), lock)
        });
        thread::sleep(Duration::from_millis(100));
        drop(held);
        let (waited, _lock) = waiter.join().unwrap();
        assert!(waited >= Duration::from_millis(90), "{waited:?}");
        assert!(waited < Duration::from_millis(1000), "{waited:?}");
    }

    #[test]
    fn a_timed_out_waiter_does_not_keep_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.json");
        let held = FileLock::acquire(&p).unwrap();
        assert!(FileLock::acquire_with(&p, Duration::from_millis(50)).is_err());
        drop(held);
        // The abandoned helper may take the lock for a moment; it must hand it back.
        FileLock::acquire_with(&p, Duration::from_secs(2)).unwrap();
    }
}
