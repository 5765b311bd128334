//! Crash detection (docs/design.md, Crash detection) and the recovery it starts; whether a
//! process still runs and what changed on disk are the application's (`recovery`).
//!
//! A session is **live** while it is mid-turn (an event since its last Stop) and the Claude
//! Code process running it still runs. A **crash** is a session left
//! mid-turn whose process is gone: Claude Code was killed, or the machine went down. A
//! session whose process cannot be known (not Linux, or state written before owners were
//! recorded) counts as gone when it is found mid-turn, as before. While another session
//! is live the task is being worked on: no crash is declared, whatever else is found, and
//! the new session is told who works on what. A task left in a non-terminal state past
//! `stale_threshold` with no session at all is a crash too (`timeout`). Recovery is
//! idempotent: a hook already `recovering` keeps its recovery context.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::task::{
    Hook, HookEvent, HookState, InFlight, RecoveryContext, Session, SessionStatus, SideEffect,
    machine,
};

/// Why the previous session is judged to have crashed, if it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crash {
    /// `signal` or `timeout`.
    pub crash_type: &'static str,
    pub why: String,
    /// The session that crashed, when one was left mid-turn.
    pub session_id: Option<String>,
}

/// Decides whether a session before `new_session` crashed. `live` says whether a
/// session's Claude Code process still runs (and is not the one starting `new_session`).
pub fn detect(
    hook: &Hook,
    now: DateTime<Utc>,
    stale_threshold: Duration,
    new_session: &str,
    live: &dyn Fn(&Session) -> bool,
) -> Option<Crash> {
    if hook.state.is_terminal() || hook.state == HookState::Recovering {
        return None;
    }
    if hook.working_elsewhere(new_session, live).next().is_some() {
        return None;
    }
    let age = (now - hook.updated_at).to_std().unwrap_or_default();
    let left_mid_turn = hook
        .sessions
        .iter()
        .filter(|s| s.status == SessionStatus::Active)
        .max_by_key(|s| s.last_event_at);
    if let Some(s) = left_mid_turn {
        return Some(Crash {
            crash_type: "signal",
            why: format!(
                "{} ended mid-turn: no Stop or SessionEnd after its last event ({})",
                hook.session_name(&s.session_id),
                crate::text::stamp(s.last_event_at)
            ),
            session_id: Some(s.session_id.clone()),
        });
    }
    // With no session recorded at all, only time can tell.
    let running = matches!(
        hook.state,
        HookState::StepRunning | HookState::StepValidating
    );
    (hook.sessions.is_empty() && running && age > stale_threshold).then(|| Crash {
        crash_type: "timeout",
        why: format!(
            "no update for {} while {} (stale past {})",
            crate::text::ago(now, hook.updated_at),
            hook.state,
            crate::text::format_duration(stale_threshold)
        ),
        session_id: None,
    })
}

/// What the application read for a recovery context: it costs I/O, so it is read only once
/// a crash is found.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// Files of the last checkpoint changed since it was made.
    pub file_warnings: Vec<String>,
    /// Files the last checkpoint's snapshot left out, holding a secret.
    pub withheld: Vec<String>,
    /// The task's logged history, newest last (read only when the task was validating:
    /// `waymark validate` notes its command there when it enters `step_validating`).
    pub logged_history: Vec<HookEvent>,
    /// What changed in the work tree since the last checkpoint, in words.
    pub changed: Option<String>,
    /// The files that changed (the application names at most [`crate::task::CHANGED_NAMED`]).
    pub changed_files: Vec<String>,
}

/// What the crash interrupted in the running step ([`InFlight`]): taken out of the step; a
/// side effect among it is recorded as done with its outcome unknown, which the brief says
/// how to check and the repeat guard asks about.
fn interrupted(hook: &mut Hook) -> Option<InFlight> {
    let c = hook.current_step.as_mut()?;
    let f = c.in_flight.take()?;
    if f.side_effect {
        c.side_effects.push(SideEffect {
            command: f.command.clone(),
            exit_code: -1,
            at: f.started_at,
            unknown: true,
            checked: false,
        });
        crate::task::bounds::keep_newest(&mut c.side_effects, crate::task::SIDE_EFFECTS);
    }
    Some(f)
}

