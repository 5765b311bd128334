//! `waymark status [--json]`.

use crate::cmd::{ExitCode, Outcome};
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::task::{StepCheckpoint, store};
use waymark_core::receipt::ValidationReceipt;
use waymark_core::task::{Hook, StepSource, StepStatus};
use waymark_core::text::{ago, stamp};

pub fn run(root: Option<PathBuf>, json: bool) -> Outcome {
    let ctx = super::ctx(root);
    let Some(hook) = super::load_hook(&ctx)? else {
        if json {
            super::print_json(&json!({"task": null}));
        } else {
            println!(
                "No task in {} (waymark starts one on the first prompt or tool call).",
                ctx.project.root.display()
            );
        }
        return Ok(ExitCode::SUCCESS);
    };
    let (checkpoints, receipts) = match (
        store::checkpoints(&ctx.project, &hook.task_id, ctx.config.max_checkpoints),
        store::receipts(&ctx.project, &hook),
    ) {
        (Ok(c), Ok(r)) => (c, r),
        (Err(e), _) | (_, Err(e)) => {
            return Err(super::failed(format!("cannot read the task's logs: {e}")));
        }
    };
    if json {
        print_json(&hook, &checkpoints, &receipts);
    } else {
        print_task(&hook, ctx.now);
        print_logs(&checkpoints, &receipts);
    }
    Ok(ExitCode::SUCCESS)
}

/// `--json`: the task's state, steps and recovery, with its checkpoints and receipts.
fn print_json(hook: &Hook, checkpoints: &[StepCheckpoint], receipts: &[ValidationReceipt]) {
    super::print_json(&json!({
        "task": {
            "task_id": hook.task_id,
            "intent_id": hook.intent_id,
            "state": hook.state,
            "updated_at": hook.updated_at,
            "current_step": hook.current_step,
            "steps": hook.steps,
            "recovery": hook.recovery,
            "checkpoints": checkpoints.iter().map(|c| json!({
                "checkpoint_id": c.checkpoint_id, "created_at": c.created_at, "trigger": c.trigger,
                "description": c.description, "step_name": c.step_name, "git_commit": c.git_commit,
            })).collect::<Vec<_>>(),
            "receipts": receipts,
        }
    }));
}

/// The task: its id and intent, state, the step running, a crash found, and every step.
fn print_task(hook: &Hook, now: DateTime<Utc>) {
    let intent = hook.intent_id.as_deref().map(|i| format!(" (intent {i})"));
    println!("Task:   {}{}", hook.task_id, intent.unwrap_or_default());
    println!(
        "State:  {} (updated {} ago)",
        hook.state,
        ago(now, hook.updated_at)
    );
    match &hook.current_step {
        Some(c) => {
            println!(
                "Step:   {} \"{}\" — attempt {} of {}",
                waymark_core::task::outline::number(&hook.steps, c.step_index),
                c.step_name,
                c.attempt,
                c.max_attempts
            );
            if !c.files_touched.is_empty() {
                println!("Files:  {}", c.files_touched.join(", "));
            }
        }
        None => println!("Step:   none running"),
    }
    if let Some(r) = &hook.recovery {
        println!(
            "Crash:  {} — recommended {} ({})",
            r.crash_type, r.recommended_action, r.reason
        );
    }
    if !hook.steps.is_empty() {
        println!("\nSteps:");
        // Numbered as `waymark plan` numbers them (the catch-all for work with no plan and
        // deleted steps are not).
        let numbered = hook
            .steps
            .iter()
            .filter(|s| s.source != StepSource::Implicit && s.status != StepStatus::Deleted);
        for s in numbered {
            let again = (s.attempt > 1).then(|| format!(" (attempt {})", s.attempt));
            let (n, status) = (hook.number(s), s.status.as_str());
            println!(
                "  {n:>2}. [{status}] {}{}",
                s.name,
                again.unwrap_or_default()
            );
        }
    }
}

/// How many checkpoints and receipts the task has, with the last five of each.
fn print_logs(checkpoints: &[StepCheckpoint], receipts: &[ValidationReceipt]) {
    println!("\nCheckpoints: {}", checkpoints.len());
    for c in checkpoints.iter().rev().take(5).rev() {
        println!(
            "  {} {:<17} {}",
            stamp(c.created_at),
            c.trigger.as_str(),
            c.description
        );
    }
    println!("Receipts: {}", receipts.len());
    for r in receipts.iter().rev().take(5).rev() {
        println!(
            "  {} exit {} {}{}",
            r.receipt_id,
            r.exit_code,
            r.command,
            if r.observed { " (observed)" } else { "" }
        );
    }
}
