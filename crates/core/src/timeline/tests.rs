use std::collections::BTreeMap;

use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::{Value, json};

use super::html::{self, Check, Report};
use super::*;
use crate::receipt::{Run, ValidationReceipt};
use crate::task::testing::recorded_plan;
use crate::task::{CheckpointTrigger, FailedTurn, HookState, SessionStatus, StepCheckpoint};
use crate::trace::{Contributor, Tool, Transition, Waymark, kind as tk};

fn t(ms: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 26, 12, 0, 0).unwrap() + Duration::milliseconds(ms)
}

fn kinds(events: &[Event]) -> Vec<&str> {
    events.iter().map(|e| e.kind.as_str()).collect()
}

fn history(trigger: &str, to: HookState, step: Option<&str>, at: i64) -> HookEvent {
    HookEvent {
        timestamp: t(at),
        from_state: Some(HookState::StepRunning),
        to_state: to,
        trigger: trigger.into(),
        step_name: step.map(str::to_string),
        details: BTreeMap::new(),
    }
}

fn checkpoint(id: &str, trigger: CheckpointTrigger, step: &str, at: i64) -> StepCheckpoint {
    StepCheckpoint {
        checkpoint_id: id.into(),
        created_at: t(at),
        step_name: step.into(),
        step_index: 0,
        description: format!("{id} made"),
        trigger,
        git_branch: "main".into(),
        git_commit: None,
        artifacts: Vec::new(),
    }
}

fn receipt(command: &str, exit_code: i32, step: &str, at: i64) -> ValidationReceipt {
    ValidationReceipt::new(
        step,
        Run {
            command: command.into(),
            exit_code,
            started_at: t(at),
            completed_at: t(at),
            duration: None,
            stdout_hash: String::new(),
            stderr_hash: String::new(),
            observed: false,
            tree: String::new(),
        },
    )
}

fn record(task: &str, kind: &str, at: i64, f: impl FnOnce(&mut Waymark)) -> Record {
    let mut w = Waymark {
        kind: kind.into(),
        event: "PostToolUse".into(),
        session_id: "s1".into(),
        task_id: Some(task.into()),
        ..Default::default()
    };
    f(&mut w);
    let tool = Tool {
        name: "claude-code".into(),
        version: "x".into(),
    };
    Record::new("r".into(), t(at), None, tool, w)
}

/// The recorded session's plan, as its history tells it: the machine's own setup left out.
#[test]
fn the_recorded_plan_reads_as_its_steps_starting_and_ending() {
    let h = recorded_plan(t(0));
    let events = build(&Sources {
        task_id: "task-1",
        history: &h.journal.history,
        ..Sources::default()
    });
    assert_eq!(
        kinds(&events),
        [
            "task_started",
            "step_started",
            "step_completed",
            "step_started"
        ]
    );
    assert_eq!(events[1].what, "step \"Analyze parser\" started, attempt 1");
    assert_eq!(events[2].what, "step \"Analyze parser\" completed");
    assert_eq!(events[3].step(), Some("Implement fix"));
    assert_eq!(events[3].details["attempt"], 1);
    assert_eq!(events[3].details["task"], "task-1");
    let keys: Vec<&String> = events[3].details.keys().collect();
    assert_eq!(keys, ["task", "step", "trigger", "attempt"]);
}

