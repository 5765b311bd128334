//! `waymark log [--all] [--json]`: the task's timeline (`waymark_core::timeline`), one
//! line an event in time order, through a pager in a terminal. `--json` prints one array
//! of `{time, kind, what, details}` (stable; docs/timeline.md).

use std::path::PathBuf;

use crate::cmd::{ExitCode, Outcome};
use crate::runtime::context::Ctx;
use crate::task::timeline;
use waymark_core::task::Hook;
use waymark_core::timeline::{Event, merge, text};
use waymark_redact::Clean;

#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// Every task: the current one and each finished one (from its archive).
    #[arg(long)]
    pub all: bool,
    /// Print one JSON array of events: time, kind, what, details.
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: Option<PathBuf>, args: LogArgs) -> Outcome {
    let ctx = super::ctx(root);
    let events = events(&ctx, args.all)?;
    if args.json {
        println!("{}", Clean::json_pretty(&events).as_str());
    } else {
        super::pager::show(&text::render(&events, super::pager::color(), args.all));
    }
    Ok(ExitCode::SUCCESS)
}

/// The events of the current task (with `all`, of every task), oldest first; a task that
/// cannot be read is named on stderr and left out.
fn events(ctx: &Ctx, all: bool) -> Result<Vec<Event>, ExitCode> {
    let current = super::load_hook(ctx)?;
    let (hooks, unreadable) = timeline::tasks(ctx, current, all).map_err(cannot)?;
    for u in &unreadable {
        eprintln!("waymark: {u}");
    }
    events_of(ctx, &hooks)
}

/// The events of the tasks `hooks`, oldest first: for a caller that has loaded them.
pub fn events_of(ctx: &Ctx, hooks: &[Hook]) -> Result<Vec<Event>, ExitCode> {
    let trace = timeline::trace_records(ctx).map_err(cannot)?;
    let mut tasks = Vec::new();
    for h in hooks {
        tasks.push(timeline::of_task(ctx, h, &trace).map_err(cannot)?);
    }
    Ok(merge(tasks))
}

fn cannot(e: std::io::Error) -> ExitCode {
    super::failed(format!("cannot read the task's logs: {e}"))
}
