//! A model-based test of recovery (issues 42 and 49): random sequences of sessions
//! (started, resumed, an older one resumed in another window, forked, cleared, compacted,
//! killed, stopped cleanly or on an API error, two at once, Claude Code's and Codex CLI's
//! with their UUIDv7 ids), prompts (go-on prompts among them), plans and step commands of
//! the agent and of a person at a terminal (`step start|done|retry|checked`, `task done`),
//! file writes, validations passing and failing, pushes (some interrupted by a kill), the
//! check the brief names, and time passing, applied to the task as the hook handlers and
//! the commands apply them. After every step the invariants of
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
use crate::recovery::guidance::exhausted;
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
const PROMPTS: [&str; 4] = [
    "add a nil-safe parser",
    "also handle leap years",
    "carry on",
    "continue",
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
    /// `claude --resume <id> --fork-session`: a new session on an old conversation.
    Fork,
}

/// What a person types at a terminal while the agents recover: no session of theirs.
#[derive(Debug, Clone, Copy)]
enum Hand {
    Start(usize),
    Done(usize),
    Retry(usize),
    Checked,
    TaskDone,
}

#[derive(Debug, Clone)]
enum Op {
    Start(usize, Source),
    /// Window `.0` resumes the session window `.1` last ran (`claude --resume <id>`).
    ResumeOther(usize, usize),
    Hand(Hand),
    Prompt(usize, usize),
    Plan(usize, Vec<usize>),
    StepStart(usize, usize),
    StepDone(usize, usize),
    StepFail(usize, usize),
    Write(usize, usize),
    /// A file written from Bash (`printf … > src/fN.rs`): the shell reader names it.
    BashWrite(usize, usize),
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
        3 => (who.clone(), 0..5usize).prop_map(|(w, s)| Op::Start(w, [Source::Startup, Source::Resume, Source::Clear, Source::Compact, Source::Fork][s])),
        1 => (who.clone(), who.clone()).prop_map(|(w, o)| Op::ResumeOther(w, o)),
        2 => hand(),
        2 => (who.clone(), 0..PROMPTS.len()).prop_map(|(w, p)| Op::Prompt(w, p)),
        2 => (who.clone(), proptest::collection::vec(0..STEPS.len(), 1..4)).prop_map(|(w, n)| Op::Plan(w, n)),
        2 => (who.clone(), 0..STEPS.len()).prop_map(|(w, n)| Op::StepStart(w, n)),
        2 => (who.clone(), 0..STEPS.len()).prop_map(|(w, n)| Op::StepDone(w, n)),
        1 => (who.clone(), 0..STEPS.len()).prop_map(|(w, n)| Op::StepFail(w, n)),
        3 => (who.clone(), 0..4usize).prop_map(|(w, f)| Op::Write(w, f)),
        1 => (who.clone(), 0..4usize).prop_map(|(w, f)| Op::BashWrite(w, f)),
        2 => (who.clone(), any::<bool>()).prop_map(|(w, p)| Op::Validate(w, p)),
        1 => (who.clone(), any::<bool>()).prop_map(|(w, k)| Op::Push(w, k)),
        1 => who.clone().prop_map(Op::Fetch),
        2 => who.clone().prop_map(Op::Kill),
        2 => who.clone().prop_map(Op::Stop),
        1 => who.clone().prop_map(Op::StopFailure),
        1 => (1..30i64).prop_map(Op::Wait),
    ]
}

fn hand() -> impl Strategy<Value = Op> {
    let n = 0..STEPS.len();
    prop_oneof![
        n.clone().prop_map(Hand::Start),
        n.clone().prop_map(Hand::Done),
        n.prop_map(Hand::Retry),
        Just(Hand::Checked),
        Just(Hand::TaskDone),
    ]
    .prop_map(Op::Hand)
}

