//! waymark's benchmark: holds the release binary to the budgets of docs/design.md.
//!
//! `cargo bench --bench hooks` (method and figures in BENCHMARKS.md). Every hook event is
//! one process start, so every figure here is a whole process, spawned and reaped, on
//! generated projects under `target/tmp/`:
//!
//! - wall time (median, p99) per event, and the same against a floor measured in the same
//!   rounds: a C program that only reads its stdin (`floor.c`);
//! - scaling: the same events on projects with a large trace, hook.json at its largest,
//!   10,000 files, 5,000 lessons, as ratios to the small project;
//! - peak memory per event (the child's own `ru_maxrss`);
//! - 32 concurrent processes × 100 events each, checked for lost updates;
//! - `waymark receipts --verify` on 1,000 receipts.
//!
//! Rounds are interleaved (each round runs every project once, and the floor) so that load
//! from elsewhere on a shared machine hits every variant alike and ratios stay fair.
//!
//! Knobs (environment): `WAYMARK_BENCH_RUNS` (runs per event and project, default 150),
//! `WAYMARK_BENCH_TRACE_MAX` (largest trace, default 1,000,000), `WAYMARK_BENCH_CONCURRENT`
//! (events per concurrent process, default 100), `WAYMARK_BENCH_RECEIPTS` (default 1,000),
//! `WAYMARK_BENCH_KEEP=1` (keep the generated projects), `WAYMARK_BENCH_CALLGRIND=0` (skip
//! the instruction counts), `WAYMARK_BENCH_BIN=<path>` (measure another waymark binary, e.g.
//! an older build, instead of this one), `WAYMARK_BENCH_BASELINE=<binary>` (the build
//! measured beside it; unset: round 2, built from commit f9ee6d2; `none`: no baseline).
//!
//! Every event is also timed with the baseline build (round 2) in the same rounds, on
//! projects that build generated itself, and each build's system calls per event are
//! counted with `strace -f -c` when strace is installed.

mod at_scale;
mod baseline;
mod launch;
mod measure;
mod monorepo;
mod projects;
mod report;
mod syscalls;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use measure::{Sample, Stats};
use projects::{Bench, EVENTS, Event, Project};

/// The settings of one run.
struct Knobs {
    runs: usize,
    trace_max: usize,
    concurrent_events: usize,
    receipts: usize,
    /// The monorepos' sizes in files (none: `0`).
    monorepo: Vec<usize>,
    keep: bool,
}

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

impl Knobs {
    fn from_env() -> Knobs {
        Knobs {
            runs: knob("WAYMARK_BENCH_RUNS", 150).max(3),
            trace_max: knob("WAYMARK_BENCH_TRACE_MAX", 1_000_000).max(1_000),
            concurrent_events: knob("WAYMARK_BENCH_CONCURRENT", 100).max(1),
            receipts: knob("WAYMARK_BENCH_RECEIPTS", 1_000),
            monorepo: std::env::var("WAYMARK_BENCH_MONOREPO")
                .unwrap_or_else(|_| "100000".into())
                .split(',')
                .filter_map(|n| n.trim().replace('_', "").parse().ok())
                .filter(|&n| n > 0)
                .collect(),
            keep: std::env::var("WAYMARK_BENCH_KEEP").is_ok_and(|v| v == "1"),
        }
    }
}

/// Concurrent processes, as in the budget of docs/design.md.
const PROCESSES: usize = 32;

