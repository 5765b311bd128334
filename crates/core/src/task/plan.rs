//! What happens to a task when its steps move: the rules that map Claude Code's task list
//! (and `waymark step …`) onto the state machine. Pure: time comes in as an argument and
//! the checkpoints a change calls for come out as [`Effect`]s for the caller to make.
//!
//! The rules, in one place:
//! - a step set `in_progress` is *entered*: the hook goes to `step_running` (through
//!   `step_pending` if another step was running), attempt 1 the first time;
//! - a step entered again after a failure (a crash, a failed validation, `step fail`) is a
//!   new attempt; past `max_attempts` the hook waits for a human instead;
//! - activity (a file written, a command run) while the hook is `recovering` or
//!   `step_pending` with a step still `in_progress` re-enters that step;
//! - a step `completed` leaves `step_running` for `step_pending` and asks for a
//!   `step_complete` checkpoint; the task itself completes at a Stop that finds every step
//!   completed, or with `waymark task done`;
//! - activity with no step at all starts an implicit step, so that files touched are
//!   never lost for want of a plan.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::machine::{self, HookState, TransitionError};
use super::model::*;
use super::outline::{Outline, numbered};

/// What the caller must do after a change.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// A checkpoint: its trigger, its description, and where the step it belongs to stands
    /// when that is not the running one (the step a `step_complete` checkpoint completed:
    /// named and its files covered without a search of the plan).
    Checkpoint(CheckpointTrigger, String, Option<usize>),
}

/// The most steps a plan holds. A TodoWrite of 10,000 items (the hostile-input test) made
/// every later event parse and rewrite a 3 MB hook.json and took the first one past its
/// deadline; no real plan comes near this (32 agents × 100 events in the concurrency test
/// make 640 steps). Items past it are refused and logged.
pub const MAX_STEPS: usize = 1000;

pub use super::bounds::{MAX_STEP_DESCRIPTION, MAX_STEP_NAME};

/// The name of the step waymark starts when work happens outside any step.
pub const IMPLICIT_STEP: &str = "Session work";

impl Hook {
    /// A new task in `step_pending`, with its first two history events.
    pub fn new(task_id: &str, workspace_id: &str, task_index: u32, now: DateTime<Utc>) -> Hook {
        let mut hook = Hook {
            version: SCHEMA_VERSION.into(),
            task_id: task_id.into(),
            workspace_id: workspace_id.into(),
            created_at: now,
            updated_at: now,
            state: HookState::Initializing,
            task_index,
            max_attempts: default_max_attempts(),
            schema_version: SCHEMA_VERSION.into(),
            ..Hook::default()
        };
        hook.record(None, hook.state, "task_start", BTreeMap::new(), now);
        hook.transition(HookState::StepPending, "setup_complete", now)
            .expect("initializing -> step_pending is in the table");
        hook
    }

    /// Moves the state machine, appending a history event. Invalid moves change nothing.
    pub fn transition(
        &mut self,
        to: HookState,
        trigger: &str,
        now: DateTime<Utc>,
    ) -> Result<(), TransitionError> {
        self.transition_with(to, trigger, BTreeMap::new(), now)
    }

    pub fn transition_with(
        &mut self,
        to: HookState,
        trigger: &str,
        details: BTreeMap<String, Value>,
        now: DateTime<Utc>,
    ) -> Result<(), TransitionError> {
        machine::check(Some(self.state), to, trigger)?;
        // The recovery context lives exactly as long as `recovering`: whatever moves the
        // task on (a step entered or settled, the crash told) ends it, and no later brief
        // announces the crash again.
        if self.state == HookState::Recovering && to != HookState::Recovering {
            self.recovery = None;
        }
        self.record(Some(self.state), to, trigger, details, now);
        self.state = to;
        Ok(())
    }

    /// Records an event that leaves the state as it is (a rewind) in the history.
    pub fn note(&mut self, trigger: &str, details: BTreeMap<String, Value>, now: DateTime<Utc>) {
        self.record(Some(self.state), self.state, trigger, details, now);
    }

