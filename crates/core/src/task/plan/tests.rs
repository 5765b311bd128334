use super::*;
use chrono::TimeZone;

/// A way a test starts the task before the step under test.
type Start = dyn Fn(&mut Hook);

fn t(s: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + s, 0).unwrap()
}

fn plan() -> Hook {
    crate::task::testing::recorded_steps(t(0))
}

/// What the agent was doing: the current step's activeForm/subject (for work outside any
/// plan, the request it began with), else the prompt.
fn working_on(h: &Hook) -> Option<&str> {
    match &h.current_step {
        Some(c) if !c.working_on.is_empty() => Some(&c.working_on),
        // Once there is a plan, its steps say better than the raw prompt.
        _ if !h.steps.is_empty() => None,
        _ => h.last_prompt.as_deref(),
    }
}

#[test]
fn a_new_hook_is_pending_with_two_events() {
    let h = Hook::new("t", "w", 0, t(0));
    assert_eq!(h.state, HookState::StepPending);
    assert_eq!(h.journal.history.len(), 2);
    assert_eq!(h.journal.history[0].from_state, None);
}

#[test]
fn the_recorded_session_walk() {
    let mut h = plan();
    h.set_step_status("1", StepStatus::InProgress, 3, t(4))
        .unwrap();
    assert_eq!(h.state, HookState::StepRunning);
    let fx = h
        .set_step_status("1", StepStatus::Completed, 3, t(5))
        .unwrap();
    assert!(matches!(
        fx[0],
        Effect::Checkpoint(CheckpointTrigger::StepComplete, _, Some(_))
    ));
    assert_eq!(h.state, HookState::StepPending);
    h.set_step_status("2", StepStatus::InProgress, 3, t(6))
        .unwrap();
    h.touch_file("src/parser.rs", t(7));
    h.touch_file("src/main.rs", t(8));
    h.touch_file("src/parser.rs", t(9));
    let ctx = h.current_step.as_ref().unwrap();
    assert_eq!(ctx.step_name, "Implement fix");
    assert_eq!(ctx.attempt, 1);
    assert_eq!(ctx.working_on, "Implementing fix");
    assert_eq!(ctx.files_touched, vec!["src/parser.rs", "src/main.rs"]);
    assert_eq!(h.steps[2].status, StepStatus::Pending);
}

#[test]
fn re_entry_after_a_crash_is_a_new_attempt() {
    let mut h = plan();
    h.set_step_status("2", StepStatus::InProgress, 3, t(1))
        .unwrap();
    h.transition(HookState::Recovering, machine::CRASH_DETECTED, t(2))
        .unwrap();
    assert!(h.ensure_running(3, t(3)).unwrap());
    assert_eq!(h.current_step.as_ref().unwrap().attempt, 2);
    // An ordinary re-entry (no failure) keeps the attempt.
    h.set_step_status("2", StepStatus::Pending, 3, t(4))
        .unwrap();
    h.set_step_status("2", StepStatus::InProgress, 3, t(5))
        .unwrap();
    assert_eq!(h.current_step.as_ref().unwrap().attempt, 2);
}

#[test]
fn past_max_attempts_waits_for_a_human() {
    let mut h = plan();
    for i in 0..3 {
        h.set_step_status("1", StepStatus::InProgress, 2, t(i * 3))
            .unwrap();
        h.set_step_status("1", StepStatus::Failed, 2, t(i * 3 + 1))
            .unwrap();
    }
    assert_eq!(h.state, HookState::AwaitingHuman);
    assert_eq!(h.steps[0].attempt, 2);
    assert_eq!(
        h.journal.history.last().unwrap().trigger,
        "max_attempts_exceeded"
    );
}

#[test]
fn switching_steps_goes_through_pending() {
    let mut h = plan();
    h.set_step_status("1", StepStatus::InProgress, 3, t(1))
        .unwrap();
    h.touch_file("a.rs", t(2));
    h.set_step_status("2", StepStatus::InProgress, 3, t(3))
        .unwrap();
    assert_eq!(h.steps[0].status, StepStatus::Pending);
    assert_eq!(h.steps[0].files_touched, vec!["a.rs"]);
    let triggers: Vec<_> = h
        .journal
        .history
        .iter()
        .map(|e| e.trigger.as_str())
        .collect();
    assert_eq!(
        &triggers[triggers.len() - 2..],
        ["step_switch", "step_start"]
    );
}

