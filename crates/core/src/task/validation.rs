//! The one flow every validation takes, whoever ran the command: `waymark validate` runs it
//! itself; a validation the agent runs through the Bash tool is only observed. Either way
//! the result becomes a signed receipt, recorded in the task the same way.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::bounds::keep_newest;
use super::{
    CheckpointTrigger, Effect, FailedValidation, Hook, HookState, LaterPass, RECENT_RECEIPTS,
    ReceiptSummary,
};
use crate::config::Config;
use crate::receipt::{ReceiptHead, ReceiptSigner, Run, ValidationReceipt, seal, sha256_hex};

/// The receipt of `run` for the task's step `step` (default: the current step): the next
/// link of the task's chain, its secrets masked, signed with the task's key, with the
/// chain's new head. Without a signer (no usable key) the receipt is kept unsigned: a
/// missing key never blocks a validation. Made under the task's lock, so that no other
/// receipt can come between it and the head it follows.
pub fn receipt(
    config: &Config,
    hook: &Hook,
    step: Option<&str>,
    run: Run,
    signer: Option<&dyn ReceiptSigner>,
) -> Sealed {
    let step_name = step
        .map(str::to_string)
        .or_else(|| hook.current_step.as_ref().map(|c| c.step_name.clone()))
        .unwrap_or_default();
    let mut receipt = ValidationReceipt::new(&step_name, run);
    let head = hook.receipt_head.as_ref();
    let head = seal(
        config,
        &mut receipt,
        &hook.task_id,
        head,
        hook.task_index,
        signer,
    );
    Sealed { receipt, head }
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
        .map_or(now, |d| now - d);
    Run {
        command: command.to_string(),
        exit_code,
        started_at,
        completed_at: now,
        duration,
        stdout_hash: sha256_hex(stdout.as_bytes()),
        stderr_hash: sha256_hex(stderr.as_bytes()),
        observed: true,
        tree: String::new(),
    }
}

/// Records a finished validation in the task: the receipt is stored and linked to its
/// step; a validation waymark ran leaves `step_validating`, one that failed from Bash leaves
/// `step_running` (its attempt is over); a pass asks for a `validation`
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
    // A validation waymark ran leaves `step_validating`; one the agent ran from Bash that
    // failed ends the running attempt as much (docs/recovery.md): the step's next work is
    // its next attempt, as the brief announces.
    let ends_attempt = match hook.state {
        HookState::StepValidating => !observed,
        HookState::StepRunning => observed && !passed,
        _ => false,
    };
    if ends_attempt {
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
            None,
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
    // Work with no plan is no step to name: told by where the step came from, not by a
    // name a plan may also use.
    let step = (!hook.unplanned()).then(|| r.step_name.clone());
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
        step: step.unwrap_or_default(),
        output: crate::text::last_lines(output, WHY_LINES, 1000),
        passed_later: None,
    };
    if let Some(c) = hook.current_step.as_mut() {
        c.last_failure = Some(failure.clone());
    }
    hook.last_failure = Some(failure);
}

impl Hook {
    /// Counts receipts the task's log holds at its end and hook.json did not count (a save
    /// killed between appending them and writing hook.json): the head follows them, so
    /// that the next receipt is chained after the log's real end and the head and the log
    /// agree again.
    pub fn count_receipts(&mut self, found: &[ValidationReceipt]) {
        for r in found {
            self.receipt_head = Some(ReceiptHead::after(self.receipt_head.as_ref(), r));
            self.receipt_count += 1;
            self.recent_receipts.push(ReceiptSummary::of(r));
        }
        keep_newest(&mut self.recent_receipts, RECENT_RECEIPTS);
    }