#[test]
fn crashes_attempts_rewinds_and_other_changes_are_named() {
    let mut older = history("crash_detected", HookState::Recovering, Some("Fix"), 1);
    older.details.insert("crash_type".into(), json!("signal"));
    older
        .details
        .insert("recommended_action".into(), json!("retry_from_checkpoint"));
    let mut crash = older.clone();
    crash
        .details
        .insert("session_id".into(), json!("dc5c038f-fe1b"));
    let entered = history("step_start", HookState::StepRunning, Some("Fix"), 2);
    let mut out = history(
        "max_attempts_exceeded",
        HookState::AwaitingHuman,
        Some("Fix"),
        2,
    );
    out.details.insert("attempt".into(), json!(4));
    out.details.insert("max_attempts".into(), json!(3));
    let mut rewind = history("rewind", HookState::StepRunning, Some("Fix"), 3);
    rewind
        .details
        .insert("checkpoint_id".into(), json!("ckpt-1"));
    let resume = history("step_resume", HookState::StepRunning, Some("Fix"), 4);
    let other = history("something_new", HookState::StepPending, None, 5);
    let quiet = history("validation_passed", HookState::StepPending, None, 6);
    let done = history("task_complete", HookState::Completed, None, 7);
    let hist = [
        older, crash, entered, out, rewind, resume, other, quiet, done,
    ];
    let events = build(&Sources {
        task_id: "t",
        history: &hist,
        ..Sources::default()
    });
    let whats: Vec<&str> = events.iter().map(|e| e.what.as_str()).collect();
    assert_eq!(
        whats,
        [
            "crash found (signal): recommended retry_from_checkpoint",
            "session dc5c038f crashed (signal): recommended retry_from_checkpoint",
            "step \"Fix\" out of attempts (4 of 3): waiting for a human",
            "files rewound to checkpoint ckpt-1",
            "step \"Fix\" resumed, attempt 1",
            "step_running -> step_pending (something_new)",
            "task completed",
        ]
    );
    assert_eq!(
        kinds(&events),
        [
            "crash",
            "crash",
            "awaiting_human",
            "rewind",
            "step_started",
            "state",
            "task_completed"
        ]
    );
}

#[test]
fn within_a_millisecond_cause_comes_before_effect() {
    let hist = [
        history("rewind", HookState::StepRunning, Some("Fix"), 5),
        history("step_complete", HookState::StepPending, Some("Fix"), 5),
    ];
    let cps = [
        checkpoint("ckpt-v", CheckpointTrigger::Validation, "Fix", 5),
        checkpoint("ckpt-r", CheckpointTrigger::PreRewind, "Fix", 5),
        checkpoint("ckpt-c", CheckpointTrigger::PreCompact, "Fix", 4),
    ];
    let rs = [receipt("cargo test", 0, "Fix", 5)];
    let trace = [record("t", tk::MUTATION, 5, |_| {})];
    let events = build(&Sources {
        task_id: "t",
        history: &hist,
        checkpoints: &cps,
        receipts: &rs,
        trace: &trace,
        ..Sources::default()
    });
    assert_eq!(
        kinds(&events),
        [
            "compaction",
            "checkpoint",
            "rewind",
            "step_completed",
            "file_changed",
            "receipt",
            "checkpoint"
        ]
    );
    assert_eq!(events[1].details["trigger"], "pre_rewind");
    assert_eq!(events[6].details["checkpoint_id"], "ckpt-v");
}

/// A mutation, a push, a plain command, a deploy, a scope warning and an intent's change
/// of task `t`, one of another task, and a warning after the step completed.
fn task_records() -> Vec<Record> {
    let mut written = record("t", tk::MUTATION, 2, |w| {
        w.mutation_class = Some("edit".into())
    });
    let ai = Contributor {
        kind: "ai".into(),
        model_id: None,
    };
    written.add_file("src/a.rs", None, ai, &[]);
    let push = record("t", tk::BASH, 3, |w| {
        w.command = Some("git push origin main".into());
        w.exit_code = Some(0);
    });
    let ls = record("t", tk::BASH, 4, |w| w.command = Some("ls".into()));
    let deploy = record("t", tk::BASH, 5, |w| w.command = Some("./deploy.sh".into()));
    let warned = record("t", tk::SCOPE_WARNING, 6, |w| {
        w.warnings = vec!["out of scope: b.rs".into()]
    });
    let intent = record("t", tk::TRANSITION, 7, |w| {
        w.transition = Some(Transition {
            intent_id: "INT-1".into(),
            from: "PENDING".into(),
            to: "COMPLETED".into(),
            criteria: Vec::new(),
        })
    });
    let elsewhere = record("other", tk::MUTATION, 8, |_| {});
    let after = record("t", tk::SCOPE_WARNING, 11, |w| {
        w.warnings = vec!["late".into()]
    });
    vec![written, push, ls, deploy, warned, intent, elsewhere, after]
}