#[test]
fn work_without_a_plan_gets_an_implicit_step() {
    let mut h = Hook::new("t", "w", 0, t(0));
    h.note_request("write hello".into());
    assert!(h.ensure_running(3, t(1)).unwrap());
    h.touch_file("hello.txt", t(2));
    assert_eq!(h.steps[0].name, IMPLICIT_STEP);
    assert_eq!(h.steps[0].description, "write hello");
}

#[test]
fn a_step_is_found_by_id_name_or_number_in_the_plan() {
    let mut h = Hook::new("t", "w", 0, t(0));
    let names: Vec<String> = ["Read", "Write", "Test"].map(String::from).into();
    assert_eq!(h.plan(&names, StepSource::Manual, t(1)), 3);
    assert_eq!(h.find_step("step-2").unwrap().name, "Write");
    assert_eq!(h.find_step("test").unwrap().name, "Test");
    assert_eq!(h.find_step("1").unwrap().name, "Read");
    h.set_step_status("step-1", StepStatus::Deleted, 3, t(2))
        .unwrap();
    // Numbers count the plan as `waymark plan` lists it: deleted steps are not there.
    assert_eq!(h.find_step("1").unwrap().name, "Write");
    assert!(h.find_step("3").is_none() && h.find_step("0").is_none());
}

#[test]
fn planning_twice_adds_nothing_twice() {
    let mut h = Hook::new("t", "w", 0, t(0));
    let first: Vec<String> = ["Read", "Write"].map(String::from).into();
    let again: Vec<String> = ["write", " ", "Ship"].map(String::from).into();
    assert_eq!(h.plan(&first, StepSource::Manual, t(1)), 2);
    assert_eq!(h.plan(&again, StepSource::Manual, t(2)), 1);
    let names: Vec<&str> = h.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["Read", "Write", "Ship"]);
}

/// A name longer than a step keeps is still one step however often it is planned, and is
/// found by what was typed.
#[test]
fn a_name_cut_to_its_length_is_planned_once_and_found() {
    let mut h = Hook::new("t", "w", 0, t(0));
    let long = vec!["Refactor ".repeat(80)];
    assert_eq!(h.plan(&long, StepSource::Manual, t(1)), 1);
    assert_eq!(h.plan(&long, StepSource::Manual, t(2)), 0);
    assert!(h.find_step(&long[0]).is_some());
}

/// Work done before the agent recorded a plan is the first planned step's: its files
/// are not lost, and no "Session work" step is left pending forever.
#[test]
fn the_work_before_a_plan_goes_to_the_first_step_entered() {
    let mut h = Hook::new("t", "w", 0, t(0));
    h.note_request("add a parser".into());
    assert!(h.ensure_running(3, t(1)).unwrap());
    h.touch_file("notes.md", t(2));
    assert_eq!(working_on(&h), Some("add a parser"));
    h.last_prompt = Some("and the docs too".into());
    assert_eq!(
        working_on(&h),
        Some("add a parser"),
        "what the work began with"
    );
    let names: Vec<String> = ["Write the parser", "Test it"].map(String::from).into();
    h.plan(&names, StepSource::Manual, t(3));
    h.set_step_status("step-2", StepStatus::InProgress, 3, t(4))
        .unwrap();
    let ctx = h.current_step.as_ref().unwrap();
    assert_eq!(ctx.step_name, "Write the parser");
    assert_eq!(ctx.files_touched, vec!["notes.md"]);
    assert_eq!(h.steps[0].status, StepStatus::Deleted);
    assert!(h.steps[0].files_touched.is_empty());
    h.set_step_status("step-2", StepStatus::Completed, 3, t(5))
        .unwrap();
    h.set_step_status("step-3", StepStatus::Completed, 3, t(6))
        .unwrap();
    assert!(h.all_steps_completed(), "the folded step is not pending");
}

