//! "What to do now" and "DO NOT": the instructions HOOK.md and the resume brief share.
//! Derived from the hook alone, so both always say the same thing.

use crate::task::{Hook, HookState, Step, StepStatus};

/// The instructions for the agent reading the recovery file.
#[derive(Debug, Clone, PartialEq)]
pub struct Guidance {
    /// The step to resume, with the attempt it will be.
    pub resume: Option<(String, u32)>,
    pub todo: Vec<String>,
    pub do_not: Vec<String>,
}

/// The attempt the next entry into `step` will be (see `task::plan`).
pub fn next_attempt(hook: &Hook, step: &Step) -> u32 {
    if step.attempt == 0 {
        1
    } else if step.failed_since_entry || hook.state == HookState::Recovering {
        step.attempt + 1
    } else {
        step.attempt
    }
}

pub fn guidance(hook: &Hook) -> Guidance {
    let mut todo = Vec::new();
    let mut do_not = Vec::new();
    let mut resume = None;
    match hook.state {
        HookState::Completed => todo.push(format!("Task {} is completed. Nothing to resume; start new work as a new task.", hook.task_id)),
        HookState::Failed | HookState::Abandoned => todo.push(format!(
            "Task {} was {}. Do not resume it unless the user asks; `waymark task start` begins a new one.",
            hook.task_id, hook.state
        )),
        _ => {
            if let Some(rec) = &hook.recovery {
                let action = match rec.recommended_action.as_str() {
                    "retry_from_checkpoint" => format!(
                        "Resume from the last checkpoint{}: check that the files listed below are as that checkpoint left them, then continue.",
                        rec.last_checkpoint_id.as_deref().map(|c| format!(" ({c})")).unwrap_or_default()
                    ),
                    "retry_step" => "Retry the interrupted step from its beginning: it is safe to repeat.".to_string(),
                    "skip_step" => "The step was finishing when the session ended: verify its result, mark it completed, and go on to the next step.".to_string(),
                    _ => "Review the files the step touched before going on: the step changes files and its state is uncertain. Ask the user if unsure.".to_string(),
                };
                todo.push(format!("Recovery: {action} ({})", rec.reason));
                if rec.was_validating {
                    if let Some(cmd) = &rec.validation_cmd {
                        todo.push(format!("Re-run the interrupted validation: `{cmd}`."));
                    }
                }
                for w in &rec.file_warnings {
                    todo.push(format!("Check {w}: it changed since the last checkpoint."));
                }
            }
            match hook.next_step() {
                Some(step) => {
                    let attempt = next_attempt(hook, step);
                    let verb = if step.status == StepStatus::InProgress { "Resume" } else { "Start" };
                    todo.push(format!(
                        "{verb} step {} \"{}\" (attempt {} of {}).",
                        step.index + 1,
                        step.name,
                        attempt,
                        hook.current_step.as_ref().map(|c| c.max_attempts).unwrap_or(attempt.max(3))
                    ));
                    if let Some(ctx) = hook.current_step.as_ref().filter(|c| c.step_id == step.id) {
                        if !ctx.files_touched.is_empty() {
                            todo.push(format!(
                                "Files this step already changed (read them before editing again): {}.",
                                ctx.files_touched.join(", ")
                            ));
                        }
                    }
                    if hook.state == HookState::AwaitingHuman {
                        todo.push("The step is waiting for a human (too many attempts, or blocked): ask the user before retrying.".into());
                    }
                    resume = Some((step.name.clone(), attempt));
                }
                None if hook.all_steps_completed() => todo.push(
                    "Every step is completed: verify the result, then finish the task (`waymark task done`).".into(),
                ),
                None => todo.push("No step is planned: continue with the user's request.".into()),
            }
            let pending: Vec<_> = hook
                .steps
                .iter()
                .filter(|s| s.status == StepStatus::Pending && Some(&s.name) != resume.as_ref().map(|r| &r.0))
                .map(|s| format!("\"{}\"", s.name))
                .collect();
            if !pending.is_empty() {
                todo.push(format!("Then: {}.", pending.join(", ")));
            }
        }
    }
    for s in hook.completed_steps() {
        do_not.push(format!(
            "Do not repeat step {} \"{}\": it is completed.",
            s.index + 1,
            s.name
        ));
    }
    if !hook.state.is_terminal() {
        do_not.push("Do not start over or re-create the task list: it is below.".into());
        do_not.push(
            "Do not discard uncommitted changes without checking them against the files listed."
                .into(),
        );
    }
    Guidance {
        resume,
        todo,
        do_not,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    #[test]
    fn resume_the_running_step_and_do_not_repeat_the_done_one() {
        let h = crate::task::testing::recorded_plan(Utc::now());
        let g = guidance(&h);
        assert_eq!(g.resume, Some(("Implement fix".into(), 1)));
        assert!(
            g.todo
                .iter()
                .any(|t| t.contains("Resume step 2 \"Implement fix\" (attempt 1 of 3)"))
        );
        assert!(g.todo.iter().any(|t| t.contains("\"Validate\"")));
        assert!(g.do_not[0].contains("Do not repeat step 1 \"Analyze parser\""));
    }
}