/// Moves a task whose last session `crash`ed to `recovering`, with a recovery context
/// from the task and what the application `found`. Returns false when the machine refuses.
pub fn enter_recovery(hook: &mut Hook, crash: Crash, found: Found, now: DateTime<Utc>) -> bool {
    let (action, reason) = super::decide::decide(hook, now);
    let last_known = hook.state;
    let interrupted = interrupted(hook);
    let validating = (last_known == HookState::StepValidating)
        .then(|| {
            found
                .logged_history
                .iter()
                .chain(&hook.journal.history)
                .rev()
                .find(|e| e.trigger == "validation_start")
                .and_then(|e| e.details.get("command"))
                .and_then(|c| c.as_str())
                .map(str::to_string)
        })
        .flatten()
        .or_else(|| interrupted.filter(|f| f.validation).map(|f| f.command));
    let context = RecoveryContext {
        detected_at: now,
        crash_type: crash.crash_type.into(),
        last_known_state: last_known,
        was_validating: validating.is_some() || last_known == HookState::StepValidating,
        validation_cmd: validating,
        partial_output: hook
            .current_step
            .as_ref()
            .map(|c| c.last_output.clone())
            .filter(|o| !o.is_empty()),
        recommended_action: action.into(),
        reason: format!("{}; {}", crash.why, reason),
        last_checkpoint_id: hook.resume_checkpoint().map(|c| c.checkpoint_id.clone()),
        file_warnings: found.file_warnings,
        withheld: found.withheld,
        session_id: crash.session_id.clone(),
        changed: found.changed,
        changed_files: found.changed_files,
        told: None,
    };
    // The crash's history event names the crashed session, for the timeline (`waymark
    // log`) to tell whose crash it was.
    let mut details = BTreeMap::from([
        ("crash_type".to_string(), Value::from(crash.crash_type)),
        ("recommended_action".to_string(), Value::from(action)),
    ]);
    if let Some(s) = &crash.session_id {
        details.insert("session_id".into(), Value::from(s.as_str()));
    }
    if hook
        .transition_with(HookState::Recovering, machine::CRASH_DETECTED, details, now)
        .is_err()
    {
        return false;
    }
    hook.recovery = Some(context);
    declared(hook, now);
    true
}

/// The sessions a crash was declared for leave the mid-turn list: none of them is live
/// (detection declares no crash while one is), so each ended with the crash, and the
/// next session to start must not declare it again (one crash, one verdict, one attempt).
/// The crash ended the step's attempt, as a failed validation does: one rule for the
/// attempts (its next entry is a new one, refused past the last).
fn declared(hook: &mut Hook, now: DateTime<Utc>) {
    if let Some(c) = hook.current_step.as_mut() {
        c.resumed_after_crash = true;
    }
    hook.record_failure(now);
    end_crashed(hook, |_| true);
}

/// While the task is `recovering`, a session left mid-turn whose process is gone since
/// (it was killed before it did any work) belongs to the crash already declared: it ends
/// with it now, rather than being declared again by a later session start.
pub fn absorb(hook: &mut Hook, new_session: &str, live: &dyn Fn(&Session) -> bool) {
    if hook.state == HookState::Recovering {
        end_crashed(hook, |s| s.session_id != new_session && !live(s));
    }
}

/// One crash, one verdict (docs/recovery.md): the crash is news for the first session
/// whose brief gives it, `session` starting now when none was told yet. Once it was told
/// to another session, that session has heard it: the recovery is over, and this brief
/// does not announce it again; unless that session itself crashed before it took the step
/// up (ended with the crash, `absorb`), when the verdict passes to this one.
pub fn tell(hook: &mut Hook, session: &str, now: DateTime<Utc>) {
    let Some(told) = hook.recovery.as_ref().map(|r| r.told.clone()) else {
        return;
    };
    let crashed = |id: &str| {
        hook.sessions
            .iter()
            .any(|s| s.session_id == id && s.end_reason.as_deref() == Some(CRASHED))
    };
    match told {
        Some(t) if t != session && !crashed(&t) => hook.end_recovery("crash_told", now),
        Some(t) if t == session => {}
        _ => {
            if let Some(r) = hook.recovery.as_mut() {
                r.told = Some(session.to_string());
            }
        }
    }
}