/// A conversation rewound to before a turn: what the turn did to the plan is undone
/// (a step it completed is open again, a step it planned is gone), what came before
/// stays, and the step current then is current again with its files.
#[test]
fn a_rewound_conversation_puts_the_plan_back_as_the_turn_found_it() {
    let mut h = plan();
    h.set_step_status("1", StepStatus::InProgress, 3, t(1))
        .unwrap();
    h.set_step_status("1", StepStatus::Completed, 3, t(2))
        .unwrap();
    h.set_step_status("2", StepStatus::InProgress, 3, t(3))
        .unwrap();
    h.touch_file("src/a.rs", t(3));
    let then = h.plan_at("s1", t(4));
    // The turn the rewind takes away.
    h.touch_file("src/b.rs", t(5));
    h.set_step_status("2", StepStatus::Completed, 3, t(6))
        .unwrap();
    h.add_step("9", "Added later", "", None, StepSource::Task, t(6));
    h.set_step_status("9", StepStatus::InProgress, 3, t(7))
        .unwrap();
    let (reopened, dropped) = h.put_plan_back(&then, 3, t(8)).unwrap();
    assert_eq!(reopened, ["Implement fix"]);
    assert_eq!(dropped, ["Added later"]);
    assert_eq!(h.steps[0].status, StepStatus::Completed);
    assert_eq!(h.steps[1].status, StepStatus::InProgress);
    assert_eq!(h.steps[1].completed_at, None);
    assert_eq!(h.step("9").unwrap().status, StepStatus::Deleted);
    let ctx = h.current_step.as_ref().unwrap();
    assert_eq!((ctx.step_name.as_str(), ctx.attempt), ("Implement fix", 1));
    assert_eq!(
        ctx.files_touched,
        ["src/a.rs", "src/b.rs"],
        "files stay changed"
    );
    assert_eq!(h.state, HookState::StepRunning);
    // Nothing changed since: nothing to put back.
    let now = h.plan_at("s1", t(9));
    assert_eq!(h.put_plan_back(&now, 3, t(9)).unwrap(), (vec![], vec![]));
}

#[test]
fn a_file_touched_between_steps_joins_the_next_step() {
    let mut h = plan();
    h.set_step_status("1", StepStatus::InProgress, 3, t(1))
        .unwrap();
    h.set_step_status("1", StepStatus::Completed, 3, t(2))
        .unwrap();
    assert!(!h.ensure_running(3, t(3)).unwrap());
    h.touch_file("between.rs", t(3));
    assert_eq!(h.unassigned_files, vec!["between.rs"]);
    h.set_step_status("2", StepStatus::InProgress, 3, t(4))
        .unwrap();
    assert!(h.unassigned_files.is_empty());
    assert_eq!(
        h.current_step.as_ref().unwrap().files_touched,
        vec!["between.rs"]
    );
}

#[test]
fn the_plan_is_capped_but_updates_and_the_implicit_step_still_work() {
    let mut h = Hook::new("t", "w", 0, t(0));
    for i in 0..MAX_STEPS {
        assert!(h.add_step(&i.to_string(), "s", "", None, StepSource::Todo, t(1)));
    }
    assert!(!h.add_step("one-more", "s", "", None, StepSource::Task, t(2)));
    assert!(h.add_step("3", "renamed", "", None, StepSource::Task, t(2)));
    assert_eq!(h.steps.len(), MAX_STEPS);
    assert_eq!(h.steps[3].name, "renamed");
}

#[test]
fn pending_plan_without_a_started_step_is_not_guessed() {
    let mut h = plan();
    assert!(!h.ensure_running(3, t(1)).unwrap());
    assert_eq!(h.state, HookState::StepPending);
}

#[test]
fn finish_and_terminal() {
    let mut h = plan();
    h.set_step_status("1", StepStatus::InProgress, 3, t(1))
        .unwrap();
    h.finish(HookState::Completed, t(2)).unwrap();
    assert_eq!(h.state, HookState::Completed);
    assert!(
        h.set_step_status("2", StepStatus::InProgress, 3, t(3))
            .is_err()
    );
    let mut h = plan();
    h.set_step_status("1", StepStatus::InProgress, 3, t(1))
        .unwrap();
    h.finish(HookState::Abandoned, t(2)).unwrap();
    assert_eq!(h.state, HookState::Abandoned);
}

#[test]
fn every_transition_goes_to_the_journal() {
    let mut h = plan();
    for i in 0..300 {
        let status = if i % 2 == 0 {
            StepStatus::InProgress
        } else {
            StepStatus::Pending
        };
        h.set_step_status("1", status, 1000, t(i)).unwrap();
    }
    assert_eq!(h.journal.history.len() as u64, h.history_count);
    assert!(h.history_count > 300);
}

