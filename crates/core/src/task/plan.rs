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
use super::outline::Outline;

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

/// The most characters a step's name (and its active form) keeps, and its description:
/// the words come from the model or the user, and a 10 MB name would make every later
/// event read and write 10 MB more. The cut is marked `…`.
pub const MAX_STEP_NAME: usize = 500;
pub const MAX_STEP_DESCRIPTION: usize = 2000;

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
            current_step: None,
            history_count: 1,
            recovery: None,
            checkpoint_count: 0,
            receipt_count: 0,
            last_failure: None,
            intent: None,
            receipt_head: None,
            task_index,
            intent_id: None,
            sessions: Vec::new(),
            last_prompt: None,
            compact_summary: None,
            clear_note: None,
            rewound: None,
            conversation_rewound: None,
            context_percent: None,
            unassigned_files: Vec::new(),
            recent_checkpoints: Vec::new(),
            recent_receipts: Vec::new(),
            plan_version: 0,
            schema_version: SCHEMA_VERSION.into(),
            steps: Vec::new(),
            journal: Journal {
                history: vec![HookEvent {
                    timestamp: now,
                    from_state: None,
                    to_state: HookState::Initializing,
                    trigger: "task_start".into(),
                    step_name: None,
                    details: BTreeMap::new(),
                }],
                ..Journal::default()
            },
        };
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
        self.history_count += 1;
        self.journal.history.push(HookEvent {
            timestamp: now,
            from_state: Some(self.state),
            to_state: to,
            trigger: trigger.into(),
            step_name: self.current_step.as_ref().map(|c| c.step_name.clone()),
            details,
        });
        self.state = to;
        self.updated_at = now;
        Ok(())
    }

    /// Records an event that leaves the state as it is (a rewind) in the history.
    pub fn note(&mut self, trigger: &str, details: BTreeMap<String, Value>, now: DateTime<Utc>) {
        self.history_count += 1;
        self.journal.history.push(HookEvent {
            timestamp: now,
            from_state: Some(self.state),
            to_state: self.state,
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

    /// Finds a step by id, else by name (case-insensitive), else by its number in the plan
    /// as `waymark plan` lists it (1-based, deleted steps not counted): the three ways an
    /// agent or a person names a step.
    pub fn find_step(&self, reference: &str) -> Option<&Step> {
        let live = || {
            self.steps
                .iter()
                .filter(|s| s.status != StepStatus::Deleted)
        };
        let numbered = || {
            let n: usize = reference.parse().ok()?;
            live().nth(n.checked_sub(1)?)
        };
        self.step(reference)
            .or_else(|| live().find(|s| s.name.eq_ignore_ascii_case(reference)))
            .or_else(numbered)
    }

    /// Adds each of `names` that the plan does not hold yet (by name, case-insensitive),
    /// in order, as steps of `source`: planning twice adds nothing twice. Returns how many
    /// were added (a plan at [`MAX_STEPS`] takes no more).
    pub fn plan(&mut self, names: &[String], source: StepSource, now: DateTime<Utc>) -> usize {
        let mut added = 0;
        for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
            let known = self.steps.iter().any(|s| {
                s.status != StepStatus::Deleted
                    && s.source != StepSource::Implicit
                    && s.name.eq_ignore_ascii_case(name)
            });
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
        let name = &crate::text::truncate(name, MAX_STEP_NAME);
        let description = &crate::text::truncate(description, MAX_STEP_DESCRIPTION);
        let active_form = active_form.map(|a| crate::text::truncate(a, MAX_STEP_NAME));
        let active_form = active_form.as_deref();
        if let Some(pos) = self.step_pos(id) {
            let step = &mut self.steps[pos];
            if !name.is_empty() {
                step.name = name.into();
            }
            if !description.is_empty() {
                step.description = description.into();
            }
            if active_form.is_some() {
                step.active_form = active_form.map(str::to_string);
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
            active_form: active_form.map(str::to_string),
            attempt: 0,
            failed_since_entry: false,
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
            StepStatus::InProgress => {
                if is_current && self.state == HookState::StepRunning {
                    return Ok(Vec::new());
                }
                self.enter_step(pos, max_attempts, "step_start", now)?;
                Ok(Vec::new())
            }
            StepStatus::Completed => {
                if self.steps[pos].status == StepStatus::Completed {
                    return Ok(Vec::new());
                }
                self.leave_step(pos, StepStatus::Completed, "step_complete", now)?;
                let name = self.steps[pos].name.clone();
                Ok(vec![Effect::Checkpoint(
                    CheckpointTrigger::StepComplete,
                    format!("Step completed: {name}"),
                    Some(pos),
                )])
            }
            StepStatus::Failed => {
                self.steps[pos].failed_since_entry = true;
                self.leave_step(pos, StepStatus::Failed, "step_failed", now)?;
                Ok(Vec::new())
            }
            StepStatus::Deleted | StepStatus::Pending => {
                self.leave_step(
                    pos,
                    status,
                    if status == StepStatus::Deleted {
                        "step_deleted"
                    } else {
                        "step_paused"
                    },
                    now,
                )?;
                Ok(Vec::new())
            }
        }
    }

    /// Starts (or re-enters) the step at `pos`.
    fn enter_step(
        &mut self,
        pos: usize,
        max_attempts: u32,
        trigger: &str,
        now: DateTime<Utc>,
    ) -> Result<(), TransitionError> {
        self.fold_implicit(pos, now)?;
        self.switch_from_current(pos, now)?;
        let attempt = self.entry_attempt(pos);
        if attempt > max_attempts {
            return self.await_human(attempt, max_attempts, trigger, now);
        }
        if self.state == HookState::StepValidating {
            self.transition(HookState::StepPending, "validation_interrupted", now)?;
        }
        let mut ctx = self.begin_attempt(pos, attempt, max_attempts, now);
        for f in std::mem::take(&mut self.unassigned_files) {
            super::bounds::add_file(&mut ctx.files_touched, &f);
        }
        self.current_step = Some(ctx);
        if self.state != HookState::StepRunning {
            let mut details = BTreeMap::new();
            details.insert("attempt".into(), Value::from(attempt));
            self.transition_with(HookState::StepRunning, trigger, details, now)?;
        }
        if self.state == HookState::StepRunning {
            // A re-entry after recovery: the crash has been dealt with.
            self.recovery = None;
        }
        Ok(())
    }

    /// Leaves the current step when it is not the one at `pos`: a step in progress goes
    /// back to pending, any other keeps its status.
    fn switch_from_current(
        &mut self,
        pos: usize,
        now: DateTime<Utc>,
    ) -> Result<(), TransitionError> {
        let switching = self
            .current_step
            .as_ref()
            .is_some_and(|c| c.step_id != self.steps[pos].id);
        if !switching {
            return Ok(());
        }
        let old = self
            .current_step
            .as_ref()
            .map(|c| c.step_id.clone())
            .unwrap_or_default();
        if let Some(old_pos) = self.step_pos(&old) {
            let keep = self.steps[old_pos].status;
            let keep = if keep == StepStatus::InProgress {
                StepStatus::Pending
            } else {
                keep
            };
            self.leave_step(old_pos, keep, "step_switch", now)?;
        }
        Ok(())
    }

    /// The attempt that entering the step at `pos` makes: the first, the same one again,
    /// or a new one after a failure or a crash.
    fn entry_attempt(&self, pos: usize) -> u32 {
        let from_recovery = self.state == HookState::Recovering;
        let step = &self.steps[pos];
        if step.attempt == 0 {
            1
        } else if step.failed_since_entry || from_recovery {
            step.attempt + 1
        } else {
            step.attempt
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
            HookState::AwaitingHuman => {}
            HookState::StepPending => {
                self.transition(HookState::StepRunning, trigger, now)?;
                self.transition_with(
                    HookState::AwaitingHuman,
                    "max_attempts_exceeded",
                    details,
                    now,
                )?;
            }
            _ => self.transition_with(
                HookState::AwaitingHuman,
                "max_attempts_exceeded",
                details,
                now,
            )?,
        }
        Ok(())
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
        let same = self
            .current_step
            .as_ref()
            .is_some_and(|c| c.step_id == step.id);
        // Re-entering the same step keeps what it did so far.
        let previous = if same { self.current_step.take() } else { None };
        StepContext {
            step_id: step.id.clone(),
            step_name: step.name.clone(),
            step_index: step.index,
            started_at: previous.as_ref().map_or(now, |p| p.started_at),
            attempt,
            max_attempts,
            working_on: working_on_for(step),
            files_touched: previous
                .as_ref()
                .map_or_else(|| step.files_touched.clone(), |p| p.files_touched.clone()),
            last_output: String::new(),
            current_checkpoint_id: None,
            last_failure: previous.as_ref().and_then(|p| p.last_failure.clone()),
            side_effects: previous
                .as_ref()
                .map(|p| p.side_effects.clone())
                .unwrap_or_default(),
            resumed_after_crash: previous.as_ref().is_some_and(|p| p.resumed_after_crash),
            in_flight: previous.as_ref().and_then(|p| p.in_flight.clone()),
            receipt_ids: previous.map(|p| p.receipt_ids).unwrap_or_default(),
        }
    }

    /// The work done before there was a plan belongs to the plan's first step entered: when
    /// a planned step is entered while the implicit step is current, the implicit step's
    /// files go to the unassigned files (which the step entered takes over) and the
    /// implicit step, now empty, is deleted. Returns whether it was.
    fn fold_implicit(
        &mut self,
        target: usize,
        now: DateTime<Utc>,
    ) -> Result<bool, TransitionError> {
        let implicit = match &self.current_step {
            Some(c) if c.step_name == IMPLICIT_STEP => self.step_pos(&c.step_id),
            _ => None,
        };
        let Some(pos) =
            implicit.filter(|&pos| pos != target && self.steps[pos].source == StepSource::Implicit)
        else {
            return Ok(false);
        };
        self.leave_step(pos, StepStatus::Deleted, "plan_recorded", now)?;
        let step = &mut self.steps[pos];
        for f in std::mem::take(&mut step.files_touched) {
            super::bounds::add_file(&mut self.unassigned_files, &f);
        }
        Ok(true)
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
            match self.state {
                HookState::StepRunning
                | HookState::StepValidating
                | HookState::AwaitingHuman
                | HookState::Recovering => {
                    self.transition(HookState::StepPending, trigger, now)?;
                }
                _ => {}
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
        if self.state.is_terminal() {
            return Ok(false);
        }
        if self.state == HookState::StepRunning && self.current_step.is_some() {
            return Ok(true);
        }
        if matches!(
            self.state,
            HookState::AwaitingHuman | HookState::StepValidating
        ) {
            return Ok(false);
        }
        let current = self.current_step.as_ref().map(|c| c.step_id.clone());
        let target = current.and_then(|id| self.step_pos(&id)).or_else(|| {
            self.steps
                .iter()
                .position(|s| s.status == StepStatus::InProgress)
        });
        let pos = match target {
            Some(pos) => pos,
            None if self.steps.iter().any(|s| s.status == StepStatus::Pending) => return Ok(false),
            None => {
                let existing = self.steps.iter().position(|s| {
                    s.source == StepSource::Implicit && s.status != StepStatus::Completed
                });
                match existing {
                    Some(pos) => pos,
                    None => {
                        let id = self.next_step_id("work-");
                        let working_on = self.last_prompt.clone().unwrap_or_default();
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
                }
            }
        };
        self.enter_step(pos, max_attempts, "step_resume", now)?;
        Ok(self.state == HookState::StepRunning)
    }

    /// Records a side effect of the current step (a push, a pull request, a deploy) and
    /// how it ended: the next session is told it was done, and the repeat guard keeps it
    /// from being done again after a crash.
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
        let ended = c
            .in_flight
            .as_ref()
            .is_some_and(|f| f.session_id == session && command.is_none_or(|cmd| f.command == cmd));
        if ended {
            c.in_flight = None;
        }
    }

    pub fn note_side_effect(&mut self, command: &str, exit_code: i32, now: DateTime<Utc>) {
        let Some(c) = self.current_step.as_mut() else {
            return;
        };
        c.side_effects.push(SideEffect {
            command: command.to_string(),
            exit_code,
            at: now,
            unknown: false,
        });
        let excess = c.side_effects.len().saturating_sub(SIDE_EFFECTS);
        c.side_effects.drain(..excess);
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
        if let Some(id) = self.current_step.as_ref().map(|c| c.step_id.clone()) {
            if let Some(pos) = self.step_pos(&id) {
                self.steps[pos].failed_since_entry = true;
                self.updated_at = now;
            }
        }
    }

    /// True when the plan has steps and every one that was not deleted is completed.
    pub fn all_steps_completed(&self) -> bool {
        let mut live = self
            .steps
            .iter()
            .filter(|s| s.status != StepStatus::Deleted)
            .peekable();
        live.peek().is_some() && live.all(|s| s.status == StepStatus::Completed)
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

    /// What recovery says of the plan besides listing it ([`Outline`]).
    pub fn outline(&self) -> Outline {
        Outline::of(&self.steps)
    }

    /// What the agent was doing: the current step's activeForm/subject (for work outside
    /// any plan, the request it began with), else the prompt.
    pub fn working_on(&self) -> Option<&str> {
        match &self.current_step {
            Some(c) if !c.working_on.is_empty() => Some(&c.working_on),
            // Once there is a plan, its steps say better than the raw prompt.
            _ if !self.steps.is_empty() => None,
            _ => self.last_prompt.as_deref(),
        }
    }

    /// The plan as it stands, for the start of a turn of `session`.
    pub fn plan_at(&self, session: &str, now: DateTime<Utc>) -> PlanAt {
        PlanAt {
            at: now,
            session_id: session.to_string(),
            steps: (0..self.steps.len())
                .map(|i| (self.steps[i].id.clone(), self.steps[i].status))
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
        for pos in 0..self.steps.len() {
            let before = was(&self.steps[pos].id);
            let to = before.unwrap_or(StepStatus::Deleted);
            let now_status = self.steps[pos].status;
            if now_status != to && now_status != StepStatus::Deleted {
                let name = self.steps[pos].name.clone();
                match before {
                    Some(_) => reopened.push(name),
                    None => dropped.push(name),
                }
                back.push((pos, to));
            }
        }
        let current = self.current_step.as_ref().map(|c| c.step_id.clone());
        if let Some(pos) = current.as_deref().and_then(|id| self.step_pos(id)) {
            if then.current != current {
                let status = was(&self.steps[pos].id).unwrap_or(StepStatus::Deleted);
                self.leave_step(pos, status, "conversation_rewound", now)?;
            }
        }
        for (pos, to) in back {
            let step = &mut self.steps[pos];
            step.status = to;
            if to != StepStatus::Completed {
                step.completed_at = None;
            }
        }
        let current_then = then.current.as_deref().and_then(|id| self.step_pos(id));
        if let Some(pos) = current_then.filter(|_| self.current_step.is_none()) {
            if self.steps[pos].status == StepStatus::InProgress {
                self.enter_step(pos, max_attempts, "conversation_rewound", now)?;
            }
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
            if let Some(pos) = self
                .current_step
                .as_ref()
                .and_then(|c| self.step_pos(&c.step_id))
            {
                self.leave_step(pos, StepStatus::Completed, "step_complete", now)?;
            } else {
                self.transition(HookState::StepPending, "task_finishing", now)?;
            }
        }
        self.transition(to, trigger, now)?;
        if to.is_terminal() {
            if let Some(ctx) = self.current_step.take() {
                if let Some(pos) = self.step_pos(&ctx.step_id) {
                    ctx.leave_into(&mut self.steps[pos]);
                }
            }
        }
        Ok(())
    }
}

/// What a step's context says the agent is working on: the step's active form, else for
/// work outside any plan what the user asked when it began, else the step's name.
fn working_on_for(step: &Step) -> String {
    match (&step.active_form, step.source) {
        (Some(form), _) => form.clone(),
        (None, StepSource::Implicit) if !step.description.is_empty() => step.description.clone(),
        (None, _) => step.name.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    /// A way a test starts the task before the step under test.
    type Start = dyn Fn(&mut Hook);

    fn t(s: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_800_000_000 + s, 0).unwrap()
    }

    fn plan() -> Hook {
        crate::task::testing::recorded_steps(t(0))
    }

    #[test]
    fn a_new_hook_is_pending_with_two_events() {
        let h = Hook::new("t", "w", 0, t(0));
        assert_eq!(h.state, HookState::StepPending);
        assert_eq!(h.journal.history.len(), 2);
        assert_eq!(h.journal.history[0].from_state, None);
    }

    #[test]
    fn the_recorded_session_walk() {
        let mut h = plan();
        h.set_step_status("1", StepStatus::InProgress, 3, t(4))
            .unwrap();
        assert_eq!(h.state, HookState::StepRunning);
        let fx = h
            .set_step_status("1", StepStatus::Completed, 3, t(5))
            .unwrap();
        assert!(matches!(
            fx[0],
            Effect::Checkpoint(CheckpointTrigger::StepComplete, _, Some(_))
        ));
        assert_eq!(h.state, HookState::StepPending);
        h.set_step_status("2", StepStatus::InProgress, 3, t(6))
            .unwrap();
        h.touch_file("src/parser.rs", t(7));
        h.touch_file("src/main.rs", t(8));
        h.touch_file("src/parser.rs", t(9));
        let ctx = h.current_step.as_ref().unwrap();
        assert_eq!(ctx.step_name, "Implement fix");
        assert_eq!(ctx.attempt, 1);
        assert_eq!(ctx.working_on, "Implementing fix");
        assert_eq!(ctx.files_touched, vec!["src/parser.rs", "src/main.rs"]);
        assert_eq!(h.steps[2].status, StepStatus::Pending);
    }

    #[test]
    fn re_entry_after_a_crash_is_a_new_attempt() {
        let mut h = plan();
        h.set_step_status("2", StepStatus::InProgress, 3, t(1))
            .unwrap();
        h.transition(HookState::Recovering, machine::CRASH_DETECTED, t(2))
            .unwrap();
        assert!(h.ensure_running(3, t(3)).unwrap());
        assert_eq!(h.current_step.as_ref().unwrap().attempt, 2);
        // An ordinary re-entry (no failure) keeps the attempt.
        h.set_step_status("2", StepStatus::Pending, 3, t(4))
            .unwrap();
        h.set_step_status("2", StepStatus::InProgress, 3, t(5))
            .unwrap();
        assert_eq!(h.current_step.as_ref().unwrap().attempt, 2);
    }

    #[test]
    fn past_max_attempts_waits_for_a_human() {
        let mut h = plan();
        for i in 0..3 {
            h.set_step_status("1", StepStatus::InProgress, 2, t(i * 3))
                .unwrap();
            h.set_step_status("1", StepStatus::Failed, 2, t(i * 3 + 1))
                .unwrap();
        }
        assert_eq!(h.state, HookState::AwaitingHuman);
        assert_eq!(h.steps[0].attempt, 2);
        assert_eq!(
            h.journal.history.last().unwrap().trigger,
            "max_attempts_exceeded"
        );
    }

    #[test]
    fn switching_steps_goes_through_pending() {
        let mut h = plan();
        h.set_step_status("1", StepStatus::InProgress, 3, t(1))
            .unwrap();
        h.touch_file("a.rs", t(2));
        h.set_step_status("2", StepStatus::InProgress, 3, t(3))
            .unwrap();
        assert_eq!(h.steps[0].status, StepStatus::Pending);
        assert_eq!(h.steps[0].files_touched, vec!["a.rs"]);
        let triggers: Vec<_> = h
            .journal
            .history
            .iter()
            .map(|e| e.trigger.as_str())
            .collect();
        assert_eq!(
            &triggers[triggers.len() - 2..],
            ["step_switch", "step_start"]
        );
    }

    #[test]
    fn work_without_a_plan_gets_an_implicit_step() {
        let mut h = Hook::new("t", "w", 0, t(0));
        h.last_prompt = Some("write hello".into());
        assert!(h.ensure_running(3, t(1)).unwrap());
        h.touch_file("hello.txt", t(2));
        assert_eq!(h.steps[0].name, IMPLICIT_STEP);
        assert_eq!(h.steps[0].description, "write hello");
    }

    #[test]
    fn a_step_is_found_by_id_name_or_number_in_the_plan() {
        let mut h = Hook::new("t", "w", 0, t(0));
        let names: Vec<String> = ["Read", "Write", "Test"].map(String::from).into();
        assert_eq!(h.plan(&names, StepSource::Manual, t(1)), 3);
        assert_eq!(h.find_step("step-2").unwrap().name, "Write");
        assert_eq!(h.find_step("test").unwrap().name, "Test");
        assert_eq!(h.find_step("1").unwrap().name, "Read");
        h.set_step_status("step-1", StepStatus::Deleted, 3, t(2))
            .unwrap();
        // Numbers count the plan as `waymark plan` lists it: deleted steps are not there.
        assert_eq!(h.find_step("1").unwrap().name, "Write");
        assert!(h.find_step("3").is_none() && h.find_step("0").is_none());
    }

    #[test]
    fn planning_twice_adds_nothing_twice() {
        let mut h = Hook::new("t", "w", 0, t(0));
        let first: Vec<String> = ["Read", "Write"].map(String::from).into();
        let again: Vec<String> = ["write", " ", "Ship"].map(String::from).into();
        assert_eq!(h.plan(&first, StepSource::Manual, t(1)), 2);
        assert_eq!(h.plan(&again, StepSource::Manual, t(2)), 1);
        let names: Vec<&str> = h.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Read", "Write", "Ship"]);
    }

    /// Work done before the agent recorded a plan is the first planned step's: its files
    /// are not lost, and no "Session work" step is left pending forever.
    #[test]
    fn the_work_before_a_plan_goes_to_the_first_step_entered() {
        let mut h = Hook::new("t", "w", 0, t(0));
        h.last_prompt = Some("add a parser".into());
        assert!(h.ensure_running(3, t(1)).unwrap());
        h.touch_file("notes.md", t(2));
        assert_eq!(h.working_on(), Some("add a parser"));
        h.last_prompt = Some("and the docs too".into());
        assert_eq!(
            h.working_on(),
            Some("add a parser"),
            "what the work began with"
        );
        let names: Vec<String> = ["Write the parser", "Test it"].map(String::from).into();
        h.plan(&names, StepSource::Manual, t(3));
        h.set_step_status("step-2", StepStatus::InProgress, 3, t(4))
            .unwrap();
        let ctx = h.current_step.as_ref().unwrap();
        assert_eq!(ctx.step_name, "Write the parser");
        assert_eq!(ctx.files_touched, vec!["notes.md"]);
        assert_eq!(h.steps[0].status, StepStatus::Deleted);
        assert!(h.steps[0].files_touched.is_empty());
        h.set_step_status("step-2", StepStatus::Completed, 3, t(5))
            .unwrap();
        h.set_step_status("step-3", StepStatus::Completed, 3, t(6))
            .unwrap();
        assert!(h.all_steps_completed(), "the folded step is not pending");
    }

    /// A conversation rewound to before a turn: what the turn did to the plan is undone
    /// (a step it completed is open again, a step it planned is gone), what came before
    /// stays, and the step current then is current again with its files.
    #[test]
    fn a_rewound_conversation_puts_the_plan_back_as_the_turn_found_it() {
        let mut h = plan();
        h.set_step_status("1", StepStatus::InProgress, 3, t(1))
            .unwrap();
        h.set_step_status("1", StepStatus::Completed, 3, t(2))
            .unwrap();
        h.set_step_status("2", StepStatus::InProgress, 3, t(3))
            .unwrap();
        h.touch_file("src/a.rs", t(3));
        let then = h.plan_at("s1", t(4));
        // The turn the rewind takes away.
        h.touch_file("src/b.rs", t(5));
        h.set_step_status("2", StepStatus::Completed, 3, t(6))
            .unwrap();
        h.add_step("9", "Added later", "", None, StepSource::Task, t(6));
        h.set_step_status("9", StepStatus::InProgress, 3, t(7))
            .unwrap();
        let (reopened, dropped) = h.put_plan_back(&then, 3, t(8)).unwrap();
        assert_eq!(reopened, ["Implement fix"]);
        assert_eq!(dropped, ["Added later"]);
        assert_eq!(h.steps[0].status, StepStatus::Completed);
        assert_eq!(h.steps[1].status, StepStatus::InProgress);
        assert_eq!(h.steps[1].completed_at, None);
        assert_eq!(h.step("9").unwrap().status, StepStatus::Deleted);
        let ctx = h.current_step.as_ref().unwrap();
        assert_eq!((ctx.step_name.as_str(), ctx.attempt), ("Implement fix", 1));
        assert_eq!(
            ctx.files_touched,
            ["src/a.rs", "src/b.rs"],
            "files stay changed"
        );
        assert_eq!(h.state, HookState::StepRunning);
        // Nothing changed since: nothing to put back.
        let now = h.plan_at("s1", t(9));
        assert_eq!(h.put_plan_back(&now, 3, t(9)).unwrap(), (vec![], vec![]));
    }

    #[test]
    fn a_file_touched_between_steps_joins_the_next_step() {
        let mut h = plan();
        h.set_step_status("1", StepStatus::InProgress, 3, t(1))
            .unwrap();
        h.set_step_status("1", StepStatus::Completed, 3, t(2))
            .unwrap();
        assert!(!h.ensure_running(3, t(3)).unwrap());
        h.touch_file("between.rs", t(3));
        assert_eq!(h.unassigned_files, vec!["between.rs"]);
        h.set_step_status("2", StepStatus::InProgress, 3, t(4))
            .unwrap();
        assert!(h.unassigned_files.is_empty());
        assert_eq!(
            h.current_step.as_ref().unwrap().files_touched,
            vec!["between.rs"]
        );
    }

    #[test]
    fn the_plan_is_capped_but_updates_and_the_implicit_step_still_work() {
        let mut h = Hook::new("t", "w", 0, t(0));
        for i in 0..MAX_STEPS {
            assert!(h.add_step(&i.to_string(), "s", "", None, StepSource::Todo, t(1)));
        }
        assert!(!h.add_step("one-more", "s", "", None, StepSource::Task, t(2)));
        assert!(h.add_step("3", "renamed", "", None, StepSource::Task, t(2)));
        assert_eq!(h.steps.len(), MAX_STEPS);
        assert_eq!(h.steps[3].name, "renamed");
    }

    #[test]
    fn pending_plan_without_a_started_step_is_not_guessed() {
        let mut h = plan();
        assert!(!h.ensure_running(3, t(1)).unwrap());
        assert_eq!(h.state, HookState::StepPending);
    }

    #[test]
    fn finish_and_terminal() {
        let mut h = plan();
        h.set_step_status("1", StepStatus::InProgress, 3, t(1))
            .unwrap();
        h.finish(HookState::Completed, t(2)).unwrap();
        assert_eq!(h.state, HookState::Completed);
        assert!(
            h.set_step_status("2", StepStatus::InProgress, 3, t(3))
                .is_err()
        );
        let mut h = plan();
        h.set_step_status("1", StepStatus::InProgress, 3, t(1))
            .unwrap();
        h.finish(HookState::Abandoned, t(2)).unwrap();
        assert_eq!(h.state, HookState::Abandoned);
    }

    #[test]
    fn every_transition_goes_to_the_journal() {
        let mut h = plan();
        for i in 0..300 {
            let status = if i % 2 == 0 {
                StepStatus::InProgress
            } else {
                StepStatus::Pending
            };
            h.set_step_status("1", status, 1000, t(i)).unwrap();
        }
        assert_eq!(h.journal.history.len() as u64, h.history_count);
        assert!(h.history_count > 300);
    }

    fn last_trigger(h: &Hook) -> &str {
        &h.journal.history.last().unwrap().trigger
    }

    #[test]
    fn a_note_is_one_more_history_event_that_leaves_the_state_as_it_is() {
        let mut h = plan();
        assert_eq!(h.history_count, 2);
        h.note("rewind", BTreeMap::new(), t(5));
        assert_eq!(h.history_count, 3);
        assert_eq!(h.journal.history.len(), 3);
        let e = h.journal.history.last().unwrap();
        assert_eq!(
            (e.trigger.as_str(), e.from_state, e.to_state),
            (
                "rewind",
                Some(HookState::StepPending),
                HookState::StepPending
            )
        );
        assert_eq!((h.state, h.updated_at), (HookState::StepPending, t(5)));
    }

    /// TaskUpdate repeats what it does not change: an empty name or description, no
    /// activeForm, leave the step's as they were.
    #[test]
    fn updating_a_step_changes_only_what_the_update_gives() {
        let mut h = plan();
        h.add_step("3", "", "run the suite", None, StepSource::Task, t(1));
        h.add_step("3", "", "", None, StepSource::Task, t(2));
        let s = h.step("3").unwrap();
        assert_eq!(
            (
                s.name.as_str(),
                s.description.as_str(),
                s.active_form.as_deref()
            ),
            ("Validate", "run the suite", None)
        );
        h.add_step(
            "3",
            "Validate all",
            "",
            Some("Validating"),
            StepSource::Task,
            t(3),
        );
        let s = h.step("3").unwrap();
        assert_eq!(
            (
                s.name.as_str(),
                s.description.as_str(),
                s.active_form.as_deref()
            ),
            ("Validate all", "run the suite", Some("Validating"))
        );
        assert_eq!((h.steps.len(), h.updated_at), (3, t(3)));
    }

    /// Claude Code sends `in_progress` again for the step that runs: the step keeps its
    /// context (its checkpoint, its output) and the history gets nothing.
    #[test]
    fn starting_the_running_step_again_changes_nothing() {
        let mut h = plan();
        h.set_step_status("1", StepStatus::InProgress, 3, t(1))
            .unwrap();
        h.touch_file("a.rs", t(2));
        let ctx = h.current_step.as_mut().unwrap();
        ctx.current_checkpoint_id = Some("ckpt-1".into());
        ctx.last_output = "ok".into();
        let before = h.clone();
        assert_eq!(
            h.set_step_status("1", StepStatus::InProgress, 3, t(3)),
            Ok(vec![])
        );
        assert_eq!(h, before);
    }

    #[test]
    fn leaving_the_running_step_is_told_by_how_it_ended() {
        use StepStatus::*;
        // (how it ended, the history's trigger, when it completed)
        let cases = [
            (Completed, "step_complete", Some(t(2))),
            (Failed, "step_failed", None),
            (Pending, "step_paused", None),
            (Deleted, "step_deleted", None),
        ];
        for (status, trigger, completed_at) in cases {
            let mut h = plan();
            h.set_step_status("1", InProgress, 3, t(1)).unwrap();
            h.touch_file("a.rs", t(1));
            h.set_step_status("1", status, 3, t(2)).unwrap();
            assert_eq!(h.state, HookState::StepPending, "{status:?}");
            assert_eq!(last_trigger(&h), trigger, "{status:?}");
            let s = &h.steps[0];
            assert_eq!((s.status, s.completed_at), (status, completed_at));
            assert_eq!(s.files_touched, ["a.rs"], "{status:?}");
            assert!(h.current_step.is_none());
        }
    }

    fn crash_report(at: DateTime<Utc>) -> RecoveryContext {
        RecoveryContext {
            detected_at: at,
            crash_type: "signal".into(),
            last_known_state: HookState::StepRunning,
            was_validating: false,
            validation_cmd: None,
            partial_output: None,
            recommended_action: "retry_step".into(),
            reason: "the session ended mid-turn".into(),
            last_checkpoint_id: None,
            file_warnings: Vec::new(),
            withheld: Vec::new(),
            session_id: None,
            changed: None,
        }
    }

    /// After a crash the step is taken up again, by activity or by Claude Code setting
    /// it `in_progress`: a new attempt that keeps what the step did (its start, its files,
    /// its side effects), and the crash is dealt with.
    #[test]
    fn the_step_taken_up_after_a_crash_is_a_new_attempt_that_keeps_its_work() {
        let resume: [fn(&mut Hook); 2] = [
            |h| assert!(h.ensure_running(3, t(4)).unwrap()),
            |h| {
                h.set_step_status("2", StepStatus::InProgress, 3, t(4))
                    .unwrap();
            },
        ];
        for (way, resume) in resume.iter().enumerate() {
            let mut h = plan();
            h.set_step_status("2", StepStatus::InProgress, 3, t(1))
                .unwrap();
            h.touch_file("src/a.rs", t(2));
            h.note_side_effect("git push", 0, t(2));
            h.transition(HookState::Recovering, machine::CRASH_DETECTED, t(3))
                .unwrap();
            h.recovery = Some(crash_report(t(3)));
            resume(&mut h);
            assert_eq!(h.state, HookState::StepRunning, "way {way}");
            assert!(h.recovery.is_none(), "way {way}");
            let ctx = h.current_step.as_ref().unwrap();
            assert_eq!((ctx.attempt, ctx.started_at), (2, t(1)), "way {way}");
            assert_eq!(ctx.files_touched, ["src/a.rs"]);
            assert_eq!(ctx.side_effects[0].command, "git push");
        }
    }

    /// Work with no plan, taken up after a crash, stays in its implicit step (a new
    /// attempt of it): there is no plan to hand it to.
    #[test]
    fn the_implicit_step_taken_up_after_a_crash_is_kept() {
        let mut h = Hook::new("t", "w", 0, t(0));
        assert!(h.ensure_running(3, t(1)).unwrap());
        h.touch_file("notes.md", t(2));
        h.transition(HookState::Recovering, machine::CRASH_DETECTED, t(3))
            .unwrap();
        assert!(h.ensure_running(3, t(4)).unwrap());
        let ctx = h.current_step.as_ref().unwrap();
        assert_eq!((ctx.step_id.as_str(), ctx.attempt), ("work-1", 2));
        assert_eq!(
            (ctx.started_at, &ctx.files_touched[..]),
            (t(1), &["notes.md".to_string()][..])
        );
        assert_eq!(h.steps[0].status, StepStatus::InProgress);
        assert!(
            h.journal
                .history
                .iter()
                .all(|e| e.trigger != "plan_recorded")
        );
    }

    /// A step entered again and again past `max_attempts` leaves the task waiting for a
    /// human, as it was: no error, no event.
    #[test]
    fn asking_again_while_a_human_is_awaited_changes_nothing() {
        let mut h = plan();
        for i in 0..3 {
            h.set_step_status("1", StepStatus::InProgress, 2, t(i * 3))
                .unwrap();
            h.set_step_status("1", StepStatus::Failed, 2, t(i * 3 + 1))
                .unwrap();
        }
        assert_eq!(h.state, HookState::AwaitingHuman);
        let events = h.history_count;
        h.set_step_status("1", StepStatus::InProgress, 2, t(10))
            .unwrap();
        assert_eq!(
            (h.state, h.history_count),
            (HookState::AwaitingHuman, events)
        );
    }

    /// Only the step waymark started for work outside a plan is folded into the plan: a
    /// planned step that happens to be called "Session work", or an implicit step the
    /// user has named, is left as any step is (pending, with its files).
    #[test]
    fn only_the_unnamed_implicit_step_is_folded_into_the_plan() {
        let planned = |h: &mut Hook| {
            h.add_step("a", IMPLICIT_STEP, "", None, StepSource::Task, t(1));
            h.set_step_status("a", StepStatus::InProgress, 3, t(1))
                .unwrap();
        };
        let named = |h: &mut Hook| {
            assert!(h.ensure_running(3, t(1)).unwrap());
            h.add_step("work-1", "Sketch the API", "", None, StepSource::Task, t(1));
            h.set_step_status("work-1", StepStatus::Pending, 3, t(1))
                .unwrap();
            h.set_step_status("work-1", StepStatus::InProgress, 3, t(1))
                .unwrap();
        };
        let cases: [(&str, &Start); 2] = [("planned", &planned), ("named", &named)];
        for (case, start) in cases {
            let mut h = Hook::new("t", "w", 0, t(0));
            start(&mut h);
            h.touch_file("api.md", t(2));
            h.add_step("b", "Ship", "", None, StepSource::Task, t(3));
            h.set_step_status("b", StepStatus::InProgress, 3, t(3))
                .unwrap();
            let first = &h.steps[0];
            assert_eq!(first.status, StepStatus::Pending, "{case}");
            assert_eq!(first.files_touched, ["api.md"], "{case}");
            assert!(h.current_step.as_ref().unwrap().files_touched.is_empty());
        }
    }

    /// Work once no step is open: back into an implicit step that is still open, else a
    /// new one; never into a planned step that failed, nor a finished implicit one.
    #[test]
    fn work_after_the_plan_ran_out_goes_to_an_open_implicit_step_or_a_new_one() {
        let finished_implicit = |h: &mut Hook| {
            assert!(h.ensure_running(3, t(1)).unwrap());
            h.set_step_status("work-1", StepStatus::Completed, 3, t(2))
                .unwrap();
        };
        let failed_planned = |h: &mut Hook| {
            h.add_step("1", "Build", "", None, StepSource::Task, t(1));
            h.set_step_status("1", StepStatus::InProgress, 3, t(1))
                .unwrap();
            h.set_step_status("1", StepStatus::Failed, 3, t(2)).unwrap();
        };
        let failed_implicit = |h: &mut Hook| {
            assert!(h.ensure_running(3, t(1)).unwrap());
            h.set_step_status("work-1", StepStatus::Failed, 3, t(2))
                .unwrap();
        };
        // (how the steps ended, the step the work goes to, its attempt)
        let cases: [(&Start, &str, u32); 3] = [
            (&finished_implicit, "work-2", 1),
            (&failed_planned, "work-2", 1),
            (&failed_implicit, "work-1", 2),
        ];
        for (end, to, attempt) in cases {
            let mut h = Hook::new("t", "w", 0, t(0));
            end(&mut h);
            let before: Vec<StepStatus> = h.steps.iter().map(|s| s.status).collect();
            assert!(h.ensure_running(3, t(3)).unwrap());
            let ctx = h.current_step.as_ref().unwrap();
            assert_eq!((ctx.step_id.as_str(), ctx.attempt), (to, attempt));
            if to == "work-2" {
                assert_eq!(
                    h.steps[0].status, before[0],
                    "the old step is left as it was"
                );
            }
        }
    }

    #[test]
    fn a_failure_in_the_step_makes_its_next_entry_a_new_attempt() {
        let mut h = plan();
        h.set_step_status("1", StepStatus::InProgress, 3, t(1))
            .unwrap();
        h.record_failure(t(2));
        assert_eq!(h.updated_at, t(2));
        h.set_step_status("1", StepStatus::Pending, 3, t(3))
            .unwrap();
        h.set_step_status("1", StepStatus::InProgress, 3, t(4))
            .unwrap();
        assert_eq!(h.current_step.as_ref().unwrap().attempt, 2);
        assert_eq!(h.steps[0].attempt, 2);
    }

    /// What the plan says is done and what to do next, with no step current: a step in
    /// progress before a pending one, the first of each in plan order; deleted steps
    /// count for neither.
    #[test]
    fn what_is_done_and_what_comes_next() {
        use StepStatus::*;
        // (the three steps' statuses, all done, the completed ones, the next step)
        let cases = [
            (
                [Pending, Pending, Pending],
                false,
                vec![],
                Some("Analyze parser"),
            ),
            (
                [Completed, Pending, Pending],
                false,
                vec!["Analyze parser"],
                Some("Implement fix"),
            ),
            (
                [Completed, Pending, InProgress],
                false,
                vec!["Analyze parser"],
                Some("Validate"),
            ),
            (
                [Failed, Completed, Pending],
                false,
                vec!["Implement fix"],
                Some("Validate"),
            ),
            (
                [Completed, Completed, Failed],
                false,
                vec!["Analyze parser", "Implement fix"],
                None,
            ),
            (
                [Completed, Deleted, Completed],
                true,
                vec!["Analyze parser", "Validate"],
                None,
            ),
            ([Deleted, Deleted, Deleted], false, vec![], None),
        ];
        for (statuses, all_done, done, next) in cases {
            let mut h = plan();
            for (step, status) in h.steps.iter_mut().zip(statuses) {
                step.status = status;
            }
            assert_eq!(h.all_steps_completed(), all_done, "{statuses:?}");
            let names: Vec<&str> = h.completed_steps().map(|s| s.name.as_str()).collect();
            assert_eq!(names, done, "{statuses:?}");
            assert_eq!(h.next_step().map(|s| s.name.as_str()), next, "{statuses:?}");
        }
        assert!(
            !Hook::new("t", "w", 0, t(0)).all_steps_completed(),
            "no plan"
        );
    }

    /// What the agent was doing, as the brief says it: the request with no plan; once
    /// there is a plan, what the current step says (its activeForm, else its name, else
    /// for work outside the plan what it began with), and nothing rather than a stale
    /// prompt when the step says nothing.
    #[test]
    fn what_the_agent_was_working_on() {
        let mut h = Hook::new("t", "w", 0, t(0));
        assert_eq!(h.working_on(), None);
        h.last_prompt = Some("fix the parser".into());
        assert_eq!(
            h.working_on(),
            Some("fix the parser"),
            "no plan: the request"
        );

        let mut h = Hook::new("t", "w", 0, t(0));
        assert!(h.ensure_running(3, t(1)).unwrap());
        assert_eq!(
            h.working_on(),
            Some(IMPLICIT_STEP),
            "work asked for by no prompt"
        );

        let mut h = plan();
        h.last_prompt = Some("fix the parser".into());
        assert_eq!(h.working_on(), None, "a plan, no step current");
        h.set_step_status("1", StepStatus::InProgress, 3, t(1))
            .unwrap();
        assert_eq!(h.working_on(), Some("Analyzing parser"));
        h.set_step_status("3", StepStatus::InProgress, 3, t(2))
            .unwrap();
        assert_eq!(h.working_on(), Some("Validate"), "no activeForm: the name");
        // A context written without it (an older hook.json).
        h.current_step.as_mut().unwrap().working_on.clear();
        assert_eq!(h.working_on(), None);
    }

    /// A task completed completes the step it was in; failed or abandoned, it leaves the
    /// step as it was. Either way the step keeps its files, and the history says how the
    /// task ended.
    #[test]
    fn a_task_ends_with_the_trigger_of_how_it_ended() {
        use HookState::*;
        // (how the task ends, the history's trigger, the running step's status after)
        let cases = [
            (Completed, "task_complete", StepStatus::Completed),
            (Failed, machine::FAIL, StepStatus::InProgress),
            (Abandoned, machine::ABANDON, StepStatus::InProgress),
        ];
        for (to, trigger, step_status) in cases {
            let mut h = plan();
            h.set_step_status("1", StepStatus::InProgress, 3, t(1))
                .unwrap();
            h.touch_file("a.rs", t(1));
            h.finish(to, t(2)).unwrap();
            assert_eq!((h.state, last_trigger(&h)), (to, trigger));
            assert_eq!(h.steps[0].status, step_status, "{to}");
            assert_eq!(h.steps[0].files_touched, ["a.rs"], "{to}");
            assert!(h.current_step.is_none());
        }
        // Between steps, a task completes with no step to leave.
        let mut h = plan();
        h.set_step_status("1", StepStatus::InProgress, 3, t(1))
            .unwrap();
        h.set_step_status("1", StepStatus::Completed, 3, t(2))
            .unwrap();
        h.finish(Completed, t(3)).unwrap();
        assert_eq!((h.state, last_trigger(&h)), (Completed, "task_complete"));
        assert_eq!(h.steps[1].status, StepStatus::Pending);
    }

    /// A step's words are kept to their bounds, however long they come (issue 32, item
    /// 8): a 10 MB name is kept as 500 characters, marked as cut.
    #[test]
    fn a_step_s_words_are_bounded() {
        let mut h = Hook::new("t", "w", 0, t(0));
        let huge = "word ".repeat(2_000_000);
        h.add_step("1", &huge, &huge, Some(&huge), StepSource::Task, t(0));
        let s = &h.steps[0];
        assert_eq!(s.name.chars().count(), MAX_STEP_NAME);
        assert!(s.name.ends_with('…'));
        assert_eq!(s.description.chars().count(), MAX_STEP_DESCRIPTION);
        assert_eq!(
            s.active_form.as_ref().unwrap().chars().count(),
            MAX_STEP_NAME
        );
        // Renamed the same way; short words are kept whole.
        h.add_step("1", &huge, "", None, StepSource::Task, t(1));
        assert_eq!(h.steps[0].name.chars().count(), MAX_STEP_NAME);
        h.add_step("2", "Ship", "it", None, StepSource::Task, t(1));
        assert_eq!(
            (h.steps[1].name.as_str(), h.steps[1].description.as_str()),
            ("Ship", "it")
        );
    }
}
