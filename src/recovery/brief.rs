//! The resume brief: the short text injected at SessionStart that makes recovery work.
//!
//! It names the task, the step and its attempt, what was being done, the files touched,
//! what to do now, the completed steps as DO NOT REPEAT (with receipt ids), and ends with
//! the path of HOOK.md. After a crash it opens with the verdict. It is capped (Claude Code
//! moves hook context over 10,000 characters to a file), cutting the middle, never the
//! verdict or the HOOK.md line.

use std::fmt::Write;
use std::path::Path;

use chrono::{DateTime, Utc};

use crate::config::Switch;
use crate::recovery::guidance::{guidance, next_attempt};
use crate::task::Hook;
use crate::text::{ago, one_line, truncate};

/// Extra lines the caller knows and the hook does not.
#[derive(Debug, Default, Clone)]
pub struct Extras {
    /// "Work changed since last checkpoint: …" (verify_before_clear).
    pub work_changed: Option<String>,
    /// Why the brief is being given (`startup`, `resume`, `clear`, `compact`, `recover`).
    pub source: String,
}

pub fn render(
    hook: &Hook,
    mode: Switch,
    hook_md: &Path,
    max_chars: usize,
    extras: &Extras,
    now: DateTime<Utc>,
) -> Option<String> {
    match mode {
        Switch::Off => None,
        Switch::Prompt => Some(prompt_paragraph(hook, hook_md, now)),
        Switch::On => Some(full(hook, hook_md, max_chars, extras, now)),
    }
}

fn prompt_paragraph(hook: &Hook, hook_md: &Path, now: DateTime<Utc>) -> String {
    let step = hook
        .next_step()
        .map(|s| format!("step \"{}\" (attempt {})", s.name, next_attempt(hook, s)))
        .unwrap_or_else(|| "no step in progress".into());
    let crash = if hook.recovery.is_some() {
        " The previous session crashed."
    } else {
        ""
    };
    format!(
        "waymark has saved work for task {} ({}, last updated {} ago): {}.{} Before doing anything else, \
         ask the user whether to resume it; if they agree, read {} and follow its \"What To Do Now\".",
        hook.task_id,
        hook.state,
        ago(now, hook.updated_at),
        step,
        crash,
        hook_md.display()
    )
}

fn full(
    hook: &Hook,
    hook_md: &Path,
    max_chars: usize,
    extras: &Extras,
    now: DateTime<Utc>,
) -> String {
    let g = guidance(hook);
    let mut head = String::new();
    let _ = write!(head, "[waymark] Resume brief for task {}", hook.task_id);
    if let Some(i) = &hook.intent_id {
        let _ = write!(head, " (intent {i})");
    }
    if !extras.source.is_empty() {
        let _ = write!(head, " — session {}", extras.source);
    }
    head.push('\n');
    if let Some(r) = &hook.recovery {
        let _ = writeln!(
            head,
            "CRASH DETECTED ({}): {}. Recommended action: {}.",
            r.crash_type, r.reason, r.recommended_action
        );
    }
    match hook.last_checkpoint() {
        Some(c) => {
            let _ = writeln!(
                head,
                "Resumed from checkpoint: {} ({}, saved {} ago)",
                one_line(&truncate(&c.description, 160)),
                c.trigger.as_str(),
                ago(now, c.created_at)
            );
        }
        None => {
            let _ = writeln!(
                head,
                "No checkpoint yet for this task: resuming from its saved state."
            );
        }
    }

    let mut body = String::new();
    match (&hook.current_step, hook.next_step()) {
        (Some(c), _) => {
            let _ = writeln!(
                body,
                "State: {}. Step {} of {} \"{}\", attempt {} of {}{}.",
                hook.state,
                c.step_index + 1,
                hook.steps.len().max(c.step_index + 1),
                c.step_name,
                c.attempt,
                c.max_attempts,
                hook.find_step(&c.step_id)
                    .map(|s| next_attempt(hook, s))
                    .filter(|&n| n != c.attempt)
                    .map(|n| format!(" (resuming makes it attempt {n})"))
                    .unwrap_or_default()
            );
            if !c.files_touched.is_empty() {
                let _ = writeln!(
                    body,
                    "Files touched in this step: {}",
                    c.files_touched.join(", ")
                );
            }
        }
        (None, Some(s)) => {
            let _ = writeln!(
                body,
                "State: {}. Next step {} \"{}\" ({}).",
                hook.state,
                s.index + 1,
                s.name,
                s.status.as_str()
            );
        }
        (None, None) => {
            let _ = writeln!(body, "State: {}.", hook.state);
        }
    }
    if let Some(w) = hook.working_on() {
        let _ = writeln!(body, "Working on: {}", one_line(&truncate(w, 200)));
    }
    if let Some(w) = &extras.work_changed {
        let _ = writeln!(body, "{w}");
    }
    let _ = writeln!(body, "What to do now:");
    for (i, t) in g.todo.iter().enumerate() {
        let _ = writeln!(body, "{}. {t}", i + 1);
    }
    let done: Vec<_> = hook.completed_steps().collect();
    if !done.is_empty() {
        let _ = writeln!(body, "DO NOT REPEAT (completed):");
        for s in done {
            let receipts = if s.receipt_ids.is_empty() {
                String::new()
            } else {
                format!(" — receipts {}", s.receipt_ids.join(", "))
            };
            let _ = writeln!(body, "- step {} \"{}\"{receipts}", s.index + 1, s.name);
        }
    }
    let foot = format!("Full recovery file: {}", hook_md.display());
    let budget = max_chars.saturating_sub(head.chars().count() + foot.chars().count() + 1);
    if body.chars().count() > budget {
        body = truncate(&body, budget.saturating_sub(40));
        body.push_str("\n(brief cut: read HOOK.md for the rest)\n");
    }
    format!("{head}{body}{foot}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Hook {
        crate::task::testing::recorded_plan(Utc::now())
    }

    #[test]
    fn names_step_attempt_files_and_done_steps() {
        let b = render(
            &sample(),
            Switch::On,
            Path::new("/p/.orchestration/HOOK.md"),
            4000,
            &Extras::default(),
            Utc::now(),
        )
        .unwrap();
        assert!(
            b.contains("Step 2 of 3 \"Implement fix\", attempt 1 of 3"),
            "{b}"
        );
        assert!(b.contains("src/parser.rs"));
        assert!(b.contains("DO NOT REPEAT (completed):\n- step 1 \"Analyze parser\""));
        assert!(b.contains("No checkpoint yet"));
        assert!(b.ends_with("Full recovery file: /p/.orchestration/HOOK.md"));
    }

    #[test]
    fn modes_and_cap() {
        let h = sample();
        let p = Path::new("/p/HOOK.md");
        assert_eq!(
            render(&h, Switch::Off, p, 4000, &Extras::default(), Utc::now()),
            None
        );
        let prompt = render(&h, Switch::Prompt, p, 4000, &Extras::default(), Utc::now()).unwrap();
        assert!(prompt.contains("ask the user whether to resume"));
        let mut big = h.clone();
        for i in 0..500 {
            big.touch_file(&format!("src/file_{i}.rs"), Utc::now());
        }
        let b = render(&big, Switch::On, p, 1000, &Extras::default(), Utc::now()).unwrap();
        assert!(b.chars().count() <= 1000, "{}", b.chars().count());
        assert!(b.ends_with("Full recovery file: /p/HOOK.md"));
    }
}
