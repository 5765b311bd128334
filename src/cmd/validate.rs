//! `waymark validate [--step NAME] -- CMD …`: runs a validation command and signs a receipt.
//!
//! 1. Under the hook.json lock: make sure a task exists, re-enter the in-progress step
//!    if the plan says so, and move `step_running` → `step_validating` with the command in
//!    the history. This is saved *before* the command runs, so that a crash or a Ctrl-C in
//!    the middle leaves a task that recovery reports as "crashed during validation".
//! 2. Take the tree of the project's files (`git::project_tree`), then run the command: stdin passed on, stdout and stderr streamed through unchanged and
//!    hashed (src/receipt/runner.rs).
//! 3. Under the lock again: the signed receipt (unsigned, with a warning, when there is no
//!    usable key), `step_validating` → `step_pending`, a `validation` checkpoint on success
//!    or a failure mark on the step (its next entry is a new attempt).
//! 4. On failure, a verification-failure lesson. Exit with the command's own code.
//!
//! waymark's own messages go to stderr, so stdout is exactly the command's.

use crate::cmd::ExitCode;
use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::Utc;
use serde_json::Value;

use crate::receipt::{Run, ValidationReceipt, runner};
use crate::runtime::context::Ctx;
use crate::store::log::Level;
use crate::task::{Effect, Hook, HookState, Need, current};
use waymark_core::task::validation;

/// The output tail a failure lesson gets, in characters.
const LESSON_TAIL: usize = 2000;

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The step this validation is for (default: the current step).
    #[arg(long)]
    pub step: Option<String>,
    /// The command and its arguments.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

pub fn run(root: Option<PathBuf>, args: ValidateArgs) -> ExitCode {
    // The receipt is stored even when whoever reads the output stops reading.
    super::finish_on_closed_stdout();
    let mut ctx = super::ctx(root);
    let command = runner::shell_join(&args.command);

    if let Err(e) = update(&ctx, |hook, _| begin(&ctx, hook, &command)) {
        eprintln!("waymark: validate: task state not saved before the run ({e:#}); running anyway");
    }

    // The code the command runs on: taken before it runs, since it may write files.
    let tree = crate::git::project_tree::of_work_tree(&ctx.project.root, &ctx.config.agent_md);
    let ran = runner::run(&args.command);
    if let Some(why) = &ran.start_error {
        eprintln!("waymark: validate: {why}");
    }

    ctx.now = Utc::now();
    let finished = update(&ctx, |hook, effects| {
        let step = args.step.as_deref();
        finish(&ctx, hook, step, &command, (&ran, tree.as_deref()), effects)
    });
    match finished {
        Ok(done) => report(&ctx, &done, &command, &ran),
        Err(e) => eprintln!(
            "waymark: validate: the receipt could not be stored ({e:#}); the command exited {}",
            ran.exit_code
        ),
    }
    ExitCode((ran.exit_code & 0xff) as u8)
}

/// Runs `f` on the current task under the lock, starting a task when there is none or the
/// last one finished (as a hook event would).
fn update<R>(ctx: &Ctx, f: impl FnOnce(&mut Hook, &mut Vec<Effect>) -> R) -> anyhow::Result<R> {
    let changed = current::change(ctx, Need::Create, f)?;
    Ok(changed.expect("Need::Create always has a task").0)
}

/// Step 1: into `step_validating` when a step is running.
fn begin(ctx: &Ctx, hook: &mut Hook, command: &str) {
    if let Err(e) = hook.ensure_running(ctx.config.max_attempts, ctx.now) {
        eprintln!("waymark: validate: {e}");
    }
    if hook.state == HookState::StepRunning {
        let details = BTreeMap::from([("command".to_string(), Value::from(command))]);
        let _ = hook.transition_with(
            HookState::StepValidating,
            "validation_start",
            details,
            ctx.now,
        );
    }
}

/// What step 3 produced.
struct Finished {
    receipt: ValidationReceipt,
    key_error: Option<String>,
    intent_id: Option<String>,
}

/// Step 3: the receipt, recorded as every validation is (`task::validation`): out of
/// `step_validating`, and a checkpoint on success or a new attempt on failure.
fn finish(
    ctx: &Ctx,
    hook: &mut Hook,
    step: Option<&str>,
    command: &str,
    (ran, tree): (&runner::Ran, Option<&str>),
    effects: &mut Vec<Effect>,
) -> Finished {
    let run = Run {
        command: command.to_string(),
        exit_code: ran.exit_code,
        started_at: ran.started_at,
        completed_at: ran.completed_at,
        duration: Some(ran.duration),
        stdout_hash: ran.stdout_hash.clone(),
        stderr_hash: ran.stderr_hash.clone(),
        observed: false,
        tree: tree.unwrap_or_default().to_string(),
    };
    crate::task::current::count_uncounted_receipts(ctx, hook);
    let (sealed, key_error) = crate::receipt::sealed(&ctx.config, hook, step, run);
    let receipt = sealed.receipt.clone();
    let output = String::from_utf8_lossy(&ran.tail);
    effects.extend(validation::record(hook, sealed, &output, ctx.now));
    Finished {
        receipt,
        key_error: key_error.map(|e| e.to_string()),
        intent_id: hook.intent_id.clone(),
    }
}

/// Step 4: one line on stderr about the receipt, and the lesson of a failure.
fn report(ctx: &Ctx, done: &Finished, command: &str, ran: &runner::Ran) {
    let r = &done.receipt;
    match &done.key_error {
        None => eprintln!(
            "waymark: receipt {} — exit {} in {}, signed ({})",
            r.receipt_id, r.exit_code, r.duration, r.key_path
        ),
        Some(e) => {
            eprintln!(
                "waymark: warning: {e}; receipt {} (exit {}) stored UNSIGNED",
                r.receipt_id, r.exit_code
            );
            ctx.log(
                Level::Warn,
                "validate",
                &format!("{} stored unsigned: {e}", r.receipt_id),
            );
        }
    }
    let lesson = if ran.exit_code == 0 {
        crate::governance::lessons::settle(ctx, command, &r.receipt_id)
    } else {
        let text = String::from_utf8_lossy(&ran.tail);
        let tail = waymark_core::text::tail(text.trim(), LESSON_TAIL);
        let intent = done.intent_id.as_deref();
        crate::governance::lessons::verification_failure(ctx, command, ran.exit_code, &tail, intent)
    };
    if let Err(e) = lesson {
        ctx.log(Level::Error, "validate", &format!("lesson: {e:#}"));
    }
}
