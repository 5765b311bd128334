//! The `Hook` record of docs/design.md (Task record) and the records it holds, as stored
//! in `hook.json`.
//!
//! Field names follow the original data model (docs/design.md) so that hook.json reads
//! like it; what waymark adds (the step plan, the session, the intent binding) is named
//! in the same style.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::machine::{HookState, named};
use crate::receipt::ValidationReceipt;

/// `max_attempts` when hook.json does not say (files written before it did).
pub fn default_max_attempts() -> u32 {
    3
}

/// hook.json's schema version. Files of schemas 1 and 2 are read and migrated
/// (`task::migrate`, docs/state.md); a file of a newer major version is never overwritten.
pub const SCHEMA_VERSION: &str = "3.0";
/// How many sessions a task remembers (the oldest that ended go first).
pub const MAX_SESSIONS: usize = 8;
/// `last_output` and `partial_output` are cut to this many characters.
pub const MAX_LAST_OUTPUT: usize = 500;
/// hook.json keeps this many of the newest checkpoints; every one is a line of the task's
/// `checkpoints.jsonl`.
pub const RECENT_CHECKPOINTS: usize = 5;
/// How many of the newest receipts hook.json keeps (for HOOK.md).
pub const RECENT_RECEIPTS: usize = RECENT_CHECKPOINTS;

/// The durable state of one task: the source of truth for recovery. hook.json is its serde
/// form, but for the plan, which is `plan.json`, written only when the plan changes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Hook {
    pub version: String,
    pub task_id: String,
    pub workspace_id: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub state: HookState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_step: Option<StepContext>,
    /// How many state changes the task has had: each is a line of its `history.jsonl`.
    #[serde(default)]
    pub history_count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoveryContext>,
    #[serde(default)]
    pub checkpoint_count: u64,
    /// How many receipts the task has: each is a line of its `receipts.jsonl`.
    #[serde(default)]
    pub receipt_count: u64,
    /// The task's last failed validation, and whether a later run passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<FailedValidation>,
    /// The bound intent as the brief shows it (see [`IntentBrief`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<IntentBrief>,
    /// The authenticated end of the receipt chain (docs/receipts.md): what a receipt deleted from
    /// the end of the log is caught by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt_head: Option<crate::receipt::ReceiptHead>,
    /// Position of this task among the project's tasks: the task component of `key_path`.
    #[serde(default)]
    pub task_index: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent_id: Option<String>,
    /// The sessions that worked on the task, oldest first (at most [`MAX_SESSIONS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<Session>,
    /// What the task is for: the request that began it (redacted, bounded), named in every
    /// brief. A go-on prompt ("continue") is no goal; the first prompt that asks for
    /// something is (docs/recovery.md, "The goal").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// The last prompt the user submitted (redacted, bounded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_prompt: Option<String>,
    /// The configured `max_attempts` when the task last changed: what a step not started
    /// yet is counted against.
    #[serde(default = "default_max_attempts")]
    pub max_attempts: u32,
    /// The summary Claude Code wrote at the last compaction (bounded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact_summary: Option<String>,
    /// What changed between the last checkpoint and a `/clear`, for the brief after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clear_note: Option<String>,
    /// The last `waymark rewind`, told in the brief and HOOK.md until the next checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewound: Option<Rewound>,
    /// The last rewind of Claude Code's conversation, told until the next checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_rewound: Option<ConversationRewind>,
    /// Context-window usage last read from the transcript, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_percent: Option<u8>,
    /// Files written while no step was current (between one step's end and the next one's
    /// start, possibly by another agent); the next step entered takes them over, so that
    /// no touched file is dropped for want of a step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unassigned_files: Vec<String>,
    /// The newest checkpoints, oldest first (at most [`RECENT_CHECKPOINTS`]).
    #[serde(default)]
    pub recent_checkpoints: Vec<StepCheckpoint>,
    /// The newest receipts, oldest first (at most [`RECENT_RECEIPTS`]), as HOOK.md
    /// shows them: saving never reads the receipts log.
    #[serde(default)]
    pub recent_receipts: Vec<ReceiptSummary>,
    /// Which `plan.json` goes with this file: counted up each time a save writes the plan,
    /// which it writes first. A plan.json of another count is from a save killed between
    /// the two writes; its `.bak` is the one that goes with this file (`task::store`).
    #[serde(default)]
    pub plan_version: u64,
    pub schema_version: String,
    /// The step plan (ATLAS kept it in its task template): `plan.json`.
    #[serde(skip)]
    pub steps: Vec<Step>,
    /// What this change adds to the task's logs: written by the store, before hook.json.
    #[serde(skip)]
    pub journal: Journal,
}