fn last_trigger(h: &Hook) -> &str {
    &h.journal.history.last().unwrap().trigger
}

#[test]
fn a_note_is_one_more_history_event_that_leaves_the_state_as_it_is() {
    let mut h = plan();
    assert_eq!(h.history_count, 2);
    h.note("rewind", BTreeMap::new(), t(5));
    assert_eq!(h.history_count, 3);
    assert_eq!(h.journal.history.len(), 3);
    let e = h.journal.history.last().unwrap();
    assert_eq!(
        (e.trigger.as_str(), e.from_state, e.to_state),
        (
            "rewind",
            Some(HookState::StepPending),
            HookState::StepPending
        )
    );
    assert_eq!((h.state, h.updated_at), (HookState::StepPending, t(5)));
}

/// TaskUpdate repeats what it does not change: an empty name or description, no
/// activeForm, leave the step's as they were.
#[test]
fn updating_a_step_changes_only_what_the_update_gives() {
    let mut h = plan();
    h.add_step("3", "", "run the suite", None, StepSource::Task, t(1));
    h.add_step("3", "", "", None, StepSource::Task, t(2));
    let s = h.step("3").unwrap();
    assert_eq!(
        (
            s.name.as_str(),
            s.description.as_str(),
            s.active_form.as_deref()
        ),
        ("Validate", "run the suite", None)
    );
    h.add_step(
        "3",
        "Validate all",
        "",
        Some("Validating"),
        StepSource::Task,
        t(3),
    );
    let s = h.step("3").unwrap();
    assert_eq!(
        (
            s.name.as_str(),
            s.description.as_str(),
            s.active_form.as_deref()
        ),
        ("Validate all", "run the suite", Some("Validating"))
    );
    assert_eq!((h.steps.len(), h.updated_at), (3, t(3)));
}

/// Claude Code sends `in_progress` again for the step that runs: the step keeps its
/// context (its checkpoint, its output) and the history gets nothing.
#[test]
fn starting_the_running_step_again_changes_nothing() {
    let mut h = plan();
    h.set_step_status("1", StepStatus::InProgress, 3, t(1))
        .unwrap();
    h.touch_file("a.rs", t(2));
    let ctx = h.current_step.as_mut().unwrap();
    ctx.current_checkpoint_id = Some("ckpt-1".into());
    ctx.last_output = "ok".into();
    let before = h.clone();
    assert_eq!(
        h.set_step_status("1", StepStatus::InProgress, 3, t(3)),
        Ok(vec![])
    );
    assert_eq!(h, before);
}

#[test]
fn leaving_the_running_step_is_told_by_how_it_ended() {
    use StepStatus::*;
    // (how it ended, the history's trigger, when it completed)
    let cases = [
        (Completed, "step_complete", Some(t(2))),
        (Failed, "step_failed", None),
        (Pending, "step_paused", None),
        (Deleted, "step_deleted", None),
    ];
    for (status, trigger, completed_at) in cases {
        let mut h = plan();
        h.set_step_status("1", InProgress, 3, t(1)).unwrap();
        h.touch_file("a.rs", t(1));
        h.set_step_status("1", status, 3, t(2)).unwrap();
        assert_eq!(h.state, HookState::StepPending, "{status:?}");
        assert_eq!(last_trigger(&h), trigger, "{status:?}");
        let s = &h.steps[0];
        assert_eq!((s.status, s.completed_at), (status, completed_at));
        assert_eq!(s.files_touched, ["a.rs"], "{status:?}");
        assert!(h.current_step.is_none());
    }
}

fn crash_report(at: DateTime<Utc>) -> RecoveryContext {
    RecoveryContext {
        detected_at: at,
        crash_type: "signal".into(),
        last_known_state: HookState::StepRunning,
        was_validating: false,
        validation_cmd: None,
        partial_output: None,
        recommended_action: "retry_step".into(),
        reason: "the session ended mid-turn".into(),
        last_checkpoint_id: None,
        file_warnings: Vec::new(),
        withheld: Vec::new(),
        session_id: None,
        changed: None,
        changed_files: Vec::new(),
        told: None,
    }
}

