//! The page's lanes: the task's own (sessions, the task, crashes) and one per step, in
//! plan order, with what each step did.

use super::super::{Event, kind};
use crate::task::{Step, StepContext};

#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    /// `None`: the task's lane.
    pub step: Option<String>,
    pub name: String,
    pub status: String,
    pub attempts: u32,
    /// The files the step changed: its record in the plan, the current step's, and those
    /// the trace attributes to it.
    pub files: Vec<String>,
}

/// The task's lane, then the plan's steps, then steps only the events name.
pub fn lanes(events: &[Event], steps: &[Step], current: Option<&StepContext>) -> Vec<Lane> {
    // A lane named by its step (the task's: none), with the step's status and attempts.
    let lane = |step: Option<&str>, status: &str, attempts: u32, files: Vec<String>| Lane {
        step: step.map(str::to_string),
        name: step.unwrap_or("task").into(),
        status: status.into(),
        attempts,
        files,
    };
    let mut out = vec![lane(None, "", 0, Vec::new())];
    for s in steps {
        out.push(lane(
            Some(&s.name),
            s.status.as_str(),
            s.attempt,
            s.files_touched.clone(),
        ));
    }
    for e in events {
        if let Some(step) = e
            .step()
            .filter(|s| out.iter().all(|l| l.step.as_deref() != Some(*s)))
        {
            out.push(lane(Some(step), "unknown", 0, Vec::new()));
        }
    }
    for lane in out.iter_mut().skip(1) {
        add_files(lane, events, current);
        lane.attempts = lane.attempts.max(last_attempt(lane, events));
    }
    out
}

fn add_files(lane: &mut Lane, events: &[Event], current: Option<&StepContext>) {
    let name = lane.step.as_deref();
    let mut add = |f: &str| {
        if !lane.files.iter().any(|g| g == f) {
            lane.files.push(f.to_string());
        }
    };
    if let Some(c) = current.filter(|c| Some(c.step_name.as_str()) == name) {
        c.files_touched.iter().for_each(|f| add(f));
    }
    for e in events
        .iter()
        .filter(|e| e.kind == kind::FILE_CHANGED && e.step() == name)
    {
        let files = e.details.get("files").and_then(|f| f.as_array());
        for f in files.into_iter().flatten().filter_map(|f| f.as_str()) {
            add(f);
        }
    }
}

/// The highest attempt the events tell for the lane's step: a finished task's archive
/// keeps no plan to count them.
fn last_attempt(lane: &Lane, events: &[Event]) -> u32 {
    events
        .iter()
        .filter(|e| e.kind == kind::STEP_STARTED && e.step() == lane.step.as_deref())
        .filter_map(|e| e.details.get("attempt").and_then(|a| a.as_u64()))
        .max()
        .map_or(0, |a| a as u32)
}

/// The lane an event is drawn in: its step's, else the task's (0).
pub(super) fn lane_of(lanes: &[Lane], e: &Event) -> usize {
    e.step()
        .and_then(|s| lanes.iter().position(|l| l.step.as_deref() == Some(s)))
        .unwrap_or(0)
}
