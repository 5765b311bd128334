//! Stop, StopFailure, SubagentStart, SubagentStop, SessionEnd and CwdChanged: turns and
//! sessions starting, ending and moving.

use crate::claude::codex::Agent;
use crate::claude::event::{CwdChanged, Event, SessionEnd, Stop, StopFailure};
use crate::runtime::context::Ctx;
use crate::task::{
    CheckpointTrigger, Effect, FailedTurn, Hook, HookState, MAX_LAST_OUTPUT, Need, SessionStatus,
    current,
};
use waymark_core::config::Switch;
use waymark_core::text::{one_line, truncate};

/// Stop: keep the last output, checkpoint a context-window crossing, complete the task
/// when every step is done, and mark the session idle (the turn ended cleanly).
/// SubagentStop: the session is still working; only that is noted.
pub fn stop(ctx: &Ctx, event: &Event, e: &Stop, main: bool) -> anyhow::Result<()> {
    // Read before the lock: git walks the work tree, and no other hook should wait on it.
    let unseen = (main && event.agent == Agent::Codex).then(|| unseen_files(ctx));
    let unseen = unseen.unwrap_or_default();
    let changed = current::change(ctx, Need::Existing, |hook, effects| {
        if main {
            // Told in the next brief: a Stop has no word for the agent.
            super::rewound::check(ctx, hook, &event.common.session_id, true);
            if let Some(c) = hook.current_step.as_mut() {
                c.last_output = truncate(&e.last_assistant_message, MAX_LAST_OUTPUT);
            }
            hook.end_command(&event.common.session_id, None);
            crate::recovery::heard(hook, &event.common.session_id, ctx.now);
            if hook.current_step.is_some() {
                for file in &unseen {
                    hook.touch_file(file, ctx.now);
                }
            }
            effects.extend(super::prompt::context_threshold(ctx, event, hook));
            if hook.state == HookState::StepPending && hook.all_steps_completed() {
                let why = "Task completed: every step done".into();
                let done = Effect::Checkpoint(CheckpointTrigger::StepComplete, why, None);
                effects.push(done);
                hook.finish(HookState::Completed, ctx.now)?;
            }
        }
        if main {
            super::note(hook, event, SessionStatus::Idle, ctx);
        } else {
            super::note(hook, event, SessionStatus::Active, ctx);
            hook.note_agent(&event.common.session_id, &agent(event), false);
        }
        anyhow::Ok(())
    })?;
    changed.map(|(r, _)| r).transpose()?;
    Ok(())
}

/// Codex CLI's Stop: the files the turn changed with no hook telling (a shell command's
/// edits, a patch whose PostToolUse never came) join the step's files, read from the work
/// tree against the last checkpoint; none when no step runs. Claude Code's Stop does not
/// do it: its edits come with their hooks.
fn unseen_files(ctx: &Ctx) -> Vec<String> {
    let Ok(Some(hook)) = current::load(ctx) else {
        return Vec::new();
    };
    if hook.current_step.is_none() {
        return Vec::new();
    }
    let checkpoint = hook.resume_checkpoint();
    let since = checkpoint.and_then(|c| c.git_commit.clone());
    let root = &ctx.project.root;
    let changed = crate::git::status::changed_files(root, since.as_deref(), &ctx.config.agent_md);
    let mut changed: Vec<String> = changed
        .unwrap_or_default()
        .into_iter()
        .filter(|f| !f.chars().any(char::is_control))
        .collect();
    // The checkpoint's snapshot holds what the earlier steps left uncommitted: only what
    // changed since it is this step's.
    if let Some(c) = checkpoint.filter(|c| c.git_commit.is_some()) {
        // Its snapshot may still be being taken (a step done in this turn).
        crate::task::capture::settle(&ctx.project);
        let snapshot = crate::git::snapshot::ref_name(&hook.task_id, &c.checkpoint_id);
        changed = crate::git::status::changed_since_snapshot(root, &snapshot, changed);
    }
    changed
}