/// What a change adds to the task's append-only logs (`tasks/<id>/history.jsonl`,
/// `checkpoints.jsonl`, `receipts.jsonl`). Most events add nothing, and no event reads the
/// logs (a save that adds a receipt reads the last line of its log, from the end): they
/// are out of hook.json so that its cost does not grow with the task.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Journal {
    pub history: Vec<HookEvent>,
    pub checkpoints: Vec<StepCheckpoint>,
    pub receipts: Vec<ValidationReceipt>,
    /// The plan at the start of each turn (`turns.jsonl`).
    pub turns: Vec<PlanAt>,
}

/// Everything needed to resume the current step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepContext {
    pub step_id: String,
    pub step_name: String,
    pub step_index: usize,
    pub started_at: DateTime<Utc>,
    pub attempt: u32,
    pub max_attempts: u32,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub working_on: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_touched: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_output: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_checkpoint_id: Option<String>,
    /// The step's last failed validation (the task's is [`Hook::last_failure`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<FailedValidation>,
    /// What the step did that must not be done twice (a push, a pull request, a deploy),
    /// with its outcome; the newest [`SIDE_EFFECTS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub side_effects: Vec<SideEffect>,
    /// The step was resumed after a crash: the repeat guard watches its side effects.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resumed_after_crash: bool,
    /// The receipts of the validations run in the step since it was entered, linked to the
    /// step in the plan when it is left (as `files_touched` is): a validation then changes
    /// the context alone, and plan.json is not written again for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub receipt_ids: Vec<String>,
    /// A validation or a command with side effects that started (PreToolUse) and has not
    /// ended (PostToolUse): what a crash interrupted, in a step resumed after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<InFlight>,
}

/// A command that started and has not ended: a validation to run again after a crash, or
/// a side effect whose outcome the crash left unknown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InFlight {
    pub command: String,
    /// The session that runs it: only its own turn's end ends it.
    pub session_id: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub validation: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub side_effect: bool,
    pub started_at: DateTime<Utc>,
}

impl StepContext {
    /// What the step did while it was current, handed to the step as it is left: the
    /// files it touched, and its receipts after the ones it already had.
    pub fn leave_into(self, step: &mut Step) {
        step.files_touched = self.files_touched;
        for id in self.receipt_ids {
            if !step.receipt_ids.contains(&id) {
                step.receipt_ids.push(id);
            }
        }
    }
}

/// How many side effects a step keeps.
pub const SIDE_EFFECTS: usize = 10;

/// A validation that failed, as the next session must hear of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedValidation {
    pub receipt_id: String,
    pub command: String,
    pub exit_code: i32,
    pub at: DateTime<Utc>,
    /// The step it validated; empty for work with no plan (the implicit step).
    #[serde(default)]
    pub step: String,
    /// The last lines of its output: why it failed (bounded).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output: String,
    /// A later run of the same command that passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed_later: Option<LaterPass>,
}

/// A run that passed after a failure of the same command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaterPass {
    pub receipt_id: String,
    pub at: DateTime<Utc>,
}

/// A command with effects outside the work tree, run in a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideEffect {
    pub command: String,
    pub exit_code: i32,
    pub at: DateTime<Utc>,
    /// It was running when the session crashed: whether it took effect is not known.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unknown: bool,
    /// Checked since the crash (the agent ran the check the brief names, or `waymark step
    /// checked`): the repeat guard no longer asks before it runs again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub checked: bool,
}

/// The intent a task is bound to, as the brief and HOOK.md show it: read from the intent
/// file and checked against the trace at each session start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntentBrief {
    pub id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub status: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owned_scope: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<String>,
    /// Acceptance criteria the recent trace does not meet yet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmet: Vec<String>,
    /// How many criteria there are in all.
    #[serde(default)]
    pub criteria: usize,
}

named! {
    /// Claude Code's task statuses (`pending`, `in_progress`, `completed`, `deleted`), and
    /// `failed`.
    pub enum StepStatus {
        Pending = "pending",
        InProgress = "in_progress",
        Completed = "completed",
        Failed = "failed",
        Deleted = "deleted",
    }
}