fn main() {
    // `cargo test --all-targets` runs bench targets without `--bench`: nothing to do then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("waymark benchmark: run it with `cargo bench --bench hooks`");
        return;
    }
    let knobs = Knobs::from_env();
    let started = Instant::now();
    measure::become_subreaper();
    let (bench, floor) = set_up();
    let dir = bench.dir.clone();
    let (projects, base) = generate_both(&bench, knobs.trace_max);
    check_all(&bench, &projects, base.as_ref());
    settle();

    let fsync = measure::fsync_latency(&dir);
    let counted = counted(&projects, knobs.trace_max);
    let instructions = count_instructions(&bench, &counted, &floor);
    let timings = time_events(&bench, &projects, base.as_ref(), &floor, knobs.runs);
    let syscalls = syscalls::count(
        (&bench, &projects[0]),
        base.as_ref()
            .and_then(|b| b.projects[0].as_ref().map(|p| (&b.bench, p))),
    );
    eprintln!("timing an event as Claude Code runs it …");
    let as_claude_code = launch::time(&bench, &projects[0], &floor, knobs.runs);
    let log_problems = log_problems(&projects, base.as_ref());
    let (concurrency, receipts, rewind) = whole_commands(&bench, &knobs);
    eprintln!("crash recovery against git's own walk of 10,000 files …");
    let walk = crash_walk(&bench, &projects);
    let monorepos: Vec<monorepo::Monorepo> = (knobs.monorepo.iter())
        .map(|&files| monorepo::measure(&bench, &projects[0], files))
        .collect();
    let at_scale = at_scale::measure(&bench, &projects, knobs.trace_max);

    let names: Vec<String> = projects.iter().map(|p| p.name.clone()).collect();
    let text = report::render(&report::Results {
        runs: knobs.runs,
        trace_max: knobs.trace_max,
        floor: timings.floor,
        floors: &timings.floors,
        instructions: &instructions,
        fsync,
        projects: &names,
        stats: &timings.stats,
        baseline: base
            .as_ref()
            .map(|b| (b.bench.bin.as_path(), &timings.baseline)),
        syscalls: &syscalls,
        concurrency: &concurrency,
        receipts: &receipts,
        rewind: &rewind,
        walk: &walk,
        monorepos: &monorepos,
        at_scale: &at_scale,
        log_problems: &log_problems,
        elapsed: started.elapsed(),
        launch: &as_claude_code,
    });
    let text = text + "\n" + &launch::render(&as_claude_code);
    finish(&text, &dir, knobs.keep);
}

/// The projects of the build under test and, when a baseline is measured, the same
/// variants generated with the baseline binary (under `round2/`).
fn generate_both(bench: &Bench, trace_max: usize) -> (Vec<Project>, Option<baseline::Baseline>) {
    let base_bin = baseline::binary();
    eprintln!(
        "measuring {}{}; generating projects in {} …",
        bench.bin.display(),
        base_bin
            .as_ref()
            .map(|b| format!(" beside round 2, {}", b.display()))
            .unwrap_or_default(),
        bench.dir.display()
    );
    let projects = generate(bench, trace_max, true)
        .into_iter()
        .map(Option::unwrap)
        .collect();
    let base = base_bin.map(|bin| {
        let bench = bench_in(&bench.dir.join("round2"), bin);
        let projects = generate(&bench, trace_max, false);
        baseline::Baseline { bench, projects }
    });
    (projects, base)
}

/// Prints the report, writes it to `target/tmp/waymark-bench.md`, and removes the
/// projects unless they are to be kept.
fn finish(report: &str, dir: &Path, keep: bool) {
    println!("{report}");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("waymark-bench.md");
    fs::write(&out, report).unwrap();
    eprintln!("report also written to {}", out.display());
    if keep {
        eprintln!("projects kept in {}", dir.display());
    } else {
        let _ = fs::remove_dir_all(dir);
    }
}

/// Runs every event once on every project of both builds, its output checked.
fn check_all(bench: &Bench, projects: &[Project], base: Option<&baseline::Baseline>) {
    for p in projects {
        p.check_events(bench);
    }
    if let Some(b) = base {
        for p in b.projects.iter().flatten() {
            p.check_events(&b.bench);
        }
    }
}

/// ERROR and WARN lines waymark logged, per project (the baseline's under "round 2: ").
fn log_problems(
    projects: &[Project],
    base: Option<&baseline::Baseline>,
) -> Vec<(String, Vec<String>)> {
    let theirs = base
        .into_iter()
        .flat_map(|b| b.projects.iter().flatten())
        .map(|p| (format!("round 2: {}", p.name), p.log_problems()));
    projects
        .iter()
        .map(|p| (p.name.clone(), p.log_problems()))
        .chain(theirs)
        .filter(|(_, l)| !l.is_empty())
        .collect()
}