/// SessionEnd: `clear` notes what changed since the last checkpoint (verify_before_clear)
/// and checkpoints (auto_checkpoint_on_clear); every reason marks the session ended.
pub fn session_end(ctx: &Ctx, event: &Event, e: &SessionEnd) -> anyhow::Result<()> {
    current::change(ctx, Need::Existing, |hook, effects| {
        if let Some(s) = hook.session_mut(&event.common.session_id) {
            s.end_reason = Some(e.reason.clone());
        }
        if e.reason == "clear" {
            before_clear(ctx, hook, effects);
        }
        crate::recovery::heard(hook, &event.common.session_id, ctx.now);
        super::note(hook, event, SessionStatus::Ended, ctx);
    })?;
    Ok(())
}

/// What a /clear keeps of the conversation it ends: a note of what changed since the last
/// checkpoint, for the cleared session's brief (verify_before_clear), and a `clear`
/// checkpoint (auto_checkpoint_on_clear). Claude Code's SessionEnd(`clear`) runs it; Codex
/// sends no SessionEnd at /clear, so its SessionStart(`clear`) does, before the brief.
pub fn before_clear(ctx: &Ctx, hook: &mut Hook, effects: &mut Vec<Effect>) {
    if ctx.config.verify_before_clear {
        // Named by what it counts from, as the crash brief's count is: right under
        // "Resumed from checkpoint: Before /clear", "since last checkpoint" read as after it.
        let since = waymark_core::task::changed_base(hook.resume_checkpoint().is_some());
        hook.clear_note = crate::recovery::changed_since(ctx, hook)
            .map(|d| format!("Changed before /clear, since {since}: {d}."));
    }
    if ctx.config.auto_checkpoint_on_clear == Switch::On {
        let description = "Before /clear".to_string();
        let checkpoint = Effect::Checkpoint(CheckpointTrigger::Clear, description, None);
        effects.push(checkpoint);
    }
}

/// StopFailure: the turn ended on an API error. The session is stopped (idle), not
/// crashed, and the next session is told why its last turn failed.
pub fn stop_failure(ctx: &Ctx, event: &Event, e: &StopFailure) -> anyhow::Result<()> {
    current::change(ctx, Need::Existing, |hook, _| {
        super::note(hook, event, SessionStatus::Idle, ctx);
        hook.end_command(&event.common.session_id, None);
        if let Some(s) = hook.session_mut(&event.common.session_id) {
            let message = match &e.error_details {
                Some(details) if !details.is_empty() => details,
                _ => &e.last_assistant_message,
            };
            s.failed_turn = Some(FailedTurn {
                error: e.error.clone(),
                message: truncate(&one_line(message), MAX_FAILED_TURN),
                at: ctx.now,
            });
        }
    })?;
    Ok(())
}

/// How much of a failed turn's message is kept.
const MAX_FAILED_TURN: usize = 300;

/// SubagentStart: the session is working, and has a subagent running until its
/// SubagentStop.
pub fn subagent(ctx: &Ctx, event: &Event, started: bool) -> anyhow::Result<()> {
    current::change(ctx, Need::Existing, |hook, _| {
        super::note(hook, event, SessionStatus::Active, ctx);
        hook.note_agent(&event.common.session_id, &agent(event), started);
    })?;
    Ok(())
}

/// A subagent as a session lists it: its type and id.
fn agent(event: &Event) -> String {
    let c = &event.common;
    let kind = c.agent_type.as_deref().unwrap_or("agent");
    match c.agent_id.as_deref() {
        Some(id) => format!("{kind} {}", waymark_core::text::short_id(id)),
        None => kind.to_string(),
    }
}

/// CwdChanged: where the session works now (every event carries its `cwd`, which
/// [`super::note`] records; this one says so as soon as it changes).
pub fn cwd_changed(ctx: &Ctx, event: &Event, e: &CwdChanged) -> anyhow::Result<()> {
    current::change(ctx, Need::Existing, |hook, _| {
        let id = &event.common.session_id;
        let status = hook
            .session_mut(id)
            .map_or(SessionStatus::Active, |s| s.status);
        super::note(hook, event, status, ctx);
        hook.set_cwd(id, super::where_from(ctx, &e.new_cwd));
    })?;
    Ok(())
}
