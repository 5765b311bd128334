//! A model-based test of recovery (issue 42): random sequences of sessions (started,
//! resumed, cleared, compacted, killed, stopped cleanly or on an API error, two at once),
//! prompts, plans and step commands, file writes, validations passing and failing, pushes
//! (some interrupted by a kill), the check the brief names, and time passing, applied to
//! the task as the hook handlers apply them. After every step the invariants of
//! docs/recovery.md ("The invariants") are checked on the task and on the brief the next
//! session would get.
//!
//! `cargo test` runs [`CASES`] sequences; `WAYMARK_SEQUENCES=N` runs N (CI's long run:
//! docs/tests.md). A failure is shrunk by proptest and printed as the sequence of
//! operations: it becomes a regression test below.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Duration, Utc};
use proptest::prelude::*;

use crate::config::{Config, Switch};
use crate::receipt::{ReceiptHead, ValidationReceipt};
use crate::recovery::brief::{self, Extras};
use crate::recovery::guidance::{exhausted, next_attempt};
use crate::shell::Kinds;
use crate::task::session::Owner;
use crate::task::validation::{self, Sealed};
use crate::task::{Hook, HookState, Session, SessionStatus, StepSource, StepStatus};

/// Sequences `cargo test` tries.
const CASES: u32 = 256;
/// The most operations in one sequence.
const LENGTH: usize = 40;
/// Session slots: Claude Code windows, each running one session at a time.
const SLOTS: usize = 3;
const STEPS: [&str; 5] = [
    "Read the grammar",
    "Write the parser",
    "Test it",
    "Ship it",
    "Write docs",
];
const PROMPTS: [&str; 3] = [
    "add a nil-safe parser",
    "also handle leap years",
    "carry on",
];
const PUSH: &str = "git push origin main";
const MAX_ATTEMPTS: u32 = 3;
const BRIEF_MAX: usize = 4000;

#[derive(Debug, Clone, Copy)]
enum Source {
    Startup,
    Resume,
    Clear,
    Compact,
}

#[derive(Debug, Clone)]
enum Op {
    Start(usize, Source),
    Prompt(usize, usize),
    Plan(usize, Vec<usize>),
    StepStart(usize, usize),
    StepDone(usize, usize),
    StepFail(usize, usize),
    Write(usize, usize),
    Validate(usize, bool),
    /// A push; `true`: the session is killed while it runs.
    Push(usize, bool),
    /// `git fetch`: the check the brief names for a push.
    Fetch(usize),
    Kill(usize),
    Stop(usize),
    StopFailure(usize),
    Wait(i64),
}

fn op() -> impl Strategy<Value = Op> {
    let who = 0..SLOTS;
    prop_oneof![
        3 => (who.clone(), 0..4usize).prop_map(|(w, s)| Op::Start(w, [Source::Startup, Source::Resume, Source::Clear, Source::Compact][s])),
        2 => (who.clone(), 0..PROMPTS.len()).prop_map(|(w, p)| Op::Prompt(w, p)),
        2 => (who.clone(), proptest::collection::vec(0..STEPS.len(), 1..4)).prop_map(|(w, n)| Op::Plan(w, n)),
        2 => (who.clone(), 0..STEPS.len()).prop_map(|(w, n)| Op::StepStart(w, n)),
        2 => (who.clone(), 0..STEPS.len()).prop_map(|(w, n)| Op::StepDone(w, n)),
        1 => (who.clone(), 0..STEPS.len()).prop_map(|(w, n)| Op::StepFail(w, n)),
        4 => (who.clone(), 0..4usize).prop_map(|(w, f)| Op::Write(w, f)),
        2 => (who.clone(), any::<bool>()).prop_map(|(w, p)| Op::Validate(w, p)),
        1 => (who.clone(), any::<bool>()).prop_map(|(w, k)| Op::Push(w, k)),
        1 => who.clone().prop_map(Op::Fetch),
        2 => who.clone().prop_map(Op::Kill),
        2 => who.clone().prop_map(Op::Stop),
        1 => who.clone().prop_map(Op::StopFailure),
        1 => (1..30i64).prop_map(Op::Wait),
    ]
}

/// One window: the session it runs and its Claude Code process.
#[derive(Debug, Clone, Default)]
struct Slot {
    session: Option<String>,
    generation: u32,
    alive: bool,
    /// Mid-turn: an event since its last Stop.
    mid_turn: bool,
    /// Killed mid-turn and not declared yet.
    crashed: bool,
}