    /// Appends a history event of the current step.
    fn record(
        &mut self,
        from: Option<HookState>,
        to: HookState,
        trigger: &str,
        details: BTreeMap<String, Value>,
        now: DateTime<Utc>,
    ) {
        self.history_count += 1;
        self.journal.history.push(HookEvent {
            timestamp: now,
            from_state: from,
            to_state: to,
            trigger: trigger.into(),
            step_name: self.current_step.as_ref().map(|c| c.step_name.clone()),
            details,
        });
        self.updated_at = now;
    }

    pub fn step(&self, id: &str) -> Option<&Step> {
        self.step_pos(id).map(|pos| &self.steps[pos])
    }

    /// Where the step `id` stands in the plan.
    pub(crate) fn step_pos(&self, id: &str) -> Option<usize> {
        self.steps.iter().position(|s| s.id == id)
    }

    /// Where the current step stands in the plan.
    fn current_pos(&self) -> Option<usize> {
        self.step_pos(&self.current_step.as_ref()?.step_id)
    }

    /// Finds a step by id, else by name (case-insensitive), else by its number in the plan
    /// as `waymark plan` lists it (1-based, deleted steps not counted): the three ways an
    /// agent or a person names a step.
    pub fn find_step(&self, reference: &str) -> Option<&Step> {
        let live = || {
            self.steps
                .iter()
                .filter(|s| s.status != StepStatus::Deleted)
        };
        let by_number = || {
            let n: usize = reference.parse().ok()?;
            self.steps
                .iter()
                .filter(|s| numbered(s))
                .nth(n.checked_sub(1)?)
        };
        // Names are kept as `stored` keeps them: a name with a secret, or one cut at its
        // length, is found by what was typed.
        let name = stored(reference, MAX_STEP_NAME);
        self.step(reference)
            .or_else(|| live().find(|s| s.name.eq_ignore_ascii_case(&name)))
            .or_else(by_number)
    }