/// After a crash the step is taken up again, by activity or by Claude Code setting
/// it `in_progress`: a new attempt that keeps what the step did (its start, its files,
/// its side effects), and the crash is dealt with.
#[test]
fn the_step_taken_up_after_a_crash_is_a_new_attempt_that_keeps_its_work() {
    let resume: [fn(&mut Hook); 2] = [
        |h| assert!(h.ensure_running(3, t(4)).unwrap()),
        |h| {
            h.set_step_status("2", StepStatus::InProgress, 3, t(4))
                .unwrap();
        },
    ];
    for (way, resume) in resume.iter().enumerate() {
        let mut h = plan();
        h.set_step_status("2", StepStatus::InProgress, 3, t(1))
            .unwrap();
        h.touch_file("src/a.rs", t(2));
        h.note_side_effect("git push", 0, t(2));
        h.transition(HookState::Recovering, machine::CRASH_DETECTED, t(3))
            .unwrap();
        h.recovery = Some(crash_report(t(3)));
        resume(&mut h);
        assert_eq!(h.state, HookState::StepRunning, "way {way}");
        assert!(h.recovery.is_none(), "way {way}");
        let ctx = h.current_step.as_ref().unwrap();
        assert_eq!((ctx.attempt, ctx.started_at), (2, t(1)), "way {way}");
        assert_eq!(ctx.files_touched, ["src/a.rs"]);
        assert_eq!(ctx.side_effects[0].command, "git push");
    }
}

/// Work with no plan, taken up after a crash, stays in its implicit step (a new
/// attempt of it): there is no plan to hand it to.
#[test]
fn the_implicit_step_taken_up_after_a_crash_is_kept() {
    let mut h = Hook::new("t", "w", 0, t(0));
    assert!(h.ensure_running(3, t(1)).unwrap());
    h.touch_file("notes.md", t(2));
    h.transition(HookState::Recovering, machine::CRASH_DETECTED, t(3))
        .unwrap();
    assert!(h.ensure_running(3, t(4)).unwrap());
    let ctx = h.current_step.as_ref().unwrap();
    assert_eq!((ctx.step_id.as_str(), ctx.attempt), ("work-1", 2));
    assert_eq!(
        (ctx.started_at, &ctx.files_touched[..]),
        (t(1), &["notes.md".to_string()][..])
    );
    assert_eq!(h.steps[0].status, StepStatus::InProgress);
    assert!(
        h.journal
            .history
            .iter()
            .all(|e| e.trigger != "plan_recorded")
    );
}

/// A step entered again and again past `max_attempts` leaves the task waiting for a
/// human, as it was: no error, no event.
#[test]
fn asking_again_while_a_human_is_awaited_changes_nothing() {
    let mut h = plan();
    for i in 0..3 {
        h.set_step_status("1", StepStatus::InProgress, 2, t(i * 3))
            .unwrap();
        h.set_step_status("1", StepStatus::Failed, 2, t(i * 3 + 1))
            .unwrap();
    }
    assert_eq!(h.state, HookState::AwaitingHuman);
    let events = h.history_count;
    h.set_step_status("1", StepStatus::InProgress, 2, t(10))
        .unwrap();
    assert_eq!(
        (h.state, h.history_count),
        (HookState::AwaitingHuman, events)
    );
}

/// One rule at the last attempt, whatever spent it: crashes or failures. The step is
/// refused every time it is asked for again, not once; a person grants one more attempt
/// (`step retry`), and the step starts as it, counted against what was granted.
#[test]
fn attempts_spent_in_crashes_are_refused_every_time_until_a_person_grants_one() {
    use crate::recovery::{Crash, Found, enter_recovery};
    let mut h = plan();
    let crash = || Crash {
        crash_type: "signal",
        why: "gone".into(),
        session_id: None,
    };
    for i in 0..2 {
        h.set_step_status("1", StepStatus::InProgress, 2, t(i * 3))
            .unwrap();
        assert!(enter_recovery(
            &mut h,
            crash(),
            Found::default(),
            t(i * 3 + 1)
        ));
    }
    for at in [10, 11, 12] {
        h.set_step_status("1", StepStatus::InProgress, 2, t(at))
            .unwrap();
        assert_eq!(h.state, HookState::AwaitingHuman, "asked at {at}");
        assert_eq!(h.steps[0].attempt, 2);
    }
    assert_eq!(h.recovery, None, "HUMAN NEEDED is the verdict now");
    h.retry_step("1", 2, t(13)).unwrap();
    assert_eq!(h.state, HookState::StepRunning);
    let c = h.current_step.as_ref().unwrap();
    assert_eq!((c.attempt, c.max_attempts), (3, 3));
    assert_eq!(h.attempts_allowed(&h.steps[0]), 3);
    // A retry of a step with attempts left grants nothing.
    let mut fresh = plan();
    fresh.retry_step("1", 3, t(1)).unwrap();
    assert_eq!((fresh.steps[0].attempt, fresh.steps[0].granted), (1, 0));
}

