//! "What to do now" and "DO NOT", and the facts a resuming agent must not have to dig for
//! (the last failed validation, the side effects already done, the intent, whether a human
//! is needed): what HOOK.md and the resume brief share. Derived from the hook alone, so both
//! always say the same thing.

use crate::task::{
    FailedValidation, Hook, HookState, IntentBrief, Outline, RecoveryContext, Step, StepSource,
    StepStatus,
};
use crate::text::{ago, one_line, truncate, when};
use chrono::{DateTime, Utc};

/// The instructions for the agent reading the recovery file.
#[derive(Debug, Clone, PartialEq)]
pub struct Guidance {
    pub todo: Vec<Todo>,
    pub do_not: Vec<String>,
}

/// One thing to do, and the step it hands the agent (by name, as a session records the
/// step it works on): what a brief leaves out when another session is working on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Todo {
    pub text: String,
    pub step: Option<String>,
    /// It lists the files the running step touched (a brief then does not list them again).
    pub lists_files: bool,
}

impl From<String> for Todo {
    fn from(text: String) -> Todo {
        Todo {
            text,
            step: None,
            lists_files: false,
        }
    }
}

impl From<&str> for Todo {
    fn from(text: &str) -> Todo {
        text.to_string().into()
    }
}

/// "Then: …": the pending steps after `resume`, the first few by name.
fn then(outline: &Outline, resume: Option<&Step>) -> Option<String> {
    let then = outline.then(resume)?;
    let named = quoted(&then.named);
    Some(match then.more {
        0 => format!("Then: {named}."),
        n => format!(
            "Then: {named}, and {n} more step{} (HOOK.md's Step Plan lists them).",
            if n == 1 { "" } else { "s" }
        ),
    })
}

/// The attempts the step to resume has left: `Some((step, used, max))` when the next
/// attempt would be past `max_attempts` (after crashes, failed validations, or both), so
/// a human must decide; in `recovering` as much as in `awaiting_human`.
pub fn exhausted(hook: &Hook) -> Option<(&Step, u32, u32)> {
    let step = hook
        .next_step()
        .filter(|s| s.source != StepSource::Implicit)?;
    let max = hook.attempts_allowed(step);
    let next = hook.next_attempt(step);
    (next > max || hook.state == HookState::AwaitingHuman).then_some((step, step.attempt, max))
}

/// The last rewind, while it is news: which checkpoint, which files, how to undo it.
pub fn rewound(hook: &Hook, now: Option<DateTime<Utc>>) -> Option<String> {
    let r = hook.rewound.as_ref()?;
    let mut line = format!(
        "FILES REWOUND {} to checkpoint {}: the work after it is undone on disk, on purpose; go on from there.",
        when(now, r.at),
        r.checkpoint_id
    );
    for (what, files) in [("Restored", &r.restored), ("Deleted", &r.deleted)] {
        if !files.is_empty() {
            line.push_str(&format!(" {what}: {}.", some_of(files, 8)));
        }
    }
    if let Some(undo) = &r.undo {
        line.push_str(&format!(
            " Do not redo the undone work unless the user asks; `waymark rewind {undo}` puts it back."
        ));
    }
    Some(line)
}

/// Claude Code's conversation was rewound (/rewind): to when, what of the plan it undid,
/// and the checkpoint whose `waymark rewind` puts the files back too (restoring the
/// conversation leaves them; "restore code" restores only what Write and Edit changed).
pub fn conversation_rewound(hook: &Hook, now: Option<DateTime<Utc>>) -> Option<String> {
    let r = hook.conversation_rewound.as_ref()?;
    let to = match r.to {
        Some(t) => format!(
            "to {} ({} before waymark noticed)",
            crate::text::stamp(t),
            ago(r.at, t)
        ),
        None => "to its start".to_string(),
    };
    let mut line = format!(
        "CONVERSATION REWOUND {} {to} (Claude Code's /rewind): ",
        when(now, r.at)
    );
    if r.plan_unknown {
        line.push_str("waymark has no record of the plan at that point, so it is as it was; check it (`waymark plan`).");
    } else if r.reopened.is_empty() && r.dropped.is_empty() {
        line.push_str("the plan had not changed since.");
    } else {
        line.push_str("the plan is back as it was then:");
        let undone = [
            ("no longer done or started", &r.reopened),
            ("planned after it, removed", &r.dropped),
        ];
        for (what, names) in undone.into_iter().filter(|(_, n)| !n.is_empty()) {
            line.push_str(&format!(" {what}: {};", quoted(names)));
        }
        line.pop();
        line.push('.');
    }
    match &r.checkpoint {
        Some((id, at)) => line.push_str(&format!(
            " Files are not rewound with the conversation: checkpoint {id} (saved {}) matches that point; `waymark diff {id}` shows what changed since, and `waymark rewind {id}` puts every file back as it was then, what Bash changed included.",
            crate::text::stamp(*at)
        )),
        None => line.push_str(" Files are not rewound with the conversation, and no checkpoint predates that point: check the files the steps touched."),
    }
    Some(line)
}