    /// Adds each of `names` that the plan does not hold yet (by name, case-insensitive),
    /// in order, as steps of `source`: planning twice adds nothing twice. Returns how many
    /// were added (a plan at [`MAX_STEPS`] takes no more).
    pub fn plan(&mut self, names: &[String], source: StepSource, now: DateTime<Utc>) -> usize {
        let mut added = 0;
        for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
            let name = &stored(name, MAX_STEP_NAME);
            let known = self
                .steps
                .iter()
                .any(|s| numbered(s) && s.name.eq_ignore_ascii_case(name));
            if !known {
                let id = self.next_step_id("step-");
                if !self.add_step(&id, name, "", None, source, now) {
                    break;
                }
                added += 1;
            }
        }
        added
    }

    /// Adds a step to the plan, or updates the one with the same id. Returns false when a
    /// new step was refused because the plan already has [`MAX_STEPS`] (the implicit step
    /// is never refused).
    pub fn add_step(
        &mut self,
        id: &str,
        name: &str,
        description: &str,
        active_form: Option<&str>,
        source: StepSource,
        now: DateTime<Utc>,
    ) -> bool {
        self.updated_at = now;
        let name = &stored(name, MAX_STEP_NAME);
        let description = &stored(description, MAX_STEP_DESCRIPTION);
        let active_form = active_form.map(|a| stored(a, MAX_STEP_NAME));
        if let Some(pos) = self.step_pos(id) {
            let step = &mut self.steps[pos];
            if !name.is_empty() {
                step.name = name.into();
            }
            if !description.is_empty() {
                step.description = description.into();
            }
            if active_form.is_some() {
                step.active_form = active_form;
            }
            return true;
        }
        if source != StepSource::Implicit && self.steps.len() >= MAX_STEPS {
            return false;
        }
        let index = self.steps.len();
        self.steps.push(Step {
            id: id.into(),
            name: name.into(),
            index,
            status: StepStatus::Pending,
            source,
            description: description.into(),
            active_form,
            attempt: 0,
            failed_since_entry: false,
            granted: 0,
            receipt_ids: Vec::new(),
            files_touched: Vec::new(),
            started_at: None,
            completed_at: None,
        });
        true
    }

    /// A fresh id for a step that has none (`waymark step add`, TodoWrite items).
    pub fn next_step_id(&self, prefix: &str) -> String {
        (self.steps.len() + 1..)
            .map(|n| format!("{prefix}{n}"))
            .find(|id| self.step(id).is_none())
            .expect("unbounded")
    }

    /// Applies a status change to a step (TaskUpdate, TaskCompleted, `waymark step …`).
    /// Unknown ids are ignored (Claude Code may update tasks made before waymark ran).
    pub fn set_step_status(
        &mut self,
        id: &str,
        status: StepStatus,
        max_attempts: u32,
        now: DateTime<Utc>,
    ) -> Result<Vec<Effect>, TransitionError> {
        let Some(pos) = self.step_pos(id) else {
            return Ok(Vec::new());
        };
        let is_current = self.current_step.as_ref().is_some_and(|c| c.step_id == id);
        match status {
            StepStatus::InProgress if is_current && self.state == HookState::StepRunning => {}
            StepStatus::InProgress => self.enter_step(pos, max_attempts, "step_start", now)?,
            StepStatus::Completed if self.steps[pos].status == StepStatus::Completed => {}
            StepStatus::Completed => {
                self.leave_step(pos, status, "step_complete", now)?;
                let name = &self.steps[pos].name;
                return Ok(vec![Effect::Checkpoint(
                    CheckpointTrigger::StepComplete,
                    format!("Step completed: {name}"),
                    Some(pos),
                )]);
            }
            StepStatus::Failed => {
                self.steps[pos].failed_since_entry = true;
                self.leave_step(pos, status, "step_failed", now)?;
            }
            StepStatus::Deleted => self.leave_step(pos, status, "step_deleted", now)?,
            StepStatus::Pending => self.leave_step(pos, status, "step_paused", now)?,
        }
        Ok(Vec::new())
    }

    /// Starts (or re-enters) the step at `pos`.
    fn enter_step(
        &mut self,
        pos: usize,
        max_attempts: u32,
        trigger: &str,
        now: DateTime<Utc>,
    ) -> Result<(), TransitionError> {
        self.max_attempts = max_attempts;
        self.fold_implicit(pos, now)?;
        self.switch_from_current(pos, now)?;
        let attempt = self.next_attempt(&self.steps[pos]);
        let allowed = max_attempts + self.steps[pos].granted;
        // Work with no plan is not a step: it has no attempts to run out of.
        if attempt > allowed && self.steps[pos].source != StepSource::Implicit {
            return self.await_human(attempt, allowed, trigger, now);
        }
        if self.state == HookState::StepValidating {
            self.transition(HookState::StepPending, "validation_interrupted", now)?;
        }
        let mut ctx = self.begin_attempt(pos, attempt, allowed, now);
        for f in std::mem::take(&mut self.unassigned_files) {
            super::bounds::add_file(&mut ctx.files_touched, &f);
        }
        self.current_step = Some(ctx);
        if self.state != HookState::StepRunning {
            let details = BTreeMap::from([("attempt".into(), Value::from(attempt))]);
            self.transition_with(HookState::StepRunning, trigger, details, now)?;
        }
        Ok(())
    }

    /// The crash has been told and the task goes on without it: `recovering` ends in
    /// `step_pending` (the step the crash interrupted is still in progress, its attempt
    /// ended by the crash), and later briefs do not announce the crash again.
    pub fn end_recovery(&mut self, trigger: &str, now: DateTime<Utc>) {
        if self.state == HookState::Recovering {
            let _ = self.transition(HookState::StepPending, trigger, now);
        }
    }

    /// How many attempts `step` has: `max_attempts`, and those a person granted past it
    /// (the running step's context counted both when it was entered).
    pub fn attempts_allowed(&self, step: &Step) -> u32 {
        match &self.current_step {
            Some(c) if c.step_id == step.id => c.max_attempts,
            _ => self.max_attempts + step.granted,
        }
    }

    /// A person grants the step at `id` one more attempt (`waymark step retry`): what
    /// the way out of HUMAN NEEDED is, since entering it again is refused until then.
    /// The step is then entered as that attempt.
    pub fn retry_step(
        &mut self,
        id: &str,
        max_attempts: u32,
        now: DateTime<Utc>,
    ) -> Result<(), TransitionError> {
        let Some(pos) = self.step_pos(id) else {
            return Ok(());
        };
        let attempt = self.next_attempt(&self.steps[pos]);
        let step = &mut self.steps[pos];
        step.granted = step.granted.max(attempt.saturating_sub(max_attempts));
        self.enter_step(pos, max_attempts, "step_retry", now)
    }

    /// Leaves the current step when it is not the one at `pos`: a step in progress goes
    /// back to pending, any other keeps its status.
    fn switch_from_current(
        &mut self,
        pos: usize,
        now: DateTime<Utc>,
    ) -> Result<(), TransitionError> {
        let old = match &self.current_step {
            Some(c) if c.step_id != self.steps[pos].id => c.step_id.clone(),
            _ => return Ok(()),
        };
        if let Some(old_pos) = self.step_pos(&old) {
            let keep = match self.steps[old_pos].status {
                StepStatus::InProgress => StepStatus::Pending,
                status => status,
            };
            self.leave_step(old_pos, keep, "step_switch", now)?;
        }
        Ok(())
    }

    /// The attempt the next entry into `step` makes: the first, the same one again, or a
    /// new one after a failure or a crash.
    pub fn next_attempt(&self, step: &Step) -> u32 {
        match step.attempt {
            0 => 1,
            n if step.failed_since_entry || self.state == HookState::Recovering => n + 1,
            n => n,
        }
    }

    /// Past `max_attempts` the step is not entered: the hook waits for a human (through
    /// `step_running` from `step_pending`), with the attempt it would have been.
    fn await_human(
        &mut self,
        attempt: u32,
        max_attempts: u32,
        trigger: &str,
        now: DateTime<Utc>,
    ) -> Result<(), TransitionError> {
        let mut details = BTreeMap::new();
        details.insert("attempt".into(), Value::from(attempt));
        details.insert("max_attempts".into(), Value::from(max_attempts));
        match self.state {
            HookState::AwaitingHuman => return Ok(()),
            HookState::StepPending => self.transition(HookState::StepRunning, trigger, now)?,
            _ => {}
        }
        self.transition_with(
            HookState::AwaitingHuman,
            "max_attempts_exceeded",
            details,
            now,
        )
    }

    /// Marks the step at `pos` in progress as `attempt` and makes its context, which keeps
    /// what the step did so far when it is the current one re-entered.
    fn begin_attempt(
        &mut self,
        pos: usize,
        attempt: u32,
        max_attempts: u32,
        now: DateTime<Utc>,
    ) -> StepContext {
        let step = &mut self.steps[pos];
        step.status = StepStatus::InProgress;
        step.attempt = attempt;
        step.failed_since_entry = false;
        step.started_at.get_or_insert(now);
        // Re-entering the same step keeps what it did so far.
        let kept = match self.current_step.take_if(|c| c.step_id == step.id) {
            Some(previous) => previous,
            None => StepContext {
                started_at: now,
                files_touched: step.files_touched.clone(),
                ..StepContext::default()
            },
        };
        StepContext {
            step_id: step.id.clone(),
            step_name: step.name.clone(),
            step_index: step.index,
            attempt,
            max_attempts,
            working_on: working_on_for(step),
            last_output: String::new(),
            current_checkpoint_id: None,
            ..kept
        }
    }

    /// The work done before there was a plan belongs to the plan's first step entered: when
    /// a planned step is entered while the implicit step is current, the implicit step's
    /// files go to the unassigned files (which the step entered takes over) and the
    /// implicit step, now empty, is deleted.
    fn fold_implicit(&mut self, target: usize, now: DateTime<Utc>) -> Result<(), TransitionError> {
        let implicit = match &self.current_step {
            Some(c) if c.step_name == IMPLICIT_STEP => self.step_pos(&c.step_id),
            _ => None,
        };
        let Some(pos) =
            implicit.filter(|&pos| pos != target && self.steps[pos].source == StepSource::Implicit)
        else {
            return Ok(());
        };
        self.leave_step(pos, StepStatus::Deleted, "plan_recorded", now)?;
        let step = &mut self.steps[pos];
        for f in std::mem::take(&mut step.files_touched) {
            super::bounds::add_file(&mut self.unassigned_files, &f);
        }
        Ok(())
    }

    /// Ends the step at `pos` with `status`; if it was the current step, the hook returns
    /// to `step_pending`.
    fn leave_step(
        &mut self,
        pos: usize,
        status: StepStatus,
        trigger: &str,
        now: DateTime<Utc>,
    ) -> Result<(), TransitionError> {
        let id = self.steps[pos].id.clone();
        let is_current = self.current_step.as_ref().is_some_and(|c| c.step_id == id);
        if is_current {
            use HookState::*;
            if matches!(
                self.state,
                StepRunning | StepValidating | AwaitingHuman | Recovering
            ) {
                self.transition(StepPending, trigger, now)?;
            }
            let ctx = self.current_step.take().expect("is current");
            ctx.leave_into(&mut self.steps[pos]);
        }
        let step = &mut self.steps[pos];
        step.status = status;
        if status == StepStatus::Completed {
            step.completed_at = Some(now);
        }
        self.updated_at = now;
        Ok(())
    }

    /// Called on any activity that belongs to a step (a file written, a command run):
    /// re-enters the in-progress step after recovery or validation, or starts the implicit
    /// step when there is no plan to attach the work to. Returns whether a step is running.
    pub fn ensure_running(
        &mut self,
        max_attempts: u32,
        now: DateTime<Utc>,
    ) -> Result<bool, TransitionError> {
        match self.state {
            state if state.is_terminal() => return Ok(false),
            HookState::StepRunning if self.current_step.is_some() => return Ok(true),
            HookState::AwaitingHuman | HookState::StepValidating => return Ok(false),
            _ => {}
        }
        let target = self.current_pos().or_else(|| {
            self.steps
                .iter()
                .position(|s| s.status == StepStatus::InProgress)
        });
        // A plan with steps still to start waits for the next one; a plan finished is not
        // reopened by the work after it (a commit, a check): its files wait unassigned.
        let waiting = self.steps.iter().any(|s| s.status == StepStatus::Pending);
        if target.is_none() && (waiting || self.plan_finished()) {
            return Ok(false);
        }
        let implicit = self
            .steps
            .iter()
            .position(|s| s.source == StepSource::Implicit && s.status != StepStatus::Completed);
        let pos = match target.or(implicit) {
            Some(pos) => pos,
            None => {
                let id = self.next_step_id("work-");
                let working_on = self.goal.clone().unwrap_or_default();
                self.add_step(
                    &id,
                    IMPLICIT_STEP,
                    &working_on,
                    None,
                    StepSource::Implicit,
                    now,
                );
                self.steps.len() - 1
            }
        };
        self.enter_step(pos, max_attempts, "step_resume", now)?;
        Ok(self.state == HookState::StepRunning)
    }

    /// A validation or a command with side effects starts in the current step (PreToolUse
    /// of session `session`): until it ends, a crash leaves it in flight. False when
    /// nothing changed (no step, or the same command already in flight).
    pub fn begin_command(
        &mut self,
        session: &str,
        command: &str,
        kinds: &crate::shell::Kinds,
        now: DateTime<Utc>,
    ) -> bool {
        let Some(c) = self.current_step.as_mut() else {
            return false;
        };
        let running = |f: &InFlight| f.command == command && f.session_id == session;
        if c.in_flight.as_ref().is_some_and(running) {
            return false;
        }
        c.in_flight = Some(InFlight {
            command: command.to_string(),
            session_id: session.to_string(),
            validation: kinds.validation,
            side_effect: kinds.side_effect,
            started_at: now,
        });
        true
    }

    /// Session `session`'s command ended (its PostToolUse), or with `None` its turn did
    /// (Stop, a new prompt): no longer in flight. Another command ending leaves it as it
    /// was: `git ls-remote` after a push does not end the push.
    pub fn end_command(&mut self, session: &str, command: Option<&str>) {
        let Some(c) = self.current_step.as_mut() else {
            return;
        };
        c.in_flight
            .take_if(|f| f.session_id == session && command.is_none_or(|cmd| f.command == cmd));
    }

    /// Records a side effect of the current step (a push, a pull request, a deploy) and
    /// how it ended: the next session is told it was done, and the repeat guard keeps it
    /// from being done again after a crash.
    pub fn note_side_effect(&mut self, command: &str, exit_code: i32, now: DateTime<Utc>) {
        let Some(c) = self.current_step.as_mut() else {
            return;
        };
        c.side_effects.push(SideEffect {
            command: command.to_string(),
            exit_code,
            at: now,
            unknown: false,
            checked: false,
        });
        super::bounds::keep_newest(&mut c.side_effects, SIDE_EFFECTS);
    }

    /// Records a file the current step touched (root-relative, deduplicated). With no
    /// step current (between steps, or while waiting for a human) the file is kept in
    /// `unassigned_files` for the next step entered: it is never dropped. A file already
    /// listed changes nothing, not even `updated_at`: the hook is then left as it was and
    /// the event costs no write.
    pub fn touch_file(&mut self, path: &str, now: DateTime<Utc>) {
        let list = match self.current_step.as_mut() {
            Some(ctx) => &mut ctx.files_touched,
            None => &mut self.unassigned_files,
        };
        if super::bounds::add_file(list, path) {
            self.updated_at = now;
        }
    }

    /// Marks the current step as having failed since it was entered: its next entry is a
    /// new attempt.
    pub fn record_failure(&mut self, now: DateTime<Utc>) {
        if let Some(pos) = self.current_pos() {
            self.steps[pos].failed_since_entry = true;
            self.updated_at = now;
        }
    }

    /// True when the plan has steps and every one that was not deleted is completed.
    pub fn all_steps_completed(&self) -> bool {
        all_completed(
            self.steps
                .iter()
                .filter(|s| s.status != StepStatus::Deleted),
        )
    }

    /// True when a plan was kept and every step of it is completed: the work after it (a
    /// commit, a check) reopens nothing.
    pub fn plan_finished(&self) -> bool {
        all_completed(self.steps.iter().filter(|s| numbered(s)))
    }

    /// Completed steps, in plan order.
    pub fn completed_steps(&self) -> impl Iterator<Item = &Step> {
        self.steps
            .iter()
            .filter(|s| s.status == StepStatus::Completed)
    }

    /// The step the agent should resume: the current one, else the first in progress,
    /// else the first pending.
    pub fn next_step(&self) -> Option<&Step> {
        let first = |status| self.steps.iter().find(|s| s.status == status);
        self.current_step
            .as_ref()
            .and_then(|c| self.step(&c.step_id))
            .or_else(|| first(StepStatus::InProgress))
            .or_else(|| first(StepStatus::Pending))
    }

    /// The number of `step` ([`super::outline::number`]).
    pub fn number(&self, step: &Step) -> usize {
        super::outline::number(&self.steps, step.index)
    }

    /// What recovery says of the plan besides listing it ([`Outline`]).
    pub fn outline(&self) -> Outline {
        Outline::of(&self.steps)
    }

    /// Whether the work under way has no plan: the current step is the implicit one, which
    /// stands for the work and is no step of the user's (no attempts, no "step 1 of 1").
    pub fn unplanned(&self) -> bool {
        self.current_step
            .as_ref()
            .and_then(|c| self.step(&c.step_id))
            .is_some_and(|s| s.source == StepSource::Implicit)
    }

    /// The plan as it stands, for the start of a turn of `session`.
    pub fn plan_at(&self, session: &str, now: DateTime<Utc>) -> PlanAt {
        PlanAt {
            at: now,
            session_id: session.to_string(),
            steps: self
                .steps
                .iter()
                .map(|s| (s.id.clone(), s.status))
                .collect(),
            current: self.current_step.as_ref().map(|c| c.step_id.clone()),
        }
    }

    /// Puts the plan back as `then` recorded it (a conversation rewound to before the turn
    /// it began): a step done or started since is as it was then, one planned since is
    /// deleted, and the step current then is current again. The files steps touched stay
    /// theirs (restoring a conversation does not restore files). Returns the names of the
    /// steps reopened and of those taken out.
    pub fn put_plan_back(
        &mut self,
        then: &PlanAt,
        max_attempts: u32,
        now: DateTime<Utc>,
    ) -> Result<(Vec<String>, Vec<String>), TransitionError> {
        let was = |id: &str| then.steps.iter().find(|(i, _)| i == id).map(|(_, s)| *s);
        // What each step goes back to, told before anything moves.
        let (mut reopened, mut dropped, mut back) = (Vec::new(), Vec::new(), Vec::new());
        for (pos, s) in self.steps.iter().enumerate() {
            let before = was(&s.id);
            let to = before.unwrap_or(StepStatus::Deleted);
            if s.status != to && s.status != StepStatus::Deleted {
                let name = s.name.clone();
                match before {
                    Some(_) => reopened.push(name),
                    None => dropped.push(name),
                }
                back.push((pos, to));
            }
        }
        if let Some(pos) = self.current_pos()
            && then.current.as_deref() != Some(self.steps[pos].id.as_str())
        {
            let status = was(&self.steps[pos].id).unwrap_or(StepStatus::Deleted);
            self.leave_step(pos, status, "conversation_rewound", now)?;
        }
        for (pos, to) in back {
            let step = &mut self.steps[pos];
            step.status = to;
            if to != StepStatus::Completed {
                step.completed_at = None;
            }
        }
        let current_then = then.current.as_deref().and_then(|id| self.step_pos(id));
        if let Some(pos) = current_then.filter(|_| self.current_step.is_none())
            && self.steps[pos].status == StepStatus::InProgress
        {
            self.enter_step(pos, max_attempts, "conversation_rewound", now)?;
        }
        self.updated_at = now;
        Ok((reopened, dropped))
    }

    /// Ends the task (`completed`, `failed` or `abandoned`) with the matching trigger.
    pub fn finish(&mut self, to: HookState, now: DateTime<Utc>) -> Result<(), TransitionError> {
        let trigger = match to {
            HookState::Abandoned => machine::ABANDON,
            HookState::Failed => machine::FAIL,
            _ => "task_complete",
        };
        if to == HookState::Completed && self.state != HookState::StepPending {
            if let Some(pos) = self.current_pos() {
                self.leave_step(pos, StepStatus::Completed, "step_complete", now)?;
            } else {
                self.transition(HookState::StepPending, "task_finishing", now)?;
            }
        }
        self.transition(to, trigger, now)?;
        if to.is_terminal()
            && let Some(ctx) = self.current_step.take()
            && let Some(pos) = self.step_pos(&ctx.step_id)
        {
            ctx.leave_into(&mut self.steps[pos]);
        }
        Ok(())
    }
}

/// Whether `steps` holds a step and every one is completed.
fn all_completed<'a>(steps: impl Iterator<Item = &'a Step>) -> bool {
    let mut steps = steps.peekable();
    steps.peek().is_some() && steps.all(|s| s.status == StepStatus::Completed)
}

/// What a step's context says the agent is working on: the step's active form, else for
/// work outside any plan what the user asked when it began, else the step's name.
fn working_on_for(step: &Step) -> String {
    match (&step.active_form, step.source) {
        (Some(form), _) => form.clone(),
        // The implicit step's name is no words of the user's: with no request, none.
        (None, StepSource::Implicit) => step.description.clone(),
        (None, _) => step.name.clone(),
    }
}

#[cfg(test)]
mod tests;

/// A step's text as the plan keeps it, cut to `max` then redacted: what waymark prints of
/// it (`waymark plan`, `step`, status) is what it stores, and no secret in it is held or
/// printed; what is typed to find a step is compared in the same form. (A cut redacts
/// what it cuts first, so what is left to redact is short.)
fn stored(text: &str, max: usize) -> String {
    waymark_redact::redact(&crate::text::truncate(text, max)).into_owned()
}
