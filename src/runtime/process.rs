//! Which Claude Code process runs this hook, and whether a process recorded earlier still
//! runs: what tells a session that is working in another window from one that crashed.
//!
//! Claude Code runs a hook as `/bin/sh -c <command>` (and the plugin's launcher is a shell
//! script that execs waymark), and a user may wrap the command (`timeout 10 waymark hook
//! …`, `nice`, `env`, `stdbuf`), so the Claude Code process is the nearest ancestor that
//! is neither a shell nor such a wrapper: a wrapper exits with the hook, Claude Code does
//! not. A process is named by its pid and its start time (field 22 of
//! `/proc/<pid>/stat`, in clock ticks since boot), so a pid reused by another process is
//! not mistaken for it. Linux only: elsewhere there is no owner, and crash detection
//! falls back to the session's status alone.

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
/// shell nor a wrapper).
pub fn owner() -> Option<Owner> {
    // SAFETY: getppid has no preconditions and cannot fail.
    let mut pid = unsafe { libc::getppid() } as u32;
    for _ in 0..MAX_DEPTH {
        let stat = Stat::of(pid)?;
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
    Stat::of(owner.pid).is_some_and(|s| s.start == owner.start)
}

/// What waymark reads of `/proc/<pid>/stat`.
struct Stat {
    comm: String,
    ppid: u32,
    start: u64,
}

impl Stat {
    fn of(pid: u32) -> Option<Stat> {
        use std::io::Read;
        // Into a buffer the line fits in (a few hundred bytes; 52 numbers and a name of 16
        // at most): /proc says its files are empty, so `read_to_string` asks for the size,
        // then reads 32 bytes and doubles, a system call each (7 in all, against 2 here).
        let mut buf = [0u8; 2048];
        let mut file = std::fs::File::open(format!("/proc/{pid}/stat")).ok()?;
        let mut len = 0;
        while len < buf.len() {
            match file.read(&mut buf[len..]).ok()? {
                0 => break,
                n => len += n,
            }
        }
        parse(std::str::from_utf8(&buf[..len]).ok()?)
    }
}

/// Parses a `/proc/<pid>/stat` line. The command name is in parentheses and may hold
/// spaces and parentheses itself, so the fields are counted from the last `)`.
fn parse(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    // After ")": state (field 3), ppid (4), …, starttime (22).
    let fields: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some(Stat { comm, ppid, start })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_past_a_name_with_spaces_and_parentheses() {
        let line = "4242 (my (odd) name) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10 18446744073709551615";
        let s = parse(line).unwrap();
        assert_eq!(
            (s.comm.as_str(), s.ppid, s.start),
            ("my (odd) name", 17, 987654)
        );
        assert!(parse("garbage").is_none());
    }

    #[test]
    fn this_process_is_alive_and_a_changed_start_time_is_not() {
        let me = std::process::id();
        let stat = Stat::of(me).expect("/proc is readable on Linux");
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
        let comm = Stat::of(o.pid).unwrap().comm;
        assert!(!IN_BETWEEN.contains(&comm.as_str()), "{comm}");
    }
}
