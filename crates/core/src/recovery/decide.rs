//! The recovery decision tree of docs/design.md: given a crashed task, how to go on. Pure.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::task::{Hook, HookState, StepContext};

/// A checkpoint younger than this is a good place to resume from.
pub const RECENT_CHECKPOINT: Duration = Duration::from_secs(10 * 60);

/// Step names that only read or check, so are safe to retry (docs/design.md, Recovery
/// decision tree).
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

/// The recommendation of the decision tree (docs/design.md), with its reason.
pub fn decide(hook: &Hook, now: DateTime<Utc>) -> (&'static str, String) {
    let recent = hook
        .resume_checkpoint()
        .filter(|c| (now - c.created_at).to_std().unwrap_or_default() < RECENT_CHECKPOINT);
    if let Some(c) = recent {
        return (
            "retry_from_checkpoint",
            format!(
                "checkpoint {} ({}) was {} old when the crash was found",
                c.checkpoint_id,
                c.trigger.as_str(),
                crate::text::ago(now, c.created_at)
            ),
        );
    }
    // A validation the agent ran from Bash is as much a validation as `waymark validate`.
    let in_flight = hook
        .current_step
        .as_ref()
        .and_then(|c| c.in_flight.as_ref());
    if let Some(f) = in_flight.filter(|f| f.validation) {
        return (
            "retry_step",
            format!(
                "the crash came during validation (`{}`), which is safe to re-run",
                crate::text::one_line(&crate::text::truncate(&f.command, 100))
            ),
        );
    }
    match hook.state {
        HookState::StepValidating => (
            "retry_step",
            "the crash came during validation, which is safe to re-run".into(),
        ),
        HookState::StepRunning => while_running(hook.current_step.as_ref(), hook.unplanned()),
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

/// A crash while a step ran: safe to retry when the step only reads and checks, else a
/// human (or the agent, carefully) reviews what it changed.
fn while_running(ctx: Option<&StepContext>, unplanned: bool) -> (&'static str, String) {
    let Some(ctx) = ctx else {
        return (
            "manual",
            "a step was running but its context is missing".into(),
        );
    };
    if unplanned {
        let touched = match ctx.files_touched.len() {
            0 => "no file recorded as changed, though its commands may have changed some".into(),
            n => format!("{} touched", crate::text::count(n as u64, "file")),
        };
        return (
            "manual",
            format!("the work had no plan ({touched}): review it before going on"),
        );
    }
    let name = ctx.step_name.to_lowercase();
    if IDEMPOTENT_WORDS.iter().any(|w| name.contains(w)) && ctx.files_touched.is_empty() {
        return (
            "retry_step",
            format!(
                "step \"{}\" only reads and checks: safe to retry",
                ctx.step_name
            ),
        );
    }
    let touched = if ctx.files_touched.is_empty() {
        String::new()
    } else {
        format!(" ({} touched)", ctx.files_touched.len())
    };
    (
        "manual",
        format!(
            "step \"{}\" changes files{touched}: review them before going on",
            ctx.step_name
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{CheckpointTrigger, StepStatus};
    use chrono::Duration as CDuration;

    fn running(name: &str, files: &[&str]) -> Hook {
        crate::task::testing::running(name, files, Utc::now() - CDuration::hours(1))
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
        let cp = crate::task::checkpoint::build(
            &c,
            CheckpointTrigger::Manual,
            "m",
            None,
            Default::default(),
            now - CDuration::minutes(2),
        );
        c.push_checkpoint(cp);
        assert_eq!(decide(&c, now).0, "retry_from_checkpoint");
        let mut old = running("Implement fix", &["a"]);
        let cp = crate::task::checkpoint::build(
            &old,
            CheckpointTrigger::Manual,
            "m",
            None,
            Default::default(),
            now - CDuration::minutes(20),
        );
        old.push_checkpoint(cp);
        assert_eq!(decide(&old, now).0, "manual");
        let mut p = running("Implement fix", &[]);
        p.set_step_status("1", StepStatus::Completed, 3, now)
            .unwrap();
        p.recent_checkpoints.clear();
        assert_eq!(decide(&p, now).0, "skip_step");
    }

    /// A checkpoint is recent while younger than [`RECENT_CHECKPOINT`]: at ten minutes,
    /// the step that changes files is left to review.
    #[test]
    fn a_checkpoint_ten_minutes_old_is_no_longer_recent() {
        let now = Utc::now();
        for (age, action) in [(599, "retry_from_checkpoint"), (600, "manual")] {
            let mut h = running("Implement fix", &["src/a.rs"]);
            let at = now - CDuration::seconds(age);
            let cp = crate::task::checkpoint::build(
                &h,
                CheckpointTrigger::Manual,
                "m",
                None,
                Default::default(),
                at,
            );
            h.push_checkpoint(cp);
            let (decided, why) = decide(&h, now);
            assert_eq!(decided, action, "{age}s old");
            if action == "retry_from_checkpoint" {
                // Said as of the crash, so that it stays true when read later.
                let id = &h.recent_checkpoints.last().unwrap().checkpoint_id;
                assert_eq!(
                    why,
                    format!("checkpoint {id} (manual) was 9m old when the crash was found")
                );
            }
        }
    }
}
