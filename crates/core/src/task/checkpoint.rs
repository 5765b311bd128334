//! Checkpoints: when the task calls for one (the triggers, as [`Effect`]s), and the record
//! itself. Pure: HEAD is read by the caller and handed in; what it costs I/O to learn (the
//! step's files, a dirty work tree) is the checkpoint's capture (the application's `capture`).

use chrono::{DateTime, Duration, Utc};

use super::plan::Effect;
use super::{CheckpointTrigger, Hook, HookState, RECENT_CHECKPOINTS, StepCheckpoint};
use crate::shell;

/// Where HEAD is: the branch and the commit (read from the repository by the application's
/// `git::head`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    /// The branch HEAD names (`main`), `(detached)` when it names a commit.
    pub branch: String,
    /// `None` on an unborn branch, or when the files do not say.
    pub commit: Option<String>,
}

/// The id of an earlier checkpoint that a `git_commit` / `git_push` checkpoint would
/// repeat: one of the same trigger among the latest checkpoints made at the same HEAD.
///
/// One commit is reported twice when the agent commits through Bash with waymark's git
/// hooks installed: the post-commit hook runs inside `git commit` (`waymark checkpoint
/// --auto --trigger git_commit`), then the PostToolUse Bash handler sees the command. Both
/// record HEAD (the full hash), so the second is the same recovery point.
/// Looking past the last checkpoint matters for `git commit && git push`: the hooks make
/// `git_commit` then `git_push` at the same HEAD before the handler makes either.
/// Other triggers always make a checkpoint.
pub fn already_checkpointed<'h>(
    hook: &'h Hook,
    trigger: CheckpointTrigger,
    head: &Head,
) -> Option<&'h str> {
    let git_trigger = matches!(
        trigger,
        CheckpointTrigger::GitCommit | CheckpointTrigger::GitPush
    );
    if !git_trigger || head.commit.is_none() {
        return None;
    }
    hook.recent_checkpoints
        .iter()
        .rev()
        .take_while(|c| c.git_commit == head.commit)
        .find(|c| c.trigger == trigger)
        .map(|c| c.checkpoint_id.as_str())
}

/// The files a checkpoint covers: the current step's, else those of `step` (the step it
/// belongs to, just completed), else the last step's in plan order that touched any.
pub fn files_of(hook: &Hook, step: Option<usize>) -> Vec<String> {
    let step = step.map(|pos| &hook.steps[pos]);
    match (&hook.current_step, step) {
        (Some(c), _) if !c.files_touched.is_empty() => c.files_touched.clone(),
        (_, Some(s)) if !s.files_touched.is_empty() => s.files_touched.clone(),
        _ => hook
            .steps
            .iter()
            .rev()
            .find(|s| !s.files_touched.is_empty())
            .map(|s| s.files_touched.clone())
            .unwrap_or_default(),
    }
}

/// The checkpoint record itself (pure).
pub fn build(
    hook: &Hook,
    trigger: CheckpointTrigger,
    description: &str,
    step: Option<usize>,
    head: Head,
    now: DateTime<Utc>,
) -> StepCheckpoint {
    // The step the checkpoint belongs to: the running one; else `step` (the step just
    // completed); for a step completion without it (the task finished), the step that
    // completed last; else the one to do next.
    let (step_name, step_index) = match (&hook.current_step, step) {
        (Some(c), _) => (c.step_name.clone(), c.step_index),
        (None, Some(pos)) => (hook.steps[pos].name.clone(), hook.steps[pos].index),
        (None, None) => {
            let step = match trigger {
                CheckpointTrigger::StepComplete => {
                    hook.completed_steps().max_by_key(|s| s.completed_at)
                }
                _ => hook.next_step(),
            };
            step.map(|s| (s.name.clone(), s.index)).unwrap_or_default()
        }
    };
    StepCheckpoint {
        checkpoint_id: crate::text::new_id("ckpt"),
        created_at: now,
        step_name,
        step_index,
        description: description.to_string(),
        trigger,
        git_branch: head.branch,
        git_commit: head.commit,
        artifacts: Vec::new(),
    }
}

