//! The hook's deadline (docs/design.md rule 1): a hook still running when it passes
//! writes a line to the log, one on stderr, and exits 0.
//!
//! That is safe at any instant (rule 2: replaced files are old-or-new, appends at most
//! torn), except for a hook in the middle of a state write: ending it would lose its
//! event. So a lock is never waited for past the deadline ([`lock_wait`]: a hook that
//! cannot get the task's lock in time keeps its event in the pending journal instead),
//! state writes mark themselves ([`enter`]), and the deadline grants a write under way a
//! bounded grace ([`GRACE`]); optional work (post-hooks, file snapshots) is skipped near
//! the deadline (`Ctx::short_of_time`, which asks [`left`]).
//!
//! The deadline is a timer signal (SIGALRM), not a watchdog thread: a thread started on
//! every event cost more than most events' own work. The handler does only what is safe in
//! a signal handler: it reads an atomic, re-arms the timer, writes lines formatted when the
//! timer was armed, and `_exit`s.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long past the deadline a hook may still finish a state write it began: a lock is
/// never waited for past the deadline ([`lock_wait`]), so this is the time to write.
pub const GRACE: Duration = Duration::from_secs(1);
/// What a hook keeps of its deadline when it waits for a lock: enough to keep its event
/// for later (`handlers::pending`) and exit.
const RESERVE: Duration = Duration::from_millis(250);
/// How often a state write that holds up the exit is checked again.
const RECHECK: Duration = Duration::from_millis(2);

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

/// How long a lock may be waited for: `default`, and in a hook (the deadline armed) never
/// past the deadline less [`RESERVE`]. A hook that cannot get the task's lock in that time
/// keeps its event for the next one instead of stalling the tool call: a stuck process
/// holding the lock costs each tool call at most the deadline, and loses nothing.
pub fn lock_wait(default: Duration) -> Duration {
    left().map_or(default, |left| left.saturating_sub(RESERVE).min(default))
}

/// The time left before the deadline; `None` when none is armed (a command, not a hook).
pub fn left() -> Option<Duration> {
    ARMED
        .get()
        .map(|a| a.deadline.saturating_sub(a.started.elapsed()))
}

/// What the signal handler needs, prepared when the timer is armed.
struct Armed {
    started: Instant,
    deadline: Duration,
    state_dir: CString,
    log: CString,
    /// Log and stderr lines: the deadline passed with nothing held up, or after a state
    /// write was let finish.
    plain: (Vec<u8>, Vec<u8>),
    graced: (Vec<u8>, Vec<u8>),
    /// Set once a state write was seen in progress at the deadline.
    held: std::sync::atomic::AtomicBool,
}

static ARMED: OnceLock<Armed> = OnceLock::new();

/// Ends the process (exit 0) `deadline` from now, unless it exits first; the event is named
/// in the lines written to `<state_dir>/waymark.log` and stderr.
pub fn arm(state_dir: &Path, event: &str, deadline: Duration) {
    let at = chrono::Utc::now() + chrono::Duration::from_std(deadline).unwrap_or_default();
    let lines = |what: &str| {
        let message = format!("deadline of {deadline:?} reached: {what}");
        let log = crate::store::log::line(crate::store::log::Level::Error, event, &message, at);
        let stderr = format!("waymark: {event}: deadline reached; state written so far is kept\n");
        (log.into_bytes(), stderr.into_bytes())
    };
    let log = state_dir.join(crate::store::log::LOG_FILE);
    let armed = Armed {
        started: Instant::now(),
        deadline,
        state_dir: CString::new(state_dir.as_os_str().as_bytes()).unwrap_or_default(),
        log: CString::new(log.as_os_str().as_bytes()).unwrap_or_default(),
        plain: lines("leaving with what was written"),
        graced: lines("a state write in progress was let finish, then left"),
        held: std::sync::atomic::AtomicBool::new(false),
    };
    if ARMED.set(armed).is_err() {
        return; // armed once per process
    }
    // SAFETY: a handler that only does async-signal-safe work (see `on_alarm`), installed
    // with a zeroed sigaction whose mask is emptied.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_alarm as extern "C" fn(libc::c_int) as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut());
    }
    set_timer(deadline);
}

fn set_timer(after: Duration) {
    let value = libc::timeval {
        tv_sec: after.as_secs() as _,
        tv_usec: after.subsec_micros().max(1) as _,
    };
    let timer = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: value,
    };
    // SAFETY: setitimer with a valid itimerval; the old value is not asked for.
    unsafe { libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) };
}

/// The SIGALRM handler: re-arm while a state write is in its grace, else write the
/// prepared lines and `_exit(0)`.
extern "C" fn on_alarm(_signal: libc::c_int) {
    let Some(armed) = ARMED.get() else { return };
    if in_progress() && armed.started.elapsed() < armed.deadline + GRACE {
        armed.held.store(true, Ordering::SeqCst);
        set_timer(RECHECK);
        return;
    }
    let (log, stderr) = if armed.held.load(Ordering::SeqCst) {
        &armed.graced
    } else {
        &armed.plain
    };
    // SAFETY: mkdir, open, write, close and _exit are async-signal-safe; the buffers were
    // made before the timer was armed and are never changed.
    unsafe {
        libc::mkdir(armed.state_dir.as_ptr(), 0o755);
        let flags =
            libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let fd = libc::open(armed.log.as_ptr(), flags, 0o644);
        if fd >= 0 {
            libc::write(fd, log.as_ptr().cast(), log.len());
            libc::close(fd);
        }
        libc::write(2, stderr.as_ptr().cast(), stderr.len());
        libc::_exit(0);
    }
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