/// A fresh `target/tmp/waymark-bench/` with the bench of the binary to measure, and the
/// floor program built there.
fn set_up() -> (Bench, PathBuf) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("waymark-bench");
    let _ = fs::remove_dir_all(&dir);
    let bin = std::env::var_os("WAYMARK_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_waymark")));
    let bench = bench_in(&dir, bin);
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let floor = build_floor(&dir, &manifest.join("benches/hooks/floor.c"));
    // The user's master key exists before any event, as it does after a session's first
    // append: its creation is once per machine, not a cost of the event measured first.
    // (A baseline build makes its own, in its own config home, at its first check run.)
    waymark::receipt::signer(&bench.config()).expect("the bench's master key");
    (bench, floor)
}

/// The bench of `bin` in `dir`: a copy of the recorded transcript, a config home, and the
/// plugin's data directory with `bin` as its binary. The plugin (hooks.json and the
/// launcher) is this checkout's, for every build measured: only the binary differs.
fn bench_in(dir: &Path, bin: PathBuf) -> Bench {
    fs::create_dir_all(dir).unwrap();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixtures = manifest.join("tests/fixtures/claude-code-2.1.197");
    let transcript = dir.join("transcript.jsonl");
    fs::copy(fixtures.join("transcript-sample.jsonl"), &transcript).unwrap();
    // An installed plugin's data directory keeps the binary the launcher runs.
    let plugin_data = dir.join("plugin-data/waymark-waymark");
    fs::create_dir_all(plugin_data.join("bin")).unwrap();
    std::os::unix::fs::symlink(&bin, plugin_data.join("bin/waymark")).unwrap();
    let plugin = manifest.join("plugin");
    Bench {
        bin,
        config_home: dir.join("config"),
        dir: dir.to_path_buf(),
        fixtures,
        transcript,
        registered: registered(&plugin),
        plugin,
        plugin_data,
    }
}

/// Each event's command, as plugin/hooks/hooks.json registers it.
fn registered(plugin: &Path) -> BTreeMap<String, String> {
    let text = fs::read_to_string(plugin.join("hooks/hooks.json")).unwrap();
    let hooks: serde_json::Value = serde_json::from_str(&text).unwrap();
    hooks["hooks"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(event, h)| {
            let command = h[0]["hooks"][0]["command"].as_str().unwrap();
            (event.clone(), command.to_string())
        })
        .collect()
}

/// The projects whose instructions are counted: the small one, and the smallest and
/// largest trace for the budget "cost does not grow with the trace".
fn counted(projects: &[Project], trace_max: usize) -> Vec<(usize, &Project)> {
    let largest = format!("trace {}", report::count(trace_max));
    projects
        .iter()
        .enumerate()
        .filter(|(i, p)| *i == 0 || p.name == "trace 1,000" || p.name == largest)
        .collect()
}

/// What the timed rounds measured: each event on each project, the same with the baseline
/// build on its projects, and the floor over every round and in each event's own rounds.
struct Timings {
    stats: BTreeMap<(Event, usize), Stats>,
    baseline: BTreeMap<(Event, usize), Stats>,
    floor: Stats,
    floors: BTreeMap<Event, Stats>,
}

/// The samples of the timed rounds, before they are summed up.
#[derive(Default)]
struct Samples {
    ours: BTreeMap<(Event, usize), Vec<Sample>>,
    theirs: BTreeMap<(Event, usize), Vec<Sample>>,
    floors: BTreeMap<Event, Vec<Sample>>,
}

