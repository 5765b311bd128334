//! `waymark recover [--json]` and `waymark regenerate`.

use crate::cmd::{ExitCode, Outcome};
use std::path::PathBuf;

use crate::task::current;
use crate::task::store::{self, HOOK_MD};
use waymark_core::config::Switch;
use waymark_core::recovery::brief::{self, Extras};

/// Runs crash detection now (idempotent) and prints the resume brief.
pub fn run(root: Option<PathBuf>, json: bool) -> Outcome {
    let ctx = super::ctx(root);
    // A command starts no session: every session whose process runs is live.
    let live = crate::recovery::liveness(None);
    let result = current::update(&ctx, |slot, _| {
        slot.as_mut()
            .map(|h| crate::recovery::recover(&ctx, h, "", &live))
    });
    let updated = result.map_err(super::failed)?;
    let Some(hook) = updated.hook else {
        println!("No task to recover.");
        return Ok(ExitCode::SUCCESS);
    };
    if json {
        super::print_json(&serde_json::json!({
            "task_id": hook.task_id,
            "state": hook.state,
            "crash_detected_now": updated.value.unwrap_or(false),
            "recovery": hook.recovery,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    if updated.value != Some(true) {
        println!(
            "No crash detected: the last session ended its turn, or its process still runs (docs/recovery.md). Task {} is {}.\n",
            hook.task_id, hook.state
        );
    }
    let extras = Extras {
        source: "recover".into(),
        ..Default::default()
    };
    let text = brief::render(
        &hook,
        Switch::On,
        &ctx.project.state_file(HOOK_MD),
        ctx.config.resume_brief_max_chars,
        &extras,
        ctx.now,
    );
    println!("{}", text.unwrap_or_default());
    Ok(ExitCode::SUCCESS)
}

pub fn regenerate(root: Option<PathBuf>) -> Outcome {
    let ctx = super::ctx(root);
    let hook = current::load(&ctx).map_err(super::failed)?;
    let hook = hook.ok_or_else(|| super::usage("no hook.json to regenerate from"))?;
    store::write_hook_md(&ctx.project, &hook)
        .map_err(|e| super::failed(format!("cannot write HOOK.md: {e}")))?;
    println!("Regenerated {}", ctx.project.state_file(HOOK_MD).display());
    Ok(ExitCode::SUCCESS)
}
