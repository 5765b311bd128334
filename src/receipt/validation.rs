//! The one flow every validation takes, whoever ran the command: `waymark validate` runs it
//! itself; a validation the agent runs through the Bash tool is only observed. Either way
//! the result becomes a signed receipt, recorded in the task the same way.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::{KeyError, ReceiptHead, Run, ValidationReceipt, seal, sha256_hex};
use crate::config::Config;
use crate::task::{CheckpointTrigger, Effect, FailedValidation, Hook, HookState, LaterPass};

/// The receipt of `run` for the task's step `step` (default: the current step): the next
/// link of the task's chain, its secrets masked, signed with the task's key, with the
/// chain's new head. Without a usable key the receipt is kept unsigned and the error says
/// why: a missing key never blocks a validation. Made under the task's lock, so that no
/// other receipt can come between it and the head it follows.
pub fn receipt(
    config: &Config,
    hook: &Hook,
    step: Option<&str>,
    run: Run,
) -> (Sealed, Option<KeyError>) {
    let step_name = step
        .map(str::to_string)
        .or_else(|| hook.current_step.as_ref().map(|c| c.step_name.clone()))
        .unwrap_or_default();
    let mut receipt = ValidationReceipt::new(&step_name, run);
    let head = hook.receipt_head.as_ref();
    let (head, error) = seal(config, &mut receipt, &hook.task_id, head, hook.task_index);
    (Sealed { receipt, head }, error)
}

/// A receipt made the next of its task's chain, and the head it makes.
#[derive(Debug, Clone)]
pub struct Sealed {
    pub receipt: ValidationReceipt,
    pub head: ReceiptHead,
}

/// What Claude Code reported of a validation the agent ran through the Bash tool: a run
/// marked `observed`, hashed over the output Claude Code reported, finished `now` (and
/// started `duration` earlier, when Claude Code said how long it took).
pub fn observed(
    command: &str,
    exit_code: i32,
    stdout: &str,
    stderr: &str,
    duration: Option<Duration>,
    now: DateTime<Utc>,
) -> Run {
    let started_at = duration
        .and_then(|d| chrono::Duration::from_std(d).ok())
        .map(|d| now - d)
        .unwrap_or(now);
    Run {
        command: command.to_string(),
        exit_code,
        started_at,
        completed_at: now,
        duration,
        stdout_hash: sha256_hex(stdout.as_bytes()),
        stderr_hash: sha256_hex(stderr.as_bytes()),
        observed: true,
    }
}

/// Records a finished validation in the task: the receipt is stored and linked to its
/// step; a validation waymark ran leaves `step_validating`; a pass asks for a `validation`
/// checkpoint, a failure marks the step so that its next entry is a new attempt. The
/// failure, with the last lines of `output` that say why, is the task's and the step's
/// last failure until a run of the same command passes (which the record then says).
pub fn record(hook: &mut Hook, sealed: Sealed, output: &str, now: DateTime<Utc>) -> Vec<Effect> {
    let Sealed { receipt, head } = sealed;
    hook.receipt_head = Some(head);
    let passed = receipt.exit_code == 0;
    note_outcome(hook, &receipt, output);
    let (id, exit_code) = (receipt.receipt_id.clone(), receipt.exit_code);
    let description = format!("Validation passed: {} ({id})", receipt.command);
    let observed = receipt.observed;
    hook.add_receipt(receipt);
    if !observed && hook.state == HookState::StepValidating {
        let details = std::collections::BTreeMap::from([
            ("receipt_id".to_string(), serde_json::Value::from(id)),
            ("exit_code".to_string(), serde_json::Value::from(exit_code)),
        ]);
        let trigger = if passed {
            "validation_passed"
        } else {
            "validation_failed"
        };
        let _ = hook.transition_with(HookState::StepPending, trigger, details, now);
    }
    if passed {
        vec![Effect::Checkpoint(
            CheckpointTrigger::Validation,
            description,
        )]
    } else {
        hook.record_failure(now);
        Vec::new()
    }
}

/// How many lines of a failing validation's output the next session is shown.
pub const WHY_LINES: usize = 8;

/// The task's and the current step's last failure: set by a failing run, marked passed by
/// a later passing run of the same command.
fn note_outcome(hook: &mut Hook, r: &ValidationReceipt, output: &str) {
    let same = |f: &FailedValidation| {
        crate::text::one_line(&f.command) == crate::text::one_line(&r.command)
    };
    let failures = [
        hook.last_failure.as_mut(),
        hook.current_step
            .as_mut()
            .and_then(|c| c.last_failure.as_mut()),
    ];
    if r.exit_code == 0 {
        for f in failures.into_iter().flatten() {
            if same(f) && f.passed_later.is_none() {
                f.passed_later = Some(LaterPass {
                    receipt_id: r.receipt_id.clone(),
                    at: r.completed_at,
                });
            }
        }
        return;
    }
    let failure = FailedValidation {
        receipt_id: r.receipt_id.clone(),
        command: r.command.clone(),
        exit_code: r.exit_code,
        at: r.completed_at,
        step: r.step_name.clone(),
        output: crate::text::last_lines(output, WHY_LINES, 1000),
        passed_later: None,
    };
    if let Some(c) = hook.current_step.as_mut() {
        c.last_failure = Some(failure.clone());
    }
    hook.last_failure = Some(failure);
}

impl Hook {
    /// Stores a receipt and links it to its step (by name, else the current step).
    pub fn add_receipt(&mut self, receipt: ValidationReceipt) {
        let step_id = self
            .find_step(&receipt.step_name)
            .map(|s| s.id.clone())
            .or_else(|| self.current_step.as_ref().map(|c| c.step_id.clone()));
        if let Some(id) = step_id {
            if let Some(step) = self.steps.iter_mut().find(|s| s.id == id) {
                step.receipt_ids.push(receipt.receipt_id.clone());
            }
        }
        self.updated_at = self.updated_at.max(receipt.completed_at);
        self.receipt_count += 1;
        self.recent_receipts
            .push(crate::task::ReceiptSummary::of(&receipt));
        let excess = self
            .recent_receipts
            .len()
            .saturating_sub(crate::task::RECENT_RECEIPTS);
        self.recent_receipts.drain(..excess);
        self.journal.receipts.push(receipt);
    }
}