/// The timed rounds: `runs` of every event on every project, each round with a run of
/// the floor, then on each project this build and the baseline one after the other; the
/// projects' snapshots made again when they grow old ([`Project::fresh`]).
fn time_events(
    bench: &Bench,
    projects: &[Project],
    base: Option<&baseline::Baseline>,
    floor: &Path,
    runs: usize,
) -> Timings {
    eprintln!(
        "timing {} events × {} projects × {} runs (+ the floor{}) …",
        EVENTS.len(),
        projects.len(),
        runs,
        if base.is_some() { ", + round 2" } else { "" }
    );
    let floor_input = projects[0].event_file(Event::Write);
    let mut s = Samples::default();
    // The floor is measured in each event's own rounds, and each event is compared with its
    // own floor: a minute of load on a shared machine slows the event and its floor alike.
    for &event in EVENTS {
        settle();
        for _ in 0..runs {
            let f = measure::run(&mut floor_sh(floor), &floor_input);
            s.floors.entry(event).or_default().push(f);
            for (i, p) in projects.iter().enumerate() {
                s.ours
                    .entry((event, i))
                    .or_default()
                    .push(timed(bench, p, event));
                let theirs = base.and_then(|b| Some((&b.bench, b.projects[i].as_ref()?)));
                if let Some((b, p)) = theirs {
                    s.theirs
                        .entry((event, i))
                        .or_default()
                        .push(timed(b, p, event));
                }
            }
        }
    }
    let all_floors: Vec<Sample> = s.floors.values().flatten().copied().collect();
    let stats = |m: &BTreeMap<(Event, usize), Vec<Sample>>| {
        m.iter().map(|(k, v)| (*k, Stats::of(v))).collect()
    };
    Timings {
        stats: stats(&s.ours),
        baseline: stats(&s.theirs),
        floor: Stats::of(&all_floors),
        floors: s.floors.iter().map(|(e, v)| (*e, Stats::of(v))).collect(),
    }
}

/// One timed run of `event` on `p`, from its prepared state, its capture waited for.
fn timed(bench: &Bench, p: &Project, event: Event) -> Sample {
    p.fresh(bench);
    p.reset(event);
    let s = measure::run(
        &mut bench.hook(&p.root, event.hook_name()),
        &p.event_file(event),
    );
    p.settle(event);
    s
}

/// The floor as Claude Code would run it: `/bin/sh -c "<floor>"`.
pub fn floor_sh(floor: &Path) -> Command {
    let mut c = Command::new("/bin/sh");
    c.arg("-c").arg(format!("\"{}\"", floor.display()));
    c
}

/// The runs of whole commands after the timed rounds: concurrent processes, `receipts
/// --verify`, checkpoint snapshots and rewinds.
fn whole_commands(bench: &Bench, knobs: &Knobs) -> (Concurrency, Receipts, Rewind) {
    eprintln!(
        "{PROCESSES} concurrent processes × {} events …",
        knobs.concurrent_events
    );
    let concurrency = concurrent(bench, knobs.concurrent_events);
    eprintln!("receipts --verify on {} receipts …", knobs.receipts);
    let receipts = receipts(bench, knobs.receipts);
    eprintln!("checkpoint snapshots and rewinds on 10,000 files …");
    settle();
    let rewind = rewind(bench);
    (concurrency, receipts, rewind)
}