#[test]
fn trace_records_of_the_task_belong_to_the_step_running_then() {
    let hist = [
        history("step_start", HookState::StepRunning, Some("Fix"), 1),
        history("step_complete", HookState::StepPending, Some("Fix"), 10),
    ];
    let trace = task_records();
    let patterns = ["^\\./deploy".to_string()];
    let events = build(&Sources {
        task_id: "t",
        history: &hist,
        trace: &trace,
        side_effect_commands: &patterns,
        ..Sources::default()
    });
    assert_eq!(
        kinds(&events),
        [
            "step_started",
            "file_changed",
            "side_effect",
            "side_effect",
            "scope_warning",
            "intent",
            "step_completed",
            "scope_warning",
        ]
    );
    assert_eq!(events[1].what, "edit src/a.rs");
    assert_eq!(events[1].details["files"], json!(["src/a.rs"]));
    assert_eq!(events[2].what, "side effect: git push origin main (exit 0)");
    assert_eq!(events[5].what, "intent INT-1: PENDING -> COMPLETED");
    for e in &events[1..5] {
        assert_eq!(e.step(), Some("Fix"), "{e:?}");
        assert_eq!(e.details["session_id"], "s1");
    }
    assert_eq!(
        events[7].step(),
        None,
        "no step runs after the step completed"
    );
    let keys: Vec<&String> = events[1].details.keys().collect();
    assert_eq!(keys[..2], ["task", "step"]);
}

#[test]
fn sessions_start_and_end_or_stop_on_an_error() {
    let mut h = recorded_plan(t(0));
    let mut ended = crate::task::Session::new("abcdef0123", None, SessionStatus::Ended, t(1));
    ended.last_event_at = t(9);
    ended.end_reason = Some("clear".into());
    h.sessions = vec![ended];
    let mut stopped = h.sessions[0].clone();
    stopped.session_id = "s2".into();
    stopped.status = SessionStatus::Idle;
    stopped.failed_turn = Some(FailedTurn {
        error: "rate_limit".into(),
        message: "slow down".into(),
        at: t(12),
    });
    h.sessions.push(stopped);
    let events = build(&Sources {
        task_id: "t",
        sessions: &h.sessions,
        ..Sources::default()
    });
    let whats: Vec<&str> = events.iter().map(|e| e.what.as_str()).collect();
    assert_eq!(
        whats,
        [
            "session abcdef01 started",
            "session s2 started",
            "session abcdef01 ended (clear)",
            "session s2 stopped on an API error (rate_limit)",
        ]
    );
    assert_eq!(events[3].details["message"], "slow down");
}

#[test]
fn tasks_merge_in_time_order() {
    let a = build(&Sources {
        task_id: "a",
        checkpoints: &[
            checkpoint("c1", CheckpointTrigger::Manual, "", 1),
            checkpoint("c3", CheckpointTrigger::Manual, "", 3),
        ],
        ..Sources::default()
    });
    let b = build(&Sources {
        task_id: "b",
        receipts: &[receipt("make", 2, "", 2)],
        ..Sources::default()
    });
    let all = merge(vec![a, b]);
    let tasks: Vec<&Value> = all.iter().map(|e| &e.details["task"]).collect();
    assert_eq!(tasks, [&json!("a"), &json!("b"), &json!("a")]);
    assert_eq!(all[1].what, "receipt: make failed (exit 2)");
    assert_eq!(all[1].details["passed"], false);
    assert_eq!(all[0].step(), None, "an empty step name is no step");
}

#[test]
fn the_text_is_coloured_only_when_asked_and_names_tasks_with_all() {
    let events = build(&Sources {
        task_id: "t",
        receipts: &[receipt("make", 1, "Fix", 1)],
        ..Sources::default()
    });
    let plain = text::render(&events, false, false);
    assert_eq!(
        plain,
        "2026-11-26T12:00:00Z receipt                  receipt: make failed (exit 1)\n"
    );
    let coloured = text::render(&events, true, true);
    assert!(coloured.contains("\x1b[31mreceipt"), "{coloured:?}");
    assert!(coloured.contains("[t] "), "{coloured:?}");
    assert_eq!(text::render(&[], true, false), "No events.\n");
}

