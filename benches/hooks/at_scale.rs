//! Whole commands at scale (issue 52): `waymark log` and `waymark report --html` over a task
//! of 100,000 history events, and `waymark trace --verify` of the 1,000,000-record trace.
//! No budget holds them yet: their rows are reported.

use std::path::Path;

use crate::measure::{self, Sample, Stats};
use crate::projects::{Bench, Project};

/// History events in the task `log` and `report` read.
const HISTORY: usize = 100_000;

pub struct AtScale {
    pub history: usize,
    pub log: Stats,
    pub report: Stats,
    /// Records in the trace verified, and the runs; `None` without that project.
    pub verify: Option<(usize, Stats)>,
}

pub fn measure(bench: &Bench, projects: &[Project], trace_max: usize) -> AtScale {
    eprintln!("waymark log and report over {HISTORY} history events, trace --verify …");
    let p = Project::create(bench, "history", 0);
    p.grow_history(HISTORY);
    let runs = |args: &[&str], root: &Path| -> Stats {
        let samples: Vec<Sample> = (0..5)
            .map(|_| measure::run(&mut bench.waymark(root, args), Path::new("/dev/null")))
            .collect();
        Stats::of(&samples)
    };
    let log = runs(&["log"], &p.root);
    let page = p.root.join("report.html");
    let report = runs(
        &["report", "--html", "-o", &page.to_string_lossy()],
        &p.root,
    );
    let name = format!("trace {}", crate::report::count(trace_max));
    let verify = projects
        .iter()
        .find(|t| t.name == name)
        .map(|t| (trace_max, runs(&["trace", "--verify"], &t.root)));
    let _ = std::fs::remove_dir_all(&p.root);
    AtScale {
        history: HISTORY,
        log,
        report,
        verify,
    }
}