/// The world: the task, the windows, the time, and what the model expects.
struct World {
    hook: Option<Hook>,
    slots: Vec<Slot>,
    now: DateTime<Utc>,
    /// Crashes the task's history must hold.
    crashes: usize,
    /// The attempt the last brief promised for a step, kept until the step's next work.
    promise: Option<(String, u32)>,
    /// Per step id, the highest attempt seen (an attempt never goes back).
    attempts: BTreeMap<String, u32>,
    /// What may raise an attempt: crashes declared, failed validations, failed steps.
    failures: u32,
    config: Config,
}

impl World {
    fn new() -> World {
        World {
            hook: None,
            slots: vec![Slot::default(); SLOTS],
            now: DateTime::parse_from_rfc3339("2026-11-27T10:00:00Z")
                .unwrap()
                .with_timezone(&Utc),
            crashes: 0,
            promise: None,
            attempts: BTreeMap::new(),
            failures: 0,
            config: Config::default(),
        }
    }

    fn owner(&self, who: usize) -> Owner {
        Owner {
            pid: 1000 + who as u32,
            start: u64::from(self.slots[who].generation),
        }
    }

    /// The task an event of a live window works on: a new one when there is none or the
    /// last is finished (as `Need::Create` makes it).
    fn task(&mut self) -> &mut Hook {
        if self.hook.as_ref().is_none_or(|h| h.state.is_terminal()) {
            let mut h = Hook::new("t", "w", 0, self.now);
            h.task_id = format!("task-{}", self.now.timestamp());
            self.hook = Some(h);
            // The new task knows no session yet: crashes the old one never declared, and
            // turns under way, are the old task's.
            for s in &mut self.slots {
                s.crashed = false;
                s.mid_turn = false;
            }
        }
        self.hook.as_mut().unwrap()
    }

    fn id(&self, who: usize) -> Option<String> {
        let s = &self.slots[who];
        s.session.clone().filter(|_| s.alive)
    }

    /// An event of window `who`'s session marking it mid-turn.
    fn active(&mut self, who: usize, id: &str) {
        let (now, owner) = (self.now, self.owner(who));
        let h = self.task();
        h.note_session(id, None, SessionStatus::Active, now);
        // A session first seen after its SessionStart gets its process (prompt.rs).
        if h.session_mut(id).is_some_and(|s| s.owner.is_none()) {
            h.set_owner(id, Some(owner));
        }
        self.slots[who].mid_turn = true;
    }

    fn apply(&mut self, op: &Op) {
        self.now += Duration::seconds(7);
        match *op {
            Op::Start(who, source) => self.start(who, source),
            Op::Wait(minutes) => self.now += Duration::minutes(minutes),
            Op::Kill(who) => self.kill(who),
            _ => {
                let who = who_of(op);
                let Some(id) = self.id(who) else { return };
                self.work(who, &id, op);
            }
        }
    }

    fn kill(&mut self, who: usize) {
        let s = &mut self.slots[who];
        if s.alive {
            s.alive = false;
            s.crashed |= s.mid_turn;
        }
    }

    /// SessionStart as `session_start::start` applies it, then the brief it gives.
    fn start(&mut self, who: usize, source: Source) {
        let fresh = matches!(source, Source::Startup | Source::Resume);
        let slot = &mut self.slots[who];
        if !fresh && !slot.alive {
            return; // /clear and compaction happen in a running window.
        }
        if fresh {
            // A new process: the old one ended first (mid-turn, that is a crash).
            self.kill(who);
            let slot = &mut self.slots[who];
            if matches!(source, Source::Startup) || slot.session.is_none() {
                slot.session = Some(format!("s{who}-{}", slot.generation));
            }
            slot.generation += 1;
            slot.alive = true;
            slot.mid_turn = false;
        }
        let id = self.slots[who].session.clone().unwrap();
        let Some(mut hook) = self.hook.take() else {
            return;
        };
        if fresh {
            self.expect_crash(&hook, who);
            let starting = self.owner(who);
            let live = self.liveness(Some(starting));
            match super::detect(&hook, self.now, self.config.stale_threshold, &id, &live) {
                Some(c) => {
                    assert!(super::enter_recovery(
                        &mut hook,
                        c,
                        Default::default(),
                        self.now
                    ));
                }
                None => super::absorb(&mut hook, &id, &live),
            }
            hook.note_session(&id, None, SessionStatus::Idle, self.now);
            hook.set_owner(&id, Some(starting));
        }
        self.hook = Some(hook);
        self.brief(who, &id, source);
    }