/// The recorded plan with a checkpoint and a failed receipt whose texts need escaping,
/// drawn with one check failing: its events and the page.
fn recorded_page() -> (Vec<Event>, String) {
    let h = recorded_plan(t(0));
    let cps = [checkpoint(
        "ckpt-<1>",
        CheckpointTrigger::GitCommit,
        "Implement fix",
        5,
    )];
    let rs = [receipt("test \"a\" & 'b'", 1, "Implement fix", 6)];
    let events = build(&Sources {
        task_id: "task-1",
        history: &h.journal.history,
        checkpoints: &cps,
        receipts: &rs,
        ..Sources::default()
    });
    let checks = [
        Check {
            name: "receipts --verify".into(),
            holds: false,
            text: "1 INVALID".into(),
        },
        Check {
            name: "trace --verify".into(),
            holds: true,
            text: "chain intact".into(),
        },
    ];
    let page = html::render(&Report {
        task_id: "task-1",
        state: "step_running",
        events: &events,
        steps: &h.steps,
        current: h.current_step.as_ref(),
        checks: &checks,
    });
    (events, page)
}

#[test]
fn the_page_carries_each_event_and_shows_it_on_hover() {
    let (events, page) = recorded_page();
    let points: Vec<&str> = page.split("<g class=\"event\"").skip(1).collect();
    assert_eq!(points.len(), events.len());
    for (p, e) in points.iter().zip(&events) {
        let attr = p
            .split("data-event=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(
            serde_json::from_str::<Event>(&html::unescape(attr)).unwrap(),
            *e
        );
        let title = p
            .split("<title>")
            .nth(1)
            .unwrap()
            .split("</title>")
            .next()
            .unwrap();
        assert_eq!(html::unescape(title), html::hover(e));
    }
    assert!(html::hover(&events[5]).starts_with("receipt: test \"a\" & 'b' failed (exit 1)\n2026-11-26T12:00:00Z\nkind: receipt\ntask: task-1\nstep: Implement fix\n"));
    assert!(
        page.contains("<td class=\"bad\">FAILED</td>")
            && page.contains("<td class=\"ok\">holds</td>")
    );
    assert!(
        page.contains("<code>src/parser.rs</code>"),
        "the running step's files"
    );
    for step in ["Analyze parser", "Implement fix", "Validate"] {
        assert!(page.contains(&format!("data-step=\"{step}\"")), "{step}");
    }
    assert!(!page.contains("<script"), "no script");
    assert_eq!(
        page.matches("://").count(),
        1,
        "no address but the SVG namespace"
    );
    assert!(page.contains("default-src 'none'"));
}

#[test]
fn lanes_follow_the_plan_then_steps_only_the_events_name() {
    let h = recorded_plan(t(0));
    let events = build(&Sources {
        task_id: "t",
        checkpoints: &[checkpoint("c", CheckpointTrigger::Manual, "Gone", 1)],
        history: &[gone_attempt(2)],
        ..Sources::default()
    });
    let lanes = html::lanes(&events, &h.steps, h.current_step.as_ref());
    let names: Vec<&str> = lanes.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "task",
            "Analyze parser",
            "Implement fix",
            "Validate",
            "Gone"
        ]
    );
    assert_eq!(lanes[2].files, ["src/parser.rs"]);
    assert_eq!(
        (lanes[2].status.as_str(), lanes[2].attempts),
        ("in_progress", 1)
    );
    assert_eq!(
        html::esc("<a href=\"x\">&'"),
        "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
    );
}

/// Step "Gone" (in no plan) entered for its `attempt`th time.
fn gone_attempt(attempt: u32) -> HookEvent {
    let mut e = history("step_resume", HookState::StepRunning, Some("Gone"), 2);
    e.details.insert("attempt".into(), json!(attempt));
    e
}