/// The window Codex CLI runs in: its sessions have UUIDv7 ids, which begin alike.
const CODEX: usize = SLOTS - 1;

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

    /// A new session id for window `who`: Codex CLI's are UUIDv7, whose first 8 hex
    /// digits (the time) are the same for sessions started within a minute.
    fn new_session(&self, who: usize) -> String {
        let g = self.slots[who].generation;
        match who {
            CODEX => format!("01a225b6-0000-7000-8000-{:012x}", 0xabc000 + u64::from(g)),
            _ => format!("s{who}-{g}"),
        }
    }

    /// The task an event works on, as `current::change` finds it for `need`: a new one
    /// when there is none, or when the last is finished and the event may start one (a
    /// prompt, a plan); a tool call after a finished task finds none.
    fn task_for(&mut self, create: bool) -> Option<&mut Hook> {
        let finished = self.hook.as_ref().is_some_and(|h| h.state.is_terminal());
        if finished && !create {
            return None;
        }
        if self.hook.is_none() || finished {
            let mut h = Hook::new("t", "w", 0, self.now);
            h.task_id = format!("task-{}", self.now.timestamp());
            self.hook = Some(h);
            // Its history holds its own crashes.
            self.crashes = 0;
            // The new task knows no session yet: crashes the old one never declared, and
            // turns under way, are the old task's.
            for s in &mut self.slots {
                s.crashed = false;
                s.mid_turn = false;
            }
        }
        self.hook.as_mut()
    }

    fn task(&mut self) -> &mut Hook {
        self.task_for(true).expect("created")
    }

    fn id(&self, who: usize) -> Option<String> {
        let s = &self.slots[who];
        s.session.clone().filter(|_| s.alive)
    }

    /// An event of window `who`'s session marking it mid-turn.
    fn active(&mut self, who: usize, id: &str) {
        let (now, owner) = (self.now, self.owner(who));
        let Some(h) = self.hook.as_mut().filter(|h| !h.state.is_terminal()) else {
            return;
        };
        h.note_session(id, None, SessionStatus::Active, now);
        if who == CODEX
            && let Some(s) = h.session_mut(id)
        {
            s.client = Some("Codex CLI".into());
        }
        // A session first seen after its SessionStart gets its process (prompt.rs).
        if h.session_mut(id).is_some_and(|s| s.owner.is_none()) {
            h.set_owner(id, Some(owner));
        }
        self.slots[who].mid_turn = true;
    }

    fn apply(&mut self, op: &Op) {
        self.now += Duration::seconds(7);
        match *op {
            Op::Start(who, source) => self.start(who, source, None),
            Op::ResumeOther(who, other) => self.resume_other(who, other),
            Op::Hand(hand) => self.hand(hand),
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

    /// Window `who` resumes the session window `other` ran, once that window has closed:
    /// the session, and a crash it left, move to `who`.
    fn resume_other(&mut self, who: usize, other: usize) {
        let (codex, from_codex) = (who == CODEX, other == CODEX);
        if who == other || self.slots[other].alive || codex != from_codex {
            return;
        }
        let Some(id) = self.slots[other].session.take() else {
            return;
        };
        self.kill(who);
        let crashed = std::mem::take(&mut self.slots[other].crashed);
        self.slots[other].mid_turn = false;
        let slot = &mut self.slots[who];
        slot.crashed |= crashed;
        self.start(who, Source::Resume, Some(id));
    }

    /// SessionStart as `session_start::start` applies it, then the brief it gives.
    fn start(&mut self, who: usize, source: Source, resumed: Option<String>) {
        let fresh = matches!(source, Source::Startup | Source::Resume | Source::Fork);
        if !fresh && !self.slots[who].alive {
            return; // /clear and compaction happen in a running window.
        }
        if fresh {
            // A new process: the old one ended first (mid-turn, that is a crash).
            self.kill(who);
            let new = self.new_session(who);
            let slot = &mut self.slots[who];
            match (source, resumed) {
                (_, Some(id)) => slot.session = Some(id),
                (Source::Resume, None) if slot.session.is_some() => {}
                _ => slot.session = Some(new),
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
            self.expect_crash(&hook, who, &id);
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
        }
        super::tell(&mut hook, &id, self.now);
        if fresh && !hook.state.is_terminal() {
            hook.note_session(&id, None, SessionStatus::Idle, self.now);
            hook.set_owner(&id, Some(self.owner(who)));
            if who == CODEX
                && let Some(s) = hook.session_mut(&id)
            {
                s.client = Some("Codex CLI".into());
            }
        }
        self.hook = Some(hook);
        self.brief(who, &id, source);
    }

    /// What the model says detection must find at a fresh start of window `who` (session
    /// `id` starting).
    fn expect_crash(&mut self, hook: &Hook, who: usize, id: &str) {
        let others_live =
            (0..SLOTS).any(|w| w != who && self.slots[w].alive && self.slots[w].mid_turn);
        let gone: Vec<usize> = (0..SLOTS).filter(|&w| self.slots[w].crashed).collect();
        if hook.state.is_terminal() || gone.is_empty() {
            return;
        }
        // A session resumed while another is live goes on as that live session allows: its
        // own crash is not declared (the next brief names the live one instead).
        let resumed = self.slots[who].crashed && hook.sessions.iter().any(|s| s.session_id == id);
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
            Op::Prompt(_, p) => self.prompt(who, id, PROMPTS[*p]),
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
                if self.set_step(STEPS[*n], status) {
                    self.active(who, id);
                }
            }
            Op::Write(_, f) | Op::BashWrite(_, f) => {
                if !self.activity(who, id) {
                    return;
                }
                let file = format!("src/f{f}.rs");
                let h = self.task();
                h.touch_file(&file, now);
                h.note_work(id, &[file.as_str()]);
            }
            Op::Validate(_, pass) => self.validate(who, id, *pass),
            Op::Push(_, killed) => self.push(who, id, *killed),
            Op::Fetch(_) => {
                if self.activity(who, id) {
                    super::repeat::settle(self.task(), "git fetch origin");
                }
            }
            Op::Stop(_) => self.stop(who, id, false),
            Op::StopFailure(_) => self.stop(who, id, true),
            _ => unreachable!(),
        }
        self.check_attempts();
    }

    /// UserPromptSubmit: the request noted unless another session is at work (then it is
    /// this session's own question), the session mid-turn.
    fn prompt(&mut self, who: usize, id: &str, prompt: &str) {
        let live = self.liveness(Some(self.owner(who)));
        let h = self.task();
        if h.working_elsewhere(id, &live).next().is_none() {
            h.note_request(prompt.into());
        }
        self.active(who, id);
        self.task().end_command(id, None);
    }

    /// `waymark step start|done|fail NAME`, from the agent's Bash or a person's terminal:
    /// refused on a finished task; the last step done finishes the task. Whether it ran.
    fn set_step(&mut self, name: &str, status: StepStatus) -> bool {
        let now = self.now;
        let Some(h) = self.hook.as_mut().filter(|h| !h.state.is_terminal()) else {
            return false;
        };
        let Some(step) = h.find_step(name).map(|s| s.id.clone()) else {
            return false;
        };
        if h.set_step_status(&step, status, MAX_ATTEMPTS, now).is_ok()
            && status == StepStatus::Failed
        {
            self.failures += 1;
        }
        if status == StepStatus::Completed
            && h.state == HookState::StepPending
            && h.all_steps_completed()
        {
            h.finish(HookState::Completed, now).unwrap();
        }
        self.promise = None;
        true
    }

    /// What a person types at a terminal.
    fn hand(&mut self, hand: Hand) {
        let now = self.now;
        match hand {
            Hand::Start(n) => {
                self.set_step(STEPS[n], StepStatus::InProgress);
            }
            Hand::Done(n) => {
                self.set_step(STEPS[n], StepStatus::Completed);
            }
            Hand::Retry(n) => {
                let Some(h) = self.hook.as_mut().filter(|h| !h.state.is_terminal()) else {
                    return;
                };
                if let Some(step) = h.find_step(STEPS[n]).map(|s| s.id.clone()) {
                    let _ = h.retry_step(&step, MAX_ATTEMPTS, now);
                    self.promise = None;
                }
            }
            Hand::Checked => {
                if let Some(h) = self.hook.as_mut().filter(|h| !h.state.is_terminal())
                    && !super::repeat::settle_all(h).is_empty()
                {
                    h.end_recovery("step_checked", now);
                }
            }
            Hand::TaskDone => {
                if let Some(h) = self.hook.as_mut().filter(|h| !h.state.is_terminal()) {
                    h.finish(HookState::Completed, now).unwrap();
                }
            }
        }
        self.check_attempts();
    }

    /// What every tool call that works does first (PostToolUse: the step re-entered).
    /// False after a finished task: the call is no new task's.
    fn activity(&mut self, who: usize, id: &str) -> bool {
        let now = self.now;
        let Some(h) = self.task_for(false) else {
            return false;
        };
        let _ = h.ensure_running(MAX_ATTEMPTS, now);
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
        true
    }

    fn validate(&mut self, who: usize, id: &str, pass: bool) {
        if !self.activity(who, id) {
            return;
        }
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
        let Some(h) = self.task_for(false) else {
            return;
        };
        if super::repeat::check(h, PUSH).is_some() {
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

    /// Stop (or StopFailure): the turn ended; a crash told to this session is over; a
    /// finished plan completes the task.
    fn stop(&mut self, who: usize, id: &str, failed: bool) {
        let now = self.now;
        self.slots[who].mid_turn = false;
        let Some(h) = self.hook.as_mut().filter(|h| !h.state.is_terminal()) else {
            return;
        };
        h.end_command(id, None);
        if !failed {
            super::heard(h, id, now);
            if h.state == HookState::StepPending && h.all_steps_completed() {
                h.finish(HookState::Completed, now).unwrap();
                return;
            }
        }
        h.note_session(id, None, SessionStatus::Idle, now);
        if failed && let Some(s) = h.session_mut(id) {
            s.failed_turn = Some(crate::task::FailedTurn {
                error: "overloaded".into(),
                message: "Overloaded".into(),
                at: now,
            });
        }
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
        // One crash, one verdict: only the session it is told to hears it.
        if b.contains("CRASH DETECTED") {
            let told = h.recovery.as_ref().and_then(|r| r.told.as_deref());
            assert_eq!(told, Some(id), "the crash told to another session:\n{b}");
        }
        self.promise = h
            .next_step()
            .filter(|s| s.source != StepSource::Implicit && exhausted(h).is_none())
            .map(|s| (s.id.clone(), h.next_attempt(s)));
        if let Some((_, attempt)) = &self.promise {
            let said = format!("attempt {attempt} of");
            assert!(b.contains(&said) || !b.contains("attempt"), "{said}:\n{b}");
        }
    }
}

fn who_of(op: &Op) -> usize {
    match *op {
        Op::Start(w, _)
        | Op::ResumeOther(w, _)
        | Op::Prompt(w, _)
        | Op::Plan(w, _)
        | Op::StepStart(w, _)
        | Op::StepDone(w, _)
        | Op::StepFail(w, _)
        | Op::Write(w, _)
        | Op::BashWrite(w, _)
        | Op::Validate(w, _)
        | Op::Push(w, _)
        | Op::Fetch(w)
        | Op::Kill(w)
        | Op::Stop(w)
        | Op::StopFailure(w) => w,
        Op::Wait(_) | Op::Hand(_) => 0,
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
    read_asked(h, b);
    read_steps(h, b);
    // Two sessions of one task never read alike.
    let mut labels: Vec<String> = h
        .sessions
        .iter()
        .map(|s| h.session_label(&s.session_id))
        .collect();
    labels.sort();
    labels.dedup();
    assert_eq!(labels.len(), h.sessions.len(), "{:?}", h.sessions);
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

/// What the brief says the task is for, and what it says to do at the last attempt.
fn read_asked(h: &Hook, b: &str) {
    // The goal survives: what the task is for is named in every brief, and the latest
    // request only when it says something new.
    if let Some(g) = &h.goal {
        assert!(
            b.contains(&format!("The task: {g}")),
            "the goal {g:?}:\n{b}"
        );
    }
    match h.news() {
        Some(p) => assert!(
            b.contains(&format!("The latest request: {p}")),
            "{p:?}:\n{b}"
        ),
        None => assert!(!b.contains("The latest request"), "no news:\n{b}"),
    }
    let human = b.contains("HUMAN NEEDED");
    assert_eq!(human, exhausted(h).is_some(), "{b}");
    if human {
        // No line beside it tells the agent to go on.
        for go_on in [
            "Resume step",
            "Start step",
            "Recovery:",
            "and go on",
            "Go on with",
            "Retry the",
            "waymark step start N",
        ] {
            assert!(!b.contains(go_on), "ask or go on ({go_on}), not both:\n{b}");
        }
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
}

/// The steps as the brief names them: DO NOT REPEAT, and their numbers.
fn read_steps(h: &Hook, b: &str) {
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
    // Nothing is to be fixed and run again for a step under DO NOT REPEAT.
    for name in &done {
        let about = format!("(step \"{name}\")");
        assert!(
            !b.lines()
                .any(|l| l.contains(&about) && l.contains("run it again")),
            "advice for a completed step:\n{b}"
        );
    }
    // "step N" is the step `waymark step start N` takes: one numbering.
    let numbered = regex::Regex::new(r#"[Ss]tep (\d+) "([^"]*)""#).unwrap();
    for c in numbered.captures_iter(b) {
        let named = h.find_step(&c[1]).map(|s| s.name.as_str());
        assert_eq!(named, Some(&c[2]), "step {} names another:\n{b}", &c[1]);
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

    /// Issue 49, case 1: after a crash the user types "continue": the brief still names
    /// the task by the request that began it (read_brief: "The task: …").
    #[test]
    fn the_goal_survives_continue() {
        run(&[
            Start(0, Startup),
            Prompt(0, 0),
            Plan(0, vec![1]),
            StepStart(0, 1),
            Write(0, 0),
            Kill(0),
            Start(1, Startup),
            Prompt(1, 3),
            Write(1, 1),
            Kill(1),
            Start(2, Startup),
        ]);
    }

    /// Issue 49, case 2: the session told of a crash only reads and stops; the next one
    /// is not told again (the verdict is for the session told), and a person's `step
    /// checked` or `step done` ends it as well.
    #[test]
    fn a_crash_is_told_once_whoever_settles_it() {
        let crashed = [
            Start(0, Startup),
            Prompt(0, 0),
            Plan(0, vec![1, 2]),
            StepStart(0, 1),
            Push(0, true),
            Start(1, Startup),
        ];
        let then = [
            vec![Prompt(1, 3), Stop(1), Start(2, Startup)],
            vec![Hand(super::Hand::Checked), Start(2, Startup)],
            vec![Hand(super::Hand::Done(1)), Start(2, Startup)],
            vec![Start(2, Startup), Start(1, Resume)],
        ];
        for then in then {
            run(&[crashed.to_vec(), then].concat());
        }
    }

    /// Issue 49, case 3: a fork of a crashed session declares the crash at its start.
    #[test]
    fn a_fork_declares_the_crash_it_starts_from() {
        run(&[
            Start(0, Startup),
            Prompt(0, 0),
            Plan(0, vec![1]),
            StepStart(0, 1),
            Write(0, 0),
            Kill(0),
            Start(0, Fork),
            Write(0, 1),
        ]);
    }

    /// Issue 49, case 4: attempts spent in crashes, then `step start` twice and a retry.
    #[test]
    fn attempts_run_out_by_crashes_and_a_person_grants_one_more() {
        let mut ops = vec![Start(0, Startup), Prompt(0, 0), Plan(0, vec![1])];
        for w in 0..3 {
            ops.extend([Start(w, Startup), StepStart(w, 1), Write(w, 0), Kill(w)]);
        }
        ops.extend([
            Start(0, Startup),
            Hand(super::Hand::Start(1)),
            Hand(super::Hand::Start(1)),
            Start(1, Startup),
            Hand(super::Hand::Retry(1)),
            Write(1, 1),
            Stop(1),
            Start(2, Startup),
        ]);
        run(&ops);
    }

    /// Issue 49, case 6: the last step done finishes the task; the work after it opens no
    /// "Session work", and a new request starts a new task.
    #[test]
    fn a_finished_plan_stays_finished() {
        run(&[
            Start(0, Startup),
            Prompt(0, 0),
            Plan(0, vec![1]),
            StepStart(0, 1),
            Validate(0, false),
            StepStart(0, 1),
            StepDone(0, 1),
            BashWrite(0, 2),
            Stop(0),
            Start(1, Startup),
            Prompt(1, 1),
            Write(1, 0),
            Start(2, Startup),
        ]);
    }
}