/// Writes back every dirty page (`sync`) so that the gigabyte just generated is not flushed
/// by the first fsync of a timed run, which would charge it to that event.
fn settle() {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

/// The projects, in report order: the small one first (the reference of every ratio).
/// `ours`: made for the build under test, whose library can write state directly (the
/// trace's head, hook.json at its caps). For a baseline build (round 2, which keeps no
/// trace head and reads an older hook.json) the traces are left without a head and the
/// caps variant is `None`; every other variant is made by feeding it the same events.
fn generate(bench: &Bench, trace_max: usize, ours: bool) -> Vec<Option<Project>> {
    let mut projects = vec![Some(Project::create(bench, "small", 0))];
    let mut sizes = vec![1_000, 100_000, 1_000_000];
    sizes.retain(|&n| n < trace_max);
    sizes.push(trace_max);
    for n in sizes {
        let p = Project::create(bench, &format!("trace {}", report::count(n)), 0);
        p.add_trace(n);
        if ours {
            p.seal_trace(bench);
        }
        projects.push(Some(p));
    }
    projects.push(ours.then(|| {
        let big = Project::create(bench, "hook.json max", 0);
        big.grow_hook();
        big
    }));
    projects.push(Some(Project::create(bench, "10,000 files", 10_000)));
    let lessons = Project::create(bench, "5,000 lessons", 0);
    lessons.add_lessons(5_000);
    projects.push(Some(lessons));
    projects
}

/// Instructions per event, keyed by (event, project index), for the given projects (the
/// floor under `(None, 0)`), when valgrind is installed. The callgrind profiles of the first
/// project are kept in `target/tmp/waymark-callgrind/` for `callgrind_annotate`.
fn count_instructions(
    bench: &Bench,
    projects: &[(usize, &Project)],
    floor: &Path,
) -> BTreeMap<(Option<Event>, usize), u64> {
    let mut counts = BTreeMap::new();
    let have = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have || std::env::var("WAYMARK_BENCH_CALLGRIND").is_ok_and(|v| v == "0") {
        return counts;
    }
    eprintln!("counting instructions with callgrind …");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("waymark-callgrind");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let out_arg = |name: &str| {
        format!(
            "--callgrind-out-file={}",
            dir.join(format!("{name}.out")).display()
        )
    };
    let floor_out = out_arg("floor");
    let mut cmd = Command::new("valgrind");
    cmd.args(["--tool=callgrind", floor_out.as_str()])
        .arg(floor);
    let first = projects[0].1;
    if let Some(n) = measure::instructions(&mut cmd, &first.event_file(Event::Write)) {
        counts.insert((None, 0), n);
    }
    for (n, &(index, project)) in projects.iter().enumerate() {
        for &e in EVENTS {
            project.fresh(bench);
            project.reset(e);
            let slug = e
                .label()
                .replace(" + ", "-")
                .replace(' ', "-")
                .to_lowercase();
            let out = if n == 0 {
                out_arg(&slug)
            } else {
                "--callgrind-out-file=/dev/null".to_string()
            };
            let wrapper = ["valgrind", "--tool=callgrind", out.as_str()];
            let mut cmd =
                bench.waymark_under(Some(&wrapper), &project.root, &["hook", e.hook_name()]);
            if let Some(count) = measure::instructions(&mut cmd, &project.event_file(e)) {
                counts.insert((Some(e), index), count);
            }
        }
    }
    counts
}

/// Compiles the floor program: a plain C program, as the budgets of docs/design.md name it.
fn build_floor(dir: &Path, source: &Path) -> PathBuf {
    let out = dir.join("floor");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let ok = Command::new(&cc)
        .args(["-O2", "-o"])
        .arg(&out)
        .arg(source)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cc} to build the floor program: {e}"))
        .success();
    assert!(ok, "cannot compile the floor program");
    out
}

/// What the concurrency run found.
pub struct Concurrency {
    pub processes: usize,
    pub events: usize,
    pub wall: Duration,
    pub latency: Stats,
    /// Files written by the events that hook.json's step lists exactly once.
    pub recorded_once: usize,
    /// How many of them the step can list: all, up to its bound of
    /// [`MAX_STEP_FILES`](waymark_core::task::bounds::MAX_STEP_FILES) files (each
    /// mutation is in the trace all the same).
    pub listable: usize,
    /// Files the step had room for and does not list.
    pub missing: usize,
    pub duplicated: usize,
    /// Trace records found for the events (None: no trace file was written).
    pub trace_once: Option<usize>,
    pub trace_bad_lines: usize,
    pub hook_valid: bool,
    pub leftovers: Vec<String>,
    pub log_problems: Vec<String>,
}

