//! Which Claude Code process runs this hook, and whether a process recorded earlier still
//! runs: what tells a session that is working in another window from one that crashed.
//!
//! Claude Code runs a hook as `/bin/sh -c <command>` (and the plugin's launcher is a shell
//! script that execs waymark), and a user may wrap the command (`timeout 10 waymark hook
//! …`, `nice`, `env`, `stdbuf`), so the Claude Code process is the nearest ancestor that
//! is neither a shell nor such a wrapper: a wrapper exits with the hook, Claude Code does
//! not. A process is named by its pid and its start time, so a pid reused by another
//! process is not mistaken for it. Each system is asked its own way: Linux through
//! `/proc/<pid>/stat` ([`procfs`]: start in clock ticks since boot), macOS through
//! `proc_pidinfo` ([`libproc`]: start in microseconds since the epoch). Elsewhere there is
//! no owner, and crash detection falls back to the session's status alone.

pub use waymark_core::task::Owner;

/// Programs that stand between Claude Code and a hook: shells, and the wrappers a user
/// may put before the command (each runs the hook as its child, or execs it).
const IN_BETWEEN: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "ash", "busybox", "timeout", "nice", "ionice", "env",
    "stdbuf", "nohup", "setsid", "chrt", "taskset", "time", "flock", "unbuffer",
];

/// How many ancestors are looked at before giving up.
const MAX_DEPTH: usize = 10;

/// The Claude Code process running this hook (the nearest ancestor that is neither a
/// shell nor a wrapper). Looked up once: it is the same for the whole of this process,
/// and an event asks for it at each step that records a session.
pub fn owner() -> Option<Owner> {
    static OWNER: std::sync::OnceLock<Option<Owner>> = std::sync::OnceLock::new();
    *OWNER.get_or_init(find_owner)
}

fn find_owner() -> Option<Owner> {
    // SAFETY: getppid has no preconditions and cannot fail.
    let mut pid = unsafe { libc::getppid() } as u32;
    for _ in 0..MAX_DEPTH {
        let stat = os::stat(pid)?;
        if !IN_BETWEEN.contains(&stat.comm.as_str()) {
            return Some(Owner {
                pid,
                start: stat.start,
            });
        }
        pid = stat.ppid;
        if pid <= 1 {
            return None;
        }
    }
    None
}

/// Whether `owner` still runs (the same process: same pid, same start time).
pub fn alive(owner: &Owner) -> bool {
    os::stat(owner.pid).is_some_and(|s| s.start == owner.start)
}

/// What waymark reads of a process: its name, its parent, when it started.
struct Stat {
    comm: String,
    ppid: u32,
    start: u64,
}

#[cfg(target_os = "linux")]
mod procfs;
#[cfg(target_os = "linux")]
use procfs as os;

#[cfg(target_os = "macos")]
mod libproc;
#[cfg(target_os = "macos")]
use libproc as os;

/// Elsewhere: no process is known, so no session has an owner.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod os {
    pub(super) fn stat(_pid: u32) -> Option<super::Stat> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_changed_start_time_is_not() {
        let me = std::process::id();
        let stat = os::stat(me).expect("this process is known");
        let owner = Owner {
            pid: me,
            start: stat.start,
        };
        assert!(alive(&owner));
        assert!(!alive(&Owner {
            start: stat.start + 1,
            ..owner
        }));
        assert!(!alive(&Owner {
            pid: u32::MAX - 1,
            start: 1
        }));
    }

    #[test]
    fn the_owner_is_the_nearest_ancestor_that_is_not_a_shell_or_a_wrapper() {
        // Run from a shell, the test binary's owner is whatever started the shell; run
        // directly, it is the test runner. Either way it is a live, non-shell process.
        let o = owner().expect("an owner");
        assert!(alive(&o));
        let comm = os::stat(o.pid).unwrap().comm;
        assert!(!IN_BETWEEN.contains(&comm.as_str()), "{comm}");
    }
}
