//! Which step a trace event belongs to: the trace records the task, not the step, so an
//! event is given the step that was running when it happened (from the history).

use serde_json::Value;

use super::{Event, kind};

pub(super) fn attribute(events: &mut [Event]) {
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