/// 32 processes at once, each running `per_process` PostToolUse Write events one after
/// another against one project, each writing its own file. Afterwards every file must be in
/// the step's `files_touched` exactly once as far as the step's bound leaves room, every
/// trace record present exactly once, and every file valid.
fn concurrent(bench: &Bench, per_process: usize) -> Concurrency {
    let project = Project::create(bench, "concurrent", 0);
    project.reset(Event::Write);
    settle();
    let (inputs, expected) = concurrent_inputs(bench, &project, per_process);
    let start = Instant::now();
    let samples = run_concurrently(bench, &project.root, &inputs, per_process);
    let wall = start.elapsed();

    let state = project.root.join(".orchestration");
    let hook: Option<waymark::task::Hook> = fs::read(project.hook_json())
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let bak_valid = fs::read(state.join("hook.json.bak"))
        .ok()
        .and_then(|b| serde_json::from_slice::<waymark::task::Hook>(&b).ok())
        .is_some();
    let touched: Vec<String> = hook
        .as_ref()
        .and_then(|h| h.current_step.as_ref())
        .map(|c| c.files_touched.clone())
        .unwrap_or_default();
    let count = |f: &String| touched.iter().filter(|t| *t == f).count();
    let others = touched.iter().filter(|t| !expected.contains(t)).count();
    let bound = waymark_core::task::bounds::MAX_STEP_FILES;
    let listable = expected.len().min(bound.saturating_sub(others));
    let recorded_once = expected.iter().filter(|f| count(f) == 1).count();
    let (trace_once, trace_bad_lines) = trace_records(&state, per_process);
    let leftovers = fs::read_dir(&state)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            (name.ends_with(".tmp") || name.contains(".corrupt-")).then_some(name)
        })
        .collect();
    Concurrency {
        processes: PROCESSES,
        events: samples.len(),
        wall,
        latency: Stats::of(&samples),
        recorded_once,
        listable,
        missing: listable.saturating_sub(recorded_once),
        duplicated: expected.iter().filter(|f| count(f) > 1).count(),
        trace_once,
        trace_bad_lines,
        hook_valid: hook.is_some() && bak_valid && state.join("HOOK.md").exists(),
        leftovers,
        log_problems: project.log_problems(),
    }
}

/// The concurrent run's event inputs, `<process>-<i>.json`, each writing its own file and
/// with its own tool use id; and the files they write, relative to the project.
fn concurrent_inputs(
    bench: &Bench,
    project: &Project,
    per_process: usize,
) -> (PathBuf, Vec<String>) {
    let template: serde_json::Value =
        serde_json::from_slice(&fs::read(project.event_file(Event::Write)).unwrap()).unwrap();
    let inputs = bench.dir.join("events/concurrent-inputs");
    fs::create_dir_all(&inputs).unwrap();
    let mut expected = Vec::new();
    for p in 0..PROCESSES {
        for i in 0..per_process {
            let rel = format!("conc/p{p:02}/f{i:03}.rs");
            let abs = project.root.join(&rel).to_string_lossy().into_owned();
            let mut v = template.clone();
            v["tool_input"]["file_path"] = abs.clone().into();
            v["tool_response"]["filePath"] = abs.into();
            v["tool_use_id"] = format!("toolu_bench_{p:02}_{i:03}").into();
            fs::write(
                inputs.join(format!("{p}-{i}.json")),
                serde_json::to_vec(&v).unwrap(),
            )
            .unwrap();
            expected.push(rel);
        }
    }
    (inputs, expected)
}