/// Where a step came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepSource {
    /// Claude Code's task list (TaskCreate / TaskCreated).
    Task,
    /// Legacy TodoWrite.
    Todo,
    /// `waymark step …`.
    Manual,
    /// An intent's `steps`.
    Intent,
    /// Work done while no step was running.
    Implicit,
}

/// One item of the task's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Claude Code's task id, or a generated one.
    pub id: String,
    pub name: String,
    pub index: usize,
    pub status: StepStatus,
    pub source: StepSource,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
    /// 0 until first started.
    #[serde(default)]
    pub attempt: u32,
    /// A failure happened since the step was last entered (a failed validation, `step
    /// fail`, a crash): the next entry is a new attempt.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failed_since_entry: bool,
    /// Attempts a person granted past `max_attempts` (`waymark step retry`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub granted: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub receipt_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_touched: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<DateTime<Utc>>,
}

/// One append-only history entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookEvent {
    pub timestamp: DateTime<Utc>,
    /// Empty for the first event of a task.
    #[serde(default, with = "opt_state")]
    pub from_state: Option<HookState>,
    pub to_state: HookState,
    pub trigger: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_name: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub details: BTreeMap<String, Value>,
}

/// The missing state (before the first event) is written `""`, as in docs/design.md (Task
/// record).
mod opt_state {
    use super::HookState;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<HookState>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.map(HookState::as_str).unwrap_or(""))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<HookState>, D::Error> {
        let s = Option::<String>::deserialize(d)?.unwrap_or_default();
        Ok(HookState::parse(&s))
    }
}

named! {
    /// What caused a checkpoint.
    pub enum CheckpointTrigger {
        Manual = "manual",
        GitCommit = "git_commit",
        GitPush = "git_push",
        PrCreated = "pr_created",
        Validation = "validation",
        StepComplete = "step_complete",
        Interval = "interval",
        PreCompact = "pre_compact",
        Clear = "clear",
        ContextThreshold = "context_threshold",
        /// The state just before a `waymark rewind`, so that the rewind can be undone.
        PreRewind = "pre_rewind",
    }
}

/// A receipt as HOOK.md lists it (the whole receipt is a line of the task's log).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptSummary {
    pub receipt_id: String,
    pub step_name: String,
    pub command: String,
    pub exit_code: i32,
    pub duration: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub observed: bool,
    pub completed_at: DateTime<Utc>,
}

impl ReceiptSummary {
    pub fn of(r: &ValidationReceipt) -> ReceiptSummary {
        ReceiptSummary {
            receipt_id: r.receipt_id.clone(),
            step_name: r.step_name.clone(),
            command: r.command.clone(),
            exit_code: r.exit_code,
            duration: r.duration.clone(),
            observed: r.observed,
            completed_at: r.completed_at,
        }
    }
}

/// A recovery point: what was cheap and exact to know at once (the trigger, the step,
/// the branch and HEAD read from `.git`). What it cost I/O to learn (the step's files, a
/// dirty work tree) is its capture record (the application's `capture`), written after the lock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepCheckpoint {
    pub checkpoint_id: String,
    pub created_at: DateTime<Utc>,
    #[serde(default)]
    pub step_name: String,
    #[serde(default)]
    pub step_index: usize,
    pub description: String,
    pub trigger: CheckpointTrigger,
    #[serde(default)]
    pub git_branch: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
}

/// A rewind: which checkpoint the files were put back to, which files, and the checkpoint
/// that holds the work as it was before (to undo it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rewound {
    pub checkpoint_id: String,
    pub at: DateTime<Utc>,
    /// Files restored or recreated as they were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restored: Vec<String>,
    /// Files made since the checkpoint, deleted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deleted: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo: Option<String>,
}

/// A file's state at checkpoint time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSnapshot {
    pub path: String,
    pub size: u64,
    pub mod_time: String,
    /// First 16 hex characters of the SHA-256 of the content.
    pub sha256: String,
    pub exists: bool,
}

