//! Marks the writes a hook must not be cut out of by its deadline.
//!
//! The deadline (DESIGN.md rule 1) ends a hook that is taking too long, and that is safe at
//! any instant (rule 2: replaced files are old-or-new, appends at most torn). But ending a
//! hook that is queued for the hook.json lock, or holding it, loses its event: with 32
//! hooks racing (the concurrency test), the last in the queue passed the 2 s deadline and
//! its step or file vanished. So the state writes mark themselves here, and the deadline
//! watchdog grants them a bounded grace ([`GRACE`]) to finish; optional work (post-hooks,
//! file snapshots) is still skipped at the deadline.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How long past the deadline a hook may still finish a state write: the lock timeout
/// plus a second to write.
pub const GRACE: Duration = Duration::from_secs(super::lock::LOCK_TIMEOUT.as_secs() + 1);

static IN_PROGRESS: AtomicUsize = AtomicUsize::new(0);

/// A state write in progress; ends when dropped.
#[must_use]
pub struct Critical(());

/// Marks a state write as in progress until the returned guard is dropped.
pub fn enter() -> Critical {
    IN_PROGRESS.fetch_add(1, Ordering::SeqCst);
    Critical(())
}

impl Drop for Critical {
    fn drop(&mut self) {
        IN_PROGRESS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// True while any state write is waiting for its lock or writing.
pub fn in_progress() -> bool {
    IN_PROGRESS.load(Ordering::SeqCst) > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_count_and_release() {
        let a = enter();
        assert!(in_progress());
        let b = enter();
        drop(a);
        assert!(in_progress());
        drop(b);
        // Other tests may hold guards concurrently; only check ours were released by
        // entering and leaving once more.
        drop(enter());
    }
}
