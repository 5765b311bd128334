//! Crash detection (docs/design.md, Crash detection) and the recovery it starts.
//!
//! A session is **live** while it is mid-turn (an event since its last Stop) and the Claude
//! Code process running it still runs (`crate::process`). A **crash** is a session left
//! mid-turn whose process is gone: Claude Code was killed, or the machine went down. A
//! session whose process cannot be known (not Linux, or state written before owners were
//! recorded) counts as gone when it is found mid-turn, as before. While another session
//! is live the task is being worked on: no crash is declared, whatever else is found, and
//! the new session is told who works on what. A task left in a non-terminal state past
//! `stale_threshold` with no session at all is a crash too (`timeout`). Recovery is
//! idempotent: a hook already `recovering` keeps its recovery context.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::context::Ctx;
use crate::process::Owner;
use crate::task::{Hook, HookEvent, HookState, RecoveryContext, Session, SessionStatus, machine};

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
                "session {} ended mid-turn: no Stop or SessionEnd after its last event ({})",
                crate::text::short_id(&s.session_id),
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

/// Whether a session is live, seen from a process that is `starting` (the Claude Code
/// process starting a new session; `None` for a command, which starts none): its process
/// still runs and is not that one (a process that starts a new session has left its old
/// one).
pub fn liveness(starting: Option<Owner>) -> impl Fn(&Session) -> bool {
    move |s: &Session| {
        s.owner
            .is_some_and(|o| Some(o) != starting && crate::process::alive(&o))
    }
}

/// What changed in the work tree since the last checkpoint (its commit, else HEAD), new
/// files counted with their lines: `2 files, +12/−3 lines (1 new)`; `None` outside git.
/// Starts git: only crash recovery and a `/clear` ask.
pub fn changed_since(ctx: &Ctx, hook: &Hook) -> Option<String> {
    let since = hook.last_checkpoint().and_then(|c| c.git_commit.clone());
    let d = crate::git::diff_stat(&ctx.project.root, since.as_deref(), &ctx.config.agent_md)?;
    Some(d.describe())
}

/// Runs crash detection on a loaded hook for session `new_session` starting and, on a
/// crash, moves it to `recovering` with a filled recovery context. Returns true when a
/// crash was found now. Idempotent.
pub fn recover(
    ctx: &Ctx,
    hook: &mut Hook,
    new_session: &str,
    live: &dyn Fn(&Session) -> bool,
) -> bool {
    let Some(crash) = detect(hook, ctx.now, ctx.config.stale_threshold, new_session, live) else {
        return false;
    };
    let (action, reason) = super::decide::decide(hook, ctx.now);
    let last_known = hook.state;
    let warnings = hook
        .last_checkpoint()
        .and_then(|c| crate::capture::load(&ctx.project, &hook.task_id, &c.checkpoint_id))
        .map(|c| crate::capture::changed_since(&ctx.project, &c.files))
        .unwrap_or_default();
    // `waymark validate` notes the command in the history when it enters step_validating.
    let validating = if last_known == HookState::StepValidating {
        use crate::task::store::{HISTORY_LOG, read_log};
        let logged: Vec<HookEvent> =
            read_log(&ctx.project, &hook.task_id, HISTORY_LOG, Some(50)).unwrap_or_default();
        logged
            .iter()
            .chain(&hook.journal.history)
            .rev()
            .find(|e| e.trigger == "validation_start")
            .and_then(|e| e.details.get("command"))
            .and_then(|c| c.as_str())
            .map(str::to_string)
    } else {
        None
    };
    let context = RecoveryContext {
        detected_at: ctx.now,
        crash_type: crash.crash_type.into(),
        last_known_state: last_known,
        was_validating: last_known == HookState::StepValidating,
        validation_cmd: validating,
        partial_output: hook
            .current_step
            .as_ref()
            .map(|c| c.last_output.clone())
            .filter(|o| !o.is_empty()),
        recommended_action: action.into(),
        reason: format!("{}; {}", crash.why, reason),
        last_checkpoint_id: hook.last_checkpoint().map(|c| c.checkpoint_id.clone()),
        file_warnings: warnings,
        session_id: crash.session_id.clone(),
        changed: changed_since(ctx, hook),
    };
    let mut details = std::collections::BTreeMap::new();
    details.insert(
        "crash_type".into(),
        serde_json::Value::from(crash.crash_type),
    );
    details.insert("recommended_action".into(), serde_json::Value::from(action));
    if hook
        .transition_with(
            HookState::Recovering,
            machine::CRASH_DETECTED,
            details,
            ctx.now,
        )
        .is_err()
    {
        return false;
    }
    hook.recovery = Some(context);
    if let Some(c) = hook.current_step.as_mut() {
        c.resumed_after_crash = true;
    }
    true
}

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
        assert!(c.why.contains("abcdef12"));
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
