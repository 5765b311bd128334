//! `waymark hook <Event>`: the entry point Claude Code runs. It never fails the tool call:
//! every path exits 0, panics are caught, a watchdog ends the process at the deadline,
//! errors go to `.orchestration/waymark.log` and one line on stderr, and stdout carries
//! only valid hook JSON, only when there is something to say.

use std::io::{Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::thread;
use std::time::Instant;

use serde_json::Value;

use crate::claude::event::{self, Event};
use crate::context::Ctx;
use crate::log::{self, Level};
use crate::project::Project;
use crate::store::critical;

/// Inputs larger than this are not processed (a 50 MB Write is still fine).
pub const MAX_INPUT: u64 = 64 * 1024 * 1024;

pub fn run(name: Option<&str>, root: Option<PathBuf>) -> ExitCode {
    panic::set_hook(Box::new(|_| {}));
    let mut bytes = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_INPUT + 1)
        .read_to_end(&mut bytes);
    let fallback = || match &root {
        Some(r) => Project::at(r.clone()),
        None => Project::resolve(None),
    };
    let context = name.unwrap_or("hook");
    if let Err(e) = read {
        report(&fallback(), context, &format!("cannot read stdin: {e}"));
        return ExitCode::SUCCESS;
    }
    if bytes.len() as u64 > MAX_INPUT {
        report(
            &fallback(),
            context,
            &format!("input over {} MiB ignored", MAX_INPUT >> 20),
        );
        return ExitCode::SUCCESS;
    }
    // Non-UTF-8 bytes are replaced rather than rejected: one stray byte in a tool's output
    // must not cost the whole event.
    let text = String::from_utf8_lossy(&bytes);
    let parsed = match event::parse(name, text.as_bytes()) {
        Ok(p) => p,
        Err(e) => {
            report(&fallback(), context, &e.to_string());
            return ExitCode::SUCCESS;
        }
    };
    drop(bytes);
    let project = match root {
        Some(r) => Project::at(r),
        None => Project::resolve(parsed.event.common.cwd.as_deref().map(Path::new)),
    };
    let mut ctx = Ctx::new(project);
    if let Err(e) = ctx.project.check_state_paths(&ctx.config.agent_md) {
        // Not even the log may be written: say it on stderr only.
        eprintln!("waymark: {}: {e}", parsed.event.name());
        return ExitCode::SUCCESS;
    }
    ctx.deadline = Some(Instant::now() + ctx.config.hook_deadline);
    for e in &ctx.config_errors {
        ctx.log(Level::Warn, "config", &e.to_string());
    }
    if let Some(note) = &parsed.mismatch {
        ctx.log(Level::Warn, parsed.event.name(), note);
    }
    start_watchdog(&ctx, parsed.event.name());
    if let Some(json) = run_event(&ctx, &parsed.event) {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{json}");
        let _ = stdout.flush();
    }
    ExitCode::SUCCESS
}

/// Dispatches one event with panics caught; returns the JSON to print, if any.
/// Shared by `waymark hook` and `waymark replay`.
pub fn run_event(ctx: &Ctx, event: &Event) -> Option<Value> {
    match panic::catch_unwind(AssertUnwindSafe(|| crate::handlers::dispatch(ctx, event))) {
        Ok(out) => out.to_json(event.name()),
        Err(payload) => {
            let msg = crate::text::panic_message(payload.as_ref());
            report(
                &ctx.project,
                event.name(),
                &format!("internal error (panic): {msg}"),
            );
            None
        }
    }
}

/// Logs an error and prints the one stderr line.
fn report(project: &Project, context: &str, message: &str) {
    log::write(&project.state_dir(), Level::Error, context, message);
    eprintln!("waymark: {context}: {message} (details in .orchestration/waymark.log)");
}

/// Ends the process (exit 0) if the event is still running at the deadline. Atomic writes
/// make this safe: an interrupted replace leaves the previous file, an interrupted append at
/// most a torn line that the next writer repairs. A state write that is queued for its lock
/// or writing at the deadline is let finish (up to [`critical::GRACE`]) so that the event
/// is not lost; the optional work after it is skipped, as `Ctx::short_of_time` says.
fn start_watchdog(ctx: &Ctx, event: &str) {
    let deadline = ctx.config.hook_deadline;
    let state_dir = ctx.project.state_dir();
    let event = event.to_string();
    let started = Instant::now();
    let _ = thread::Builder::new()
        .name("waymark-deadline".into())
        .spawn(move || {
            thread::sleep(deadline);
            let graced = critical::in_progress();
            while critical::in_progress() && started.elapsed() < deadline + critical::GRACE {
                thread::sleep(std::time::Duration::from_millis(2));
            }
            let what = if graced {
                "a state write in progress was let finish, then left"
            } else {
                "leaving with what was written"
            };
            log::write(
                &state_dir,
                Level::Error,
                &event,
                &format!(
                    "deadline of {:?} reached after {:?}: {what}",
                    deadline,
                    started.elapsed()
                ),
            );
            eprintln!("waymark: {event}: deadline reached; state written so far is kept");
            std::process::exit(0);
        });
}