impl Hook {
    /// Adds a checkpoint (to the task's log, and to the newest it keeps at hand) and
    /// points the current step at it.
    pub fn push_checkpoint(&mut self, cp: StepCheckpoint) {
        self.updated_at = self.updated_at.max(cp.created_at);
        // A rewind is news until the work goes on past it.
        if cp.trigger != CheckpointTrigger::PreRewind {
            self.rewound = None;
            self.conversation_rewound = None;
        }
        if let Some(ctx) = self.current_step.as_mut() {
            ctx.current_checkpoint_id = Some(cp.checkpoint_id.clone());
        }
        self.checkpoint_count += 1;
        self.journal.checkpoints.push(cp.clone());
        self.recent_checkpoints.push(cp);
        super::bounds::keep_newest(&mut self.recent_checkpoints, RECENT_CHECKPOINTS);
    }

    /// The checkpoint work goes on from: after a rewind, the one rewound to (docs/rewind.md);
    /// else the newest that is not a rewind's undo point. An undo point (`pre_rewind`)
    /// is where the user may go back to, never where work resumes. `None` when there is
    /// none at hand, or a rewind's target is no longer at hand.
    pub fn resume_checkpoint(&self) -> Option<&StepCheckpoint> {
        let at_hand = &self.recent_checkpoints;
        match &self.rewound {
            Some(r) => at_hand.iter().find(|c| c.checkpoint_id == r.checkpoint_id),
            None => at_hand
                .iter()
                .rev()
                .find(|c| c.trigger != CheckpointTrigger::PreRewind),
        }
    }
}

/// An `interval` checkpoint when the running step has gone `interval` without one.
pub fn interval_due(
    hook: &Hook,
    now: DateTime<Utc>,
    interval: std::time::Duration,
) -> Option<Effect> {
    if hook.state != HookState::StepRunning {
        return None;
    }
    let step = hook.current_step.as_ref()?;
    let last = hook
        .recent_checkpoints
        .last()
        .map_or(step.started_at, |c| c.created_at.max(step.started_at));
    let interval = Duration::from_std(interval).unwrap_or(Duration::MAX);
    (now - last >= interval).then(|| {
        Effect::Checkpoint(
            CheckpointTrigger::Interval,
            format!(
                "Interval checkpoint ({} min into the step)",
                (now - step.started_at).num_minutes()
            ),
            None,
        )
    })
}

/// One `context_threshold` checkpoint each time context usage rises past `threshold`
/// percent of `window` tokens; remembers the usage for the next crossing.
pub fn context_threshold(
    hook: &mut Hook,
    tokens: u64,
    window: u64,
    threshold: u8,
) -> Option<Effect> {
    let percent = (tokens.saturating_mul(100) / window.max(1)).min(255) as u8;
    let before = hook.context_percent.replace(percent).unwrap_or(0);
    (before < threshold && percent >= threshold).then(|| {
        Effect::Checkpoint(
            CheckpointTrigger::ContextThreshold,
            format!("Context window at {percent}% ({tokens} tokens), past {threshold}%"),
            None,
        )
    })
}

