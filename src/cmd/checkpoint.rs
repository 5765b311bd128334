//! `waymark checkpoint "<desc>"` and `waymark checkpoints [--json]`.

use crate::cmd::ExitCode;
use std::path::PathBuf;

use crate::task::CheckpointTrigger;
use crate::task::current::{self, Made};
use crate::text::stamp;

pub fn create(root: Option<PathBuf>, description: &str, trigger: &str, auto: bool) -> ExitCode {
    let ctx = super::ctx(root);
    let Some(trigger) = CheckpointTrigger::parse(trigger) else {
        return super::fail(super::USAGE, format!("unknown trigger `{trigger}`"));
    };
    // A git_commit / git_push checkpoint at a HEAD already checkpointed with that trigger
    // is not made twice (`task::checkpoint::already_checkpointed`): with the git hooks installed, a
    // commit the agent makes through Bash reaches waymark both from the post-commit hook
    // (this command, `--auto`) and from the PostToolUse Bash handler.
    let result = current::update(&ctx, |slot, _| {
        let hook = slot.as_mut().filter(|h| !h.state.is_terminal())?;
        Some(current::make_checkpoint(&ctx, hook, trigger, description))
    });
    match result {
        Ok(u) => match u.value {
            Some(Made { id, repeat: true }) => {
                if !auto {
                    println!(
                        "Already checkpointed: {id} ({}) is at this commit",
                        trigger.as_str()
                    );
                }
                ExitCode::SUCCESS
            }
            Some(Made { id, repeat: false }) => {
                if !auto {
                    println!(
                        "Checkpoint saved: {id} ({}) — {description}",
                        trigger.as_str()
                    );
                }
                ExitCode::SUCCESS
            }
            None if auto => ExitCode::SUCCESS,
            None => super::fail(
                super::USAGE,
                "no running task to checkpoint (start one with `waymark task start`)",
            ),
        },
        Err(e) if auto => {
            ctx.log(crate::log::Level::Error, "checkpoint", &e.to_string());
            ExitCode::SUCCESS
        }
        Err(e) => super::fail(super::CHECK_FAILED, e),
    }
}

pub fn list(root: Option<PathBuf>, json: bool) -> ExitCode {
    let ctx = super::ctx(root);
    let hook = match super::load_hook(&ctx) {
        Ok(h) => h,
        Err(code) => return code,
    };
    let checkpoints = hook.map(|h| h.checkpoints.to_vec()).unwrap_or_default();
    if json {
        super::print_json(&checkpoints);
        return ExitCode::SUCCESS;
    }
    if checkpoints.is_empty() {
        println!("No checkpoints.");
    }
    for c in &checkpoints {
        let commit = c
            .git_commit
            .as_deref()
            .map(|h| format!(" @{}", &h[..h.len().min(10)]))
            .unwrap_or_default();
        println!(
            "{} {} {:<17} step \"{}\"{}{} — {}",
            stamp(c.created_at),
            c.checkpoint_id,
            c.trigger.as_str(),
            c.step_name,
            commit,
            if c.git_dirty { " (dirty)" } else { "" },
            c.description
        );
        for f in &c.files_snapshot {
            println!(
                "    {} {} bytes sha256:{}{}",
                f.path,
                f.size,
                f.sha256,
                if f.exists { "" } else { " (missing)" }
            );
        }
    }
    ExitCode::SUCCESS
}