/// `"a", "b", "c"` (at most 8, then how many more).
fn quoted(names: &[impl std::fmt::Display]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    some_of(&q, 8)
}

/// What the work is for and what it is now, in the words that say it: the task (the
/// request that began it), the running step's words, and the latest request when it says
/// something new. A step name is not a goal, nor is "continue": the next agent needs all
/// three.
pub fn what_was_asked(hook: &Hook) -> Vec<(&'static str, &str)> {
    let mut lines = Vec::new();
    let working_on = hook
        .current_step
        .as_ref()
        .map(|c| c.working_on.as_str())
        .filter(|w| !w.is_empty());
    // With no plan, the work is its request: the implicit step's words are the goal's.
    let goal = hook
        .goal
        .as_deref()
        .or(working_on.filter(|_| hook.unplanned()));
    if let Some(g) = goal {
        lines.push(("The task", g));
    }
    if let Some(w) = working_on.filter(|w| !hook.unplanned() && goal != Some(*w)) {
        lines.push(("Working on", w));
    }
    if let Some(p) = hook.news().filter(|p| goal != Some(*p)) {
        lines.push(("The latest request", p));
    }
    lines
}

/// One line per thing the agent must know before it goes on, in the order it matters: the
/// last failed validation (the task's, and the step's when it is another), the side effects
/// the step already had, the intent.
pub fn facts(hook: &Hook, now: Option<DateTime<Utc>>) -> Vec<String> {
    let mut lines = failures(hook, now);
    lines.extend(side_effects(hook, now));
    lines.extend(session_facts(hook, now));
    lines.extend(hook.intent.as_ref().map(intent));
    lines
}

/// The task's last failed validation, and the running step's when it is another one.
fn failures(hook: &Hook, now: Option<DateTime<Utc>>) -> Vec<String> {
    let completed = |f: &FailedValidation| {
        !f.step.is_empty() && hook.completed_steps().any(|s| s.name == f.step)
    };
    let task = hook.last_failure.as_ref();
    let step = hook
        .current_step
        .as_ref()
        .and_then(|c| c.last_failure.as_ref())
        .filter(|s| task.is_none_or(|t| t.receipt_id != s.receipt_id));
    let failures = task.into_iter().chain(step);
    failures.map(|f| failure(f, completed(f), now)).collect()
}

/// One failed validation: what ran, how it ended, whether a later run passed, and while
/// it has not (and its step is not completed since), the lines of output that say why.
fn failure(f: &FailedValidation, step_done: bool, now: Option<DateTime<Utc>>) -> String {
    let after = match &f.passed_later {
        Some(p) => format!(
            "a later run passed ({}, {}): the failure is fixed",
            p.receipt_id,
            when(now, p.at)
        ),
        // The step is under DO NOT REPEAT: nothing to fix or run again for it.
        None if step_done => {
            "its step was marked completed since, so it is not to be fixed or run again unless the user asks".into()
        }
        None => "it has not passed since: fix what the output says, then run it again".into(),
    };
    let open = f.passed_later.is_none() && !step_done;
    // Work with no plan has no step to name (`step` is empty then).
    let step = match f.step.as_str() {
        "" => String::new(),
        s => format!(" (step \"{s}\")"),
    };
    let mut line = format!(
        "Last failed validation{step}: `{}` exited {} {} ({}); {}.",
        one_line(&truncate(&f.command, 120)),
        f.exit_code,
        when(now, f.at),
        f.receipt_id,
        after
    );
    if open && !f.output.is_empty() {
        line.push_str(" Its output ended:");
        for l in f.output.lines() {
            line.push_str("\n  | ");
            line.push_str(l);
        }
    }
    line
}

