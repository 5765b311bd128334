//! Recovery: what a new session is told so that it resumes exactly where the last one
//! left off. What it says is `waymark_core::recovery` (re-exported here); this file is
//! what crash recovery reads besides the task: whether a session's Claude Code process
//! still runs (`process`) and what changed in the work tree (git, the last capture).

use crate::runtime::context::Ctx;
use crate::runtime::process::Owner;
use crate::task::store::{HISTORY_LOG, read_log};
use crate::task::{Hook, HookState, Session};

pub use waymark_core::recovery::*;

/// Whether a session is live, seen from a process that is `starting` (the Claude Code
/// process starting a new session; `None` for a command, which starts none): its process
/// still runs and is not that one (a process that starts a new session has left its old
/// one).
pub fn liveness(starting: Option<Owner>) -> impl Fn(&Session) -> bool {
    move |s: &Session| {
        s.owner
            .is_some_and(|o| Some(o) != starting && crate::runtime::process::alive(&o))
    }
}

/// What changed in the work tree since the last checkpoint (its commit, else HEAD), new
/// files counted with their lines: `2 files, +12/−3 lines (1 new)`; `None` outside git.
/// Starts git: only crash recovery and a `/clear` ask.
pub fn changed_since(ctx: &Ctx, hook: &Hook) -> Option<String> {
    changed(ctx, hook).map(|d| d.describe())
}

/// What [`changed_since`] counts, with the files' names.
fn changed(ctx: &Ctx, hook: &Hook) -> Option<crate::git::status::DiffStat> {
    let since = hook.resume_checkpoint().and_then(|c| c.git_commit.clone());
    crate::git::diff_stat(&ctx.project.root, since.as_deref(), &ctx.config.agent_md)
}

/// Runs crash detection on a loaded hook for session `new_session` starting and, on a
/// crash, moves it to `recovering` with a recovery context filled from the task and the
/// work tree. Returns true when a crash was found now. Idempotent.
pub fn recover(
    ctx: &Ctx,
    hook: &mut Hook,
    new_session: &str,
    live: &dyn Fn(&Session) -> bool,
) -> bool {
    let Some(crash) = detect(hook, ctx.now, ctx.config.stale_threshold, new_session, live) else {
        absorb(hook, new_session, live);
        return false;
    };
    let capture = hook
        .resume_checkpoint()
        .and_then(|c| crate::task::capture::load(&ctx.project, &hook.task_id, &c.checkpoint_id));
    let file_warnings = capture
        .as_ref()
        .map(|c| crate::task::capture::changed_since(&ctx.project, &c.files))
        .unwrap_or_default();
    let withheld = capture
        .map(|c| c.withheld.iter().map(|w| w.describe()).collect())
        .unwrap_or_default();
    let validating = hook.state == HookState::StepValidating;
    let logged = validating.then(|| read_log(&ctx.project, &hook.task_id, HISTORY_LOG, Some(50)));
    let logged_history = logged.and_then(Result::ok).unwrap_or_default();
    let changed = changed(ctx, hook);
    let names = changed.as_ref().map(|d| d.names.clone());
    let mut changed_files = names.unwrap_or_default();
    changed_files.truncate(waymark_core::task::CHANGED_NAMED);
    let found = Found {
        file_warnings,
        withheld,
        logged_history,
        changed: changed.map(|d| d.describe()),
        changed_files,
    };
    enter_recovery(hook, crash, found, ctx.now)
}
