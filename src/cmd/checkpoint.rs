//! `waymark checkpoint "<desc>"` and `waymark checkpoints [--json]`.

use std::path::PathBuf;

use serde_json::Value;

use crate::cmd::{ExitCode, Outcome};
use crate::store::log::Level;
use crate::task::capture::{self, Capture};
use crate::task::current::{self, Made};
use crate::task::{CheckpointTrigger, StepCheckpoint, store};
use waymark_core::text::stamp;

pub fn create(root: Option<PathBuf>, description: &str, trigger: &str, auto: bool) -> Outcome {
    let ctx = super::ctx(root);
    let Some(trigger) = CheckpointTrigger::parse(trigger) else {
        return Err(super::usage(format!("unknown trigger `{trigger}`")));
    };
    // A git_commit / git_push checkpoint at a HEAD already checkpointed with that trigger
    // is not made twice (`task::checkpoint::already_checkpointed`): with the git hooks installed, a
    // commit the agent makes through Bash reaches waymark both from the post-commit hook
    // (this command, `--auto`) and from the PostToolUse Bash handler.
    let result = current::update(&ctx, |slot, _| {
        let hook = slot.as_mut().filter(|h| !h.state.is_terminal())?;
        Some(current::make_checkpoint(
            &ctx,
            hook,
            trigger,
            description,
            None,
        ))
    });
    let trigger = trigger.as_str();
    match result {
        Ok(u) => match u.value {
            Some(_) if auto => {}
            Some(Made { id, repeat: true }) => {
                println!("Already checkpointed: {id} ({trigger}) is at this commit")
            }
            Some(Made { id, repeat: false }) => {
                println!("Checkpoint saved: {id} ({trigger}) — {description}")
            }
            None if auto => {}
            None => {
                let why = "no running task to checkpoint (start one with `waymark task start`)";
                return Err(super::usage(why));
            }
        },
        Err(e) if auto => ctx.log(Level::Error, "checkpoint", &e.to_string()),
        Err(e) => return Err(super::failed(e)),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn list(root: Option<PathBuf>, json: bool) -> Outcome {
    let ctx = super::ctx(root);
    let Some(hook) = super::load_hook(&ctx)? else {
        if json {
            super::print_json(&serde_json::json!([]));
        } else {
            println!("No checkpoints.");
        }
        return Ok(ExitCode::SUCCESS);
    };
    let checkpoints = store::checkpoints(&ctx.project, &hook.task_id, ctx.config.max_checkpoints)
        .map_err(|e| super::failed(format!("cannot read the checkpoints: {e}")))?;
    let listed: Vec<(StepCheckpoint, Option<Capture>)> = checkpoints
        .into_iter()
        .map(|c| {
            let capture = capture::load(&ctx.project, &hook.task_id, &c.checkpoint_id);
            (c, capture)
        })
        .collect();
    if json {
        // Each checkpoint as stored, with its capture (or null) under `capture`.
        let values: Vec<Value> = listed
            .iter()
            .map(|(c, capture)| {
                let mut v = serde_json::to_value(c).expect("serializable");
                v["capture"] = serde_json::to_value(capture).expect("serializable");
                v
            })
            .collect();
        super::print_json(&values);
        return Ok(ExitCode::SUCCESS);
    }
    if listed.is_empty() {
        println!("No checkpoints.");
    }
    for (c, capture) in &listed {
        print_checkpoint(c, capture.as_ref());
    }
    Ok(ExitCode::SUCCESS)
}

/// One checkpoint: when, id, trigger, step, commit, dirtiness and snapshot, then each
/// captured file (or that the capture is missing).
fn print_checkpoint(c: &StepCheckpoint, capture: Option<&Capture>) {
    let commit = c
        .git_commit
        .as_deref()
        .map(|h| format!(" @{}", waymark_core::text::prefix(h, 10)))
        .unwrap_or_default();
    let dirty = capture.and_then(|k| k.git_dirty) == Some(true);
    let snapshot = capture
        .and_then(|k| k.snapshot.as_deref())
        .map(|s| format!(" [snapshot {}]", waymark_core::text::prefix(s, 10)))
        .unwrap_or_default();
    println!(
        "{} {} {:<17} {}{}{}{snapshot} — {}",
        stamp(c.created_at),
        c.checkpoint_id,
        c.trigger.as_str(),
        match c.step_name.as_str() {
            "" => "no step".to_string(),
            name => format!("step \"{name}\""),
        },
        commit,
        if dirty { " (dirty)" } else { "" },
        c.description
    );
    match capture {
        Some(k) => {
            for f in &k.files {
                if f.exists {
                    println!("    {} {} bytes sha256:{}", f.path, f.size, f.sha256);
                } else {
                    println!("    {} (did not exist)", f.path);
                }
            }
        }
        None => println!("    (snapshot missing: its capture was interrupted)"),
    }
}
