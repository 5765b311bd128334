//! Crash detection and the recovery decision tree (seed 001 §4 and §6).
//!
//! A crash is a previous session that ended without Stop or SessionEnd after its last
//! activity (Claude Code was killed mid-turn), or a task left in a non-terminal state past
//! `stale_threshold` with no session to vouch for it. Recovery is idempotent: a hook
//! already `recovering` keeps its recovery context.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::context::Ctx;
use crate::task::{Hook, HookState, RecoveryContext, SessionStatus, machine};

/// A checkpoint younger than this is a good place to resume from.
pub const RECENT_CHECKPOINT: Duration = Duration::from_secs(10 * 60);

/// Step names that only read or check, so are safe to retry (seed 001 §6).
const IDEMPOTENT_WORDS: &[&str] = &[
    "analy",
    "plan",
    "validat",
    "test",
    "review",
    "read",
    "investigat",
    "research",
    "check",
    "verif",
    "explor",
    "design",
    "inspect",
    "audit",
    "lint",
];

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
    match &hook.session {
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

/// The recommendation of seed 001 §6's decision tree, with its reason.
pub fn decide(hook: &Hook, now: DateTime<Utc>) -> (&'static str, String) {
    let recent = hook
        .last_checkpoint()
        .filter(|c| (now - c.created_at).to_std().unwrap_or_default() < RECENT_CHECKPOINT);
    if let Some(c) = recent {
        return (
            "retry_from_checkpoint",
            format!(
                "checkpoint {} ({}) is {} old",
                c.checkpoint_id,
                c.trigger.as_str(),
                crate::text::ago(now, c.created_at)
            ),
        );
    }
    match hook.state {
        HookState::StepValidating => (
            "retry_step",
            "the crash came during validation, which is safe to re-run".into(),
        ),
        HookState::StepRunning => {
            let Some(ctx) = &hook.current_step else {
                return (
                    "manual",
                    "a step was running but its context is missing".into(),
                );
            };
            let name = ctx.step_name.to_lowercase();
            if IDEMPOTENT_WORDS.iter().any(|w| name.contains(w)) && ctx.files_touched.is_empty() {
                (
                    "retry_step",
                    format!(
                        "step \"{}\" only reads and checks: safe to retry",
                        ctx.step_name
                    ),
                )
            } else {
                (
                    "manual",
                    format!(
                        "step \"{}\" changes files{}: review them before going on",
                        ctx.step_name,
                        if ctx.files_touched.is_empty() {
                            String::new()
                        } else {
                            format!(" ({} touched)", ctx.files_touched.len())
                        }
                    ),
                )
            }
        }
        HookState::StepPending => (
            "skip_step",
            "no step was running: the last one had finished; go on to the next".into(),
        ),
        _ => (
            "manual",
            format!("the task was {} with no recent checkpoint", hook.state),
        ),
    }
}

/// Runs crash detection on a loaded hook and, on a crash, moves it to `recovering` with a
/// filled recovery context. Returns true when a crash was found now. Idempotent.
pub fn recover(ctx: &Ctx, hook: &mut Hook) -> bool {
    let Some(crash) = detect(hook, ctx.now, ctx.config.stale_threshold) else {
        return false;
    };
    let (action, reason) = decide(hook, ctx.now);
    let last_known = hook.state;
    let warnings = hook
        .last_checkpoint()
        .map(|c| crate::checkpoint::changed_since(&ctx.project, &c.files_snapshot))
        .unwrap_or_default();
    // `waymark validate` notes the command when it enters step_validating.
    let validating = hook
        .history
        .iter()
        .rev()
        .find(|e| e.trigger == "validation_start")
        .and_then(|e| e.details.get("command"))
        .and_then(|c| c.as_str())
        .map(str::to_string)
        .or_else(|| hook.receipts.last().map(|r| r.command.clone()))
        .filter(|_| last_known == HookState::StepValidating);
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
        session_id: hook.session.as_ref().map(|s| s.session_id.clone()),
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
    use crate::task::{CheckpointTrigger, Session, StepSource, StepStatus};
    use chrono::Duration as CDuration;

    fn running(name: &str, files: &[&str]) -> Hook {
        let now = Utc::now() - CDuration::hours(1);
        let mut h = Hook::new("t", "w", 0, now);
        h.add_step("1", name, "", None, StepSource::Task, now);
        h.set_step_status("1", StepStatus::InProgress, 3, now)
            .unwrap();
        for f in files {
            h.touch_file(f, now);
        }
        h
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
        h.session = session(SessionStatus::Active);
        let c = detect(&h, Utc::now(), std::time::Duration::from_secs(300)).unwrap();
        assert_eq!(c.crash_type, "signal");
        assert!(c.why.contains("abcdef12"));
    }

    #[test]
    fn clean_sessions_are_not_crashes() {
        for st in [SessionStatus::Idle, SessionStatus::Ended] {
            let mut h = running("Implement fix", &[]);
            h.session = session(st);
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
        h.session = session(SessionStatus::Active);
        h.transition(HookState::Recovering, machine::CRASH_DETECTED, Utc::now())
            .unwrap();
        assert_eq!(detect(&h, Utc::now(), std::time::Duration::ZERO), None);
        let mut h = running("x", &[]);
        h.finish(HookState::Abandoned, Utc::now()).unwrap();
        assert_eq!(detect(&h, Utc::now(), std::time::Duration::ZERO), None);
    }

    #[test]
    fn decision_tree() {
        let now = Utc::now();
        assert_eq!(decide(&running("Analyze parser", &[]), now).0, "retry_step");
        assert_eq!(
            decide(&running("Implement fix", &["src/a.rs"]), now).0,
            "manual"
        );
        assert_eq!(
            decide(&running("Analyze parser", &["src/a.rs"]), now).0,
            "manual"
        );
        let mut v = running("Implement fix", &[]);
        v.transition(HookState::StepValidating, "validation_start", now)
            .unwrap();
        assert_eq!(decide(&v, now).0, "retry_step");
        let mut c = running("Implement fix", &["a"]);
        let cp = crate::checkpoint::build(
            &c,
            CheckpointTrigger::Manual,
            "m",
            Default::default(),
            vec![],
            now - CDuration::minutes(2),
        );
        c.push_checkpoint(cp, 50);
        assert_eq!(decide(&c, now).0, "retry_from_checkpoint");
        let mut old = running("Implement fix", &["a"]);
        let cp = crate::checkpoint::build(
            &old,
            CheckpointTrigger::Manual,
            "m",
            Default::default(),
            vec![],
            now - CDuration::minutes(20),
        );
        old.push_checkpoint(cp, 50);
        assert_eq!(decide(&old, now).0, "manual");
        let mut p = running("Implement fix", &[]);
        p.set_step_status("1", StepStatus::Completed, 3, now)
            .unwrap();
        p.checkpoints.clear();
        assert_eq!(decide(&p, now).0, "skip_step");
    }
}
