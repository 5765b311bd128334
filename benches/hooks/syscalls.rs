//! System calls per event: one run of each build's binary under `strace -f -c`, on the
//! small project, from the same prepared state as the timed runs. `-f` follows what the
//! binary starts: the `git` a hook runs and waits for, and, for the events that checkpoint
//! with git state, the capture it forks after answering (both builds do that).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::projects::{Bench, EVENTS, Event, Project};

/// Calls per system call name, from one run.
pub type Counts = BTreeMap<String, u64>;

/// The columns of the per-event table: a name and the system calls it sums.
pub const GROUPS: &[(&str, &[&str])] = &[
    ("openat", &["open", "openat", "openat2", "creat"]),
    (
        "statx",
        &["statx", "newfstatat", "fstat", "stat", "lstat", "fstatat64"],
    ),
    ("read", &["read", "pread64", "readv", "preadv", "preadv2"]),
    (
        "write",
        &["write", "pwrite64", "writev", "pwritev", "pwritev2"],
    ),
    ("flock", &["flock"]),
    (
        "fsync",
        &["fsync", "fdatasync", "sync_file_range", "syncfs", "sync"],
    ),
];

/// What the count found.
pub enum Syscalls {
    /// strace is not on PATH (or cannot trace here): the reason.
    NotCounted(String),
    /// Per event: this build's counts, and the baseline's when one is measured.
    Counted(BTreeMap<Event, (Counts, Option<Counts>)>),
}

/// Counts every event once per build, on the small project of each.
pub fn count(ours: (&Bench, &Project), baseline: Option<(&Bench, &Project)>) -> Syscalls {
    let Some(strace) = as_wrapper(&ours.0.dir) else {
        return Syscalls::NotCounted("strace not installed".into());
    };
    eprintln!("counting system calls with strace -f -c …");
    let mut counts = BTreeMap::new();
    for &e in EVENTS {
        let Some(mine) = traced(&strace, ours.0, ours.1, e) else {
            return Syscalls::NotCounted("strace could not trace the binary here".into());
        };
        let theirs = baseline.and_then(|(b, p)| traced(&strace, b, p, e));
        counts.insert(e, (mine, theirs));
    }
    Syscalls::Counted(counts)
}

/// strace on PATH, under a name waymark takes for a wrapper (`<dir>/strace-as/nice`, a
/// link to it). This build finds the Claude Code process of a hook by walking up past
/// shells and wrappers (`runtime::process::owner`); in the timed runs that is the
/// benchmark, as for the session the projects were prepared in. Run as `strace`, the hook
/// would take strace for a Claude Code process of its own: a new owner for the session,
/// and at a new session's start the old one still alive, so no crash to recover.
fn as_wrapper(dir: &Path) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let strace = std::env::split_paths(&path)
        .map(|d| d.join("strace"))
        .find(|p| p.is_file())?;
    let ok = Command::new(&strace)
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let link = dir.join("strace-as/nice");
    fs::create_dir_all(link.parent()?).ok()?;
    let _ = fs::remove_file(&link);
    std::os::unix::fs::symlink(&strace, &link).ok()?;
    ok.then_some(link)
}

/// One run of `e` under `strace -f -c`, from the state the timed runs start from.
fn traced(strace: &Path, bench: &Bench, p: &Project, e: Event) -> Option<Counts> {
    let out = bench.dir.join("strace.txt");
    let out_arg = out.to_string_lossy().into_owned();
    let strace = strace.to_string_lossy();
    let wrapper = [&*strace, "-f", "-c", "-o", out_arg.as_str()];
    p.fresh(bench);
    p.reset(e);
    let run = bench
        .waymark_under(Some(&wrapper), &p.root, &["hook", e.hook_name()])
        .stdin(fs::File::open(p.event_file(e)).ok()?)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    p.settle(e);
    let said = String::from_utf8_lossy(&run.stdout);
    if e == Event::SessionStartCrash && !said.contains("CRASH DETECTED") {
        eprintln!(
            "strace: {} did not report the crash on {}: {said}",
            bench.bin.display(),
            p.name
        );
    }
    let status = run.status;
    let text = fs::read_to_string(&out).ok()?;
    let _ = fs::remove_file(&out);
    let counts = parse(&text);
    (status.success() && counts.contains_key("total")).then_some(counts)
}