/// Runs the inputs: one thread per process, each running its events one after another.
fn run_concurrently(bench: &Bench, root: &Path, inputs: &Path, per_process: usize) -> Vec<Sample> {
    thread::scope(|s| {
        let handles: Vec<_> = (0..PROCESSES)
            .map(|p| {
                s.spawn(move || {
                    (0..per_process)
                        .map(|i| {
                            measure::run(
                                &mut bench.hook(root, "PostToolUse"),
                                &inputs.join(format!("{p}-{i}.json")),
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

/// Of the trace in `state`: how many of the concurrent events have exactly one record
/// (None: no trace file was written), and how many of its lines are not JSON.
fn trace_records(state: &Path, per_process: usize) -> (Option<usize>, usize) {
    let trace = fs::read_to_string(state.join("agent_trace.jsonl")).ok();
    let mut trace_bad_lines = 0;
    let trace_once = trace.map(|t| {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for line in t.lines() {
            match serde_json::from_str::<serde_json::Value>(line) {
                Ok(v) => {
                    let id = v["metadata"]["waymark"]["tool_use_id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    *seen.entry(id).or_default() += 1;
                }
                Err(_) => trace_bad_lines += 1,
            }
        }
        (0..PROCESSES)
            .flat_map(|p| (0..per_process).map(move |i| format!("toolu_bench_{p:02}_{i:03}")))
            .filter(|id| seen.get(id) == Some(&1))
            .count()
    });
    (trace_once, trace_bad_lines)
}

/// `waymark receipts --verify` over `n` receipts made by `waymark validate -- true`.
pub enum Receipts {
    NotBuilt(String),
    Measured {
        receipts: usize,
        stats: Stats,
        verified: bool,
    },
}

/// What the rewind run measured: whole `waymark checkpoint` processes (the snapshot taken
/// inline) after one file changed, git's own steps of that snapshot run alone on the same
/// repository (the part no waymark change can take away), and whole `waymark rewind`
/// processes putting back `changed` files.
pub struct Rewind {
    pub files: usize,
    pub changed: usize,
    pub checkpoint: Stats,
    pub git_alone: Stats,
    pub rewind: Stats,
}

fn rewind(bench: &Bench) -> Rewind {
    let (files, changed) = (10_000, 100);
    let project = Project::create(bench, "rewind", files);
    project.reset(Event::Write);
    let root = &project.root;
    settle_repository(root);
    let null = Path::new("/dev/null");
    // The generated files are gen/d<i/100>/f<i>.rs.
    let touch = |n: usize, round: usize| {
        for i in 0..n {
            let path = root.join(format!("gen/d{:03}/f{i:05}.rs", i / 100));
            let mut text = fs::read_to_string(&path).unwrap();
            text.push_str(&format!("// round {round}\n"));
            fs::write(&path, text).unwrap();
        }
    };
    let (checkpoint, git_alone) = snapshot_rounds(bench, root, 20);
    let out = bench
        .waymark(root, &["checkpoint", "base"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    let base = said.split_whitespace().nth(2).unwrap_or("none").to_string();
    let rewinds: Vec<Sample> = (0..10)
        .map(|round| {
            touch(changed, round);
            measure::run(&mut bench.waymark(root, &["rewind", &base]), null)
        })
        .collect();
    Rewind {
        files,
        changed,
        checkpoint,
        git_alone,
        rewind: Stats::of(&rewinds),
    }
}

/// `waymark checkpoint` (its snapshot taken inline) and git's own steps of a snapshot, in
/// `rounds` interleaved rounds, so that the machine's moods fall on both alike; one
/// generated file changed before each.
fn snapshot_rounds(bench: &Bench, root: &Path, rounds: usize) -> (Stats, Stats) {
    let null = Path::new("/dev/null");
    let (checkpoint, git_alone): (Vec<Sample>, Vec<Sample>) = (0..rounds)
        .map(|round| {
            touch_first(root, round);
            let label = format!("bench {round}");
            let waymark = measure::run(&mut bench.waymark(root, &["checkpoint", &label]), null);
            touch_first(root, round);
            (waymark, git_snapshot_alone(root))
        })
        .unzip();
    (Stats::of(&checkpoint), Stats::of(&git_alone))
}

/// Changes the first generated file, so that the next snapshot has something to hash.
fn touch_first(root: &Path, round: usize) {
    let path = root.join("gen/d000/f00000.rs");
    let mut text = fs::read_to_string(&path).unwrap();
    text.push_str(&format!("// round {round}\n"));
    fs::write(&path, text).unwrap();
}

/// SessionStart with crash recovery on the 10,000-file project, as Claude Code runs it,
/// and git's own walk of the same tree (`git status --porcelain -uall`: what recovery's
/// "what changed since the checkpoint" cannot do with less), in interleaved rounds.
pub struct Walk {
    pub files: usize,
    pub crash: Stats,
    pub git_walk: Stats,
}

fn crash_walk(bench: &Bench, projects: &[Project]) -> Walk {
    let p = projects
        .iter()
        .find(|p| p.name == "10,000 files")
        .expect("the 10,000-file project");
    let (crash, git_walk) = walk_rounds(bench, p, 20);
    Walk {
        files: 10_000,
        crash,
        git_walk,
    }
}

/// SessionStart with crash recovery on `p` and git's own walk of its tree, in `rounds`
/// interleaved rounds.
fn walk_rounds(bench: &Bench, p: &Project, rounds: usize) -> (Stats, Stats) {
    let null = Path::new("/dev/null");
    let (crash, git_walk): (Vec<Sample>, Vec<Sample>) = (0..rounds)
        .map(|_| {
            let crash = timed(bench, p, Event::SessionStartCrash);
            // Read-only, as recovery's git is: a `git status` that wrote back the index it
            // refreshed would leave it "racily clean" against the files `reset` just
            // wrote, and the next round's walks would hash every file again.
            let mut git = Command::new("git");
            git.arg("-C")
                .arg(&p.root)
                .args(["status", "--porcelain", "-uall"])
                .env("GIT_OPTIONAL_LOCKS", "0");
            (crash, measure::run(&mut git, null))
        })
        .unzip();
    (Stats::of(&crash), Stats::of(&git_walk))
}

/// Brings a repository generated a moment ago to the state of one at rest. Its files were
/// written in the same second as its index, so git holds every entry "racily clean" and
/// hashes all 10,000 files again on each `git add` into a copy of that index (measured:
/// 35 ms against 21 ms). A real repository's index is refreshed by the next `git status`
/// anyone runs once its files are older than a second; this does just that, after
/// writing back the gigabyte of dirty pages the generation left.
fn settle_repository(root: &Path) {
    settle();
    thread::sleep(Duration::from_millis(1100));
    projects::git(root, &["status", "--porcelain"]);
}

/// git's own steps of a checkpoint snapshot, run by hand as `git::snapshot` runs them (a
/// copy of the index, `add -A`, `write-tree`, `commit-tree`), as one sample: what a
/// snapshot costs on this machine before waymark does anything.
fn git_snapshot_alone(root: &Path) -> Sample {
    let index = root.join(".git/bench-snapshot-index");
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["-c", "index.skipHash=true"])
            .args(args)
            .env("GIT_INDEX_FILE", &index)
            .stderr(std::process::Stdio::null())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let start = Instant::now();
    fs::copy(root.join(".git/index"), &index).unwrap();
    let files = waymark::git::project_files("AGENT.md");
    let add: Vec<&str> = ["add", "-A", "--ignore-errors", "--"]
        .into_iter()
        .chain(files.iter().map(String::as_str))
        .collect();
    git(&add);
    let tree = git(&["write-tree"]);
    let commit = git(&["commit-tree", &tree, "-p", "HEAD", "-m", "bench"]);
    let wall = start.elapsed();
    fs::remove_file(&index).unwrap();
    assert!(commit.len() >= 40, "git commit-tree: {commit:?}");
    Sample {
        wall,
        max_rss_kib: 0,
        exit_code: 0,
    }
}

fn receipts(bench: &Bench, n: usize) -> Receipts {
    if n == 0 {
        return Receipts::NotBuilt("skipped (WAYMARK_BENCH_RECEIPTS=0)".into());
    }
    let project = Project::create(bench, "receipts", 0);
    project.reset(Event::Write);
    let null = Path::new("/dev/null");
    for i in 0..n {
        let s = measure::run(
            &mut bench.waymark(&project.root, &["validate", "--", "true"]),
            null,
        );
        if s.exit_code != 0 {
            return Receipts::NotBuilt(format!(
                "n/a (receipts not built: `waymark validate -- true` exited {} at receipt {})",
                s.exit_code,
                i + 1
            ));
        }
    }
    let samples: Vec<Sample> = (0..20)
        .map(|_| {
            measure::run(
                &mut bench.waymark(&project.root, &["receipts", "--verify"]),
                null,
            )
        })
        .collect();
    match samples[0].exit_code {
        0 | 1 => Receipts::Measured {
            receipts: n,
            stats: Stats::of(&samples),
            verified: samples.iter().all(|s| s.exit_code == 0),
        },
        code => Receipts::NotBuilt(format!(
            "n/a (receipts not built: `waymark receipts --verify` exited {code})"
        )),
    }
}
