//! The report: each budget of docs/design.md beside the measured figure, then the details.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use crate::measure::{Stats, ms};
use crate::projects::{EVENTS, Event};
use crate::syscalls::{self, Syscalls};
use crate::{Concurrency, Receipts, Rewind};

/// Figures per event and project (the index into [`Results::projects`]).
pub type PerProject = BTreeMap<(Event, usize), Stats>;

pub struct Results<'a> {
    pub runs: usize,
    pub trace_max: usize,
    /// The floor over every round.
    pub floor: Stats,
    /// The floor measured in each event's own rounds: the reference of that event's ratio.
    pub floors: &'a BTreeMap<Event, Stats>,
    /// Instructions per (event, project) for the small project and the smallest and
    /// largest trace (`(None, 0)`: the floor); empty without valgrind.
    pub instructions: &'a BTreeMap<(Option<Event>, usize), u64>,
    /// Project names; index 0 is the small project, the reference of every ratio.
    pub projects: &'a [String],
    pub stats: &'a PerProject,
    /// The baseline binary (round 2) and its figures, timed in the same rounds on its own
    /// projects (keyed as `stats`; a variant it has no project for is missing).
    pub baseline: Option<(&'a std::path::Path, &'a PerProject)>,
    /// System calls per event on the small project, both builds.
    pub syscalls: &'a Syscalls,
    pub concurrency: &'a Concurrency,
    pub receipts: &'a Receipts,
    pub rewind: &'a Rewind,
    pub walk: &'a crate::Walk,
    pub monorepos: &'a [crate::monorepo::Monorepo],
    pub at_scale: &'a crate::at_scale::AtScale,
    pub log_problems: &'a [(String, Vec<String>)],
    pub elapsed: Duration,
    /// Median fsync latency of the disk the projects are on.
    pub fsync: Duration,
    /// One event run directly, under `sh -c`, and as the registered command.
    pub launch: &'a crate::launch::Launch,
}

/// `1234567` → `1,234,567`.
pub fn count(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn holds(ok: bool) -> &'static str {
    if ok { "yes" } else { "**NO**" }
}

impl Results<'_> {
    fn get(&self, e: Event, project: usize) -> Stats {
        self.stats[&(e, project)]
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.projects.iter().position(|p| p == name)
    }

    /// The event on the small project against the floor measured in its own rounds.
    fn x_floor(&self, e: Event) -> f64 {
        ms(self.get(e, 0).median) / ms(self.floors[&e].median)
    }

    /// The baseline's figures of `e` on `project`, when it was measured there.
    fn base(&self, e: Event, project: usize) -> Option<Stats> {
        self.baseline
            .and_then(|(_, b)| b.get(&(e, project)).copied())
    }

    /// This build against the baseline: the ratio of their medians.
    fn x_base(&self, e: Event, project: usize) -> Option<f64> {
        let b = self.base(e, project)?;
        Some(ms(self.get(e, project).median) / ms(b.median))
    }

    fn ratio(&self, e: Event, project: usize, reference: usize) -> f64 {
        ms(self.get(e, project).median) / ms(self.get(e, reference).median)
    }
}

pub fn render(r: &Results) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# waymark benchmark\n");
    let _ = writeln!(
        o,
        "{}; fsync on this disk: median {:.2} ms; {} runs per event and project; whole run {:.0} s.\n",
        machine(),
        ms(r.fsync),
        r.runs,
        r.elapsed.as_secs_f64()
    );
    if let Some((bin, _)) = r.baseline {
        let _ = writeln!(
            o,
            "Beside this build, in the same interleaved rounds (floor, this build, round 2, for each event and project), on projects it generated itself: round 2, `{}`.\n",
            bin.display()
        );
    }
    budgets(&mut o, r);
    per_event(&mut o, r);
    syscalls::render_beyond(&mut o, r.syscalls, "round 2");
    against_baseline(&mut o, r);
    scaling(&mut o, r);
    concurrency(&mut o, r.concurrency);
    let _ = writeln!(o, "## Receipts\n");
    match r.receipts {
        Receipts::NotBuilt(why) => {
            let _ = writeln!(o, "`waymark receipts --verify`: {why}\n");
        }
        Receipts::Measured {
            receipts,
            stats,
            verified,
        } => {
            let _ = writeln!(
                o,
                "`waymark receipts --verify` on {} receipts: median {:.2} ms, p99 {:.2} ms, peak {:.1} MiB, {}\n",
                count(*receipts),
                ms(stats.median),
                ms(stats.p99),
                mib(stats.max_rss_kib),
                if *verified {
                    "every signature verified"
                } else {
                    "**verification FAILED**"
                }
            );
        }
    }
    if r.log_problems.is_empty() {
        let _ = writeln!(
            o,
            "waymark.log: no errors or warnings in any project (besides the crash warnings the crash-recovery event is meant to log)."
        );
    } else {
        let _ = writeln!(o, "## waymark.log problems\n");
        for (p, lines) in r.log_problems {
            let _ = writeln!(o, "- {p}: {} lines, first: `{}`", lines.len(), lines[0]);
        }
    }
    o
}