/// The side effects the running step already had (a push, a deploy) and how each ended.
fn side_effects(hook: &Hook, now: Option<DateTime<Utc>>) -> Option<String> {
    let c = hook
        .current_step
        .as_ref()
        .filter(|c| !c.side_effects.is_empty())?;
    let done: Vec<String> = c
        .side_effects
        .iter()
        .map(|e| {
            let outcome = if e.unknown && e.checked {
                "it was running when the session ended; checked since, so run it again only if the check showed it did not land".to_string()
            } else if e.unknown {
                "outcome unknown: it was running when the session ended".to_string()
            } else if e.exit_code == 0 {
                "done".to_string()
            } else {
                format!("failed, exit {}", e.exit_code)
            };
            format!(
                "`{}` ({outcome}, {})",
                one_line(&truncate(&e.command, 100)),
                when(now, e.at)
            )
        })
        .collect();
    Some(format!(
        "Side effects this step already had (do not repeat what is done): {}.",
        done.join("; ")
    ))
}

/// The task's intent: its scope, its constraints and the acceptance criteria not met yet.
fn intent(i: &IntentBrief) -> String {
    let mut line = format!("Intent {} \"{}\" ({})", i.id, i.name, i.status);
    if !i.owned_scope.is_empty() {
        line.push_str(&format!(": owned scope {}", i.owned_scope.join(", ")));
    }
    if !i.constraints.is_empty() {
        line.push_str(&format!("; constraints: {}", i.constraints.join("; ")));
    }
    match (i.unmet.len(), i.criteria) {
        (_, 0) => {}
        (0, n) => line.push_str(&format!("; all {n} acceptance criteria are met")),
        (_, n) => line.push_str(&format!(
            "; acceptance criteria not met yet ({} of {n}): {}",
            i.unmet.len(),
            i.unmet.join("; ")
        )),
    }
    line.push('.');
    line
}

/// What the sessions left that the next one must know: a last turn that failed on an API
/// error (stopped, not crashed), and of the session that crashed (else the last one) where
/// it worked, what it was waiting for from the user and the subagents it had running.
fn session_facts(hook: &Hook, now: Option<DateTime<Utc>>) -> Vec<String> {
    let mut lines = Vec::new();
    for s in &hook.sessions {
        if let Some(f) = &s.failed_turn {
            lines.push(format!(
                "{}'s last turn ended on {} {}: {}. It stopped there, it did not crash: go on from the step below.",
                hook.session_name(&s.session_id),
                f.described(),
                when(now, f.at),
                f.message
            ));
        }
    }
    let crashed = hook.recovery.as_ref().and_then(|r| r.session_id.as_deref());
    let Some(s) = (match crashed {
        Some(id) => hook.sessions.iter().find(|s| s.session_id == id),
        None => hook.session(),
    }) else {
        return lines;
    };
    let who = hook.session_name(&s.session_id);
    if let Some(cwd) = &s.cwd {
        lines.push(format!(
            "{who} was working in {cwd}, not the project root: go on there."
        ));
    }
    if crashed.is_some()
        && let Some(w) = &s.waiting_for
    {
        lines.push(format!(
            "{who} was waiting for the user's {w} when it ended."
        ));
    }
    if crashed.is_some() && !s.agents.is_empty() {
        lines.push(format!(
            "{who} had subagents running when it ended ({}): their work may be unfinished.",
            s.agents.join(", ")
        ));
    }
    lines
}

/// What to do now and what not to, for `hook` with its plan's `outline`.
pub fn guidance(hook: &Hook, outline: &Outline) -> Guidance {
    let mut todo: Vec<Todo> = Vec::new();
    match hook.state {
        HookState::Completed => todo.push(format!("Task {} is completed. Nothing to resume; start new work as a new task.", hook.task_id).into()),
        HookState::Failed | HookState::Abandoned => todo.push(format!(
            "Task {} was {}. Do not resume it unless the user asks; `waymark task start` begins a new one.",
            hook.task_id, hook.state
        ).into()),
        _ => {
            if let Some(rec) = &hook.recovery {
                todo.extend(recovery_todo(hook, rec));
            }
            let resumed = step_todo(hook, outline, &mut todo);
            todo.extend(then(outline, resumed).map(Todo::from));
        }
    }
    Guidance {
        todo,
        do_not: do_not(hook, outline),
    }
}