/// The crash told, the task goes on without it: `recovering` ends in `step_pending`, the
/// crash's attempt spent; anything else leaves the task as it is.
#[test]
fn the_end_of_a_recovery_keeps_the_attempt_the_crash_spent() {
    let mut h = plan();
    h.set_step_status("1", StepStatus::InProgress, 3, t(1))
        .unwrap();
    let before = h.clone();
    h.end_recovery("crash_told", t(2));
    assert_eq!(h, before, "not recovering: nothing");
    h.transition(HookState::Recovering, machine::CRASH_DETECTED, t(3))
        .unwrap();
    h.recovery = Some(crash_report(t(3)));
    h.record_failure(t(3));
    h.end_recovery("crash_told", t(4));
    assert_eq!(
        (h.state, h.recovery.is_none()),
        (HookState::StepPending, true)
    );
    h.ensure_running(3, t(5)).unwrap();
    assert_eq!(h.current_step.as_ref().unwrap().attempt, 2);
}

/// A plan kept and finished is not reopened by the work after it: no "Session work",
/// the files wait unassigned; a step's number skips the catch-all and deleted steps.
#[test]
fn a_finished_plan_opens_no_implicit_step_and_numbers_skip_the_catch_all() {
    let mut h = Hook::new("t", "w", 0, t(0));
    h.note_request("add a parser".into());
    assert!(h.ensure_running(3, t(1)).unwrap());
    let names: Vec<String> = ["Read", "Write"].map(String::from).into();
    h.plan(&names, StepSource::Manual, t(2));
    assert_eq!(h.find_step("1").unwrap().name, "Read");
    assert_eq!(h.number(h.find_step("Write").unwrap()), 2);
    for id in ["step-2", "step-3"] {
        h.set_step_status(id, StepStatus::InProgress, 3, t(3))
            .unwrap();
        h.set_step_status(id, StepStatus::Completed, 3, t(4))
            .unwrap();
    }
    assert!(h.plan_finished());
    assert!(!h.ensure_running(3, t(5)).unwrap());
    h.touch_file("src/after.rs", t(6));
    assert_eq!(h.unassigned_files, ["src/after.rs"]);
    assert!(!h.steps.iter().any(|s| s.status == StepStatus::InProgress));
}

/// Only the step waymark started for work outside a plan is folded into the plan: a
/// planned step that happens to be called "Session work", or an implicit step the
/// user has named, is left as any step is (pending, with its files).
#[test]
fn only_the_unnamed_implicit_step_is_folded_into_the_plan() {
    let planned = |h: &mut Hook| {
        h.add_step("a", IMPLICIT_STEP, "", None, StepSource::Task, t(1));
        h.set_step_status("a", StepStatus::InProgress, 3, t(1))
            .unwrap();
    };
    let named = |h: &mut Hook| {
        assert!(h.ensure_running(3, t(1)).unwrap());
        h.add_step("work-1", "Sketch the API", "", None, StepSource::Task, t(1));
        h.set_step_status("work-1", StepStatus::Pending, 3, t(1))
            .unwrap();
        h.set_step_status("work-1", StepStatus::InProgress, 3, t(1))
            .unwrap();
    };
    let cases: [(&str, &Start); 2] = [("planned", &planned), ("named", &named)];
    for (case, start) in cases {
        let mut h = Hook::new("t", "w", 0, t(0));
        start(&mut h);
        h.touch_file("api.md", t(2));
        h.add_step("b", "Ship", "", None, StepSource::Task, t(3));
        h.set_step_status("b", StepStatus::InProgress, 3, t(3))
            .unwrap();
        let first = &h.steps[0];
        assert_eq!(first.status, StepStatus::Pending, "{case}");
        assert_eq!(first.files_touched, ["api.md"], "{case}");
        assert!(h.current_step.as_ref().unwrap().files_touched.is_empty());
    }
}