/// The summary `strace -c` writes: `% time  seconds  usecs/call  calls  [errors]  syscall`
/// per line, and a `total` line.
fn parse(text: &str) -> Counts {
    let mut counts = Counts::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if !(5..=6).contains(&fields.len()) {
            continue;
        }
        let (Ok(calls), Some(name)) = (fields[3].parse::<u64>(), fields.last()) else {
            continue;
        };
        *counts.entry((*name).to_string()).or_default() += calls;
    }
    counts
}

/// The sum of a group's system calls in `c`.
pub fn group(c: &Counts, names: &[&str]) -> u64 {
    names.iter().filter_map(|n| c.get(*n)).sum()
}

/// The cells of one event's row: `total` then each group, `this / baseline` when a
/// baseline was counted.
pub fn cells(s: &Syscalls, e: Event) -> Vec<String> {
    let Syscalls::Counted(all) = s else {
        return vec!["n/a".into(); GROUPS.len() + 1];
    };
    let Some((mine, theirs)) = all.get(&e) else {
        return vec!["n/a".into(); GROUPS.len() + 1];
    };
    let one = |names: &[&str]| match theirs {
        Some(t) => format!("{} / {}", group(mine, names), group(t, names)),
        None => group(mine, names).to_string(),
    };
    std::iter::once(one(&["total"]))
        .chain(GROUPS.iter().map(|(_, names)| one(names)))
        .collect()
}

/// Per event, the system calls this build makes more often than the baseline (or that the
/// baseline does not make at all), and those it makes less often: what there is to take
/// away to get back to round 2's cost.
pub fn render_beyond(o: &mut String, s: &Syscalls, label: &str) {
    let _ = writeln!(
        o,
        "## System calls: this build against {label}\n\n\
         One run of each binary under `strace -f -c` (its `git` and its forked capture \
         included), small project, from the state the timed runs start from.\n"
    );
    let all = match s {
        Syscalls::NotCounted(why) => {
            let _ = writeln!(o, "Not counted: {why}.\n");
            return;
        }
        Syscalls::Counted(all) => all,
    };
    if all.values().all(|(_, theirs)| theirs.is_none()) {
        let _ = writeln!(
            o,
            "No baseline measured (WAYMARK_BENCH_BASELINE=none): this build's counts are in the per-event table.\n"
        );
        return;
    }
    let _ = writeln!(
        o,
        "| event | total | this build makes beyond {label} | fewer than {label} |\n| --- | ---: | --- | --- |"
    );
    for (e, (mine, theirs)) in all {
        let Some(theirs) = theirs else {
            continue;
        };
        let (more, fewer) = differences(mine, theirs);
        let total = |c: &Counts| c.get("total").copied().unwrap_or(0);
        let _ = writeln!(
            o,
            "| {} | {} / {} | {} | {} |",
            e.label(),
            total(mine),
            total(theirs),
            or_none(&more),
            or_none(&fewer)
        );
    }
    let _ = writeln!(o);
}

/// The calls `mine` makes more often (`name +n`, `(new)` when the baseline makes none) and
/// less often (`name −n`) than `theirs`, each list from the largest difference down.
fn differences(mine: &Counts, theirs: &Counts) -> (Vec<String>, Vec<String>) {
    let mut diffs: Vec<(&str, i64, bool)> = mine
        .keys()
        .chain(theirs.keys())
        .filter(|n| *n != "total")
        .map(|n| {
            let (a, b) = (mine.get(n).copied(), theirs.get(n).copied());
            let d = a.unwrap_or(0) as i64 - b.unwrap_or(0) as i64;
            (n.as_str(), d, b.is_none())
        })
        .filter(|(_, d, _)| *d != 0)
        .collect();
    diffs.sort_by(|x, y| y.1.abs().cmp(&x.1.abs()).then(x.0.cmp(y.0)));
    diffs.dedup_by(|x, y| x.0 == y.0);
    let more = diffs
        .iter()
        .filter(|d| d.1 > 0)
        .map(|(n, d, new)| format!("{n} +{d}{}", if *new { " (new)" } else { "" }))
        .collect();
    let fewer = diffs
        .iter()
        .filter(|d| d.1 < 0)
        .map(|(n, d, _)| format!("{n} −{}", -d))
        .collect();
    (more, fewer)
}

fn or_none(list: &[String]) -> String {
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}