    /// Stores a receipt and links it to its step (by name, else the current step). The
    /// current step's receipts wait in its context until the step is left
    /// ([`StepContext::leave_into`](crate::task::StepContext::leave_into)): a validation
    /// of the running step leaves the plan as it was read.
    pub fn add_receipt(&mut self, receipt: ValidationReceipt) {
        let name = receipt.step_name.as_str();
        let current = self.current_step.as_ref().map(|c| c.step_id.as_str());
        let of_current = self
            .current_step
            .as_ref()
            .is_some_and(|c| name.is_empty() || c.step_name == name || c.step_id == name);
        // Another step the receipt names, by id or name: linked in the plan at once.
        let other = (!of_current)
            .then(|| self.find_step(name))
            .flatten()
            .filter(|s| Some(s.id.as_str()) != current)
            .map(|s| s.id.clone());
        match other.and_then(|id| self.step_pos(&id)) {
            Some(pos) => self.steps[pos].receipt_ids.push(receipt.receipt_id.clone()),
            None => {
                if let Some(c) = self.current_step.as_mut() {
                    c.receipt_ids.push(receipt.receipt_id.clone());
                }
            }
        }
        self.updated_at = self.updated_at.max(receipt.completed_at);
        self.receipt_count += 1;
        self.recent_receipts.push(ReceiptSummary::of(&receipt));
        keep_newest(&mut self.recent_receipts, RECENT_RECEIPTS);
        self.journal.receipts.push(receipt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{StepSource, StepStatus};

    fn receipt(step: &str, now: DateTime<Utc>) -> ValidationReceipt {
        let run = observed("cargo test", 0, "", "", None, now);
        ValidationReceipt::new(step, run)
    }

    /// A receipt of the running step waits in its context, and is linked to the step, after
    /// the receipts it had, when the step is left; one named for another step is linked to
    /// that step at once.
    #[test]
    fn receipts_are_linked_to_their_step_the_running_one_when_it_is_left() {
        let now = Utc::now();
        let mut hook = Hook::new("t", "w", 0, now);
        hook.add_step("1", "Parse", "", None, StepSource::Task, now);
        hook.add_step("2", "Test", "", None, StepSource::Task, now);
        hook.steps[0].receipt_ids.push("rcpt-before".into());
        hook.set_step_status("1", StepStatus::InProgress, 3, now)
            .unwrap();

        let running = receipt("Parse", now);
        let other = receipt("test", now);
        let (running_id, other_id) = (running.receipt_id.clone(), other.receipt_id.clone());
        hook.add_receipt(running);
        hook.add_receipt(other);
        assert_eq!(
            hook.current_step.as_ref().unwrap().receipt_ids,
            [running_id.as_str()]
        );
        assert_eq!(hook.steps[0].receipt_ids, ["rcpt-before"]);
        assert_eq!(hook.steps[1].receipt_ids, [other_id.as_str()]);
        assert_eq!(hook.receipt_count, 2);

        hook.set_step_status("1", StepStatus::Completed, 3, now)
            .unwrap();
        assert!(hook.current_step.is_none());
        assert_eq!(
            hook.steps[0].receipt_ids,
            ["rcpt-before", running_id.as_str()]
        );
    }

    /// With no step named and none running, a receipt is stored and linked to nothing.
    #[test]
    fn a_receipt_of_no_step_is_kept_all_the_same() {
        let now = Utc::now();
        let mut hook = Hook::new("t", "w", 0, now);
        hook.add_step("1", "Parse", "", None, StepSource::Task, now);
        hook.add_receipt(receipt("", now));
        assert!(hook.steps[0].receipt_ids.is_empty());
        assert_eq!(hook.recent_receipts.len(), 1);
    }

    /// A failure of work with no plan names no step, though the step waymark started for
    /// it is called "Session work"; a planned step of that name is named.
    #[test]
    fn a_failure_names_its_step_only_when_a_plan_has_it() {
        let now = Utc::now();
        let fail = |hook: &mut Hook| {
            let run = observed("cargo test", 101, "", "", None, now);
            let receipt = ValidationReceipt::new(crate::task::IMPLICIT_STEP, run);
            let head = ReceiptHead::after(hook.receipt_head.as_ref(), &receipt);
            record(hook, Sealed { receipt, head }, "FAILED\n", now);
            hook.last_failure.clone().unwrap().step
        };
        let mut unplanned = Hook::new("t", "w", 0, now);
        assert!(unplanned.ensure_running(3, now).unwrap());
        assert!(unplanned.unplanned());
        assert_eq!(fail(&mut unplanned), "");
        let mut planned = Hook::new("t", "w", 0, now);
        let name = crate::task::IMPLICIT_STEP;
        planned.add_step("1", name, "", None, StepSource::Task, now);
        planned
            .set_step_status("1", StepStatus::InProgress, 3, now)
            .unwrap();
        assert_eq!(fail(&mut planned), name);
    }

    /// A receipt named like the running step is the running step's, though an earlier
    /// step has the same name; one named by the running step's id too.
    #[test]
    fn a_receipt_of_the_running_step_is_its_own_though_another_step_has_its_name() {
        let now = Utc::now();
        let mut hook = Hook::new("t", "w", 0, now);
        hook.add_step("a", "Test", "", None, StepSource::Task, now);
        hook.add_step("b", "Test", "", None, StepSource::Task, now);
        hook.set_step_status("b", StepStatus::InProgress, 3, now)
            .unwrap();
        let (by_name, by_id) = (receipt("Test", now), receipt("b", now));
        let ids = [by_name.receipt_id.clone(), by_id.receipt_id.clone()];
        hook.add_receipt(by_name);
        hook.add_receipt(by_id);
        assert_eq!(hook.current_step.as_ref().unwrap().receipt_ids, ids);
        assert!(hook.steps[0].receipt_ids.is_empty());
    }

    /// Receipts a killed save left uncounted are counted, each, and the head follows them.
    #[test]
    fn uncounted_receipts_are_each_counted() {
        let now = Utc::now();
        let mut hook = Hook::new("t", "w", 0, now);
        hook.count_receipts(&[receipt("", now), receipt("", now)]);
        assert_eq!(hook.receipt_count, 2);
        assert_eq!(hook.recent_receipts.len(), 2);
        assert_eq!(hook.receipt_head.as_ref().unwrap().count, 2);
    }

    /// An observed run started the reported duration before it finished.
    #[test]
    fn an_observed_run_started_its_duration_before_now() {
        let now = Utc::now();
        let run = observed(
            "make test",
            2,
            "out",
            "err",
            Some(Duration::from_secs(90)),
            now,
        );
        assert_eq!(run.started_at, now - chrono::Duration::seconds(90));
        assert_eq!(
            (run.completed_at, run.exit_code, run.observed),
            (now, 2, true)
        );
        assert_eq!(observed("t", 0, "", "", None, now).started_at, now);
    }

    fn sealed(
        hook: &Hook,
        command: &str,
        exit_code: i32,
        waymark_ran: bool,
        now: DateTime<Utc>,
    ) -> Sealed {
        let mut run = observed(command, exit_code, "", "", None, now);
        run.observed = !waymark_ran;
        let receipt = ValidationReceipt::new("", run);
        let head = ReceiptHead::after(hook.receipt_head.as_ref(), &receipt);
        Sealed { receipt, head }
    }

    /// A failing run is the step's and the task's last failure (with the lines that say
    /// why) and marks the step for a new attempt; a pass of the same command marks it
    /// passed later and asks for a validation checkpoint. A run waymark made leaves
    /// `step_validating`; one it only observed does not move the state.
    #[test]
    fn a_failure_is_remembered_until_the_same_command_passes() {
        let now = Utc::now();
        let mut hook = Hook::new("t", "w", 0, now);
        hook.add_step("1", "Parse", "", None, StepSource::Task, now);
        hook.set_step_status("1", StepStatus::InProgress, 3, now)
            .unwrap();
        hook.state = HookState::StepValidating;
        let failed = sealed(&hook, "cargo test", 101, true, now);
        let failed_id = failed.receipt.receipt_id.clone();
        assert!(record(&mut hook, failed, "ok\nFAILED parser\n", now).is_empty());
        assert_eq!(hook.state, HookState::StepPending);
        assert!(hook.steps[0].failed_since_entry);
        let f = hook.last_failure.clone().unwrap();
        assert_eq!(
            (f.receipt_id.as_str(), f.output.as_str()),
            (failed_id.as_str(), "ok\nFAILED parser")
        );
        assert_eq!(hook.current_step.as_ref().unwrap().last_failure, Some(f));
        // A run waymark only observed does not end a validation waymark runs.
        hook.state = HookState::StepValidating;
        let observed_run = sealed(&hook, "cargo clippy", 0, false, now);
        record(&mut hook, observed_run, "", now);
        assert_eq!(hook.state, HookState::StepValidating);
        // Another command passing says nothing of the failure.
        hook.state = HookState::StepRunning;
        let other = sealed(&hook, "cargo fmt --check", 0, false, now);
        record(&mut hook, other, "", now);
        assert!(hook.last_failure.as_ref().unwrap().passed_later.is_none());
        assert_eq!(hook.state, HookState::StepRunning);
        let passed = sealed(&hook, "cargo test", 0, false, now);
        let passed_id = passed.receipt.receipt_id.clone();
        let effects = record(&mut hook, passed, "", now);
        assert_eq!(
            effects,
            [Effect::Checkpoint(
                CheckpointTrigger::Validation,
                format!("Validation passed: cargo test ({passed_id})"),
                None
            )]
        );
        for f in [
            hook.last_failure.as_ref(),
            hook.current_step.as_ref().unwrap().last_failure.as_ref(),
        ] {
            assert_eq!(
                f.unwrap().passed_later.as_ref().unwrap().receipt_id,
                passed_id
            );
        }
        assert_eq!(hook.receipt_count, 4);
    }

    /// A validation the agent ran from Bash that failed counts as much as one waymark ran:
    /// the attempt is over, the step's next work is attempt 2 (as the brief announced), a
    /// later pass leaves it there, and a crash after that makes attempt 3, not 2.
    #[test]
    fn a_failed_validation_from_bash_ends_the_attempt_the_next_work_takes_the_next() {
        let now = Utc::now();
        let mut hook = crate::task::testing::running("Parse", &["src/a.rs"], now);
        let failed = sealed(&hook, "make test", 2, false, now);
        record(&mut hook, failed, "FAILED\n", now);
        assert_eq!(hook.state, HookState::StepPending);
        let step = hook.next_step().unwrap().clone();
        assert_eq!(hook.next_attempt(&step), 2);
        hook.ensure_running(9, now).unwrap();
        assert_eq!(hook.state, HookState::StepRunning);
        assert_eq!(hook.current_step.as_ref().unwrap().attempt, 2);
        let passed = sealed(&hook, "make test", 0, false, now);
        record(&mut hook, passed, "", now);
        assert_eq!(hook.state, HookState::StepRunning);
        let step = hook.next_step().unwrap().clone();
        assert_eq!(hook.next_attempt(&step), 2);
        assert_eq!(
            hook.current_step.as_ref().unwrap().files_touched,
            ["src/a.rs"]
        );
    }
}