/// Work once no step is open: back into an implicit step that is still open, else a
/// new one; never into a planned step that failed, nor a finished implicit one.
#[test]
fn work_after_the_plan_ran_out_goes_to_an_open_implicit_step_or_a_new_one() {
    let finished_implicit = |h: &mut Hook| {
        assert!(h.ensure_running(3, t(1)).unwrap());
        h.set_step_status("work-1", StepStatus::Completed, 3, t(2))
            .unwrap();
    };
    let failed_planned = |h: &mut Hook| {
        h.add_step("1", "Build", "", None, StepSource::Task, t(1));
        h.set_step_status("1", StepStatus::InProgress, 3, t(1))
            .unwrap();
        h.set_step_status("1", StepStatus::Failed, 3, t(2)).unwrap();
    };
    let failed_implicit = |h: &mut Hook| {
        assert!(h.ensure_running(3, t(1)).unwrap());
        h.set_step_status("work-1", StepStatus::Failed, 3, t(2))
            .unwrap();
    };
    // (how the steps ended, the step the work goes to, its attempt)
    let cases: [(&Start, &str, u32); 3] = [
        (&finished_implicit, "work-2", 1),
        (&failed_planned, "work-2", 1),
        (&failed_implicit, "work-1", 2),
    ];
    for (end, to, attempt) in cases {
        let mut h = Hook::new("t", "w", 0, t(0));
        end(&mut h);
        let before: Vec<StepStatus> = h.steps.iter().map(|s| s.status).collect();
        assert!(h.ensure_running(3, t(3)).unwrap());
        let ctx = h.current_step.as_ref().unwrap();
        assert_eq!((ctx.step_id.as_str(), ctx.attempt), (to, attempt));
        if to == "work-2" {
            assert_eq!(
                h.steps[0].status, before[0],
                "the old step is left as it was"
            );
        }
    }
}

#[test]
fn a_failure_in_the_step_makes_its_next_entry_a_new_attempt() {
    let mut h = plan();
    h.set_step_status("1", StepStatus::InProgress, 3, t(1))
        .unwrap();
    h.record_failure(t(2));
    assert_eq!(h.updated_at, t(2));
    h.set_step_status("1", StepStatus::Pending, 3, t(3))
        .unwrap();
    h.set_step_status("1", StepStatus::InProgress, 3, t(4))
        .unwrap();
    assert_eq!(h.current_step.as_ref().unwrap().attempt, 2);
    assert_eq!(h.steps[0].attempt, 2);
}

/// What the plan says is done and what to do next, with no step current: a step in
/// progress before a pending one, the first of each in plan order; deleted steps
/// count for neither.
#[test]
fn what_is_done_and_what_comes_next() {
    use StepStatus::*;
    // (the three steps' statuses, all done, the completed ones, the next step)
    let cases = [
        (
            [Pending, Pending, Pending],
            false,
            vec![],
            Some("Analyze parser"),
        ),
        (
            [Completed, Pending, Pending],
            false,
            vec!["Analyze parser"],
            Some("Implement fix"),
        ),
        (
            [Completed, Pending, InProgress],
            false,
            vec!["Analyze parser"],
            Some("Validate"),
        ),
        (
            [Failed, Completed, Pending],
            false,
            vec!["Implement fix"],
            Some("Validate"),
        ),
        (
            [Completed, Completed, Failed],
            false,
            vec!["Analyze parser", "Implement fix"],
            None,
        ),
        (
            [Completed, Deleted, Completed],
            true,
            vec!["Analyze parser", "Validate"],
            None,
        ),
        ([Deleted, Deleted, Deleted], false, vec![], None),
    ];
    for (statuses, all_done, done, next) in cases {
        let mut h = plan();
        for (step, status) in h.steps.iter_mut().zip(statuses) {
            step.status = status;
        }
        assert_eq!(h.all_steps_completed(), all_done, "{statuses:?}");
        let names: Vec<&str> = h.completed_steps().map(|s| s.name.as_str()).collect();
        assert_eq!(names, done, "{statuses:?}");
        assert_eq!(h.next_step().map(|s| s.name.as_str()), next, "{statuses:?}");
    }
    assert!(
        !Hook::new("t", "w", 0, t(0)).all_steps_completed(),
        "no plan"
    );
}