/// One row of the budgets' table: the budget, the measured figure, whether it holds.
type Row = (String, String, bool);

/// The table of every budget beside its measured figure, and whether they all hold.
fn budgets(o: &mut String, r: &Results) {
    let failures: usize = r.stats.values().map(|s| s.failures).sum();
    let mut rows = Vec::from(floor_rows(r));
    rows.insert(1, launcher_row(r.launch));
    rows.push(caps_row(r));
    rows.push(trace_row(r));
    rows.extend(crash_and_memory_rows(r));
    rows.push(concurrency_row(r.concurrency));
    rows.extend(rewind_rows(r));
    rows.push(walk_row(r.walk));
    rows.extend(r.monorepos.iter().flat_map(monorepo_rows));
    rows.extend(at_scale_rows(r.at_scale));
    rows.push((
        "every hook run exits 0".to_string(),
        format!("{failures} non-zero exits"),
        failures == 0,
    ));
    let _ = writeln!(o, "## Budgets (docs/design.md)\n");
    let _ = writeln!(o, "| budget | measured | holds |\n| --- | --- | --- |");
    for (budget, measured, ok) in &rows {
        let _ = writeln!(o, "| {budget} | {measured} | {} |", holds(*ok));
    }
    let failed = rows.iter().filter(|r| !r.2).count();
    let _ = writeln!(
        o,
        "\n{}\n",
        if failed == 0 {
            "Every budget holds.".to_string()
        } else {
            format!("{failed} of {} budgets do NOT hold.", rows.len())
        }
    );
}

