//! The resume brief: the short text injected at SessionStart that makes recovery work. An
//! agent that reads nothing else must be able to go on from it.
//!
//! It opens with the verdicts: a crash, a human needed (no attempt left), another session
//! working now. Then the task, the step and its attempt, what was being done, the files
//! touched and what changed since the last checkpoint, the last failed validation with the
//! lines that say why (and whether a later run passed), the side effects already done, the
//! intent and its unmet criteria, what to do now, the last completed steps as DO NOT
//! REPEAT (with receipt ids; the ones before them counted, HOOK.md lists them), and the
//! path of HOOK.md. A finished task is one line. It is capped
//! (`resume_brief_max_chars`, 4,000; Claude Code moves hook context over 10,000 characters
//! to a file), cutting the middle, never a verdict or the HOOK.md line.

use std::fmt::Write;
use std::path::Path;

use chrono::{DateTime, Utc};

use crate::config::Switch;
use crate::recovery::guidance::{
    Todo, conversation_rewound, exhausted, facts, guidance, rewound, what_was_asked,
};
use crate::task::outline::{number, numbered};
use crate::task::{Hook, Outline, Session, Step, StepContext, StepSource};
use crate::text::{ago, one_line, truncate};

/// Extra lines the caller knows and the hook does not.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Extras {
    /// "Changed before /clear, since the last checkpoint's commit: …" (verify_before_clear).
    pub work_changed: Option<String>,
    /// Why the brief is being given (`startup`, `resume`, `clear`, `compact`, `recover`).
    pub source: String,
    /// The other sessions working on the task right now (live: mid-turn, their process
    /// running).
    pub elsewhere: Vec<Session>,
    /// Tell the agent how to keep its plan with waymark (`plan_note`), when it has no plan
    /// from Claude Code's task list.
    pub plan_note: bool,
}

/// How an agent with no task-list tool keeps its plan (docs/plan.md): Claude Code 2.1.332
/// offers the default model no TaskCreate, TaskUpdate or TodoWrite, and the plugin's `bin/`
/// is on the Bash tool's PATH.
pub const PLAN_NOTE: &str = "[waymark] Keep your plan where a crash, /clear or compaction cannot lose it. \
If you have no task-list tool (TaskCreate, TodoWrite), record the plan from Bash as soon as you know the steps: \
`waymark plan \"first step\" \"second step\" …`; then run `waymark step start N` before step N and \
`waymark step done N` after it (`waymark plan` lists the numbers). The next session resumes from that plan.";

/// The reminder for a plan kept with `waymark plan`.
pub const PLAN_REMINDER: &str = "[waymark] Keep the plan current from Bash: `waymark step start N` before step N, \
`waymark step done N` after it; `waymark plan` lists it, `waymark plan \"another step\"` adds one.";

/// What a session is told about keeping its plan: the whole note while the task has no
/// plan (or there is no task), a reminder while its plan is kept with `waymark plan`, and
/// nothing once Claude Code's task list (or an intent) made the plan.
pub fn plan_note(hook: Option<&Hook>) -> Option<&'static str> {
    let Some(hook) = hook.filter(|h| !h.state.is_terminal()) else {
        return Some(PLAN_NOTE);
    };
    let mut planned = hook.steps.iter().filter(|s| numbered(s)).peekable();
    if planned.peek().is_none() {
        return Some(PLAN_NOTE);
    }
    planned
        .all(|s| s.source == StepSource::Manual)
        .then_some(PLAN_REMINDER)
}

/// The longest a verdict line may be: the verdicts are never cut from the brief, so each
/// is bounded instead.
const VERDICT: usize = 600;

