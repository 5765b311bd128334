//! The task's state changes (`history.jsonl`) as events: the task and its steps starting
//! and ending, attempts, crashes found, rewinds. The changes a receipt already tells
//! (a validation starting, passing, failing) and the machine's own steps (setup, the
//! step left when the task finishes) are left out.

use serde_json::Value;

use super::{Event, Sources, event, kind};
use crate::task::{HookEvent, HookState};

/// Triggers that add nothing a reader of the timeline needs.
const QUIET: [&str; 6] = [
    "setup_complete",
    "task_finishing",
    "validation_start",
    "validation_passed",
    "validation_failed",
    "validation_interrupted",
];

pub(super) fn events<'a>(src: &'a Sources<'a>) -> impl Iterator<Item = Event> + 'a {
    src.history
        .iter()
        .enumerate()
        .filter(|(_, e)| !QUIET.contains(&e.trigger.as_str()))
        // A step entered past its attempts goes straight on to wait for a human: the
        // entry is not an attempt.
        .filter(|(i, e)| !entered_to_wait(e, src.history.get(i + 1)))
        .map(|(_, e)| one(src, e))
}

fn entered_to_wait(e: &HookEvent, next: Option<&HookEvent>) -> bool {
    e.to_state == HookState::StepRunning
        && !e.details.contains_key("attempt")
        && next.is_some_and(|n| n.trigger == "max_attempts_exceeded")
}

fn one(src: &Sources, e: &HookEvent) -> Event {
    let step = e.step_name.as_deref();
    let (kind, what) = kind_and_what(e);
    let mut details: Vec<(String, Value)> = vec![("trigger".into(), Value::from(&*e.trigger))];
    details.extend(e.details.iter().map(|(k, v)| (k.clone(), v.clone())));
    event(src, e.timestamp, kind, what, step, details)
}

/// The event's kind and its line.
fn kind_and_what(e: &HookEvent) -> (&'static str, String) {
    let step = e.step_name.as_deref().unwrap_or("?");
    let detail = |k: &str| e.details.get(k).map(Event::detail_text);
    match (e.trigger.as_str(), e.to_state) {
        ("task_start", _) => (kind::TASK_STARTED, "task started".into()),
        (_, HookState::Completed) => (kind::TASK_COMPLETED, "task completed".into()),
        (_, HookState::Failed) => (kind::TASK_FAILED, "task failed".into()),
        (_, HookState::Abandoned) => (kind::TASK_ABANDONED, "task abandoned".into()),
        ("step_start" | "step_resume", _) => {
            let attempt = detail("attempt").unwrap_or_else(|| "1".into());
            let again = if e.trigger == "step_resume" {
                "resumed"
            } else {
                "started"
            };
            (
                kind::STEP_STARTED,
                format!("step \"{step}\" {again}, attempt {attempt}"),
            )
        }
        ("step_complete", _) => (kind::STEP_COMPLETED, format!("step \"{step}\" completed")),
        ("step_failed", _) => (kind::STEP_FAILED, format!("step \"{step}\" failed")),
        ("step_paused" | "step_switch", _) => {
            (kind::STEP_PAUSED, format!("step \"{step}\" paused"))
        }
        ("step_deleted", _) => (kind::STEP_DELETED, format!("step \"{step}\" deleted")),
        ("max_attempts_exceeded", _) => (
            kind::AWAITING_HUMAN,
            format!(
                "step \"{step}\" out of attempts ({} of {}): waiting for a human",
                detail("attempt").unwrap_or_default(),
                detail("max_attempts").unwrap_or_default()
            ),
        ),
        ("crash_detected", _) => (kind::CRASH, crashed(e)),
        ("rewind", _) => (
            kind::REWIND,
            format!(
                "files rewound to checkpoint {}",
                detail("checkpoint_id").unwrap_or_else(|| "?".into())
            ),
        ),
        ("conversation_rewound", _) => (kind::CONVERSATION_REWOUND, "conversation rewound".into()),
        (trigger, to) => (
            kind::STATE,
            format!("{} -> {} ({trigger})", from_text(e), to.as_str()),
        ),
    }
}

fn from_text(e: &HookEvent) -> &'static str {
    e.from_state.map_or("start", HookState::as_str)
}

/// `session dc5c038f crashed (signal): recommended retry_from_checkpoint`; histories
/// written before the session was recorded say `crash found`.
fn crashed(e: &HookEvent) -> String {
    let detail = |k: &str| e.details.get(k).map(Event::detail_text);
    let who = match detail("session_id") {
        Some(id) => format!("session {} crashed", crate::text::short_id(&id)),
        None => "crash found".into(),
    };
    format!(
        "{who} ({}): recommended {}",
        detail("crash_type").unwrap_or_else(|| "unknown".into()),
        detail("recommended_action").unwrap_or_else(|| "?".into())
    )
}
