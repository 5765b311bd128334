//! The current task: loaded, started on first need, changed under the hook.json lock.
//!
//! Every reader and writer of the current task goes through here, so that a task is
//! started one way (bound to the active intent, else `task-YYYYMMDD-HHMMSS`), the
//! checkpoints a change asks for are made in one place, and a hook.json restored from
//! hook.json.bak is said once, in waymark.log and on stderr.

use super::checkpoint;
use super::plan::Effect;
use super::store::{self, LoadNote, StoreError, Updated};
use super::{CheckpointTrigger, Hook, StepSource};
use crate::runtime::context::Ctx;
use crate::store::log::Level;

/// Whether a change may start a task when there is none (or the last one finished).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Only act on an existing, unfinished task.
    Existing,
    /// Start a task when there is none yet; a finished task stays finished, and the work
    /// after it in the same turn (a commit, the `waymark task done` that finished it) is
    /// no new task: a tool call.
    First,
    /// Start a task if needed, after a finished one too ("created on first need"): a new
    /// request, a plan.
    Create,
}

/// The current task, finished or not, without taking the lock (read-only commands).
pub fn load(ctx: &Ctx) -> Result<Option<Hook>, StoreError> {
    let (hook, note) = store::load(&ctx.project)?;
    say_restored(ctx, &note);
    Ok(hook)
}

/// Changes the slot (no task, a live one or a finished one) under the lock; the
/// checkpoints asked for in `effects` are made before it is saved.
pub fn update<R>(
    ctx: &Ctx,
    f: impl FnOnce(&mut Option<Hook>, &mut Vec<Effect>) -> R,
) -> Result<Updated<R>, StoreError> {
    let updated = store::update(&ctx.project, ctx.now, |slot| {
        let mut effects = Vec::new();
        let value = f(slot, &mut effects);
        if let Some(hook) = slot.as_mut() {
            for Effect::Checkpoint(trigger, description, step) in effects {
                make_checkpoint(ctx, hook, trigger, &description, step);
            }
        }
        value
    });
    let captures = std::mem::take(&mut *ctx.captures.borrow_mut());
    let updated = updated?;
    say_restored(ctx, &updated.note);
    // Out of the lock: no other event waits while the files are hashed.
    if !captures.is_empty() {
        if let Err(e) = crate::task::capture::run(&ctx.project, &captures, ctx.capture, ctx.now) {
            ctx.log(Level::Error, "capture", &format!("after the change: {e}"));
        }
    }
    Ok(updated)
}

/// Runs `f` on the live task, started first when `need` allows and there is none.
/// Returns what `f` returned and the task as saved; `None` when there was no live task
/// to act on.
pub fn change<R>(
    ctx: &Ctx,
    need: Need,
    f: impl FnOnce(&mut Hook, &mut Vec<Effect>) -> R,
) -> Result<Option<(R, Hook)>, StoreError> {
    let updated = update(ctx, |slot, effects| {
        let live = slot.as_ref().is_some_and(|h| !h.state.is_terminal());
        let finished = slot.is_some() && !live;
        if !live && (need == Need::Existing || need == Need::First && finished) {
            return None;
        }
        let hook = live_task(ctx, slot);
        // What a step not started yet is counted against (the brief, HOOK.md).
        hook.max_attempts = ctx.config.max_attempts;
        Some(f(hook, effects))
    })?;
    let (value, hook) = (updated.value, updated.hook);
    Ok(value.map(|v| (v, hook.expect("a live task was changed"))))
}

/// The unfinished task in `slot`, starting a new one when there is none or the last one
/// finished ("created on first need").
pub fn live_task<'a>(ctx: &Ctx, slot: &'a mut Option<Hook>) -> &'a mut Hook {
    if slot.as_ref().is_none_or(|h| h.state.is_terminal()) {
        *slot = Some(new_task(ctx, slot.as_ref()));
    }
    slot.as_mut().expect("a live task")
}