/// After a crash: the recommended action and why, the interrupted validation to run
/// again, and the files that changed since the last checkpoint.
fn recovery_todo(hook: &Hook, rec: &RecoveryContext) -> Vec<Todo> {
    let action = match rec.recommended_action.as_str() {
        // Never a rewind here: the step's work since the checkpoint is what the rest of
        // the brief tells the agent to keep and build on (a rewind would delete it).
        "retry_from_checkpoint" => match rec.last_checkpoint_id.as_deref() {
            Some(id) => {
                // A checkpoint taken in git has a snapshot to compare with.
                let snapshot = hook
                    .recent_checkpoints
                    .iter()
                    .any(|c| c.checkpoint_id == id && !c.git_branch.is_empty());
                let diff = if snapshot {
                    format!("; `waymark diff {id}` shows exactly what changed since")
                } else {
                    String::new()
                };
                format!("Resume from checkpoint {id}: keep the work done since it and go on{diff}.")
            }
            None => "Resume from the task's saved state: keep the work done so far and go on.".to_string(),
        },
        "retry_step" => "Retry the interrupted step from its beginning: it is safe to repeat.".to_string(),
        "skip_step" => "The step was finishing when the session ended: verify its result, mark it completed, and go on to the next step.".to_string(),
        _ if hook.unplanned() => "Review what the work changed before going on (the files listed, `git status`): its state is uncertain. Ask the user if unsure.".to_string(),
        _ => "Review the files the step touched before going on: the step changes files and its state is uncertain. Ask the user if unsure.".to_string(),
    };
    // The reason is said once, where the crash is (the brief's CRASH line, HOOK.md's state).
    // With no attempt left, the one thing to do is to ask (HUMAN NEEDED): no line says to
    // go on.
    let mut todo: Vec<Todo> = Vec::new();
    if exhausted(hook).is_none() {
        todo.push(format!("Recovery: {action}").into());
    }
    if rec.was_validating
        && let Some(cmd) = &rec.validation_cmd
    {
        todo.push(format!("Re-run the interrupted validation: `{cmd}`.").into());
    }
    let interrupted = hook
        .current_step
        .iter()
        .flat_map(|c| &c.side_effects)
        .filter(|e| e.unknown && !e.checked);
    for e in interrupted {
        todo.push(format!(
            "`{}` was running when the session ended: whether it took effect is unknown. {} Run it again only if it did not.",
            one_line(&truncate(&e.command, 200)),
            super::repeat::how_to_check(&e.command)
        ).into());
    }
    for w in &rec.file_warnings {
        todo.push(format!("Check {w}: it changed since the last checkpoint.").into());
    }
    if !rec.withheld.is_empty() {
        todo.push(format!(
            "Left out of the last checkpoint's snapshot (waymark kept only a SHA-256 of each, and a rewind leaves them as they are): {}.",
            rec.withheld.join(", ")
        ).into());
    }
    todo
}

/// What to do with the step to resume: ask a human when it has no attempt left, else
/// resume or start it; with none, finish the task or go on with the user's request.
/// Returns the step resumed.
fn step_todo<'h>(hook: &'h Hook, outline: &Outline, todo: &mut Vec<Todo>) -> Option<&'h Step> {
    match hook.next_step() {
        Some(step) if exhausted(hook).is_some() => {
            let (n, id) = (hook.number(step), crate::shell::quote(&step.id));
            todo.push(format!(
                "A human is needed: step {n} \"{}\" has used {} of its {} attempts. Do not resume it: tell the user what failed (below) and ask which way out they choose: one more attempt (`waymark step retry {id}`, once they say so), the step settled by hand (`waymark step done {id}`), or a changed plan.",
                step.name,
                step.attempt,
                hook.attempts_allowed(step)
            ).into());
            None
        }
        Some(step) => {
            todo.extend(resume_step(hook, step));
            Some(step)
        }
        None if outline.all_completed => {
            todo.push("Every step is completed: verify the result, then finish the task (`waymark task done`).".into());
            None
        }
        None => {
            todo.push("No step is planned: continue with the user's request.".into());
            None
        }
    }
}

/// Resume (or start) `step` as its next attempt, and read the files it already changed
/// first; both hand the agent that step.
fn resume_step(hook: &Hook, step: &Step) -> Vec<Todo> {
    let attempt = hook.next_attempt(step);
    let verb = if step.status == StepStatus::InProgress {
        "Resume"
    } else {
        "Start"
    };
    let about = |text| Todo {
        text,
        step: Some(step.name.clone()),
        lists_files: false,
    };
    let of = hook.attempts_allowed(step).max(attempt);
    let mut todo = vec![about(if step.source == StepSource::Implicit {
        match hook.current_step.as_ref().is_some_and(|c| !c.files_touched.is_empty()) {
            true => "Go on with the user's request (quoted above): no plan was kept, so the work so far is the files listed, not a step.",
            false => "Go on with the user's request (quoted above): no plan was kept, and no file is recorded as changed yet.",
        }
        .to_string()
    } else {
        format!(
            "{verb} step {} \"{}\" (attempt {attempt} of {of}).",
            hook.number(step),
            step.name,
        )
    })];
    let running = hook.current_step.as_ref().filter(|c| c.step_id == step.id);
    if let Some(ctx) = running.filter(|c| !c.files_touched.is_empty()) {
        todo.push(Todo {
            lists_files: true,
            ..about(format!(
                "Files {} (read them before editing again): {}.",
                match step.source {
                    StepSource::Implicit => "changed so far",
                    _ => "this step already changed",
                },
                ctx.files_touched.join(", ")
            ))
        });
    }
    todo
}