/// The checkpoints a successful shell command calls for: `git commit` (with the hash and
/// message it printed), `git push`, `gh pr create` (with the URL).
pub fn vcs_effects(command: &str, stdout: &str, stderr: &str, kinds: &shell::Kinds) -> Vec<Effect> {
    let mut effects = Vec::new();
    if kinds.git_commit {
        let hash = shell::commit_hash(stdout).map(|h| crate::text::prefix(&h, 12).to_string());
        let desc = match (hash, shell::commit_message(command)) {
            (Some(h), Some(m)) => format!("Commit {h}: {m}"),
            (Some(h), None) => format!("Commit {h}"),
            (None, Some(m)) => format!("Commit: {m}"),
            (None, None) => "Commit".to_string(),
        };
        effects.push(Effect::Checkpoint(CheckpointTrigger::GitCommit, desc, None));
    }
    if kinds.git_push {
        effects.push(Effect::Checkpoint(
            CheckpointTrigger::GitPush,
            format!("Push: {}", crate::text::one_line(command)),
            None,
        ));
    }
    if kinds.pr_create {
        let url = shell::pr_url(&format!("{stdout}\n{stderr}"));
        effects.push(Effect::Checkpoint(
            CheckpointTrigger::PrCreated,
            url.map(|u| format!("PR created: {u}"))
                .unwrap_or_else(|| "PR created".into()),
            None,
        ));
    }
    effects
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `step_complete` checkpoint belongs to the step completed, and covers its files,
    /// though a step later in the plan touched files too (it was paused).
    #[test]
    fn a_step_completed_is_the_checkpoint_s_step_and_its_files_are_covered() {
        use crate::task::{StepSource, StepStatus};
        let now = Utc::now();
        let mut h = Hook::new("t", "w", 0, now);
        for (id, name) in [("1", "Parse"), ("2", "Test")] {
            h.add_step(id, name, "", None, StepSource::Task, now);
        }
        h.set_step_status("2", StepStatus::InProgress, 3, now)
            .unwrap();
        h.touch_file("tests/t.rs", now);
        h.set_step_status("1", StepStatus::InProgress, 3, now)
            .unwrap();
        h.touch_file("src/parse.rs", now);
        let effects = h
            .set_step_status("1", StepStatus::Completed, 3, now)
            .unwrap();
        let [Effect::Checkpoint(trigger, description, step)] = effects.as_slice() else {
            panic!("one checkpoint: {effects:?}");
        };
        assert_eq!(
            (*trigger, *step),
            (CheckpointTrigger::StepComplete, Some(0))
        );
        assert_eq!(files_of(&h, *step), ["src/parse.rs"]);
        assert_eq!(
            files_of(&h, None),
            ["tests/t.rs"],
            "without it, the last in plan order"
        );
        let cp = build(&h, *trigger, description, *step, Head::default(), now);
        assert_eq!((cp.step_name.as_str(), cp.step_index), ("Parse", 0));
    }

    #[test]
    fn a_git_checkpoint_at_an_already_checkpointed_head_is_a_repeat() {
        let now = Utc::now();
        let mut h = Hook::new("t", "w", 0, now);
        let at = |c: &str| Head {
            branch: "main".into(),
            commit: Some(c.into()),
        };
        let (commit, push) = (CheckpointTrigger::GitCommit, CheckpointTrigger::GitPush);
        let cp = build(&h, commit, "c", None, at("aaa"), now);
        let id = cp.checkpoint_id.clone();
        h.push_checkpoint(cp);
        assert_eq!(
            already_checkpointed(&h, commit, &at("aaa")),
            Some(id.as_str())
        );
        assert_eq!(already_checkpointed(&h, commit, &at("bbb")), None);
        assert_eq!(already_checkpointed(&h, push, &at("aaa")), None);
        assert_eq!(
            already_checkpointed(&h, CheckpointTrigger::Manual, &at("aaa")),
            None
        );
        assert_eq!(already_checkpointed(&h, commit, &Head::default()), None);
        // `git commit && git push`: the hooks made both before the handler sees either.
        let cp = build(&h, push, "p", None, at("aaa"), now);
        let push_id = cp.checkpoint_id.clone();
        h.push_checkpoint(cp);
        assert_eq!(
            already_checkpointed(&h, commit, &at("aaa")),
            Some(id.as_str())
        );
        assert_eq!(
            already_checkpointed(&h, push, &at("aaa")),
            Some(push_id.as_str())
        );
        // Once HEAD has moved on, an older checkpoint at that commit does not count.
        h.push_checkpoint(build(&h, commit, "c2", None, at("bbb"), now));
        assert_eq!(already_checkpointed(&h, push, &at("aaa")), None);
    }

    #[test]
    fn every_checkpoint_is_journaled_and_the_newest_kept_at_hand() {
        let now = Utc::now();
        let mut h = Hook::new("t", "w", 0, now);
        for i in 0..8 {
            let cp = build(
                &h,
                CheckpointTrigger::Manual,
                &format!("c{i}"),
                None,
                Head::default(),
                now,
            );
            h.push_checkpoint(cp);
        }
        assert_eq!((h.checkpoint_count, h.journal.checkpoints.len()), (8, 8));
        let at_hand: Vec<_> = h
            .recent_checkpoints
            .iter()
            .map(|c| c.description.as_str())
            .collect();
        assert_eq!(at_hand, ["c3", "c4", "c5", "c6", "c7"]);
        assert_eq!(h.recent_checkpoints.last().unwrap().description, "c7");
    }

    /// Work resumes from the newest checkpoint that is not a rewind's undo point, and
    /// after a rewind from its target, until the work goes on past it.
    #[test]
    fn work_resumes_from_a_rewind_s_target_never_from_its_undo_point() {
        let now = Utc::now();
        let mut h = Hook::new("t", "w", 0, now);
        let add = |h: &mut Hook, trigger, name: &str| {
            h.push_checkpoint(build(h, trigger, name, None, Head::default(), now));
            h.recent_checkpoints.last().unwrap().checkpoint_id.clone()
        };
        let resume = |h: &Hook| h.resume_checkpoint().map(|c| c.description.clone());
        assert_eq!(resume(&h), None);
        let first = add(&mut h, CheckpointTrigger::Manual, "first");
        add(&mut h, CheckpointTrigger::Validation, "second");
        add(&mut h, CheckpointTrigger::PreRewind, "undo");
        assert_eq!(resume(&h).as_deref(), Some("second"));
        h.rewound = Some(crate::task::Rewound {
            checkpoint_id: first,
            at: now,
            restored: Vec::new(),
            deleted: Vec::new(),
            undo: None,
        });
        assert_eq!(resume(&h).as_deref(), Some("first"));
        // A target no longer at hand is not replaced by a checkpoint the rewind undid.
        h.recent_checkpoints.remove(0);
        assert_eq!(resume(&h), None);
        add(&mut h, CheckpointTrigger::Manual, "after");
        assert_eq!(resume(&h).as_deref(), Some("after"));
    }

    /// Which files a checkpoint covers: the running step's when it has any, else the
    /// given step's when it has any, else the last step in plan order that has any.
    #[test]
    fn a_checkpoint_covers_the_running_step_then_the_given_step_then_the_last_with_files() {
        use crate::task::{StepSource, StepStatus};
        let now = Utc::now();
        let mut h = Hook::new("t", "w", 0, now);
        for (id, name) in [("1", "Parse"), ("2", "Test"), ("3", "Ship")] {
            h.add_step(id, name, "", None, StepSource::Task, now);
        }
        h.set_step_status("1", StepStatus::InProgress, 3, now)
            .unwrap();
        h.touch_file("src/parse.rs", now);
        h.set_step_status("1", StepStatus::Completed, 3, now)
            .unwrap();
        h.set_step_status("2", StepStatus::InProgress, 3, now)
            .unwrap();
        // The running step has no file yet: the given step's, else the last with files.
        assert_eq!(files_of(&h, Some(0)), ["src/parse.rs"]);
        assert_eq!(files_of(&h, Some(2)), ["src/parse.rs"]);
        h.touch_file("tests/t.rs", now);
        assert_eq!(files_of(&h, Some(0)), ["tests/t.rs"]);
    }

    /// A checkpoint at a crossing of the threshold only: not below it, not again while
    /// usage stays above it.
    #[test]
    fn context_usage_checkpoints_only_when_it_crosses_the_threshold() {
        let mut h = Hook::new("t", "w", 0, Utc::now());
        let mut at = |tokens| context_threshold(&mut h, tokens, 200_000, 80).is_some();
        assert!(!at(50_000), "25%");
        assert!(at(170_000), "85%: crossed");
        assert!(!at(180_000), "90%: still above");
        assert!(!at(100_000), "50%: below again");
        assert!(at(160_000), "80%: crossed again");
        assert!(!at(170_000), "85%: from the threshold itself, no crossing");
    }

    /// Between steps, a checkpoint belongs to the step completed last when it is a step's
    /// completion, else to the step to do next.
    #[test]
    fn a_checkpoint_between_steps_belongs_to_the_last_done_or_the_next() {
        use crate::task::{StepSource, StepStatus};
        let now = Utc::now();
        let mut h = Hook::new("t", "w", 0, now);
        for (id, name) in [("1", "Parse"), ("2", "Test")] {
            h.add_step(id, name, "", None, StepSource::Task, now);
        }
        h.set_step_status("1", StepStatus::InProgress, 3, now)
            .unwrap();
        h.set_step_status("1", StepStatus::Completed, 3, now)
            .unwrap();
        let of = |trigger| {
            let cp = build(&h, trigger, "d", None, Head::default(), now);
            (cp.step_name, cp.step_index)
        };
        assert_eq!(
            of(CheckpointTrigger::StepComplete),
            ("Parse".to_string(), 0)
        );
        assert_eq!(of(CheckpointTrigger::Manual), ("Test".to_string(), 1));
    }

    /// An interval checkpoint once a running step has gone the interval without one.
    #[test]
    fn an_interval_checkpoint_is_due_only_in_a_running_step_past_the_interval() {
        use crate::task::{HookState, StepSource, StepStatus};
        let now = Utc::now();
        let mut h = Hook::new("t", "w", 0, now);
        h.add_step("1", "Parse", "", None, StepSource::Task, now);
        h.set_step_status("1", StepStatus::InProgress, 3, now)
            .unwrap();
        let five = std::time::Duration::from_secs(300);
        let due = |h: &Hook, minutes| interval_due(h, now + Duration::minutes(minutes), five);
        assert!(due(&h, 4).is_none());
        let Some(Effect::Checkpoint(trigger, description, None)) = due(&h, 5) else {
            panic!("due at 5 minutes");
        };
        assert_eq!(trigger, CheckpointTrigger::Interval);
        assert_eq!(description, "Interval checkpoint (5 min into the step)");
        h.state = HookState::StepValidating;
        assert!(due(&h, 6).is_none());
    }

    /// The checkpoints a successful shell command calls for, each described by what the
    /// command printed.
    #[test]
    fn a_commit_a_push_and_a_pull_request_each_call_for_a_checkpoint() {
        let kinds = shell::Kinds {
            git_commit: true,
            git_push: true,
            pr_create: true,
            ..shell::Kinds::default()
        };
        let command = "git commit -m 'Fix parser' && git push && gh pr create";
        let stdout = "[main 1a2b3c4d5e6f7] Fix parser\nhttps://github.com/o/r/pull/7\n";
        let described: Vec<(CheckpointTrigger, String)> = vcs_effects(command, stdout, "", &kinds)
            .into_iter()
            .map(|Effect::Checkpoint(t, d, _)| (t, d))
            .collect();
        assert_eq!(
            described,
            [
                (
                    CheckpointTrigger::GitCommit,
                    "Commit 1a2b3c4d5e6f: Fix parser".to_string()
                ),
                (CheckpointTrigger::GitPush, format!("Push: {command}")),
                (
                    CheckpointTrigger::PrCreated,
                    "PR created: https://github.com/o/r/pull/7".to_string()
                ),
            ]
        );
        assert!(vcs_effects(command, stdout, "", &shell::Kinds::default()).is_empty());
    }

    /// Only a git commit or push can repeat an earlier checkpoint at the same HEAD.
    #[test]
    fn other_triggers_always_make_a_checkpoint() {
        let now = Utc::now();
        let mut h = Hook::new("t", "w", 0, now);
        let head = Head {
            branch: "main".into(),
            commit: Some("aaa".into()),
        };
        let cp = build(&h, CheckpointTrigger::Manual, "m", None, head.clone(), now);
        h.push_checkpoint(cp);
        assert_eq!(
            already_checkpointed(&h, CheckpointTrigger::Manual, &head),
            None
        );
    }
}