/// What the agent was doing, as the brief says it: the request with no plan; once
/// there is a plan, what the current step says (its activeForm, else its name, else
/// for work outside the plan what it began with), and nothing rather than a stale
/// prompt when the step says nothing.
#[test]
fn what_the_agent_was_working_on() {
    let mut h = Hook::new("t", "w", 0, t(0));
    assert_eq!(working_on(&h), None);
    h.last_prompt = Some("fix the parser".into());
    assert_eq!(
        working_on(&h),
        Some("fix the parser"),
        "no plan: the request"
    );

    let mut h = Hook::new("t", "w", 0, t(0));
    assert!(h.ensure_running(3, t(1)).unwrap());
    assert_eq!(
        working_on(&h),
        None,
        "work asked for by no prompt: the catch-all's name is no words of the user's"
    );

    let mut h = plan();
    h.last_prompt = Some("fix the parser".into());
    assert_eq!(working_on(&h), None, "a plan, no step current");
    h.set_step_status("1", StepStatus::InProgress, 3, t(1))
        .unwrap();
    assert_eq!(working_on(&h), Some("Analyzing parser"));
    h.set_step_status("3", StepStatus::InProgress, 3, t(2))
        .unwrap();
    assert_eq!(working_on(&h), Some("Validate"), "no activeForm: the name");
    // A context written without it (an older hook.json).
    h.current_step.as_mut().unwrap().working_on.clear();
    assert_eq!(working_on(&h), None);
}

/// A task completed completes the step it was in; failed or abandoned, it leaves the
/// step as it was. Either way the step keeps its files, and the history says how the
/// task ended.
#[test]
fn a_task_ends_with_the_trigger_of_how_it_ended() {
    use HookState::*;
    // (how the task ends, the history's trigger, the running step's status after)
    let cases = [
        (Completed, "task_complete", StepStatus::Completed),
        (Failed, machine::FAIL, StepStatus::InProgress),
        (Abandoned, machine::ABANDON, StepStatus::InProgress),
    ];
    for (to, trigger, step_status) in cases {
        let mut h = plan();
        h.set_step_status("1", StepStatus::InProgress, 3, t(1))
            .unwrap();
        h.touch_file("a.rs", t(1));
        h.finish(to, t(2)).unwrap();
        assert_eq!((h.state, last_trigger(&h)), (to, trigger));
        assert_eq!(h.steps[0].status, step_status, "{to}");
        assert_eq!(h.steps[0].files_touched, ["a.rs"], "{to}");
        assert!(h.current_step.is_none());
    }
    // Between steps, a task completes with no step to leave.
    let mut h = plan();
    h.set_step_status("1", StepStatus::InProgress, 3, t(1))
        .unwrap();
    h.set_step_status("1", StepStatus::Completed, 3, t(2))
        .unwrap();
    h.finish(Completed, t(3)).unwrap();
    assert_eq!((h.state, last_trigger(&h)), (Completed, "task_complete"));
    assert_eq!(h.steps[1].status, StepStatus::Pending);
}

/// A step's words are kept to their bounds, however long they come (issue 32, item
/// 8): a 10 MB name is kept as 500 characters, marked as cut.
#[test]
fn a_step_s_words_are_bounded() {
    let mut h = Hook::new("t", "w", 0, t(0));
    let huge = "word ".repeat(2_000_000);
    h.add_step("1", &huge, &huge, Some(&huge), StepSource::Task, t(0));
    let s = &h.steps[0];
    assert_eq!(s.name.chars().count(), MAX_STEP_NAME);
    assert!(s.name.ends_with('…'));
    assert_eq!(s.description.chars().count(), MAX_STEP_DESCRIPTION);
    assert_eq!(
        s.active_form.as_ref().unwrap().chars().count(),
        MAX_STEP_NAME
    );
    // Renamed the same way; short words are kept whole.
    h.add_step("1", &huge, "", None, StepSource::Task, t(1));
    assert_eq!(h.steps[0].name.chars().count(), MAX_STEP_NAME);
    h.add_step("2", "Ship", "it", None, StepSource::Task, t(1));
    assert_eq!(
        (h.steps[1].name.as_str(), h.steps[1].description.as_str()),
        ("Ship", "it")
    );
}