/// The session told of the crash ended its turn (or itself) without taking the step up:
/// it has heard the verdict, and the recovery is over (the step's next entry is still a
/// new attempt).
pub fn heard(hook: &mut Hook, session: &str, now: DateTime<Utc>) {
    let told = hook.recovery.as_ref().and_then(|r| r.told.as_deref());
    if told == Some(session) {
        hook.end_recovery("crash_told", now);
    }
}

/// Ends with the declared crash each session left mid-turn that `ended` says ended so.
fn end_crashed(hook: &mut Hook, ended: impl Fn(&Session) -> bool) {
    let mid_turn = hook
        .sessions
        .iter_mut()
        .filter(|s| s.status == SessionStatus::Active);
    for s in mid_turn.filter(|s| ended(s)) {
        s.status = SessionStatus::Ended;
        s.end_reason = Some(CRASHED.into());
    }
}

/// The end reason of a session whose crash was declared.
pub const CRASHED: &str = "crashed";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::Session;
    use chrono::Duration as CDuration;

    fn running(name: &str, files: &[&str]) -> Hook {
        crate::task::testing::running(name, files, Utc::now() - CDuration::hours(1))
    }

    fn session(status: SessionStatus) -> Option<Session> {
        let t = Utc::now() - CDuration::hours(1);
        Some(Session::new("abcdef123456", None, status, t))
    }

    const GONE: &dyn Fn(&Session) -> bool = &|_| false;
    const LIVE: &dyn Fn(&Session) -> bool = &|_| true;

    fn detect(
        h: &Hook,
        threshold: std::time::Duration,
        live: &dyn Fn(&Session) -> bool,
    ) -> Option<Crash> {
        super::detect(h, Utc::now(), threshold, "new-session", live)
    }

    #[test]
    fn an_active_session_that_vanished_is_a_signal_crash() {
        let mut h = running("Implement fix", &[]);
        h.sessions = session(SessionStatus::Active).into_iter().collect();
        let c = detect(&h, std::time::Duration::from_secs(300), GONE).unwrap();
        assert_eq!(c.crash_type, "signal");
        assert!(
            c.why.starts_with("Claude Code session abcdef12"),
            "{}",
            c.why
        );
        // A Codex CLI session's crash names the agent, for whichever agent comes next.
        h.sessions[0].client = Some("Codex CLI".into());
        let c = detect(&h, std::time::Duration::from_secs(300), GONE).unwrap();
        assert!(c.why.starts_with("Codex CLI session abcdef12"), "{}", c.why);
    }

    /// One crash, one verdict: once declared, the crashed sessions have ended with it, and
    /// the task back at work and stopped cleanly finds no crash at the next start.
    #[test]
    fn a_crash_is_declared_once_for_every_session_it_ended() {
        let now = Utc::now();
        let mut h = running("Implement fix", &[]);
        h.sessions = session(SessionStatus::Active).into_iter().collect();
        let mut other = session(SessionStatus::Active).unwrap();
        other.session_id = "0123456789ab".into();
        h.sessions.push(other);
        let c = detect(&h, std::time::Duration::from_secs(300), GONE).unwrap();
        assert!(enter_recovery(&mut h, c, Found::default(), now));
        for s in &h.sessions {
            assert_eq!(s.status, SessionStatus::Ended, "{}", s.session_id);
            assert_eq!(s.end_reason.as_deref(), Some(CRASHED));
        }
        // The next session works on the step and stops cleanly.
        h.ensure_running(3, now).unwrap();
        assert_eq!(h.state, HookState::StepRunning);
        h.note_session("next", None, SessionStatus::Idle, now);
        assert_eq!(detect(&h, std::time::Duration::from_secs(300), GONE), None);
        assert_eq!(h.current_step.as_ref().unwrap().attempt, 2);
    }

    /// While the task recovers, a session killed before it did any work ends with the
    /// crash already declared (a live one, and the session starting, are left alone); a
    /// task not recovering is not touched.
    #[test]
    fn a_session_gone_while_the_task_recovers_ends_with_the_declared_crash() {
        let now = Utc::now();
        let mut h = running("Implement fix", &[]);
        let mut gone = Session::new("gone", None, SessionStatus::Active, now);
        gone.owner = Some(crate::task::session::Owner { pid: 1, start: 1 });
        let mut live = gone.clone();
        live.session_id = "live".into();
        live.owner = Some(crate::task::session::Owner { pid: 2, start: 2 });
        let mut starting = gone.clone();
        starting.session_id = "new".into();
        h.sessions = vec![gone, live, starting];
        let alive = |s: &Session| s.owner.is_some_and(|o| o.pid == 2);
        let before = h.clone();
        absorb(&mut h, "new", &alive);
        assert_eq!(h.sessions, before.sessions, "not recovering: untouched");
        h.transition(HookState::Recovering, machine::CRASH_DETECTED, now)
            .unwrap();
        absorb(&mut h, "new", &alive);
        let status = |id: &str| {
            let s = h.sessions.iter().find(|s| s.session_id == id).unwrap();
            (s.status, s.end_reason.clone())
        };
        assert_eq!(status("gone"), (SessionStatus::Ended, Some(CRASHED.into())));
        assert_eq!(status("live"), (SessionStatus::Active, None));
        assert_eq!(status("new"), (SessionStatus::Active, None));
    }

    /// One crash, one verdict: told to the first session that starts; over when another
    /// starts after it, or when the one told ends its turn; passed on when the one told
    /// crashed itself before it took the step up. The step's next entry is a new attempt
    /// whichever way.
    #[test]
    fn a_crash_is_told_once_and_passed_on_only_by_a_crash() {
        let now = Utc::now();
        let crashed = || {
            let mut h = running("Implement fix", &[]);
            h.sessions = session(SessionStatus::Active).into_iter().collect();
            let c = detect(&h, std::time::Duration::from_secs(300), GONE).unwrap();
            assert!(enter_recovery(&mut h, c, Found::default(), now));
            tell(&mut h, "told", now);
            h.note_session("told", None, SessionStatus::Active, now);
            h
        };
        let told = |h: &Hook| h.recovery.as_ref().and_then(|r| r.told.clone());
        let mut h = crashed();
        assert_eq!(told(&h).as_deref(), Some("told"));
        tell(&mut h, "told", now);
        assert_eq!(
            h.state,
            HookState::Recovering,
            "its own briefs still tell it"
        );
        // Another session starts: the one told has heard it.
        tell(&mut h, "next", now);
        assert_eq!(
            (h.state, h.recovery.is_some()),
            (HookState::StepPending, false)
        );
        assert_eq!(h.next_attempt(h.next_step().unwrap()), 2);
        // The one told ends its turn.
        let mut h = crashed();
        heard(&mut h, "other", now);
        assert_eq!(h.state, HookState::Recovering, "not the one told");
        heard(&mut h, "told", now);
        assert_eq!(h.state, HookState::StepPending);
        // The one told crashed before it took the step up: the verdict passes on.
        let mut h = crashed();
        absorb(&mut h, "next", GONE);
        tell(&mut h, "next", now);
        assert_eq!(h.state, HookState::Recovering);
        assert_eq!(told(&h).as_deref(), Some("next"));
    }

    #[test]
    fn clean_sessions_are_not_crashes() {
        for st in [SessionStatus::Idle, SessionStatus::Ended] {
            let mut h = running("Implement fix", &[]);
            h.sessions = session(st).into_iter().collect();
            assert_eq!(detect(&h, std::time::Duration::from_secs(300), GONE), None);
        }
    }

    #[test]
    fn stale_without_a_session_is_a_timeout() {
        let h = running("Implement fix", &[]);
        assert_eq!(
            detect(&h, std::time::Duration::from_secs(300), GONE)
                .unwrap()
                .crash_type,
            "timeout"
        );
        assert_eq!(detect(&h, std::time::Duration::from_secs(7200), GONE), None);
    }

    #[test]
    fn terminal_and_recovering_never_crash() {
        let mut h = running("x", &[]);
        h.sessions = session(SessionStatus::Active).into_iter().collect();
        h.transition(HookState::Recovering, machine::CRASH_DETECTED, Utc::now())
            .unwrap();
        assert_eq!(detect(&h, std::time::Duration::ZERO, GONE), None);
        let mut h = running("x", &[]);
        h.finish(HookState::Abandoned, Utc::now()).unwrap();
        assert_eq!(detect(&h, std::time::Duration::ZERO, GONE), None);
    }

    #[test]
    fn stale_exactly_at_the_threshold_is_not_yet_a_timeout() {
        let now = Utc::now();
        let h = crate::task::testing::running("Implement fix", &[], now - CDuration::seconds(300));
        let at = |secs| super::detect(&h, now, std::time::Duration::from_secs(secs), "new", GONE);
        assert_eq!(at(300), None);
        assert_eq!(at(299).unwrap().crash_type, "timeout");
    }

    /// What changed is said against what it was counted against: the last checkpoint's
    /// commit, or with none yet the last commit, in the brief and in HOOK.md alike.
    #[test]
    fn what_changed_names_its_base_the_same_in_the_brief_and_hook_md() {
        let now = Utc::now();
        for with_checkpoint in [false, true] {
            let mut h = running("Implement fix", &["src/a.rs"]);
            if with_checkpoint {
                let cp = crate::task::checkpoint::build(
                    &h,
                    crate::task::CheckpointTrigger::Manual,
                    "before",
                    None,
                    crate::task::checkpoint::Head::default(),
                    now,
                );
                h.push_checkpoint(cp);
            }
            let found = Found {
                changed: Some("1 file, +1/−0 lines (1 new)".into()),
                ..Found::default()
            };
            assert!(enter_recovery(&mut h, crash(), found, now));
            let base = match with_checkpoint {
                true => "the last checkpoint's commit",
                false => "the last commit (no checkpoint yet)",
            };
            let path = std::path::Path::new("/p/HOOK.md");
            let extras = crate::recovery::brief::Extras::default();
            let brief = crate::recovery::brief::render(
                &h,
                crate::config::Switch::On,
                path,
                4000,
                &extras,
                now,
            );
            let brief = brief.unwrap();
            let line = format!("Changed since {base}: 1 file, +1/−0 lines (1 new).");
            assert!(brief.contains(&line), "{brief}");
            let md = crate::recovery::hookmd::render(&h);
            let item = format!("- **Changed since {base}:** 1 file, +1/−0 lines (1 new)");
            assert!(md.contains(&item), "{md}");
            assert_eq!(
                brief.contains("No checkpoint yet"),
                !with_checkpoint,
                "{brief}"
            );
        }
    }

    /// "Nothing changed" never sits beside a step's files unexplained (issue 42, case 7):
    /// it says the files listed are as the commit has them.
    #[test]
    fn nothing_changed_says_the_files_listed_are_as_the_commit_has_them() {
        let now = Utc::now();
        let mut h = running("Handle leap years", &["src/leap.rs"]);
        let found = Found {
            changed: Some(crate::task::NOTHING_CHANGED.into()),
            ..Found::default()
        };
        assert!(enter_recovery(&mut h, crash(), found, now));
        let path = std::path::Path::new("/p/HOOK.md");
        let extras = crate::recovery::brief::Extras::default();
        let brief =
            crate::recovery::brief::render(&h, crate::config::Switch::On, path, 4000, &extras, now)
                .unwrap();
        assert!(
            brief.contains("Changed since the last commit (no checkpoint yet): nothing: the files listed, if any, are as that commit has them."),
            "{brief}"
        );
        assert!(brief.contains("src/leap.rs"), "{brief}");
    }

    /// A crash of session `abcdef123456`, and what the application read.
    fn crash() -> Crash {
        Crash {
            crash_type: "signal",
            why: "session abcdef12 ended mid-turn".into(),
            session_id: Some("abcdef123456".into()),
        }
    }

    fn command(c: &str) -> std::collections::BTreeMap<String, serde_json::Value> {
        std::collections::BTreeMap::from([("command".to_string(), serde_json::Value::from(c))])
    }

    /// A task validating `cargo test` when its session crashed, its validation_start saved
    /// in the task's history (read back by the application) or in this change's journal.
    #[test]
    fn a_crash_during_validation_says_which_validation_to_run_again() {
        for logged in [false, true] {
            let now = Utc::now();
            let mut h = running("Implement fix", &["src/a.rs"]);
            h.transition_with(
                HookState::StepValidating,
                "validation_start",
                command("cargo test"),
                now,
            )
            .unwrap();
            h.current_step.as_mut().unwrap().last_output = "running 12 tests".into();
            let found = Found {
                file_warnings: vec!["src/a.rs".into()],
                withheld: vec![".env.local".into()],
                changed_files: Vec::new(),
                logged_history: match logged {
                    true => std::mem::take(&mut h.journal.history),
                    false => vec![],
                },
                changed: Some("1 file, +2/−0 lines".into()),
            };
            assert!(enter_recovery(&mut h, crash(), found, now));
            assert_eq!(h.state, HookState::Recovering);
            let r = h.recovery.as_ref().unwrap();
            assert_eq!(
                (r.crash_type.as_str(), r.last_known_state),
                ("signal", HookState::StepValidating)
            );
            assert!(r.was_validating, "logged: {logged}");
            assert_eq!(
                r.validation_cmd.as_deref(),
                Some("cargo test"),
                "logged: {logged}"
            );
            assert_eq!(r.partial_output.as_deref(), Some("running 12 tests"));
            assert_eq!(r.recommended_action, "retry_step");
            assert_eq!(
                r.reason,
                "session abcdef12 ended mid-turn; the crash came during validation, which is safe to re-run"
            );
            assert_eq!(r.file_warnings, ["src/a.rs"]);
            assert_eq!(r.withheld, [".env.local"]);
            assert_eq!(r.session_id.as_deref(), Some("abcdef123456"));
            assert_eq!(r.changed.as_deref(), Some("1 file, +2/−0 lines"));
            assert!(h.current_step.as_ref().unwrap().resumed_after_crash);
            let todo: Vec<String> = crate::recovery::guidance::guidance(&h, &h.outline())
                .todo
                .into_iter()
                .map(|t| t.text)
                .collect();
            assert!(
                todo.contains(&"Re-run the interrupted validation: `cargo test`.".to_string()),
                "{todo:?}"
            );
        }
    }

    /// A step that validated earlier and crashed while running again: no validation to run
    /// again, and no output when the step had none.
    #[test]
    fn a_crash_while_running_names_no_validation() {
        let now = Utc::now();
        let mut h = running("Implement fix", &["src/a.rs"]);
        let earlier = HookEvent {
            timestamp: now,
            from_state: Some(HookState::StepRunning),
            to_state: HookState::StepValidating,
            trigger: "validation_start".into(),
            step_name: Some("Implement fix".into()),
            details: command("cargo test"),
        };
        let found = Found {
            logged_history: vec![earlier],
            ..Found::default()
        };
        assert!(enter_recovery(&mut h, crash(), found, now));
        let r = h.recovery.unwrap();
        assert_eq!(
            (r.last_known_state, r.was_validating),
            (HookState::StepRunning, false)
        );
        assert_eq!((r.validation_cmd, r.partial_output), (None, None));
        assert_eq!(r.recommended_action, "manual");
    }

    /// What a crash interrupted in the running step (issue 31, items 3 and 4): a
    /// validation the agent ran from Bash is run again (`retry_step`), a side effect is
    /// recorded as done with its outcome unknown; either leaves the step's flight.
    #[test]
    fn a_crash_interrupting_a_command_runs_a_validation_again_and_doubts_a_side_effect() {
        let now = Utc::now();
        let begun = |command: &str| {
            let mut h = running("Implement fix", &["src/a.rs"]);
            let defaults: Vec<String> = crate::config::DEFAULT_VALIDATION_COMMANDS
                .iter()
                .map(|d| d.to_string())
                .collect();
            let kinds = crate::shell::classify(command, &defaults, &[]);
            assert!(h.begin_command("s1", command, &kinds, now));
            assert!(
                !h.begin_command("s1", command, &kinds, now),
                "already in flight"
            );
            h
        };
        let mut h = begun("cargo test");
        assert!(enter_recovery(&mut h, crash(), Found::default(), now));
        let r = h.recovery.as_ref().unwrap();
        assert_eq!(
            (r.was_validating, r.validation_cmd.as_deref()),
            (true, Some("cargo test"))
        );
        assert_eq!(r.recommended_action, "retry_step");
        let c = h.current_step.as_ref().unwrap();
        assert!(c.in_flight.is_none() && c.side_effects.is_empty());

        let mut h = begun("git push origin main");
        assert!(enter_recovery(&mut h, crash(), Found::default(), now));
        let r = h.recovery.as_ref().unwrap();
        assert_eq!(
            (r.was_validating, r.recommended_action.as_str()),
            (false, "manual")
        );
        let c = h.current_step.as_ref().unwrap();
        assert!(c.in_flight.is_none());
        let e = &c.side_effects[0];
        assert_eq!(
            (e.command.as_str(), e.unknown, e.exit_code, e.at),
            ("git push origin main", true, -1, now)
        );

        // A step that has done as many side effects as it keeps: the interrupted one is
        // kept, the oldest goes.
        let mut h = begun("git push origin main");
        let c = h.current_step.as_mut().unwrap();
        c.side_effects = crate::task::testing::pushes(crate::task::SIDE_EFFECTS, now);
        assert!(enter_recovery(&mut h, crash(), Found::default(), now));
        let kept = &h.current_step.as_ref().unwrap().side_effects;
        assert_eq!(kept.len(), crate::task::SIDE_EFFECTS);
        assert_eq!(kept[0].command, "git push origin v1");
        assert!(kept.last().unwrap().unknown);
    }

    /// Only the command's own end, or its session's turn ending, ends its flight.
    #[test]
    fn a_command_in_flight_ends_with_itself_or_its_session_s_turn() {
        let now = Utc::now();
        let mut h = running("Implement fix", &[]);
        let kinds = crate::shell::classify("git push", &[], &[]);
        let flying = |h: &Hook| h.current_step.as_ref().unwrap().in_flight.is_some();
        h.begin_command("s1", "git push", &kinds, now);
        h.end_command("s1", Some("git ls-remote"));
        h.end_command("s2", None);
        h.end_command("s2", Some("git push"));
        assert!(flying(&h));
        h.end_command("s1", Some("git push"));
        assert!(!flying(&h));
        h.begin_command("s1", "git push", &kinds, now);
        h.end_command("s1", None);
        assert!(!flying(&h));
        // The same command begun by another session is that session's now.
        h.begin_command("s1", "git push", &kinds, now);
        assert!(h.begin_command("s2", "git push", &kinds, now));
        let f = h.current_step.as_ref().unwrap().in_flight.as_ref().unwrap();
        assert_eq!(f.session_id, "s2");
        let mut idle = Hook::new("t", "w", 0, now);
        assert!(
            !idle.begin_command("s1", "git push", &kinds, now),
            "no step"
        );
    }

    #[test]
    fn a_finished_task_is_not_put_back_in_recovery() {
        let now = Utc::now();
        let mut h = running("Implement fix", &[]);
        h.finish(HookState::Abandoned, now).unwrap();
        assert!(!enter_recovery(&mut h, crash(), Found::default(), now));
        assert_eq!((h.state, h.recovery), (HookState::Abandoned, None));
    }

    #[test]
    fn a_session_whose_process_still_runs_is_working_not_crashed() {
        let mut h = running("Implement fix", &[]);
        h.sessions = session(SessionStatus::Active).into_iter().collect();
        assert_eq!(detect(&h, std::time::Duration::from_secs(300), LIVE), None);
        // Its own resumption in a new process is not "another" session: it crashed.
        let c = super::detect(
            &h,
            Utc::now(),
            std::time::Duration::ZERO,
            "abcdef123456",
            LIVE,
        );
        assert_eq!(c.unwrap().crash_type, "signal");
        // One live session vouches for the task even when an older one was left mid-turn.
        let mut other = session(SessionStatus::Active).unwrap();
        other.session_id = "live-one".into();
        h.sessions.push(other);
        let live_one: &dyn Fn(&Session) -> bool = &|s| s.session_id == "live-one";
        assert_eq!(detect(&h, std::time::Duration::ZERO, live_one), None);
        assert!(detect(&h, std::time::Duration::ZERO, GONE).is_some());
    }
}