/// Crash diagnosis and the recommended way to go on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecoveryContext {
    pub detected_at: DateTime<Utc>,
    /// `signal` (the session ended mid-turn), `timeout` (stale past the threshold), `unknown`.
    pub crash_type: String,
    pub last_known_state: HookState,
    #[serde(default)]
    pub was_validating: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation_cmd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_output: Option<String>,
    /// `retry_step`, `retry_from_checkpoint`, `skip_step` or `manual`.
    pub recommended_action: String,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_checkpoint_id: Option<String>,
    /// Files whose content differs from the last checkpoint's snapshot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_warnings: Vec<String>,
    /// Files the last checkpoint's snapshot left out, each with why: `` `.env` (it holds a
    /// secret) ``.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<String>,
    /// The session that crashed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// What changed in the work tree since the last checkpoint, new files counted:
    /// `2 files, +12/−3 lines (1 new)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<String>,
    /// The files that changed, the first [`CHANGED_NAMED`]: what the brief names when no
    /// step recorded them (the work wrote from a generator).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed_files: Vec<String>,
    /// The session whose brief announced the crash: once its turn (or the session) ends,
    /// the crash has been told and the recovery is over (one crash, one verdict).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub told: Option<String>,
}

/// How many changed files a recovery context names.
pub const CHANGED_NAMED: usize = 20;

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What a count of the work tree's changes is against, in words: the commit HEAD was on
/// at the last checkpoint, or with none yet HEAD (`recovery::changed_since`).
pub fn changed_base(after_a_checkpoint: bool) -> &'static str {
    match after_a_checkpoint {
        true => "the last checkpoint's commit",
        false => "the last commit (no checkpoint yet)",
    }
}

/// What [`RecoveryContext::changed`] says when the work tree is as its base.
pub const NOTHING_CHANGED: &str = "nothing";

impl RecoveryContext {
    /// What [`Self::changed`] is counted against: the last checkpoint's commit, or with no
    /// checkpoint yet HEAD when the crash was found (`recovery::changed_since` takes the
    /// same base).
    pub fn changed_since(&self) -> &'static str {
        changed_base(self.last_checkpoint_id.is_some())
    }

    /// What changed since that base, in words that do not contradict the files a step
    /// lists: "nothing" there means the files listed are as that commit has them.
    /// The files are named (the first [`CHANGED_NAMED`]): with no step recording them (a
    /// generator wrote them) the count alone sends the agent looking.
    pub fn changed_words(&self) -> Option<String> {
        self.changed.as_deref().map(|c| match c {
            NOTHING_CHANGED => {
                "nothing: the files listed, if any, are as that commit has them".into()
            }
            c if self.changed_files.is_empty() => c.to_string(),
            c => {
                let more = match self.changed_files.len() >= CHANGED_NAMED {
                    true => ", and the rest (`git status`)",
                    false => "",
                };
                format!("{c}: {}{more}", self.changed_files.join(", "))
            }
        })
    }
}

/// The Claude Code session last seen working on this task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub session_id: String,
    pub started_at: DateTime<Utc>,
    pub last_event_at: DateTime<Utc>,
    pub status: SessionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
    /// The Claude Code process running the session (Linux): while it runs, the session is
    /// live even mid-turn, so another session starting meanwhile is parallel work, not
    /// the aftermath of a crash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<super::session::Owner>,
    /// The step the session's last event worked on, and the files it touched there (the
    /// newest [`SESSION_FILES`]): what another session is told it is doing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Where the session works when it is not the project root (a worktree, a
    /// subdirectory): root-relative, or absolute outside the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// What the session asked the user for (a permission) and was still waiting for at
    /// its last event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<String>,
    /// Its last turn ended on an API error (StopFailure): stopped, not crashed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_turn: Option<FailedTurn>,
    /// The subagents it started that have not stopped (type and id), newest last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
    /// Its turn began here and has not been read from the transcript yet: whether the
    /// turn continues the conversation or was rewound is told at its next event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<TurnMark>,
    /// The agent the session is, when not Claude Code (`Codex CLI`): a crash names it, so
    /// the agent that comes next knows whose work it takes up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

/// Where a turn began in the session's transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnMark {
    /// The transcript's length when the prompt was submitted: the prompt is written after.
    pub from: u64,
    /// The prompt's id (`prompt_id`), which its transcript entry carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_id: Option<String>,
}

/// The plan as it stood when a turn began: a line of the task's `turns.jsonl`, what a
/// conversation rewound to before that turn puts the plan back to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanAt {
    pub at: DateTime<Utc>,
    pub session_id: String,
    /// Each step's id and status, in plan order.
    pub steps: Vec<(String, StepStatus)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
}