    /// What the model says detection must find at a fresh start of window `who`.
    fn expect_crash(&mut self, hook: &Hook, who: usize) {
        let others_live =
            (0..SLOTS).any(|w| w != who && self.slots[w].alive && self.slots[w].mid_turn);
        let gone: Vec<usize> = (0..SLOTS).filter(|&w| self.slots[w].crashed).collect();
        if hook.state.is_terminal() || gone.is_empty() {
            return;
        }
        // A session resumed while another is live goes on as that live session allows: its
        // own crash is not declared (the next brief names the live one instead).
        let resumed = self.slots[who].crashed
            && self.slots[who]
                .session
                .as_deref()
                .is_some_and(|id| hook.sessions.iter().any(|s| s.session_id == id));
        if others_live && hook.state != HookState::Recovering && resumed {
            self.slots[who].crashed = false;
        }
        // Recovering already: the crash is declared, the sessions end with it.
        if hook.state != HookState::Recovering {
            if others_live {
                return;
            }
            self.crashes += 1;
            self.failures += 1;
        }
        for w in gone {
            self.slots[w].crashed = false;
            self.slots[w].mid_turn = false;
        }
    }

    /// Whether a recorded session's process still runs, seen from `starting`.
    fn liveness(&self, starting: Option<Owner>) -> impl Fn(&Session) -> bool + use<> {
        let running: Vec<Owner> = (0..SLOTS)
            .filter(|&w| self.slots[w].alive)
            .map(|w| self.owner(w))
            .collect();
        move |s: &Session| {
            s.owner
                .is_some_and(|o| Some(o) != starting && running.contains(&o))
        }
    }

    fn work(&mut self, who: usize, id: &str, op: &Op) {
        let now = self.now;
        match op {
            Op::Prompt(_, p) => {
                self.task().last_prompt = Some(PROMPTS[*p].into());
                self.active(who, id);
                self.task().end_command(id, None);
            }
            Op::Plan(_, names) => {
                let names: Vec<String> = names.iter().map(|n| STEPS[*n].to_string()).collect();
                self.task().plan(&names, StepSource::Manual, now);
                self.active(who, id);
            }
            Op::StepStart(_, n) | Op::StepDone(_, n) | Op::StepFail(_, n) => {
                let status = match op {
                    Op::StepStart(..) => StepStatus::InProgress,
                    Op::StepDone(..) => StepStatus::Completed,
                    _ => StepStatus::Failed,
                };
                self.set_step(who, id, STEPS[*n], status);
            }
            Op::Write(_, f) => {
                self.activity(who, id);
                let file = format!("src/f{f}.rs");
                let h = self.task();
                h.touch_file(&file, now);
                h.note_work(id, &[file.as_str()]);
            }
            Op::Validate(_, pass) => self.validate(who, id, *pass),
            Op::Push(_, killed) => self.push(who, id, *killed),
            Op::Fetch(_) => {
                self.activity(who, id);
                super::repeat::settle(self.task(), "git fetch origin");
            }
            Op::Stop(_) => self.stop(who, id, false),
            Op::StopFailure(_) => self.stop(who, id, true),
            Op::Start(..) | Op::Kill(_) | Op::Wait(_) => unreachable!(),
        }
        self.check_attempts();
    }

    /// `waymark step start|done|fail NAME` from the agent's Bash.
    fn set_step(&mut self, who: usize, id: &str, name: &str, status: StepStatus) {
        let now = self.now;
        let h = self.task();
        let Some(step) = h.find_step(name).map(|s| s.id.clone()) else {
            return;
        };
        if h.set_step_status(&step, status, MAX_ATTEMPTS, now).is_ok()
            && status == StepStatus::Failed
        {
            self.failures += 1;
        }
        self.promise = None;
        self.active(who, id);
    }

    /// What every tool call that works does first (PostToolUse: the step re-entered).
    fn activity(&mut self, who: usize, id: &str) {
        let now = self.now;
        let _ = self.task().ensure_running(MAX_ATTEMPTS, now);
        self.active(who, id);
        // The step the brief promised an attempt for takes exactly that attempt.
        let h = self.hook.as_ref().unwrap();
        if let (Some((step, attempt)), Some(c)) = (self.promise.take(), &h.current_step) {
            if c.step_id == step && h.state == HookState::StepRunning {
                assert_eq!(
                    c.attempt, attempt,
                    "the attempt the brief promised for {step}"
                );
            }
        }
    }

