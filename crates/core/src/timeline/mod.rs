//! One timeline of a task, drawn from what its logs hold: the sessions hook.json keeps,
//! `history.jsonl` (state changes), `checkpoints.jsonl`, `receipts.jsonl` and the task's
//! records in the Agent Trace ledger. `waymark log` prints it and `waymark report --html`
//! draws it; both read the same [`Event`]s, so what the page shows on hover is what
//! `waymark log --json` prints.
//!
//! Each event is `{time, kind, what, details}` (stable; docs/timeline.md lists the kinds).
//! `details.task` names the task, `details.step` the step when there is one.

mod history;
pub mod html;
mod logs;
mod sessions;
pub mod text;
mod trace;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::receipt::ValidationReceipt;
use crate::task::{HookEvent, Session, StepCheckpoint};
use crate::trace::Record;

/// One thing that happened to the task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub time: DateTime<Utc>,
    pub kind: String,
    /// One line: what happened, for a person.
    pub what: String,
    /// The facts behind it (ids, trigger, exit code, attempt, …).
    pub details: Map<String, Value>,
}

/// The kinds of [`Event`].
pub mod kind {
    pub const SESSION_STARTED: &str = "session_started";
    pub const SESSION_ENDED: &str = "session_ended";
    pub const SESSION_STOPPED_ON_ERROR: &str = "session_stopped_on_error";
    pub const CRASH: &str = "crash";
    pub const TASK_STARTED: &str = "task_started";
    pub const TASK_COMPLETED: &str = "task_completed";
    pub const TASK_FAILED: &str = "task_failed";
    pub const TASK_ABANDONED: &str = "task_abandoned";
    pub const STEP_STARTED: &str = "step_started";
    pub const STEP_COMPLETED: &str = "step_completed";
    pub const STEP_FAILED: &str = "step_failed";
    pub const STEP_PAUSED: &str = "step_paused";
    pub const STEP_DELETED: &str = "step_deleted";
    pub const AWAITING_HUMAN: &str = "awaiting_human";
    pub const CHECKPOINT: &str = "checkpoint";
    /// A checkpoint made before Claude Code compacted the context (trigger `pre_compact`).
    pub const COMPACTION: &str = "compaction";
    pub const RECEIPT: &str = "receipt";
    pub const SIDE_EFFECT: &str = "side_effect";
    pub const REWIND: &str = "rewind";
    pub const CONVERSATION_REWOUND: &str = "conversation_rewound";
    pub const SCOPE_WARNING: &str = "scope_warning";
    pub const INTENT: &str = "intent";
    /// Files written by a tool call (the trace's `mutation` records).
    pub const FILE_CHANGED: &str = "file_changed";
    /// A state change none of the kinds above names.
    pub const STATE: &str = "state";
}

/// What one task's timeline is drawn from, as read from its files.
#[derive(Debug, Default)]
pub struct Sources<'a> {
    pub task_id: &'a str,
    pub sessions: &'a [Session],
    pub history: &'a [HookEvent],
    pub checkpoints: &'a [StepCheckpoint],
    pub receipts: &'a [ValidationReceipt],
    /// The ledger's records (any task's: those of other tasks are left out here).
    pub trace: &'a [Record],
    /// The project's `side_effect_commands`: with git pushes, PR creations and publishes,
    /// what makes a command a side effect (`shell::classify`).
    pub side_effect_commands: &'a [String],
}

/// The task's events, oldest first ([`order`]).
pub fn build(src: &Sources) -> Vec<Event> {
    let mut events = sessions::started(src);
    events.extend(history::events(src));
    events.extend(trace::events(src));
    events.extend(logs::receipts(src));
    events.extend(logs::checkpoints(src));
    events.extend(sessions::ended(src));
    events.sort_by_key(order);
    attribute(&mut events);
    events
}

/// Gives each trace event the step that was running when it happened (from the history):
/// the trace records the task, not the step.
fn attribute(events: &mut [Event]) {
    let mut running: Option<String> = None;
    for e in events.iter_mut() {
        match e.kind.as_str() {
            kind::STEP_STARTED => running = e.step().map(str::to_string),
            kind::STEP_COMPLETED
            | kind::STEP_FAILED
            | kind::STEP_PAUSED
            | kind::STEP_DELETED
            | kind::AWAITING_HUMAN
            | kind::TASK_COMPLETED
            | kind::TASK_FAILED
            | kind::TASK_ABANDONED => running = None,
            kind::FILE_CHANGED | kind::SIDE_EFFECT | kind::SCOPE_WARNING => {
                if let (None, Some(step)) = (e.step(), &running) {
                    // After `task`, which every event has first.
                    let at = e.details.len().min(1);
                    e.details
                        .shift_insert(at, "step".into(), Value::from(step.as_str()));
                }
            }
            _ => {}
        }
    }
}

/// Time order, to the millisecond: the trace keeps milliseconds, the logs nanoseconds, and
/// what one hook event did carries one instant. Within a millisecond, cause before effect:
/// a session begins, a rewind's safety checkpoint precedes it, the state changes, the
/// tool call's records follow, then the receipt, the checkpoint it all made, and the
/// session's end.
fn order(e: &Event) -> (i64, u8) {
    let rank = match e.kind.as_str() {
        kind::SESSION_STARTED => 0,
        kind::CHECKPOINT if e.details.get("trigger") == Some(&Value::from("pre_rewind")) => 1,
        kind::FILE_CHANGED | kind::SIDE_EFFECT | kind::SCOPE_WARNING | kind::INTENT => 3,
        kind::RECEIPT => 4,
        kind::CHECKPOINT | kind::COMPACTION => 5,
        kind::SESSION_ENDED | kind::SESSION_STOPPED_ON_ERROR => 6,
        _ => 2,
    };
    (e.time.timestamp_millis(), rank)
}

/// Several tasks' timelines as one, in time order.
pub fn merge(tasks: Vec<Vec<Event>>) -> Vec<Event> {
    let mut all: Vec<Event> = tasks.into_iter().flatten().collect();
    all.sort_by_key(order);
    all
}

/// An event of `src`'s task: `details` gets `task` first, then `step` when given.
fn event<K: Into<String>>(
    src: &Sources,
    time: DateTime<Utc>,
    kind: &str,
    what: String,
    step: Option<&str>,
    details: impl IntoIterator<Item = (K, Value)>,
) -> Event {
    let mut map = Map::new();
    map.insert("task".into(), Value::from(src.task_id));
    if let Some(s) = step.filter(|s| !s.is_empty()) {
        map.insert("step".into(), Value::from(s));
    }
    for (k, v) in details {
        if !v.is_null() {
            map.insert(k.into(), v);
        }
    }
    Event {
        time,
        kind: kind.into(),
        what,
        details: map,
    }
}

impl Event {
    /// The step the event belongs to, if any.
    pub fn step(&self) -> Option<&str> {
        self.details.get("step").and_then(Value::as_str)
    }

    /// A detail as text: strings as they are, anything else as JSON.
    pub fn detail_text(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

#[cfg(test)]
mod tests;