/// Claude Code's conversation was rewound (/rewind, `--resume-session-at`): the plan was
/// put back as it stood then, and the checkpoint that matches that point is named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationRewind {
    /// When waymark noticed it.
    pub at: DateTime<Utc>,
    pub session_id: String,
    /// The time of the last entry the conversation kept (`None`: its very start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<DateTime<Utc>>,
    /// Steps done or started after that point, no longer so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reopened: Vec<String>,
    /// Steps planned after that point, taken out of the plan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
    /// The plan could not be put back: no record of it at that point.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plan_unknown: bool,
    /// The newest checkpoint made at or before that point, and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<(String, DateTime<Utc>)>,
}

/// A turn that ended on an API error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedTurn {
    /// Claude Code's kind of error (`rate_limit`, `invalid_request`, `unknown`, …).
    pub error: String,
    /// What Claude Code showed for it (bounded).
    pub message: String,
    pub at: DateTime<Utc>,
}

impl FailedTurn {
    /// `an API error (rate_limit)`; `an API error` when Claude Code could not tell its
    /// kind (`unknown`), which says nothing to the reader.
    pub fn described(&self) -> String {
        match self.error.as_str() {
            "" | "unknown" => "an API error".into(),
            kind => format!("an API error ({kind})"),
        }
    }
}

/// How many of a session's files are kept for another session's brief.
pub const SESSION_FILES: usize = 8;

/// Where a session stands: the difference between a crash and a clean stop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// Working on a turn: no Stop since the last activity.
    #[default]
    Active,
    /// The last turn finished (Stop).
    Idle,
    /// SessionEnd was received.
    Ended,
}

/// The name of a task's directory: task ids come from intents (user text), so they are
/// kept to safe file names.
pub fn sanitize(id: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let s: String = id.chars().map(|c| if safe(c) { c } else { '_' }).collect();
    match s.trim_matches('.') {
        "" => "task".into(),
        s => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every status Claude Code's task tools send reads back as the status it names.
    #[test]
    fn every_step_status_parses_from_its_own_name() {
        for status in StepStatus::ALL {
            assert_eq!(StepStatus::parse(status.as_str()), Some(status));
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
        }
        let names: Vec<&str> = StepStatus::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(
            names,
            ["pending", "in_progress", "completed", "failed", "deleted"]
        );
        assert_eq!(StepStatus::parse("done"), None);
    }

    /// A task id from user text becomes a safe directory name: letters, digits, `-`,
    /// `_` and inner dots kept, anything else `_`, never empty nor a dot name.
    #[test]
    fn a_task_id_is_kept_to_a_safe_file_name() {
        assert_eq!(sanitize("task-1_v2.0"), "task-1_v2.0");
        assert_eq!(sanitize("../etc/pass wd"), "_etc_pass_wd");
        assert_eq!(sanitize("..."), "task");
        assert_eq!(sanitize(""), "task");
    }

    /// A trigger's name is its serde name, and reads back as the trigger.
    #[test]
    fn every_checkpoint_trigger_reads_back_from_its_name() {
        for t in CheckpointTrigger::ALL {
            assert_eq!(serde_json::to_value(t).unwrap(), t.as_str());
            assert_eq!(CheckpointTrigger::parse(t.as_str()), Some(t));
        }
        assert_eq!(CheckpointTrigger::parse("nope"), None);
    }

    /// A history entry's missing "from" state is written and read as `""`; a known one by
    /// its name.
    #[test]
    fn a_history_entry_s_from_state_round_trips() {
        let entry = |from: &str| {
            serde_json::json!({
                "timestamp": "2026-03-01T12:00:00Z", "from_state": from,
                "to_state": "step_running", "trigger": "t",
            })
        };
        let read = |v| serde_json::from_value::<HookEvent>(v).unwrap();
        let known = read(entry("step_pending"));
        assert_eq!(known.from_state, Some(HookState::StepPending));
        assert_eq!(
            serde_json::to_value(&known).unwrap()["from_state"],
            "step_pending"
        );
        let first = read(entry(""));
        assert_eq!(first.from_state, None);
        assert_eq!(serde_json::to_value(&first).unwrap()["from_state"], "");
    }
}