/// A new task: bound to the active intent when there is one (task id = intent id, the
/// intent's `steps` as the plan), else `task-YYYYMMDD-HHMMSS`.
pub fn new_task(ctx: &Ctx, previous: Option<&Hook>) -> Hook {
    use crate::governance::intent;
    let intents = intent::load(&ctx.project).unwrap_or_else(|e| {
        ctx.log(Level::Error, "intents", &e.to_string());
        None
    });
    let chosen = intent::chosen(&ctx.project);
    let intent = intents
        .as_ref()
        .and_then(|f| f.active(chosen.as_deref(), None));
    let id = match intent {
        Some(i) => i.id.clone(),
        None => format!("task-{}", ctx.now.format("%Y%m%d-%H%M%S")),
    };
    let name = ctx.project.root.file_name();
    let workspace = name.map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let index = store::next_task_index(&ctx.project, previous);
    let mut hook = Hook::new(&id, &workspace, index, ctx.now);
    if let Some(i) = intent {
        hook.intent_id = Some(i.id.clone());
        for (n, name) in i.steps.iter().enumerate() {
            let id = format!("intent-{}", n + 1);
            hook.add_step(&id, name, "", None, StepSource::Intent, ctx.now);
        }
    }
    hook
}

/// A checkpoint made now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Made {
    pub id: String,
    /// A `git_commit` / `git_push` checkpoint at a HEAD already checkpointed with that
    /// trigger was not made again: `id` is the earlier one.
    pub repeat: bool,
}

/// Adds a checkpoint to the task, at HEAD as `.git` says; its capture (the step's files,
/// a dirty work tree) is asked for, to be taken once the change is saved.
pub fn make_checkpoint(
    ctx: &Ctx,
    hook: &mut Hook,
    trigger: CheckpointTrigger,
    description: &str,
    step: Option<usize>,
) -> Made {
    let head = crate::git::head::head(&ctx.project.root).unwrap_or_default();
    if let Some(earlier) = checkpoint::already_checkpointed(hook, trigger, &head) {
        return Made {
            id: earlier.to_string(),
            repeat: true,
        };
    }
    let files = checkpoint::files_of(hook, step);
    let cp = checkpoint::build(hook, trigger, description, step, head, ctx.now);
    let id = cp.checkpoint_id.clone();
    hook.push_checkpoint(cp);
    ctx.captures
        .borrow_mut()
        .push(crate::runtime::context::CaptureRequest {
            task_id: hook.task_id.clone(),
            checkpoint_id: id.clone(),
            files,
            keep: ctx.config.max_checkpoints,
            lessons: ctx.config.agent_md.clone(),
            force: Vec::new(),
        });
    Made { id, repeat: false }
}

/// Before a receipt is chained: the receipts at the end of the task's log that a save
/// killed before it wrote hook.json left uncounted are counted, so that the new receipt
/// follows the log's real end (`store::uncounted_receipts`).
pub fn count_uncounted_receipts(ctx: &Ctx, hook: &mut Hook) {
    match store::uncounted_receipts(&ctx.project, hook) {
        Ok(found) if !found.is_empty() => {
            let ids: Vec<&str> = found.iter().map(|r| r.receipt_id.as_str()).collect();
            let message = format!(
                "receipts {} were in the log but not counted in hook.json (a save was interrupted): counted now",
                ids.join(", ")
            );
            ctx.log(Level::Warn, "receipts", &message);
            hook.count_receipts(&found);
        }
        Ok(_) => {}
        Err(e) => ctx.log(
            Level::Error,
            "receipts",
            &format!("cannot read the log: {e}"),
        ),
    }
}

/// Says once that hook.json was restored from its .bak.
fn say_restored(ctx: &Ctx, note: &LoadNote) {
    if let Some(note) = &note.restored {
        ctx.log(Level::Warn, "state", note);
        crate::store::log::say(note);
    }
}