    fn validate(&mut self, who: usize, id: &str, pass: bool) {
        self.activity(who, id);
        let now = self.now;
        let h = self.task();
        let mut run =
            validation::observed("make test", if pass { 0 } else { 2 }, "", "", None, now);
        run.observed = true;
        let receipt = ValidationReceipt::new("", run);
        let head = ReceiptHead::after(h.receipt_head.as_ref(), &receipt);
        validation::record(h, Sealed { receipt, head }, "FAILED\n", now);
        if !pass {
            self.failures += 1;
        }
    }

    /// A push from Bash: the repeat guard first (a non-interactive run refuses what it
    /// asks about), then in flight until its PostToolUse, which a kill never sends.
    fn push(&mut self, who: usize, id: &str, killed: bool) {
        let now = self.now;
        if super::repeat::check(self.task(), PUSH).is_some() {
            return;
        }
        self.activity(who, id);
        let kinds = Kinds {
            git_push: true,
            side_effect: true,
            ..Kinds::default()
        };
        self.task().begin_command(id, PUSH, &kinds, now);
        if killed {
            self.kill(who);
            return;
        }
        self.activity(who, id);
        let h = self.task();
        h.end_command(id, Some(PUSH));
        h.note_side_effect(PUSH, 0, now);
    }

    /// Stop (or StopFailure): the turn ended; a finished plan completes the task.
    fn stop(&mut self, who: usize, id: &str, failed: bool) {
        let now = self.now;
        let h = self.task();
        h.end_command(id, None);
        if !failed && h.state == HookState::StepPending && h.all_steps_completed() {
            h.finish(HookState::Completed, now).unwrap();
        }
        h.note_session(id, None, SessionStatus::Idle, now);
        if failed && let Some(s) = h.session_mut(id) {
            s.failed_turn = Some(crate::task::FailedTurn {
                error: "overloaded".into(),
                message: "Overloaded".into(),
                at: now,
            });
        }
        self.slots[who].mid_turn = false;
    }

    /// An attempt never goes back, and rises only with a crash, a failed validation or a
    /// failed step.
    fn check_attempts(&mut self) {
        let Some(h) = &self.hook else { return };
        for s in h.steps.iter().filter(|s| s.source != StepSource::Implicit) {
            let attempt = match &h.current_step {
                Some(c) if c.step_id == s.id => c.attempt,
                _ => s.attempt,
            };
            let seen = self
                .attempts
                .entry(format!("{}/{}", h.task_id, s.id))
                .or_default();
            assert!(
                attempt >= *seen,
                "step {} went back from attempt {seen} to {attempt}",
                s.name
            );
            assert!(
                attempt <= 1 + self.failures,
                "step {} at attempt {attempt} after {} failures",
                s.name,
                self.failures
            );
            *seen = attempt;
        }
    }

    /// The brief the session starting in window `who` gets, read as the next agent reads it.
    fn brief(&mut self, who: usize, id: &str, source: Source) {
        let h = self.hook.as_ref().unwrap();
        assert_eq!(
            h.journal
                .history
                .iter()
                .filter(|e| e.trigger == "crash_detected")
                .count(),
            self.crashes,
            "every crash declared exactly once"
        );
        let live = self.liveness(Some(self.owner(who)));
        let extras = Extras {
            source: format!("{source:?}").to_lowercase(),
            elsewhere: h.working_elsewhere(id, &live).cloned().collect(),
            plan_note: true,
            ..Extras::default()
        };
        let b = brief::render(
            h,
            Switch::On,
            Path::new("/p/HOOK.md"),
            BRIEF_MAX,
            &extras,
            self.now,
        )
        .unwrap();
        read_brief(h, &b);
        self.promise = h
            .next_step()
            .filter(|s| s.source != StepSource::Implicit && exhausted(h).is_none())
            .map(|s| (s.id.clone(), next_attempt(h, s)));
        if let Some((_, attempt)) = &self.promise {
            let said = format!("attempt {attempt} of");
            assert!(b.contains(&said) || !b.contains("attempt"), "{said}:\n{b}");
        }
    }
}