pub fn render(
    hook: &Hook,
    mode: Switch,
    hook_md: &Path,
    max_chars: usize,
    extras: &Extras,
    now: DateTime<Utc>,
) -> Option<String> {
    // What the agent reads is built from inert strings only (`inert`): the one place.
    let hook = &*super::inert::view(hook);
    let extras = &super::inert::shown(extras).unwrap_or_else(|| extras.clone());
    let path = crate::text::inert(&hook_md.to_string_lossy(), false).into_owned();
    let hook_md = Path::new(&path);
    let note = || extras.plan_note.then(|| plan_note(Some(hook))).flatten();
    match mode {
        Switch::Off => note().map(str::to_string),
        Switch::Prompt => Some(
            prompt_paragraph(hook, hook_md, now)
                + &note().map(|n| format!("\n{n}")).unwrap_or_default(),
        ),
        Switch::On => Some(full(hook, hook_md, max_chars, extras, now)),
    }
}

fn prompt_paragraph(hook: &Hook, hook_md: &Path, now: DateTime<Utc>) -> String {
    let step = match hook.next_step() {
        _ if hook.unplanned() => "work with no plan kept".into(),
        Some(s) => format!("step \"{}\" (attempt {})", s.name, hook.next_attempt(s)),
        None => "no step in progress".into(),
    };
    let crash = hook
        .recovery
        .as_ref()
        .map_or("", |_| " The previous session crashed.");
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

/// The brief itself: the head (title, verdicts, the checkpoint resumed from) and the
/// HOOK.md line are never cut; the body between them is cut to the cap.
fn full(
    hook: &Hook,
    hook_md: &Path,
    max_chars: usize,
    extras: &Extras,
    now: DateTime<Utc>,
) -> String {
    let mut foot = format!("Full recovery file: {}", hook_md.display());
    // At HUMAN NEEDED the reminder ("`waymark step start N` before step N") would say
    // what the brief forbids: no reminder then.
    let note = extras
        .plan_note
        .then(|| plan_note(Some(hook)))
        .flatten()
        .filter(|_| hook.state.is_terminal() || exhausted(hook).is_none());
    if hook.state.is_terminal() {
        let note = note.map(|n| format!("\n{n}")).unwrap_or_default();
        return format!(
            "[waymark] Task {} is {}: nothing to resume. {foot}{note}",
            hook.task_id, hook.state
        );
    }
    if let Some(note) = note {
        foot = format!("{note}\n{foot}");
    }
    let outline = hook.outline();
    let todo = todo_left(hook, &outline, &extras.elsewhere);
    let head = head(hook, extras, now);
    let mut body = state(hook, &outline, &todo);
    body.push_str(&context(hook, extras, now));
    body.push_str("What to do now:\n");
    for (i, t) in todo.iter().enumerate() {
        let _ = writeln!(body, "{}. {}", i + 1, t.text);
    }
    body.push_str(&do_not_repeat(&outline));
    let budget = max_chars.saturating_sub(head.chars().count() + foot.chars().count() + 1);
    if body.chars().count() > budget {
        body = truncate(&body, budget.saturating_sub(40));
        body.push_str("\n(brief cut: read HOOK.md for the rest)\n");
    }
    format!("{head}{body}{foot}")
}

/// What to do now, less what hands the agent a step another session is working on: the
/// head tells it so instead.
fn todo_left(hook: &Hook, outline: &Outline, elsewhere: &[Session]) -> Vec<Todo> {
    let busy: Vec<&str> = elsewhere.iter().filter_map(|s| s.step.as_deref()).collect();
    let mut todo: Vec<Todo> = guidance(hook, outline)
        .todo
        .into_iter()
        .filter(|t| !t.step.as_deref().is_some_and(|s| busy.contains(&s)))
        .collect();
    // With the step to resume left to the session on it, what follows it is no longer
    // "then": it is what is left to do.
    if let Some(first) = todo.first_mut()
        && let Some(rest) = first.text.strip_prefix("Then: ")
    {
        first.text = format!("Steps still to do: {rest}");
    }
    if todo.is_empty() {
        todo.push("Nothing here is free to take: the other session is on it. Wait for it, or ask the user what to do meanwhile.".into());
    }
    todo
}

/// The head, never cut: the title, each verdict (bounded), and the checkpoint the task
/// resumes from.
fn head(hook: &Hook, extras: &Extras, now: DateTime<Utc>) -> String {
    let mut head = String::new();
    let _ = write!(head, "[waymark] Resume brief for task {}", hook.task_id);
    if let Some(i) = &hook.intent_id {
        let _ = write!(head, " (intent {i})");
    }
    if !extras.source.is_empty() {
        let _ = write!(head, " — session {}", extras.source);
    }
    head.push('\n');
    for line in verdicts(hook, &extras.elsewhere, now) {
        head.push_str(&truncate(&line, VERDICT));
        head.push('\n');
    }
    match hook.resume_checkpoint() {
        Some(c) => {
            let _ = writeln!(
                head,
                "Resumed from checkpoint: {} ({}, saved {} ago)",
                one_line(&truncate(&c.description, 160)),
                c.trigger.as_str(),
                ago(now, c.created_at)
            );
        }
        None => head.push_str("No checkpoint yet for this task: resuming from its saved state.\n"),
    }
    head
}

/// The verdicts, in the order they matter: a crash, a human needed, files or the
/// conversation rewound, and each other session working on the task now.
fn verdicts(hook: &Hook, elsewhere: &[Session], now: DateTime<Utc>) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(r) = &hook.recovery {
        let action = match exhausted(hook) {
            Some(_) => "none without the user (no attempt left)",
            None => r.recommended_action.as_str(),
        };
        lines.push(format!(
            "CRASH DETECTED ({}): {}. Recommended action: {action}.",
            r.crash_type, r.reason
        ));
    }
    if let Some((step, used, max)) = exhausted(hook) {
        lines.push(format!(
            "HUMAN NEEDED: step {} \"{}\" has used {used} of its {max} attempts; do not resume it without the user.",
            hook.number(step),
            step.name
        ));
    }
    lines.extend(rewound(hook, Some(now)));
    lines.extend(conversation_rewound(hook, Some(now)));
    lines.extend(elsewhere.iter().map(|s| working_elsewhere(hook, s, now)));
    lines
}

