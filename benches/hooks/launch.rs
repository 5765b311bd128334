//! An event as Claude Code runs it: Claude Code starts `sh -c "<command>"` for each hook,
//! and the plugin's registered command reads the launcher (`plugin/hooks/waymark-hook`)
//! into that shell, which finds the binary and execs it. Timed four ways on the small
//! project, each against the floor run directly: the binary alone, `sh -c` running the
//! binary (a command that named the binary), the registered command (what a plugin install
//! runs, what the rest of the report times), and the floor under `sh -c`.

use std::path::Path;
use std::process::Command;

use crate::measure::{self, Sample, Stats};
use crate::projects::{Bench, Event, Project};

/// The medians of one event run each way.
pub struct Launch {
    pub floor: Stats,
    pub floor_sh: Stats,
    pub direct: Stats,
    pub sh_binary: Stats,
    pub sh_launcher: Stats,
}

/// The event timed (one that writes: a Write's PostToolUse, the commonest).
const EVENT: Event = Event::Write;

pub fn time(bench: &Bench, p: &Project, floor: &Path, runs: usize) -> Launch {
    let input = p.event_file(EVENT);
    let hook = EVENT.hook_name();
    let mut samples: [Vec<Sample>; 5] = Default::default();
    for _ in 0..runs {
        samples[0].push(measure::run(&mut Command::new(floor), &input));
        samples[1].push(measure::run(&mut crate::floor_sh(floor), &input));
        for way in 0..3 {
            p.fresh(bench);
            p.reset(EVENT);
            let mut c = match way {
                0 => bench.waymark(&p.root, &["hook", hook]),
                // `sh -c SCRIPT <binary> ARGS…`: the binary is `$0` there.
                1 => bench.waymark_under(
                    Some(&["/bin/sh", "-c", "\"$0\" \"$@\""]),
                    &p.root,
                    &["hook", hook],
                ),
                _ => bench.hook(&p.root, hook),
            };
            samples[2 + way].push(measure::run(&mut c, &input));
            p.settle(EVENT);
        }
    }
    let [floor, floor_sh, direct, sh_binary, sh_launcher] = samples.map(|s| Stats::of(&s));
    Launch {
        floor,
        floor_sh,
        direct,
        sh_binary,
        sh_launcher,
    }
}

/// The section of the report.
pub fn render(l: &Launch) -> String {
    let row = |what: &str, s: &Stats, floor: &Stats| {
        let (m, f) = (measure::ms(s.median), measure::ms(floor.median));
        format!(
            "| {what} | {m:.2} ms | {:.2} ms | {:.2}× |\n",
            measure::ms(s.p99),
            m / f
        )
    };
    let mut o = String::from(
        "## As Claude Code runs it: `sh -c`, and the registered command\n\n\
         PostToolUse Write on the small project, each way against the floor run directly.\n\n\
         | run as | median | p99 | × floor |\n| --- | ---: | ---: | ---: |\n",
    );
    o += &row("floor", &l.floor, &l.floor);
    o += &row("`sh -c` floor", &l.floor_sh, &l.floor);
    o += &row("waymark", &l.direct, &l.floor);
    o += &row("`sh -c` waymark", &l.sh_binary, &l.floor);
    o += &row(
        "`sh -c` registered command (launcher read in, then waymark)",
        &l.sh_launcher,
        &l.floor,
    );
    o
}
