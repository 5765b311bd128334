//! SessionStart: crash detection (startup/resume), then the resume brief.

use crate::claude::codex::Agent;
use crate::claude::event::{Event, SessionStart};
use crate::claude::output::Output;
use crate::runtime::context::Ctx;
use crate::runtime::process::Owner;
use crate::store::log::Level;
use crate::task::store::HOOK_MD;
use crate::task::{Hook, Need, Session, SessionStatus, current};
use waymark_core::config::Switch;
use waymark_core::recovery::brief::{self, Extras};

pub fn handle(ctx: &Ctx, event: &Event, e: &SessionStart, out: &mut Output) -> anyhow::Result<()> {
    // The Claude Code process starting the session: what tells its sessions from others'.
    let owner = crate::runtime::process::owner();
    let live = crate::recovery::liveness(owner);
    let Some(started) = start(ctx, event, e, owner, &live)? else {
        // No task to resume: the agent is still told how to keep its plan, and what the
        // agents before it learned.
        if ctx.config.plan_note {
            out.say(brief::PLAN_NOTE);
        }
        let max = ctx.config.resume_brief_max_chars;
        let room = max.saturating_sub(brief::PLAN_NOTE.len() + 1);
        out.say(lessons_for(ctx, None, room.min(LESSONS_MAX)).unwrap_or_default());
        return Ok(());
    };
    // A state directory an older waymark made is told what belongs in git here.
    crate::store::project::write_git_files(&ctx.project.state_dir());
    if !crate::task::store::saved_this_event() {
        rebuild_hook_md_if_damaged(ctx, &started.hook);
    }
    if started.crashed {
        let recovery = started.hook.recovery.as_ref();
        let r = recovery.expect("recover sets the context");
        let why = format!("crash detected: {} ({})", r.reason, r.recommended_action);
        ctx.log(Level::Warn, "SessionStart", &why);
    }
    say_brief(ctx, event, e, &started, &live, out);
    Ok(())
}

/// The task as the session found it, once [`start`] has changed it.
struct Started {
    hook: Hook,
    /// A crash was found now (the task is `recovering`).
    crashed: bool,
    /// After /clear: what changed since the last checkpoint, noted at the SessionEnd.
    clear_note: Option<String>,
}

/// The task's one change: crash detection, the session noted, the intent refreshed.
fn start(
    ctx: &Ctx,
    event: &Event,
    e: &SessionStart,
    owner: Option<Owner>,
    live: &dyn Fn(&Session) -> bool,
) -> anyhow::Result<Option<Started>> {
    // A fork (`claude --resume <id> --fork-session`, 2.1.332) is a new session on the
    // conversation of one that may have crashed: detection runs there too.
    let fresh = matches!(e.source.as_str(), "startup" | "resume" | "fork" | "");
    let mut crashed = false;
    let mut clear_note = None;
    // A new or resumed session has not started a turn yet; after /clear or compaction the
    // session goes on as it was (an automatic compaction happens mid-turn).
    let status = fresh.then_some(SessionStatus::Idle);
    let c = &event.common;
    let changed = current::change(ctx, Need::Existing, |hook, effects| {
        // Detection reads how the last session left the task, so it comes first.
        if fresh {
            crashed = crate::recovery::recover(ctx, hook, &c.session_id, live);
        }
        // With no brief given, nothing is told.
        if ctx.config.auto_resume_on_start != Switch::Off {
            crate::recovery::tell(hook, &c.session_id, ctx.now);
        }
        if e.source == "clear" {
            if event.agent == Agent::Codex {
                super::lifecycle::before_clear(ctx, hook, effects);
            }
            clear_note = hook.clear_note.take();
        }
        if let Some(status) = status {
            // The owner first: `note` would otherwise look for it again.
            hook.set_owner(&c.session_id, owner);
            super::note(hook, event, status, ctx);
        }
        // The intent as the brief shows it: its file and the trace may have changed since.
        if let Some(id) = hook.intent_id.clone() {
            hook.intent = crate::governance::progress::brief(ctx, &id).or(hook.intent.take());
        }
    })?;
    if let Some(((), hook)) = changed {
        return Ok(Some(Started {
            hook,
            crashed,
            clear_note,
        }));
    }
    // A finished task is told in one line; a new request starts the next.
    let finished = current::load(ctx)?.filter(|h| h.state.is_terminal());
    Ok(finished.map(|hook| Started {
        hook,
        crashed: false,
        clear_note: None,
    }))
}