/// The worst event against its floor: of the events that run no git, and of those that
/// checkpoint with git state.
fn floor_rows(r: &Results) -> [Row; 2] {
    let small = 0;
    let floor = |e: Event| ms(r.floors[&e].median);
    // The worst event of a kind, as a ratio to the floor.
    let worst_of = |git: bool| {
        EVENTS
            .iter()
            .filter(|e| !e.runs_git() && e.checkpoints_with_git() == git)
            .map(|&e| (e, r.x_floor(e)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap()
    };
    let (plain_event, plain_ratio) = worst_of(false);
    let (git_event, git_ratio) = worst_of(true);
    [
        (
            "every hook event that runs no git, as Claude Code runs it (`/bin/sh -c \"<registered command>\"`; crash recovery's git has its own budget below): median ≤ 1.5× `sh -c` + the C floor (a C program that only reads its stdin)".to_string(),
            format!(
                "worst {plain_ratio:.2}× ({}, {:.2} ms; its floor {:.2} ms)",
                plain_event.label(),
                ms(r.get(plain_event, small).median),
                floor(plain_event)
            ),
            plain_ratio <= 1.5,
        ),
        (
            "an event that checkpoints with git state (commit, push, validation, PreCompact), as Claude Code runs it: median ≤ 2.0× that floor".to_string(),
            format!(
                "worst {git_ratio:.2}× ({}, {:.2} ms; its floor {:.2} ms)",
                git_event.label(),
                ms(r.get(git_event, small).median),
                floor(git_event)
            ),
            git_ratio <= 2.0,
        ),
    ]
}

/// The registered command (the launcher read into Claude Code's shell) against a command
/// naming the binary itself.
fn launcher_row(l: &crate::launch::Launch) -> Row {
    let x = l.sh_launcher.median.as_secs_f64() / l.sh_binary.median.as_secs_f64();
    (
        "the registered command (launcher included) ≤ 1.10× `sh -c` + the binary alone".to_string(),
        format!(
            "{x:.2}× (PostToolUse Write: {:.2} ms against {:.2} ms)",
            ms(l.sh_launcher.median),
            ms(l.sh_binary.median)
        ),
        x <= 1.10,
    )
}

/// The worst event with hook.json at its caps, against the same event on the small state.
fn caps_row(r: &Results) -> Row {
    let caps = r.index("hook.json max").expect("hook.json max");
    let (caps_event, caps_ratio) = EVENTS
        .iter()
        .map(|&e| (e, r.ratio(e, caps, 0)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    // Design: ≤ 1.15×, or ≤ 1.25× where only plain code gets there (BENCHMARKS.md says
    // which events need the wider bound and why).
    let plain = if caps_ratio > 1.15 && caps_ratio <= 1.25 {
        " (within the 1.25× of plain code)"
    } else {
        ""
    };
    (
        "any event with hook.json at its caps (50 checkpoints, 200 history events, 113 steps, 60 receipts): ≤ 1.15× the same event on a small state (≤ 1.25× if only plain code gets there)".to_string(),
        format!("worst {caps_ratio:.2}× ({}){plain}", caps_event.label()),
        caps_ratio <= 1.25,
    )
}

/// The worst event with the largest trace against the same with 1,000 records: by
/// instructions when callgrind counted them, else by wall time.
fn trace_row(r: &Results) -> Row {
    let (t1k, tmax) = (
        r.index("trace 1,000").expect("trace 1,000"),
        r.index(&format!("trace {}", count(r.trace_max)))
            .expect("largest trace"),
    );
    let (worst_event, worst_trace) = EVENTS
        .iter()
        .map(|&e| (e, r.ratio(e, tmax, t1k)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    // Instructions do not move with the load of a shared machine; when callgrind counted
    // them, they decide whether the cost grows with the trace, and the wall-time ratio
    // (whose median jumps with other processes' disk traffic) is shown beside them.
    let instr_ratio = |e: Event| -> Option<f64> {
        let a = r.instructions.get(&(Some(e), t1k))?;
        let b = r.instructions.get(&(Some(e), tmax))?;
        Some(*b as f64 / *a as f64)
    };
    let worst_instr = EVENTS
        .iter()
        .filter_map(|&e| instr_ratio(e).map(|x| (e, x)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    (
        format!(
            "the same events with a {}-record trace: ≤ 1.05× the cost with 1,000 records",
            count(r.trace_max)
        ),
        match worst_instr {
            Some((ie, ix)) => format!(
                "instructions: worst {ix:.3}× ({}); wall-time median: worst {worst_trace:.2}× ({})",
                ie.label(),
                worst_event.label()
            ),
            None => format!(
                "wall-time median: worst {worst_trace:.2}× ({})",
                worst_event.label()
            ),
        },
        match worst_instr {
            Some((_, ix)) => ix <= 1.05,
            None => worst_trace <= 1.05,
        },
    )
}

/// SessionStart with crash recovery on the 10,000-file project, and the peak memory of
/// the event that took the most.
fn crash_and_memory_rows(r: &Results) -> [Row; 2] {
    let large = r.index("10,000 files").expect("the 10,000-file project");
    let crash = r.get(Event::SessionStartCrash, large);
    let ((mem_event, mem_project), mem) = r
        .stats
        .iter()
        .map(|(k, s)| (*k, s.max_rss_kib))
        .max_by_key(|(_, m)| *m)
        .unwrap();
    [
        (
            "`waymark hook SessionStart` with crash recovery, 10,000-file project, as Claude Code runs it: median ≤ 10 ms".to_string(),
            format!("{:.2} ms (p99 {:.2} ms)", ms(crash.median), ms(crash.p99)),
            ms(crash.median) <= 10.0,
        ),
        (
            "peak memory of one event: ≤ 10 MiB".to_string(),
            format!(
                "{:.1} MiB (worst: {}, {})",
                mib(mem),
                mem_event.label(),
                r.projects[mem_project]
            ),
            mib(mem) <= 10.0,
        ),
    ]
}

/// The concurrent processes: every record present exactly once, every file valid.
fn concurrency_row(c: &Concurrency) -> Row {
    let conc_ok = c.missing == 0
        && c.duplicated == 0
        && c.hook_valid
        && c.leftovers.is_empty()
        && c.latency.failures == 0
        && c.trace_bad_lines == 0
        && c.trace_once.is_none_or(|n| n == c.events);
    (
        format!(
            "{} hook processes at once, {} events each: every record present, every file valid",
            c.processes,
            c.events / c.processes.max(1)
        ),
        format!(
            "{}/{} trace records exactly once, {}/{} files listed once in the step (it lists at most {}), {}; {:.0} events/s",
            count(c.trace_once.unwrap_or(0)),
            count(c.events),
            count(c.recorded_once),
            count(c.listable),
            count(waymark_core::task::bounds::MAX_STEP_FILES),
            if c.hook_valid && c.leftovers.is_empty() {
                "files valid"
            } else {
                "files NOT valid"
            },
            c.events as f64 / c.wall.as_secs_f64()
        ),
        conc_ok,
    )
}

/// Crash recovery against git's own walk of the tree (issue 45).
fn walk_row(w: &crate::Walk) -> Row {
    ratio_row(
        format!(
            "`waymark hook SessionStart` with crash recovery, {}-file project, as Claude Code runs it: median ≤ 1.2× git's own walk of the tree (`git status --porcelain -uall`), in the same rounds",
            count(w.files)
        ),
        (&w.crash, &w.git_walk),
        "git's walk",
        1.2,
    )
}

/// A row holding the median of `measured` to `limit` × that of `reference` (timed in the
/// same rounds), which is named `what`.
fn ratio_row(
    budget: String,
    (measured, reference): (&Stats, &Stats),
    what: &str,
    limit: f64,
) -> Row {
    let ratio = measured.median.as_secs_f64() / reference.median.as_secs_f64();
    (
        budget,
        format!(
            "{ratio:.2}× ({:.2} ms; {what}: {:.2} ms)",
            ms(measured.median),
            ms(reference.median)
        ),
        ratio <= limit && measured.failures == 0,
    )
}

/// `median M ms, worst W ms`.
fn spread(s: &Stats) -> String {
    format!("median {:.2} ms, worst {:.2} ms", ms(s.median), ms(s.p99))
}

/// Whole commands at scale (issue 52): reported, no budget holds them yet.
fn at_scale_rows(a: &crate::at_scale::AtScale) -> Vec<Row> {
    let n = count(a.history);
    let mut rows = vec![
        (
            format!("`waymark log` of a task of {n} history events: reported"),
            spread(&a.log),
            a.log.failures == 0,
        ),
        (
            format!("`waymark report --html` of a task of {n} history events: reported"),
            spread(&a.report),
            a.report.failures == 0,
        ),
    ];
    if let Some((records, verify)) = &a.verify {
        rows.push((
            format!(
                "`waymark trace --verify` of {} records: reported",
                count(*records)
            ),
            spread(verify),
            verify.failures == 0,
        ));
    }
    rows
}

/// The monorepo (issue 52): the tool call after a checkpoint, the snapshot, crash
/// recovery and a Write, each against what it is held to.
fn monorepo_rows(m: &crate::monorepo::Monorepo) -> [Row; 5] {
    let n = count(m.files);
    let ok = |s: &Stats| s.failures == 0;
    let edit = (
        format!(
            "{n} files: a Write's PreToolUse right after a checkpoint (its snapshot in flight) waits ≤ 50 ms, at worst"
        ),
        spread(&m.edit_after),
        ms(m.edit_after.p99) <= 50.0 && ok(&m.edit_after),
    );
    let command = (
        format!(
            "{n} files: a Bash command's PreToolUse right after a checkpoint waits for the snapshot (what its text does not say it writes may be anywhere): reported"
        ),
        spread(&m.command_after),
        ok(&m.command_after),
    );
    let snapshot = ratio_row(
        format!(
            "{n} files: `waymark checkpoint` with its snapshot: median ≤ 1.2× git's own steps, in the same rounds"
        ),
        (&m.snapshot, &m.git_snapshot),
        "git's steps",
        1.2,
    );
    let walk = ratio_row(
        format!(
            "{n} files: SessionStart with crash recovery: median ≤ 1.2× `git status --porcelain -uall`, in the same rounds"
        ),
        (&m.crash, &m.git_walk),
        "git's walk",
        1.2,
    );
    let write = ratio_row(
        format!(
            "{n} files: PostToolUse Write: median ≤ 1.05× the same Write on the small project, in the same rounds"
        ),
        (&m.write_big, &m.write_small),
        "small",
        1.05,
    );
    [edit, command, snapshot, walk, write]
}

/// `waymark checkpoint` with its snapshot of the work tree, and `waymark rewind`.
fn rewind_rows(r: &Results) -> [Row; 2] {
    [
        (
            format!(
                "`waymark checkpoint` with its work-tree snapshot, {}-file repository: median ≤ 1.2× git's own steps (temporary index, `add -A`, `write-tree`, `commit-tree`) run alone",
                count(r.rewind.files)
            ),
            format!(
                "{:.2}× ({:.2} ms, p99 {:.2} ms; git's own steps alone: {:.2} ms)",
                r.rewind.checkpoint.median.as_secs_f64() / r.rewind.git_alone.median.as_secs_f64(),
                ms(r.rewind.checkpoint.median),
                ms(r.rewind.checkpoint.p99),
                ms(r.rewind.git_alone.median)
            ),
            r.rewind.checkpoint.median.as_secs_f64()
                <= 1.2 * r.rewind.git_alone.median.as_secs_f64()
                && r.rewind.checkpoint.failures == 0,
        ),
        (
            format!(
                "`waymark rewind` of {} changed files (undo checkpoint included): median ≤ 200 ms",
                r.rewind.changed
            ),
            format!(
                "{:.2} ms (p99 {:.2} ms)",
                ms(r.rewind.rewind.median),
                ms(r.rewind.rewind.p99)
            ),
            ms(r.rewind.rewind.median) <= 200.0 && r.rewind.rewind.failures == 0,
        ),
    ]
}

fn per_event(o: &mut String, r: &Results) {
    let _ = writeln!(o, "## Per event, small project\n");
    let groups: String = syscalls::GROUPS
        .iter()
        .map(|(g, _)| format!(" {g} |"))
        .collect();
    let _ = writeln!(
        o,
        "Medians of this build and of round 2 (timed in the same rounds), each against the floor of the event's rounds; system calls of one run under `strace -f -c`, this build / round 2.\n\n\
         | event | median | p99 | its floor | × floor | round 2 | round 2 × floor | ÷ round 2 | peak memory | instructions | syscalls |{groups}\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |{}",
        " ---: |".repeat(syscalls::GROUPS.len())
    );
    let instr = |k: Option<Event>| {
        r.instructions
            .get(&(k, 0))
            .map(|n| count(*n as usize))
            .unwrap_or_else(|| "n/a".into())
    };
    let f = r.floor;
    let _ = writeln!(
        o,
        "| floor (reads stdin, exits), every round | {:.2} ms | {:.2} ms | {:.2} ms | 1.00× | | | | {:.1} MiB | {} |{}",
        ms(f.median),
        ms(f.p99),
        ms(f.median),
        mib(f.max_rss_kib),
        instr(None),
        " |".repeat(syscalls::GROUPS.len() + 1)
    );
    for &e in EVENTS {
        let s = r.get(e, 0);
        let floor = ms(r.floors[&e].median);
        let (base, base_floor) = match r.base(e, 0) {
            Some(b) => (
                format!("{:.2} ms", ms(b.median)),
                format!("{:.2}×", ms(b.median) / floor),
            ),
            None => ("n/a".into(), "n/a".into()),
        };
        let _ = writeln!(
            o,
            "| {} | {:.2} ms | {:.2} ms | {floor:.2} ms | {:.2}× | {base} | {base_floor} | {} | {:.1} MiB | {} | {} |",
            e.label(),
            ms(s.median),
            ms(s.p99),
            r.x_floor(e),
            r.x_base(e, 0)
                .map_or_else(|| "n/a".into(), |x| format!("**{x:.2}×**")),
            mib(s.max_rss_kib),
            instr(Some(e)),
            syscalls::cells(r.syscalls, e).join(" | ")
        );
    }
    let _ = writeln!(o);
}

/// This build against round 2 on every project: the ratio of the medians.
fn against_baseline(o: &mut String, r: &Results) {
    if r.baseline.is_none() {
        let _ = writeln!(
            o,
            "## This build against round 2\n\nNot measured (WAYMARK_BENCH_BASELINE=none).\n"
        );
        return;
    }
    let _ = writeln!(
        o,
        "## This build against round 2: median ÷ round 2's median, per project\n\n\
         Round 2 cannot read this build's hook.json at its caps (it is built with this build's types), so that variant has no round-2 figure.\n"
    );
    let _ = write!(o, "| event |");
    for p in r.projects {
        let _ = write!(o, " {p} |");
    }
    let _ = writeln!(o, "\n| --- |{}", " ---: |".repeat(r.projects.len()));
    for &e in EVENTS {
        let _ = write!(o, "| {} |", e.label());
        for i in 0..r.projects.len() {
            match r.x_base(e, i) {
                Some(x) => {
                    let _ = write!(o, " {x:.2}× |");
                }
                None => o.push_str(" n/a |"),
            }
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(o);
}

fn scaling(o: &mut String, r: &Results) {
    let header = |o: &mut String| {
        let _ = write!(o, "| event |");
        for p in r.projects {
            let _ = write!(o, " {p} |");
        }
        let _ = write!(o, "\n| --- |");
        for _ in r.projects {
            let _ = write!(o, " ---: |");
        }
        let _ = writeln!(o);
    };
    let _ = writeln!(o, "## Scaling: median as a ratio to the small project\n");
    header(o);
    for &e in EVENTS {
        let _ = write!(o, "| {} |", e.label());
        for i in 0..r.projects.len() {
            let _ = write!(o, " {:.2}× |", r.ratio(e, i, 0));
        }
        let _ = writeln!(o);
    }
    let largest = format!("trace {}", count(r.trace_max));
    if let (Some(t1k), Some(tmax)) = (r.index("trace 1,000"), r.index(&largest)) {
        let _ = writeln!(
            o,
            "\nInstructions (callgrind), trace 1,000 → {largest}: {}",
            EVENTS
                .iter()
                .filter_map(|&e| {
                    let a = r.instructions.get(&(Some(e), t1k))?;
                    let b = r.instructions.get(&(Some(e), tmax))?;
                    Some(format!("{} {:.3}×", e.label(), *b as f64 / *a as f64))
                })
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = writeln!(
        o,
        "\n## Median / p99 wall time (ms) and peak memory (MiB)\n"
    );
    header(o);
    for &e in EVENTS {
        let _ = write!(o, "| {} |", e.label());
        for i in 0..r.projects.len() {
            let s = r.get(e, i);
            let _ = write!(
                o,
                " {:.2} / {:.2} ms, {:.1} MiB |",
                ms(s.median),
                ms(s.p99),
                mib(s.max_rss_kib)
            );
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(o);
}

fn concurrency(o: &mut String, c: &Concurrency) {
    let _ = writeln!(
        o,
        "## Concurrency: {} processes at once, {} PostToolUse Write events in all\n",
        c.processes,
        count(c.events)
    );
    let _ = writeln!(
        o,
        "- throughput {:.0} events/s ({:.2} s in all); latency under contention: median {:.2} ms, p99 {:.2} ms, peak {:.1} MiB",
        c.events as f64 / c.wall.as_secs_f64(),
        c.wall.as_secs_f64(),
        ms(c.latency.median),
        ms(c.latency.p99),
        mib(c.latency.max_rss_kib)
    );
    let _ = writeln!(
        o,
        "- files_touched: {} of {} exactly once (the {} the step has room for: it lists at most {} files), {} missing, {} duplicated; hook.json, hook.json.bak and HOOK.md {}; leftover temp/corrupt files: {}",
        count(c.recorded_once),
        count(c.events),
        count(c.listable),
        count(waymark_core::task::bounds::MAX_STEP_FILES),
        c.missing,
        c.duplicated,
        if c.hook_valid { "valid" } else { "NOT valid" },
        if c.leftovers.is_empty() {
            "none".to_string()
        } else {
            c.leftovers.join(", ")
        }
    );
    let _ = writeln!(
        o,
        "- agent_trace.jsonl: {}",
        match c.trace_once {
            None => "not written by this build (the trace ledger is not built yet)".to_string(),
            Some(n) => format!(
                "{} of {} records present exactly once, {} unparsable lines",
                count(n),
                count(c.events),
                c.trace_bad_lines
            ),
        }
    );
    let _ = writeln!(
        o,
        "- non-zero exits: {}; waymark.log errors/warnings: {}{}\n",
        c.latency.failures,
        c.log_problems.len(),
        c.log_problems
            .first()
            .map(|l| format!(" (first: `{l}`)"))
            .unwrap_or_default()
    );
}

/// CPU, cores and kernel, for the record.
fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| k.trim().to_string())
        .unwrap_or_default();
    format!("{cpu}, {cores} cores, Linux {kernel}")
}
