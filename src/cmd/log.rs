//! `waymark log [--all] [--json]`: the task's timeline (`waymark_core::timeline`), one
//! line an event in time order, through a pager in a terminal. `--json` prints one array
//! of `{time, kind, what, details}` (stable; docs/timeline.md).
//!
//! Long output goes through a pager, as `git log` does: `$PAGER` (else `less -FRX`, which
//! quits at once when the text fits the screen), only when stdout is a terminal; piped
//! output, and tests, get the text as it is.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

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
        show(&text::render(&events, color(), args.all));
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

/// Whether output may be coloured: stdout is a terminal and `NO_COLOR` is not set.
pub fn color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Prints `text` (redacted), through the pager when stdout is a terminal.
pub fn show(text: &str) {
    let clean = Clean::text(text);
    let shown = waymark_core::text::for_terminal(clean.as_str());
    if std::io::stdout().is_terminal() && page(&shown) {
        return;
    }
    super::terminal(&shown);
}

/// Hands `text` to the pager and waits for it; false when there is none to run.
fn page(text: &str) -> bool {
    let pager = std::env::var("PAGER").unwrap_or_default();
    let pager = match pager.trim() {
        "" => "less -FRX",
        "cat" => return false,
        p => p,
    };
    // A reader who quits early closes the pipe: the write fails, waymark does not die.
    super::finish_on_closed_stdout();
    let mut cmd = Command::new("sh");
    cmd.args(["-c", pager]).stdin(Stdio::piped());
    if std::env::var_os("LESS").is_none() {
        cmd.env("LESS", "FRX");
    }
    let Ok(mut child) = cmd.spawn() else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        // The reader may quit before the end (q in less): not an error.
        let _ = stdin.write_all(text.as_bytes());
    }
    let _ = child.wait();
    true
}
