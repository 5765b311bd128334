//! The task the recorded session leaves behind, for unit tests across modules.

use chrono::{DateTime, Utc};

use super::{Hook, StepSource, StepStatus};

/// The recorded session's plan: "Analyze parser", "Implement fix", "Validate", all pending.
pub fn recorded_steps(now: DateTime<Utc>) -> Hook {
    let mut h = Hook::new("task-1", "proj", 0, now);
    h.add_step(
        "1",
        "Analyze parser",
        "",
        Some("Analyzing parser"),
        StepSource::Task,
        now,
    );
    h.add_step(
        "2",
        "Implement fix",
        "",
        Some("Implementing fix"),
        StepSource::Task,
        now,
    );
    h.add_step("3", "Validate", "", None, StepSource::Task, now);
    h
}

/// "Analyze parser" completed, "Implement fix" running (attempt 1, `src/parser.rs`
/// touched), "Validate" pending: where the fixture session stops.
pub fn recorded_plan(now: DateTime<Utc>) -> Hook {
    let mut h = recorded_steps(now);
    h.set_step_status("1", StepStatus::InProgress, 3, now)
        .unwrap();
    h.set_step_status("1", StepStatus::Completed, 3, now)
        .unwrap();
    h.set_step_status("2", StepStatus::InProgress, 3, now)
        .unwrap();
    h.touch_file("src/parser.rs", now);
    h
}

/// A task whose one step `name` is running since `at`, with `files` touched.
pub fn running(name: &str, files: &[&str], at: DateTime<Utc>) -> Hook {
    let mut h = Hook::new("t", "w", 0, at);
    h.add_step("1", name, "", None, StepSource::Task, at);
    h.set_step_status("1", StepStatus::InProgress, 3, at)
        .unwrap();
    for f in files {
        h.touch_file(f, at);
    }
    h
}

/// `n` finished pushes, `git push origin v0` to `v{n-1}`, as a step's side effects.
pub fn pushes(n: usize, at: DateTime<Utc>) -> Vec<super::SideEffect> {
    (0..n)
        .map(|n| super::SideEffect {
            command: format!("git push origin v{n}"),
            exit_code: 0,
            at,
            unknown: false,
            checked: false,
        })
        .collect()
}