/// The verdict for another session at work: what it is on, so that the agent keeps off.
fn working_elsewhere(hook: &Hook, s: &Session, now: DateTime<Utc>) -> String {
    let on = match s.step.as_deref() {
        Some(n) if hook.unplanned() && n == crate::task::IMPLICIT_STEP => {
            "the user's request (no plan kept)".to_string()
        }
        Some(n) => format!("step \"{n}\""),
        None => "the task".into(),
    };
    let files = if s.files.is_empty() {
        String::new()
    } else {
        format!(", files {}", s.files.join(", "))
    };
    format!(
        "ANOTHER SESSION IS WORKING NOW: {} is on {on}{files} (last event {} ago). Do not take over that step or edit those files; pick other work or ask the user.",
        hook.session_name(&s.session_id),
        ago(now, s.last_event_at)
    )
}

/// The state line: the running step and its attempt, or the next step, or the state alone.
fn state(hook: &Hook, outline: &Outline, todo: &[Todo]) -> String {
    match (&hook.current_step, hook.next_step()) {
        (Some(c), step) => running_step(hook, c, step, outline, todo),
        (None, Some(s)) => format!(
            "State: {}. Next step {} \"{}\" ({}).\n",
            hook.state,
            hook.number(s),
            s.name,
            s.status.as_str()
        ),
        (None, None) => format!("State: {}.\n", hook.state),
    }
}