fn who_of(op: &Op) -> usize {
    match *op {
        Op::Start(w, _)
        | Op::Prompt(w, _)
        | Op::Plan(w, _)
        | Op::StepStart(w, _)
        | Op::StepDone(w, _)
        | Op::StepFail(w, _)
        | Op::Write(w, _)
        | Op::Validate(w, _)
        | Op::Push(w, _)
        | Op::Fetch(w)
        | Op::Kill(w)
        | Op::Stop(w)
        | Op::StopFailure(w) => w,
        Op::Wait(_) => 0,
    }
}

/// The brief's own invariants: one consistent thing for the next agent.
fn read_brief(h: &Hook, b: &str) {
    assert!(b.chars().count() <= BRIEF_MAX, "over its bound:\n{b}");
    if h.state.is_terminal() {
        assert_eq!(
            b.lines()
                .filter(|l| l.starts_with("[waymark] Task"))
                .count(),
            1,
            "{b}"
        );
        return;
    }
    assert_eq!(b.contains("CRASH DETECTED"), h.recovery.is_some(), "{b}");
    assert!(b.matches("CRASH DETECTED").count() <= 1, "{b}");
    if let Some(p) = &h.last_prompt {
        assert!(
            b.contains(p.as_str()),
            "the user's last request {p:?}:\n{b}"
        );
    }
    let human = b.contains("HUMAN NEEDED");
    assert_eq!(human, exhausted(h).is_some(), "{b}");
    if human {
        assert!(
            !b.contains("Resume step") && !b.contains("Start step"),
            "ask or resume, not both:\n{b}"
        );
    } else if let Some(s) = h.next_step() {
        let named = format!("\"{}\"", s.name);
        assert!(
            s.source == StepSource::Implicit || b.contains(&named),
            "the step to resume {named}:\n{b}"
        );
    }
    if h.unplanned() {
        assert!(
            !b.contains("attempt") && !b.contains("Session work"),
            "no plan is no step:\n{b}"
        );
    }
    // DO NOT REPEAT lists exactly the last completed steps.
    let done: Vec<&str> = h.completed_steps().map(|s| s.name.as_str()).collect();
    let listed: Vec<&str> = b
        .split("DO NOT REPEAT (completed):\n")
        .nth(1)
        .map(|rest| {
            rest.lines()
                .take_while(|l| l.starts_with("- "))
                .filter_map(|l| l.split('"').nth(1))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(listed, done[done.len().saturating_sub(10)..], "{b}");
    // A side effect whose outcome a crash left unknown is named until it is checked.
    let unknown = h
        .current_step
        .iter()
        .flat_map(|c| &c.side_effects)
        .any(|e| e.unknown && !e.checked);
    if unknown {
        assert!(b.contains("outcome unknown"), "{b}");
    }
}

fn run(ops: &[Op]) {
    let mut w = World::new();
    for op in ops {
        w.apply(op);
    }
}

fn cases() -> u32 {
    std::env::var("WAYMARK_SEQUENCES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CASES)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_sequence_of_sessions_keeps_the_brief_true(ops in proptest::collection::vec(op(), 1..LENGTH)) {
        run(&ops);
    }
}

/// Shrunk failures, kept as the sequences that found them.
mod regressions {
    use super::{Op::*, Source::*, run};

    /// Issue 42, case 1: A killed mid-step, B resumes and stops cleanly, C is not told
    /// of A's crash again (nor does it spend a second attempt).
    #[test]
    fn a_crash_is_not_declared_again_by_the_session_after_next() {
        run(&[
            Start(0, Startup),
            Prompt(0, 0),
            Plan(0, vec![1]),
            StepStart(0, 1),
            Write(0, 0),
            Kill(0),
            Start(1, Startup),
            Prompt(1, 2),
            Write(1, 1),
            Stop(1),
            Start(2, Startup),
        ]);
    }

    /// Issue 42, case 6: a failed validation from Bash, then work, then a clean stop: the
    /// attempt announced is the one taken.
    #[test]
    fn the_attempt_announced_after_a_failed_validation_is_taken() {
        run(&[
            Start(0, Startup),
            Prompt(0, 0),
            Plan(0, vec![1]),
            StepStart(0, 1),
            Validate(0, false),
            Stop(0),
            Start(0, Resume),
            Prompt(0, 2),
            Write(0, 0),
            Validate(0, true),
            Stop(0),
            Start(1, Startup),
        ]);
    }
}