/// DO NOT: repeat a completed step (the ones before the last few counted), start over,
/// or discard uncommitted changes.
fn do_not(hook: &Hook, outline: &Outline) -> Vec<String> {
    let mut do_not = Vec::new();
    // A long plan's completed steps are named in full once, in the Completed Steps table.
    if outline.done_earlier() > 0 {
        do_not.push(format!(
            "Do not repeat any of the {} completed before these (Completed Steps lists every one).",
            crate::text::count(outline.done_earlier() as u64, "step")
        ));
    }
    for s in &outline.done {
        do_not.push(format!(
            "Do not repeat step {} \"{}\": it is completed.",
            s.number, s.name
        ));
    }
    if !hook.state.is_terminal() {
        // With no plan recorded there is no task list to re-create: the work so far is
        // the files the implicit step touched.
        let start_over = match hook.steps.iter().all(|s| s.source == StepSource::Implicit) {
            true => "Do not start the user's request over: the work so far is in the files listed.",
            false => "Do not start over or re-create the task list: it is below.",
        };
        do_not.push(start_over.into());
        do_not.push(
            "Do not discard uncommitted changes without checking them against the files listed."
                .into(),
        );
    }
    do_not
}

/// `a, b, c` or `a, b, … and 3 more`.
fn some_of(items: &[String], max: usize) -> String {
    match items.len().checked_sub(max) {
        Some(more) if more > 0 => format!("{} and {more} more", items[..max].join(", ")),
        _ => items.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{ConversationRewind, FailedTurn, Rewound, Session, SessionStatus};
    use chrono::{Duration, TimeZone, Utc};

    /// 2026-03-01T12:00:00Z: what the texts of HOOK.md (no "ago" in them) say it is.
    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    fn texts(g: &Guidance) -> Vec<&str> {
        g.todo.iter().map(|t| t.text.as_str()).collect()
    }

    /// The recorded plan after a crash whose recommended action was `action`.
    fn crashed(action: &str) -> Hook {
        let mut h = crate::task::testing::recorded_plan(t0());
        h.recovery = Some(RecoveryContext {
            detected_at: t0(),
            crash_type: "signal".into(),
            last_known_state: HookState::StepRunning,
            was_validating: false,
            validation_cmd: Some("cargo test".into()),
            partial_output: None,
            recommended_action: action.into(),
            reason: "the step changes files".into(),
            last_checkpoint_id: None,
            file_warnings: vec!["src/parser.rs".into()],
            withheld: Vec::new(),
            session_id: Some("bbbbbbbb2222".into()),
            changed: None,
            changed_files: Vec::new(),
            told: None,
        });
        h
    }

    #[test]
    fn files_left_out_of_the_snapshot_are_named_with_why() {
        let mut h = crashed("retry_step");
        h.recovery.as_mut().unwrap().withheld = names(&[
            "`.env.local` (it holds a secret)",
            "`app.log` (96 MiB, larger than the 16 MiB a snapshot copies)",
        ]);
        let g = guidance(&h, &h.outline());
        assert!(texts(&g).contains(&"Left out of the last checkpoint's snapshot (waymark kept only a SHA-256 of each, and a rewind leaves them as they are): `.env.local` (it holds a secret), `app.log` (96 MiB, larger than the 16 MiB a snapshot copies)."), "{:?}", texts(&g));
        let clean = crashed("retry_step");
        let g = guidance(&clean, &clean.outline());
        assert!(!texts(&g).iter().any(|t| t.contains("Left out")));
    }

    #[test]
    fn each_recommended_action_is_told_in_words() {
        let cases = [
            (
                "retry_step",
                "Retry the interrupted step from its beginning: it is safe to repeat.",
            ),
            (
                "skip_step",
                "The step was finishing when the session ended: verify its result, mark it completed, and go on to the next step.",
            ),
            (
                "manual",
                "Review the files the step touched before going on: the step changes files and its state is uncertain. Ask the user if unsure.",
            ),
            (
                "retry_from_checkpoint",
                "Resume from the task's saved state: keep the work done so far and go on.",
            ),
        ];
        for (action, words) in cases {
            let h = crashed(action);
            let g = guidance(&h, &h.outline());
            // The file that changed since the checkpoint is to check; the validation was
            // not running, so there is none to run again.
            assert_eq!(
                texts(&g)[..2],
                [
                    format!("Recovery: {words}").as_str(),
                    "Check src/parser.rs: it changed since the last checkpoint."
                ],
                "{action}"
            );
            assert!(!texts(&g).iter().any(|t| t.contains("Re-run")), "{action}");
        }
    }

    #[test]
    fn a_finished_task_is_not_resumed() {
        let cases = [
            (
                HookState::Completed,
                "Task task-1 is completed. Nothing to resume; start new work as a new task.",
            ),
            (
                HookState::Failed,
                "Task task-1 was failed. Do not resume it unless the user asks; `waymark task start` begins a new one.",
            ),
            (
                HookState::Abandoned,
                "Task task-1 was abandoned. Do not resume it unless the user asks; `waymark task start` begins a new one.",
            ),
        ];
        for (state, todo) in cases {
            let mut h = crate::task::testing::recorded_plan(t0());
            h.finish(state, t0()).unwrap();
            let g = guidance(&h, &h.outline());
            assert_eq!(texts(&g), vec![todo], "{state}");
            assert!(
                g.do_not.iter().all(|d| d.starts_with("Do not repeat step")),
                "nothing to start over or discard: {:?}",
                g.do_not
            );
        }
        let h = crate::task::testing::recorded_plan(t0());
        assert_eq!(
            guidance(&h, &h.outline()).do_not,
            [
                "Do not repeat step 1 \"Analyze parser\": it is completed.",
                "Do not start over or re-create the task list: it is below.",
                "Do not discard uncommitted changes without checking them against the files listed.",
            ]
        );
    }

    #[test]
    fn with_no_step_to_resume_finish_the_task_or_go_on_with_the_request() {
        let mut done = crate::task::testing::recorded_steps(t0());
        for s in &mut done.steps {
            s.status = StepStatus::Completed;
        }
        let g = guidance(&done, &done.outline());
        assert_eq!(
            texts(&g),
            [
                "Every step is completed: verify the result, then finish the task (`waymark task done`)."
            ]
        );
        let none = Hook::new("t", "w", 0, t0());
        let g = guidance(&none, &none.outline());
        assert_eq!(
            texts(&g),
            ["No step is planned: continue with the user's request."]
        );
    }

    /// After a crash, the attempt that resuming makes may be the last one allowed: it is
    /// resumed; past it, a human decides.
    #[test]
    fn the_last_attempt_is_resumed_and_no_more() {
        for (used, resumed) in [(2, true), (3, false)] {
            let mut h = crate::task::testing::running("Implement fix", &["src/a.rs"], t0());
            h.steps[0].attempt = used;
            h.current_step.as_mut().unwrap().attempt = used;
            h.transition(
                HookState::Recovering,
                crate::task::machine::CRASH_DETECTED,
                t0(),
            )
            .unwrap();
            let g = guidance(&h, &h.outline());
            assert_eq!(
                exhausted(&h).map(|(_, used, max)| (used, max)),
                (!resumed).then_some((3, 3))
            );
            let resume = texts(&g).contains(&"Resume step 1 \"Implement fix\" (attempt 3 of 3).");
            assert_eq!(resume, resumed, "{used} used: {:?}", g.todo);
        }
    }

    fn rewound_line(restored: &[&str], deleted: &[&str], undo: Option<&str>) -> Option<String> {
        let mut h = crate::task::testing::recorded_plan(t0());
        h.rewound = Some(Rewound {
            checkpoint_id: "ckpt-1".into(),
            at: t0(),
            restored: names(restored),
            deleted: names(deleted),
            undo: undo.map(str::to_string),
        });
        rewound(&h, None)
    }

    #[test]
    fn a_rewind_names_the_files_it_put_back_and_how_to_undo_it() {
        let head = "FILES REWOUND at 2026-03-01T12:00:00Z to checkpoint ckpt-1: the work after it is undone on disk, on purpose; go on from there.";
        let cases = [
            (
                &["a.rs", "b.rs"][..],
                &[][..],
                Some("ckpt-2"),
                " Restored: a.rs, b.rs. Do not redo the undone work unless the user asks; `waymark rewind ckpt-2` puts it back.",
            ),
            (&[], &["new.rs"], None, " Deleted: new.rs."),
            (
                &["a.rs"],
                &["new.rs"],
                None,
                " Restored: a.rs. Deleted: new.rs.",
            ),
        ];
        for (restored, deleted, undo, tail) in cases {
            assert_eq!(
                rewound_line(restored, deleted, undo),
                Some(format!("{head}{tail}"))
            );
        }
        assert_eq!(
            rewound(&crate::task::testing::recorded_plan(t0()), None),
            None
        );
    }

    /// Lists name eight and count the rest.
    #[test]
    fn a_long_list_names_eight_and_counts_the_rest() {
        let files = ["f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10"];
        let cases = [
            (3, "Restored: f1, f2, f3."),
            (8, "Restored: f1, f2, f3, f4, f5, f6, f7, f8."),
            (9, "Restored: f1, f2, f3, f4, f5, f6, f7, f8 and 1 more."),
            (10, "Restored: f1, f2, f3, f4, f5, f6, f7, f8 and 2 more."),
        ];
        for (n, listed) in cases {
            let line = rewound_line(&files[..n], &[], None).unwrap();
            assert!(line.ends_with(&format!(" {listed}")), "{n}: {line}");
        }
    }

    #[test]
    fn resume_the_running_step_and_do_not_repeat_the_done_one() {
        let h = crate::task::testing::recorded_plan(Utc::now());
        let g = guidance(&h, &h.outline());
        assert!(g.todo.iter().any(|t| {
            t.text
                .contains("Resume step 2 \"Implement fix\" (attempt 1 of 3)")
                && t.step.as_deref() == Some("Implement fix")
        }));
        assert!(g.todo.iter().any(|t| t.text.contains("\"Validate\"")));
        assert!(g.do_not[0].contains("Do not repeat step 1 \"Analyze parser\""));
    }

    #[test]
    fn a_long_plan_names_the_next_few_steps_and_counts_the_rest() {
        let now = Utc::now();
        let mut h = crate::task::testing::recorded_plan(now);
        for i in 4..=40 {
            let id = i.to_string();
            let name = format!("Part {i}");
            h.add_step(&id, &name, "", None, crate::task::StepSource::Task, now);
        }
        let then: Vec<String> = guidance(&h, &h.outline())
            .todo
            .into_iter()
            .map(|t| t.text)
            .filter(|t| t.starts_with("Then:"))
            .collect();
        assert_eq!(
            then,
            [
                "Then: \"Validate\", \"Part 4\", \"Part 5\", \"Part 6\", \"Part 7\", and 33 more steps (HOOK.md's Step Plan lists them)."
            ]
        );
        // A plan that fits is named whole.
        let short = crate::task::testing::recorded_plan(now);
        let short = guidance(&short, &short.outline());
        assert!(short.todo.iter().any(|t| t.text == "Then: \"Validate\"."));
    }

    /// Each way a conversation rewind can leave the plan, told in full: the point it went
    /// back to, what of the plan it undid (each list named, joined, ended with a period),
    /// and the checkpoint that puts the files back, or why there is none.
    #[test]
    fn a_rewound_conversation_is_told_with_the_plan_it_undid_and_the_files() {
        let at = t0();
        let rewind = |to, reopened: &[&str], dropped: &[&str], unknown, checkpoint| {
            let mut h = crate::task::testing::recorded_plan(at);
            h.conversation_rewound = Some(ConversationRewind {
                at,
                session_id: "s1".into(),
                to,
                reopened: names(reopened),
                dropped: names(dropped),
                plan_unknown: unknown,
                checkpoint,
            });
            conversation_rewound(&h, None).unwrap()
        };
        let head = "CONVERSATION REWOUND at 2026-03-01T12:00:00Z";
        let ckpt = Some(("ckpt-1".to_string(), at - Duration::minutes(5)));
        let files = " Files are not rewound with the conversation: checkpoint ckpt-1 (saved 2026-03-01T11:55:00Z) matches that point; `waymark diff ckpt-1` shows what changed since, and `waymark rewind ckpt-1` puts every file back as it was then, what Bash changed included.";
        let none = " Files are not rewound with the conversation, and no checkpoint predates that point: check the files the steps touched.";
        let to = Some(at - Duration::seconds(90));
        let cases = [
            (
                rewind(None, &[], &[], true, None),
                format!(
                    "{head} to its start (Claude Code's /rewind): waymark has no record of the plan at that point, so it is as it was; check it (`waymark plan`).{none}"
                ),
            ),
            (
                rewind(to, &[], &[], false, ckpt.clone()),
                format!(
                    "{head} to 2026-03-01T11:58:30Z (1m before waymark noticed) (Claude Code's /rewind): the plan had not changed since.{files}"
                ),
            ),
            (
                rewind(to, &["Build"], &[], false, None),
                format!(
                    "{head} to 2026-03-01T11:58:30Z (1m before waymark noticed) (Claude Code's /rewind): the plan is back as it was then: no longer done or started: \"Build\".{none}"
                ),
            ),
            (
                rewind(to, &[], &["Ship"], false, None),
                format!(
                    "{head} to 2026-03-01T11:58:30Z (1m before waymark noticed) (Claude Code's /rewind): the plan is back as it was then: planned after it, removed: \"Ship\".{none}"
                ),
            ),
            (
                rewind(to, &["Build", "Test"], &["Ship"], false, ckpt),
                format!(
                    "{head} to 2026-03-01T11:58:30Z (1m before waymark noticed) (Claude Code's /rewind): the plan is back as it was then: no longer done or started: \"Build\", \"Test\"; planned after it, removed: \"Ship\".{files}"
                ),
            ),
        ];
        for (told, expected) in cases {
            assert_eq!(told, expected);
        }
        let h = crate::task::testing::recorded_plan(at);
        assert_eq!(conversation_rewound(&h, None), None);
    }

    #[test]
    fn quoted_names_are_each_in_quotes_and_at_most_eight() {
        let many: Vec<String> = (1..=10).map(|i| format!("s{i}")).collect();
        assert_eq!(quoted(&many[..2]), "\"s1\", \"s2\"");
        assert_eq!(
            quoted(&many),
            "\"s1\", \"s2\", \"s3\", \"s4\", \"s5\", \"s6\", \"s7\", \"s8\" and 2 more"
        );
    }

    /// What sessions left: every failed turn; and of the crashed session (else the last
    /// one) where it worked, and only after a crash what it waited for and its subagents.
    #[test]
    fn session_facts_tell_failed_turns_and_what_the_crashed_session_left() {
        let at = t0();
        let session = |id: &str, minutes: i64| {
            let mut s = Session::new(
                id,
                None,
                SessionStatus::Active,
                at + Duration::minutes(minutes),
            );
            s.cwd = Some(format!("/w/{id}"));
            s.waiting_for = Some("permission for Bash".into());
            s.agents = vec!["reviewer".into()];
            s
        };
        let mut h = crate::task::testing::recorded_plan(at);
        assert!(session_facts(&h, None).is_empty());
        let mut failed = session("aaaaaaaa1111", 0);
        failed.failed_turn = Some(FailedTurn {
            error: "rate_limit".into(),
            message: "slow down".into(),
            at,
        });
        h.sessions = vec![failed, session("bbbbbbbb2222", 1)];
        // No crash: the last session's place of work, not what it waited for.
        assert_eq!(
            session_facts(&h, None),
            [
                "Claude Code session aaaaaaaa's last turn ended on an API error (rate_limit) at 2026-03-01T12:00:00Z: slow down. It stopped there, it did not crash: go on from the step below.",
                "Claude Code session bbbbbbbb was working in /w/bbbbbbbb2222, not the project root: go on there.",
            ]
        );
        // A kind Claude Code could not tell is not named.
        h.sessions[0].failed_turn.as_mut().unwrap().error = "unknown".into();
        assert!(
            session_facts(&h, None)[0]
                .starts_with("Claude Code session aaaaaaaa's last turn ended on an API error at "),
            "{:?}",
            session_facts(&h, None)
        );
        // The crashed session is the one named, though another sent an event later.
        let mut h = crashed("manual");
        h.sessions = vec![session("aaaaaaaa1111", 0), session("bbbbbbbb2222", 2)];
        h.recovery.as_mut().unwrap().session_id = Some("aaaaaaaa1111".into());
        assert_eq!(
            session_facts(&h, None),
            [
                "Claude Code session aaaaaaaa was working in /w/aaaaaaaa1111, not the project root: go on there.",
                "Claude Code session aaaaaaaa was waiting for the user's permission for Bash when it ended.",
                "Claude Code session aaaaaaaa had subagents running when it ended (reviewer): their work may be unfinished.",
            ]
        );
        h.sessions[0].agents.clear();
        assert!(
            !session_facts(&h, None)
                .iter()
                .any(|l| l.contains("subagents"))
        );
    }
}