/// The running step `c`: which of the plan's steps, its attempt (and the one resuming
/// makes it), and the files it touched unless What to do now lists them.
fn running_step(
    hook: &Hook,
    c: &StepContext,
    step: Option<&Step>,
    outline: &Outline,
    todo: &[Todo],
) -> String {
    if hook.unplanned() {
        return format!(
            "State: {}. No plan was kept: the work is the user's request, not split into steps.\n",
            hook.state
        );
    }
    let mut body = String::new();
    let next = step.map(|s| hook.next_attempt(s)).unwrap_or(c.attempt);
    let resuming = match exhausted(hook).is_none() && next != c.attempt {
        true => format!(" (resuming makes it attempt {next} of {})", c.max_attempts),
        false => String::new(),
    };
    let _ = writeln!(
        body,
        "State: {}. Step {} of {} \"{}\", attempt {} of {}{resuming}.",
        hook.state,
        number(&hook.steps, c.step_index),
        outline.step_count.max(number(&hook.steps, c.step_index)),
        c.step_name,
        c.attempt,
        c.max_attempts,
    );
    // Listed once: "What to do now" lists them when it hands the agent this step.
    if !c.files_touched.is_empty() && !todo.iter().any(|t| t.lists_files) {
        let _ = writeln!(
            body,
            "Files touched in this step: {}",
            c.files_touched.join(", ")
        );
    }
    body
}

/// What the agent was doing and must know before it goes on: what changed since the last
/// checkpoint, what it worked on (or what the user asked), and the facts HOOK.md shares.
fn context(hook: &Hook, extras: &Extras, now: DateTime<Utc>) -> String {
    let mut body = String::new();
    if let Some(r) = &hook.recovery
        && let Some(changed) = r.changed_words()
    {
        let _ = writeln!(body, "Changed since {}: {changed}.", r.changed_since());
    }
    for (label, words) in what_was_asked(hook) {
        let _ = writeln!(body, "{label}: {}", one_line(&truncate(words, 200)));
    }
    if let Some(w) = &extras.work_changed {
        let _ = writeln!(body, "{w}");
    }
    for line in facts(hook, Some(now)) {
        let _ = writeln!(body, "{line}");
    }
    body
}

