//! Which step a trace event belongs to: the trace records the task, not the step, so an
//! event is given the step that was running when it happened (from the history).

use serde_json::{Map, Value};

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
                    e.details = with_step(std::mem::take(&mut e.details), step);
                }
            }
            _ => {}
        }
    }
}

/// `details` with `step` after `task`, where every event has it.
fn with_step(details: Map<String, Value>, step: &str) -> Map<String, Value> {
    let mut out = Map::new();
    let mut rest = details.into_iter();
    if let Some((k, v)) = rest.next() {
        out.insert(k, v);
    }
    out.insert("step".into(), Value::from(step));
    out.extend(rest);
    out
}