/// The resume brief for the agent, and after /clear the offer of a checkpoint not saved.
fn say_brief(
    ctx: &Ctx,
    event: &Event,
    e: &SessionStart,
    started: &Started,
    live: &dyn Fn(&Session) -> bool,
    out: &mut Output,
) {
    let hook = &started.hook;
    // The lessons first, so that the brief is cut to what they leave of the bound.
    let max = ctx.config.resume_brief_max_chars;
    let lessons = lessons_for(ctx, Some(hook), max.min(LESSONS_MAX).min(max / 3));
    let max = max.saturating_sub(lessons.as_ref().map_or(0, |l| l.chars().count() + 1));
    let elsewhere = hook.working_elsewhere(&event.common.session_id, live);
    let extras = Extras {
        work_changed: started.clear_note.clone(),
        source: e.source.clone(),
        elsewhere: elsewhere.cloned().collect(),
        plan_note: ctx.config.plan_note,
    };
    let resume = ctx.config.auto_resume_on_start;
    let path = ctx.project.state_file(HOOK_MD);
    let text = brief::render(hook, resume, &path, max, &extras, ctx.now);
    // `say` skips what is empty.
    out.say(text.unwrap_or_default());
    out.say(lessons.unwrap_or_default());
    if e.source == "clear"
        && ctx.config.auto_checkpoint_on_clear == Switch::Prompt
        && ctx.config.auto_resume_on_start != Switch::Off
    {
        out.say("No checkpoint was saved before /clear (auto_checkpoint_on_clear is \"prompt\"): offer the user to save one with `waymark checkpoint \"<description>\"`.");
    }
}

/// The most of the session's context the lessons take (a third of the bound at most).
const LESSONS_MAX: usize = 1200;

/// The lessons of AGENT.md the session is shown (docs/governance.md): those that bear on
/// the task's work first (its intent, its files, its validations), within `room`.
fn lessons_for(ctx: &Ctx, hook: Option<&Hook>, room: usize) -> Option<String> {
    use waymark_core::governance::recall::About;
    let about = hook.map_or_else(About::default, |h| {
        let step_files = h.current_step.iter().flat_map(|c| &c.files_touched);
        let failed = h.last_failure.iter().map(|f| &f.command);
        let validated = h.recent_receipts.iter().map(|r| &r.command);
        let files = step_files.chain(&h.unassigned_files);
        let words = files.chain(failed).chain(validated);
        About {
            intent: h.intent_id.clone(),
            words: words.cloned().collect(),
        }
    });
    crate::governance::lessons::recall(ctx, &about, room)
}

/// A deleted or damaged HOOK.md is rebuilt at the start of every session, even when
/// hook.json did not change (and so was not saved).
fn rebuild_hook_md_if_damaged(ctx: &Ctx, hook: &waymark_core::task::Hook) {
    if intact(&ctx.project.state_file(HOOK_MD)) {
        return;
    }
    match crate::task::store::write_hook_md(&ctx.project, hook) {
        Ok(()) => {
            let why = "HOOK.md was missing or damaged: rebuilt from hook.json";
            ctx.log(Level::Info, "SessionStart", why);
        }
        Err(e) => {
            let why = format!("cannot rebuild HOOK.md: {e}");
            ctx.log(Level::Error, "SessionStart", &why);
        }
    }
}

/// Whether HOOK.md is whole as far as its ends tell: it begins with its title, and its
/// last section, Troubleshooting, stands in its last 4 KiB. Only the ends are read: a
/// long plan's HOOK.md is tens of KiB, and the session's save has just written it.
fn intact(path: &std::path::Path) -> bool {
    use std::os::unix::fs::FileExt;
    const TITLE: &[u8] = b"# HOOK: ";
    let titled = std::fs::File::open(path).is_ok_and(|file| {
        let mut title = [0u8; TITLE.len()];
        file.read_exact_at(&mut title, 0).is_ok() && title == TITLE
    });
    let last = |line: &str| (line == "## Troubleshooting").then_some(());
    titled && crate::store::find_from_end(path, 4096, last).is_ok_and(|found| found.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_md_is_whole_when_its_title_and_last_section_are_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("HOOK.md");
        assert!(!intact(&path), "missing");
        let whole = format!(
            "# HOOK: t\n\n{}\n## Troubleshooting\n\n- `waymark status`\n",
            "- a line of the plan\n".repeat(2000)
        );
        std::fs::write(&path, &whole).unwrap();
        assert!(intact(&path));
        std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
        assert!(!intact(&path), "cut short");
        std::fs::write(&path, whole.replacen("# HOOK: ", "# NOTES ", 1)).unwrap();
        assert!(!intact(&path), "another title");
        std::fs::write(&path, "# HOOK").unwrap();
        assert!(!intact(&path), "shorter than the title");
    }
}
