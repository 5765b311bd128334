//! `waymark cleanup [--dry-run] [--json]`: remove finished tasks past their retention
//! (the rule is in `task/retention.rs`).
//!
//! Exit codes: 0 done (kept directories are not failures); 1 a directory could not be
//! removed, or the current task cannot be told; 2 a retention value in the configuration
//! is invalid (cleanup refuses to guess with the defaults).

use crate::cmd::{ExitCode, Outcome};
use std::path::PathBuf;

use serde_json::json;

use crate::runtime::context::Ctx;
use crate::task::retention::{self, Action, Decision};
use waymark_core::text::format_duration;

#[derive(Debug, clap::Args)]
pub struct CleanupArgs {
    /// List what would be removed without removing it.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the decisions as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: Option<PathBuf>, args: CleanupArgs) -> Outcome {
    let ctx = super::ctx(root);
    let retention = ctx
        .config_errors
        .iter()
        .find(|e| e.key.starts_with("retention"));
    if let Some(e) = retention {
        let why = format!("not cleaning up with a default in place of {}", e.key);
        return Err(super::usage(why));
    }
    let mut decisions =
        retention::plan(&ctx.project, &ctx.config.retention, ctx.now).map_err(super::failed)?;
    let failed = remove_due(&ctx, &mut decisions, args.dry_run);
    let removed = decisions
        .iter()
        .filter(|d| d.action == Action::Remove)
        .count();
    let kept = decisions.len() - removed;
    if args.json {
        // The retention in force, the counts and every decision.
        super::print_json(&json!({
            "dry_run": args.dry_run,
            "tasks_dir": ctx.project.state_dir().join(crate::task::store::TASKS_DIR),
            "retention": {
                "completed": format_duration(ctx.config.retention.completed),
                "failed": format_duration(ctx.config.retention.failed),
                "abandoned": format_duration(ctx.config.retention.abandoned),
            },
            "removed": if args.dry_run { 0 } else { removed },
            "would_remove": if args.dry_run { removed } else { 0 },
            "kept": kept,
            "failed": failed,
            "tasks": decisions,
        }));
    } else {
        print_text(&args, &decisions, removed, kept);
    }
    Ok(ExitCode::checked(failed == 0))
}

/// Says each decision's warning and, unless a dry run, removes the tasks due for removal
/// with their snapshots. A task that could not be removed is turned into a kept one with
/// the reason; returns how many of those there were.
fn remove_due(ctx: &Ctx, decisions: &mut [Decision], dry_run: bool) -> usize {
    let mut failed = 0;
    for d in decisions.iter_mut() {
        if let Some(w) = &d.warning {
            eprintln!("waymark: warning: tasks/{}: {w}", d.dir);
        }
        if d.action != Action::Remove || dry_run {
            continue;
        }
        if let Err(e) = retention::remove(d) {
            failed += 1;
            d.action = Action::Keep;
            d.reason = format!("could not be removed: {e}");
            eprintln!("waymark: tasks/{}: {e}", d.dir);
            continue;
        }
        // Its checkpoints' snapshots go with it.
        let task = d.task_id.as_deref().unwrap_or(&d.dir);
        if let Err(e) = crate::git::snapshot::remove_task(&ctx.project.root, task) {
            eprintln!("waymark: tasks/{}: snapshots not removed: {e}", d.dir);
        }
    }
    failed
}

/// The text report: one line per task directory, then the counts.
fn print_text(args: &CleanupArgs, decisions: &[Decision], removed: usize, kept: usize) {
    let verb = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    for d in decisions {
        let what = match d.action {
            Action::Remove => verb,
            Action::Keep => "kept",
        };
        println!("{what:<12} tasks/{}: {}", d.dir, d.reason);
    }
    if args.dry_run {
        println!("Dry run: {removed} would be removed, {kept} kept; nothing was removed.");
    } else {
        println!("{removed} removed, {kept} kept.");
    }
}