/// The last completed steps as DO NOT REPEAT, with their receipts; the ones before them
/// are counted (HOOK.md lists them). Nothing while no step is done.
fn do_not_repeat(outline: &Outline) -> String {
    if outline.done_count == 0 {
        return String::new();
    }
    let mut body = String::from("DO NOT REPEAT (completed):\n");
    if outline.done_earlier() > 0 {
        let _ = writeln!(
            body,
            "- {} before these (HOOK.md's Completed Steps lists every one)",
            crate::text::count(outline.done_earlier() as u64, "step")
        );
    }
    for s in &outline.done {
        let receipts = if s.receipt_ids.is_empty() {
            String::new()
        } else {
            format!(" — receipts {}", s.receipt_ids.join(", "))
        };
        let _ = writeln!(body, "- step {} \"{}\"{receipts}", s.number, s.name);
    }
    body
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
        // The step's files, once: "What to do now" hands them over with the step.
        assert_eq!(b.matches("src/parser.rs").count(), 1, "{b}");
        assert!(
            b.contains(
                "Files this step already changed (read them before editing again): src/parser.rs."
            ),
            "{b}"
        );
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

    /// The brief is cut only when it would pass `max_chars`: one character under the
    /// whole brief's length (with its line end) cuts it, its length does not.
    #[test]
    fn the_brief_is_cut_exactly_past_its_limit() {
        let (h, p, now) = (sample(), Path::new("/p/HOOK.md"), Utc::now());
        let at = |max| render(&h, Switch::On, p, max, &Extras::default(), now).unwrap();
        let whole = at(100_000);
        let fits = whole.chars().count() + 1;
        assert_eq!(at(fits), whole);
        let cut = at(fits - 1);
        assert!(
            cut.contains("(brief cut: read HOOK.md for the rest)"),
            "{cut}"
        );
        assert!(cut.chars().count() < fits, "{cut}");
    }

    /// The head names why the brief is given when there is a why, and the step's next
    /// attempt when resuming makes it a new one (after a crash).
    #[test]
    fn the_head_says_why_and_the_step_says_its_next_attempt() {
        let (p, now) = (Path::new("/p/HOOK.md"), Utc::now());
        let mut h = sample();
        let extras = Extras {
            source: "resume".into(),
            ..Extras::default()
        };
        let b = render(&h, Switch::On, p, 4000, &extras, now).unwrap();
        assert!(
            b.starts_with("[waymark] Resume brief for task task-1 — session resume\n"),
            "{b}"
        );
        let b = render(&h, Switch::On, p, 4000, &Extras::default(), now).unwrap();
        assert!(!b.contains(" — session"), "{b}");
        assert!(!b.contains("resuming makes it"), "{b}");
        h.state = crate::task::HookState::Recovering;
        let b = render(&h, Switch::On, p, 4000, &Extras::default(), now).unwrap();
        assert!(
            b.contains("attempt 1 of 3 (resuming makes it attempt 2 of 3)"),
            "{b}"
        );
    }

    /// A plan of a hundred steps: the brief names the next few and keeps what must not be
    /// repeated, rather than spending its length listing the whole plan and cutting the rest.
    #[test]
    fn a_long_plan_leaves_room_for_what_must_not_be_repeated() {
        let now = Utc::now();
        let mut h = sample();
        for i in 4..=113 {
            let name = format!("Step {i}: implement part {i}");
            h.add_step(
                &i.to_string(),
                &name,
                "",
                None,
                crate::task::StepSource::Task,
                now,
            );
        }
        let b = brief(&h, &Extras::default());
        assert!(!b.contains("brief cut"), "{b}");
        assert!(
            b.contains("\"Step 7: implement part 7\", and 106 more steps"),
            "{b}"
        );
        assert!(!b.contains("part 8\""), "{b}");
        assert!(
            b.contains("DO NOT REPEAT (completed):\n- step 1 \"Analyze parser\""),
            "{b}"
        );
    }

    /// Many steps done: the brief names the last ten and counts the rest, which HOOK.md
    /// lists, so that what to do now is never cut for a list of what is done.
    #[test]
    fn a_long_plan_done_names_the_last_steps_done_and_counts_the_others() {
        let now = Utc::now();
        let mut h = sample();
        for i in 4..=30 {
            let (id, name) = (i.to_string(), format!("Part {i}"));
            h.add_step(&id, &name, "", None, crate::task::StepSource::Task, now);
            if i <= 20 {
                h.steps[i - 1].status = crate::task::StepStatus::Completed;
            }
        }
        let b = brief(&h, &Extras::default());
        assert!(
            b.contains(
                "DO NOT REPEAT (completed):\n- 8 steps before these (HOOK.md's Completed Steps lists every one)\n- step 11 \"Part 11\""
            ),
            "{b}"
        );
        assert!(
            b.contains("- step 20 \"Part 20\"") && !b.contains("Analyze parser\""),
            "{b}"
        );
        let md = crate::recovery::hookmd::render(&h);
        assert!(
            md.contains("Do not repeat any of the 8 steps completed before these"),
            "{md}"
        );
        assert!(
            md.contains("| 1 | Analyze parser |"),
            "HOOK.md's table lists every one: {md}"
        );
    }

    fn brief(h: &Hook, extras: &Extras) -> String {
        render(
            h,
            Switch::On,
            Path::new("/p/HOOK.md"),
            4000,
            extras,
            Utc::now(),
        )
        .unwrap()
    }

    /// When the decision is `retry_from_checkpoint`, the work since the checkpoint is
    /// kept: the brief and HOOK.md never offer a rewind to it (it would delete the work
    /// the step resumes with), and name the diff where the checkpoint has a snapshot.
    #[test]
    fn a_retry_from_a_checkpoint_keeps_the_work_since_it() {
        let mut h = sample();
        let at = Utc::now().to_rfc3339();
        h.recovery = Some(
            serde_json::from_value(serde_json::json!({
                "detected_at": at, "crash_type": "signal", "last_known_state": "step_running",
                "recommended_action": "retry_from_checkpoint", "reason": "the step changes files",
                "last_checkpoint_id": "ckpt-0000beef",
            }))
            .unwrap(),
        );
        let checkpoint = |branch: &str| {
            serde_json::from_value(serde_json::json!({
                "checkpoint_id": "ckpt-0000beef", "created_at": at, "description": "tests passed",
                "trigger": "validation", "git_branch": branch,
            }))
            .unwrap()
        };
        let keep = "Resume from checkpoint ckpt-0000beef: keep the work done since it and go on";
        let diff = "; `waymark diff ckpt-0000beef` shows exactly what changed since.";
        h.recent_checkpoints = vec![checkpoint("main")];
        let b = brief(&h, &Extras::default());
        let md = crate::recovery::hookmd::render(&h);
        for text in [&b, &md] {
            assert!(text.contains(&format!("{keep}{diff}")), "{text}");
            assert!(!text.contains("waymark rewind"), "{text}");
        }
        h.recent_checkpoints = vec![checkpoint("")];
        let b = brief(&h, &Extras::default());
        assert!(b.contains(&format!("{keep}.")), "{b}");
        assert!(
            !b.contains("waymark diff") && !b.contains("waymark rewind"),
            "{b}"
        );
    }

    fn failure(command: &str, receipt: &str, output: &str) -> crate::task::FailedValidation {
        crate::task::FailedValidation {
            receipt_id: receipt.into(),
            command: command.into(),
            exit_code: 101,
            at: Utc::now(),
            step: "Implement fix".into(),
            output: output.into(),
            passed_later: None,
        }
    }

    #[test]
    fn a_failed_validation_is_told_with_why_and_whether_it_passed_since() {
        let mut h = sample();
        let f = failure(
            "cargo test",
            "rcpt-1",
            "test parser::nil ... FAILED\nassertion failed: left == right",
        );
        h.last_failure = Some(f.clone());
        h.current_step.as_mut().unwrap().last_failure = Some(f);
        let b = brief(&h, &Extras::default());
        assert!(
            b.contains("Last failed validation (step \"Implement fix\"): `cargo test` exited 101"),
            "{b}"
        );
        assert!(b.contains("it has not passed since"), "{b}");
        assert!(b.contains("  | assertion failed: left == right"), "{b}");
        // Told once when the task's and the step's are the same failure.
        assert_eq!(b.matches("Last failed validation").count(), 1, "{b}");
        h.last_failure.as_mut().unwrap().passed_later = Some(crate::task::LaterPass {
            receipt_id: "rcpt-2".into(),
            at: Utc::now(),
        });
        h.current_step.as_mut().unwrap().last_failure = None;
        let b = brief(&h, &Extras::default());
        assert!(b.contains("a later run passed (rcpt-2"), "{b}");
        assert!(
            !b.contains("assertion failed"),
            "the output of a fixed failure is noise: {b}"
        );
    }

    #[test]
    fn no_attempt_left_means_a_human_is_needed_never_attempt_3_of_2() {
        let now = Utc::now();
        let mut h = crate::task::testing::running("Implement fix", &["src/a.rs"], now);
        h.current_step.as_mut().unwrap().max_attempts = 2;
        h.steps[0].attempt = 2;
        h.current_step.as_mut().unwrap().attempt = 2;
        h.transition(
            crate::task::HookState::Recovering,
            crate::task::machine::CRASH_DETECTED,
            now,
        )
        .unwrap();
        let b = brief(&h, &Extras::default());
        assert!(
            b.contains("HUMAN NEEDED: step 1 \"Implement fix\" has used 2 of its 2 attempts"),
            "{b}"
        );
        assert!(b.contains("A human is needed"), "{b}");
        assert!(
            !b.contains("attempt 3 of 2") && !b.contains("Resume step"),
            "{b}"
        );
    }

    /// Another session, live, on `step` with `file`.
    fn working(id: &str, step: &str, file: &str) -> crate::task::Session {
        let mut s =
            crate::task::Session::new(id, None, crate::task::SessionStatus::Active, Utc::now());
        s.step = Some(step.into());
        s.files = vec![file.into()];
        s
    }

    #[test]
    fn the_intent_side_effects_and_sessions_at_work_are_told() {
        let mut h = sample();
        h.intent_id = Some("INT-7".into());
        h.intent = Some(crate::task::IntentBrief {
            id: "INT-7".into(),
            name: "Nil-safe parser".into(),
            status: "IN_PROGRESS".into(),
            owned_scope: vec!["src/parser/**".into()],
            constraints: vec!["no new dependencies".into()],
            unmet: vec!["tests pass".into()],
            criteria: 2,
        });
        h.note_side_effect("git push origin main", 0, Utc::now());
        let mut other = working("beefcafe1234", "Implement fix", "src/parser.rs");
        let extras = Extras {
            elsewhere: vec![other.clone()],
            ..Extras::default()
        };
        let b = brief(&h, &extras);
        assert!(b.contains("Intent INT-7 \"Nil-safe parser\" (IN_PROGRESS): owned scope src/parser/**; constraints: no new dependencies; acceptance criteria not met yet (1 of 2): tests pass."), "{b}");
        assert!(b.contains("`git push origin main` (done"), "{b}");
        assert!(b.contains("ANOTHER SESSION IS WORKING NOW: Claude Code session beefcafe is on step \"Implement fix\", files src/parser.rs"), "{b}");
        assert!(
            !b.contains("Resume step 2 \"Implement fix\"")
                && !b.contains("Files this step already changed"),
            "not told to take it over: {b}"
        );
        // What follows the other session's step is what is left, not a "Then".
        assert!(
            b.contains("What to do now:\n1. Steps still to do: \"Validate\"."),
            "{b}"
        );
        // Still told which files the step touched, where the state is.
        assert!(
            b.contains("Files touched in this step: src/parser.rs"),
            "{b}"
        );
        let alone = brief(&h, &Extras::default());
        assert!(
            alone.contains("Resume step 2 \"Implement fix\"")
                && alone.contains("Files this step already changed"),
            "{alone}"
        );
        other.step = None;
        let b = brief(
            &h,
            &Extras {
                elsewhere: vec![other],
                ..Extras::default()
            },
        );
        assert!(b.contains("session beefcafe is on the task"), "{b}");
    }

    /// On Claude Code 2.1.332 the agent has no task list: a brief with no plan says what
    /// the user asked and how to keep a plan; a plan kept with `waymark plan` is reminded;
    /// one from Claude Code's task list is not.
    #[test]
    fn without_a_task_list_the_brief_names_the_request_and_how_to_keep_a_plan() {
        let now = Utc::now();
        let mut h = Hook::new("t", "w", 0, now);
        h.note_request("add a nil-safe parser".into());
        h.ensure_running(3, now).unwrap();
        h.touch_file("src/parser.rs", now);
        let with_note = Extras {
            plan_note: true,
            ..Extras::default()
        };
        let b = brief(&h, &with_note);
        // The catch-all is no step: no "step 1 of 1", no attempts to count.
        assert!(
            b.contains("No plan was kept: the work is the user's request, not split into steps."),
            "{b}"
        );
        for step_words in ["Session work", "attempt", "Step 1"] {
            assert!(!b.contains(step_words), "{step_words}: {b}");
        }
        assert!(b.contains("The task: add a nil-safe parser"), "{b}");
        assert!(!b.contains("The latest request"), "{b}");
        assert!(
            b.contains("Go on with the user's request (quoted above): no plan was kept"),
            "{b}"
        );
        assert!(
            b.contains("Files changed so far (read them before editing again): src/parser.rs."),
            "{b}"
        );
        assert!(b.contains(PLAN_NOTE) && !b.contains("Working on:"), "{b}");
        assert!(!brief(&h, &Extras::default()).contains(PLAN_NOTE));
        // HOOK.md says the same: no task list to keep, the work so far in the files.
        let md = crate::recovery::hookmd::render(&h);
        assert!(md.contains("Do not start the user's request over"), "{md}");
        assert!(!md.contains("re-create the task list"), "{md}");
        // "carry on" asks for nothing new: the goal stays the account of the task.
        h.note_request("carry on".into());
        let b = brief(&h, &with_note);
        assert!(b.contains("The task: add a nil-safe parser") && !b.contains("carry on"));
        let names: Vec<String> = ["Write the parser".to_string()].into();
        h.plan(&names, crate::task::StepSource::Manual, now);
        let b = brief(&h, &with_note);
        assert!(b.contains(PLAN_REMINDER) && !b.contains(PLAN_NOTE), "{b}");
        assert!(b.ends_with("Full recovery file: /p/HOOK.md"), "{b}");
        let tasks = sample();
        assert_eq!(plan_note(Some(&tasks)), None);
        assert_eq!(plan_note(None), Some(PLAN_NOTE));
        let off = render(
            &h,
            Switch::Off,
            Path::new("/p/HOOK.md"),
            4000,
            &with_note,
            now,
        );
        assert_eq!(
            off.as_deref(),
            Some(PLAN_REMINDER),
            "the note without the brief"
        );
    }

    #[test]
    fn a_finished_task_is_one_line() {
        let mut h = sample();
        h.finish(crate::task::HookState::Abandoned, Utc::now())
            .unwrap();
        let b = brief(&h, &Extras::default());
        assert_eq!(b.lines().count(), 1, "{b}");
        assert!(b.contains("is abandoned: nothing to resume"), "{b}");
    }

    /// A step name is not a goal, nor is "continue": with a plan, the brief and HOOK.md
    /// name the task (the request that began it) beside the step's words, and the latest
    /// request only when it says something new.
    #[test]
    fn the_goal_is_named_beside_the_plan_after_continue() {
        let mut h = sample();
        h.note_request("please make the parser nil-safe".into());
        h.note_request("continue".into());
        let b = brief(&h, &Extras::default());
        assert!(b.contains("Working on: "), "{b}");
        assert!(
            b.contains("The task: please make the parser nil-safe"),
            "{b}"
        );
        assert!(
            !b.contains("continue") && !b.contains("The latest request"),
            "{b}"
        );
        let md = crate::recovery::hookmd::render(&h);
        assert!(
            md.contains("- **The task:** please make the parser nil-safe"),
            "{md}"
        );
        h.note_request("also keep the old API".into());
        let b = brief(&h, &Extras::default());
        assert!(
            b.contains("The latest request: also keep the old API"),
            "{b}"
        );
        h.current_step = None;
        let b = brief(&h, &Extras::default());
        assert!(b.contains("The task: please make"), "{b}");
    }

    #[test]
    fn every_verdict_and_the_hook_md_line_survive_the_cap() {
        let mut h = sample();
        for i in 0..400 {
            h.touch_file(&format!("src/generated/module_{i}.rs"), Utc::now());
        }
        h.last_failure = Some(failure(&"x".repeat(5000), "rcpt-9", &"why\n".repeat(100)));
        let sessions: Vec<crate::task::Session> = (0..3)
            .map(|i| working(&format!("s{i}-0000000"), &"y".repeat(900), &"z".repeat(900)))
            .collect();
        let b = brief(
            &h,
            &Extras {
                elsewhere: sessions,
                ..Extras::default()
            },
        );
        assert!(b.chars().count() <= 4000, "{}", b.chars().count());
        assert_eq!(b.matches("ANOTHER SESSION IS WORKING NOW").count(), 3);
        assert!(b.ends_with("Full recovery file: /p/HOOK.md"), "{b}");
    }
}
