//! Crash detection (seed 001 §4) and the recovery it starts.
//!
//! A crash is a previous session that ended without Stop or SessionEnd after its last
//! activity (Claude Code was killed mid-turn), or a task left in a non-terminal state past
//! `stale_threshold` with no session to vouch for it. Recovery is idempotent: a hook
//! already `recovering` keeps its recovery context.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::context::Ctx;
use crate::task::{Hook, HookEvent, HookState, RecoveryContext, SessionStatus, machine};

/// Why the previous session is judged to have crashed, if it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crash {
    /// `signal` or `timeout`.
    pub crash_type: &'static str,
    pub why: String,
}

/// Decides whether the hook's last session crashed.
pub fn detect(hook: &Hook, now: DateTime<Utc>, stale_threshold: Duration) -> Option<Crash> {
    if hook.state.is_terminal() || hook.state == HookState::Recovering {
        return None;
    }
    let age = (now - hook.updated_at).to_std().unwrap_or_default();
    match hook.session() {
        Some(s) if s.status == SessionStatus::Active => Some(Crash {
            crash_type: "signal",
            why: format!(
                "session {} ended mid-turn: no Stop or SessionEnd after its last event ({})",
                short(&s.session_id),
                crate::text::stamp(s.last_event_at)
            ),
        }),
        None if matches!(
            hook.state,
            HookState::StepRunning | HookState::StepValidating
        ) && age > stale_threshold =>
        {
            Some(Crash {
                crash_type: "timeout",
                why: format!(
                    "no update for {} while {} (stale past {})",
                    crate::text::ago(now, hook.updated_at),
                    hook.state,
                    crate::text::format_duration(stale_threshold)
                ),
            })
        }
        _ => None,
    }
}

fn short(id: &str) -> &str {
    &id[..id.len().min(8)]
}

/// Runs crash detection on a loaded hook and, on a crash, moves it to `recovering` with a
/// filled recovery context. Returns true when a crash was found now. Idempotent.
pub fn recover(ctx: &Ctx, hook: &mut Hook) -> bool {
    let Some(crash) = detect(hook, ctx.now, ctx.config.stale_threshold) else {
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
        session_id: hook.session().map(|s| s.session_id.clone()),
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
        Some(Session {
            session_id: "abcdef123456".into(),
            started_at: t,
            last_event_at: t,
            status,
            transcript_path: None,
            end_reason: None,
        })
    }

    #[test]
    fn an_active_session_that_vanished_is_a_signal_crash() {
        let mut h = running("Implement fix", &[]);
        h.sessions = session(SessionStatus::Active).into_iter().collect();
        let c = detect(&h, Utc::now(), std::time::Duration::from_secs(300)).unwrap();
        assert_eq!(c.crash_type, "signal");
        assert!(c.why.contains("abcdef12"));
    }

    #[test]
    fn clean_sessions_are_not_crashes() {
        for st in [SessionStatus::Idle, SessionStatus::Ended] {
            let mut h = running("Implement fix", &[]);
            h.sessions = session(st).into_iter().collect();
            assert_eq!(
                detect(&h, Utc::now(), std::time::Duration::from_secs(300)),
                None
            );
        }
    }

    #[test]
    fn stale_without_a_session_is_a_timeout() {
        let h = running("Implement fix", &[]);
        assert_eq!(
            detect(&h, Utc::now(), std::time::Duration::from_secs(300))
                .unwrap()
                .crash_type,
            "timeout"
        );
        assert_eq!(
            detect(&h, Utc::now(), std::time::Duration::from_secs(7200)),
            None
        );
    }

    #[test]
    fn terminal_and_recovering_never_crash() {
        let mut h = running("x", &[]);
        h.sessions = session(SessionStatus::Active).into_iter().collect();
        h.transition(HookState::Recovering, machine::CRASH_DETECTED, Utc::now())
            .unwrap();
        assert_eq!(detect(&h, Utc::now(), std::time::Duration::ZERO), None);
        let mut h = running("x", &[]);
        h.finish(HookState::Abandoned, Utc::now()).unwrap();
        assert_eq!(detect(&h, Utc::now(), std::time::Duration::ZERO), None);
    }
}
