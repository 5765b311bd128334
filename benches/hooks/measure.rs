//! Running one process and measuring it: wall time from spawn to reaped, and its peak
//! resident memory from `wait4`'s rusage (the child's own high-water mark, in KiB on Linux).

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One run of one process.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub wall: Duration,
    pub max_rss_kib: u64,
    pub exit_code: i32,
}

/// Spawns `cmd` with `stdin` as its standard input (stdout and stderr discarded), waits for
/// it with `wait4`, and returns the wall time and peak memory.
// The child is reaped by `wait4` below, which std cannot see.
#[allow(clippy::zombie_processes)]
pub fn run(cmd: &mut Command, stdin: &Path) -> Sample {
    let input = File::open(stdin).expect("event file");
    cmd.stdin(input).stdout(Stdio::null()).stderr(Stdio::null());
    let start = Instant::now();
    let child = cmd.spawn().expect("spawn");
    let (status, usage) = wait4(child.id());
    let wall = start.elapsed();
    Sample {
        wall,
        max_rss_kib: usage.ru_maxrss.max(0) as u64,
        exit_code: exit_code(status),
    }
}

/// Waits for `pid` and returns its wait status and resource usage. `std::process::Child`
/// cannot report rusage, so the child is reaped here instead (dropping the `Child`
/// afterwards only closes handles).
fn wait4(pid: u32) -> (i32, libc::rusage) {
    let mut status = 0;
    // SAFETY: rusage is plain old data; wait4 fills it for the child we spawned.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
        if r == pid as libc::pid_t {
            return (status, usage);
        }
        let err = std::io::Error::last_os_error();
        assert_eq!(
            err.kind(),
            std::io::ErrorKind::Interrupted,
            "wait4 failed: {err}"
        );
    }
}

fn exit_code(status: i32) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    }
}

/// Median, p99 and peak memory of a set of samples.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    pub runs: usize,
    pub median: Duration,
    pub p99: Duration,
    pub max_rss_kib: u64,
    /// Runs that did not exit 0 (a hook must always exit 0).
    pub failures: usize,
}

impl Stats {
    pub fn of(samples: &[Sample]) -> Stats {
        let mut walls: Vec<Duration> = samples.iter().map(|s| s.wall).collect();
        walls.sort();
        Stats {
            runs: walls.len(),
            median: percentile(&walls, 50.0),
            p99: percentile(&walls, 99.0),
            max_rss_kib: samples.iter().map(|s| s.max_rss_kib).max().unwrap_or(0),
            failures: samples.iter().filter(|s| s.exit_code != 0).count(),
        }
    }
}

/// Nearest-rank percentile of sorted values (the median of an even count is the mean of the
/// two middle values).
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    if p == 50.0 && sorted.len() % 2 == 0 {
        let n = sorted.len();
        return (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Instructions the process executed, counted by callgrind: unlike wall time, repeatable on
/// a loaded machine. `cmd` must already run under `valgrind --tool=callgrind`. Child
/// processes (git) are not counted.
pub fn instructions(cmd: &mut Command, stdin: &Path) -> Option<u64> {
    let out = cmd
        .stdin(File::open(stdin).ok()?)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stderr);
    let line = text.lines().find(|l| l.contains("Collected :"))?;
    line.rsplit(':')
        .next()?
        .trim()
        .replace(',', "")
        .parse()
        .ok()
}

/// The median latency of `fsync` on the disk under `dir`: the price of every durable
/// hook.json save (docs/design.md rule 2), which no code change can lower.
pub fn fsync_latency(dir: &Path) -> Duration {
    use std::io::Write;
    let path = dir.join("fsync-probe");
    let mut f = File::create(&path).expect("probe file");
    let mut times: Vec<Duration> = (0..30)
        .map(|_| {
            f.write_all(&[b'x'; 4096]).unwrap();
            let t = Instant::now();
            f.sync_all().unwrap();
            t.elapsed()
        })
        .collect();
    let _ = std::fs::remove_file(&path);
    times.sort();
    percentile(&times, 50.0)
}

/// Makes the benchmark the child subreaper of everything it starts: a process a hook
/// forks and leaves behind (the capture after the answer) becomes the benchmark's child
/// when the hook exits, and [`reap_orphans`] can wait for it, whatever the build.
#[cfg(target_os = "linux")]
pub fn become_subreaper() {
    // SAFETY: PR_SET_CHILD_SUBREAPER takes an integer flag and touches no memory of ours.
    let r = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    assert_eq!(r, 0, "prctl(PR_SET_CHILD_SUBREAPER)");
}

/// Elsewhere (macOS) there is no subreaper: an orphaned capture goes to launchd, and the
/// benchmark's numbers there leave its cost out (BENCHMARKS.md measures on Linux).
#[cfg(not(target_os = "linux"))]
pub fn become_subreaper() {}

/// Reaps the orphans left to the benchmark, waiting up to `wait` for those still running.
/// Only called when no child of the benchmark's own is running (between timed runs).
pub fn reap_orphans(wait: Duration) {
    let start = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status of a child we are the parent (subreaper) of.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        match pid {
            p if p > 0 => continue,
            0 if start.elapsed() < wait => std::thread::sleep(Duration::from_micros(500)),
            _ => return,
        }
    }
}
