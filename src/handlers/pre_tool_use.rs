//! PreToolUse: checks before a tool runs. A tool that may change files first waits for a
//! checkpoint's snapshot in flight (`capture::settle`). With `scope_enforcement: "deny"`, a write
//! outside the active intent's scope is denied and the denial becomes a governance lesson;
//! a Bash command writing where its text does not say is asked about.
//! With `repeat_guard` (`"ask"` by default), a step resumed after a crash that is about to
//! repeat one of its side effects (a push, a pull request, a deploy) is asked about, or
//! refused. A validation or a command with side effects is marked in flight in the running
//! step until its PostToolUse (or its turn's end): a crash in between is then told as an
//! interrupted validation to run again, or a side effect whose outcome is unknown.

use super::posthook::isolated;
use crate::claude::event::Event;
use crate::claude::output::{Answer, Decision, Output};
use crate::claude::tool::{ToolCall, ToolInput};
use crate::governance::{enforcement, facts::Facts};
use crate::runtime::context::Ctx;
use crate::task::current::{self, Need};
use waymark_core::config::RepeatGuard;
use waymark_core::recovery::repeat;
use waymark_core::shell::{self, Kinds};

pub fn handle(ctx: &Ctx, event: &Event, call: &ToolCall, out: &mut Output) -> anyhow::Result<()> {
    // A checkpoint's snapshot in flight is the tree before this call's changes: an edit
    // keeps its files for it and goes on; any other call that may write waits for it.
    let edits = call.written_paths();
    if call.is_mutation() && !edits.is_empty() {
        let cwd = event.common.cwd.as_deref();
        crate::task::capture::before_edit(&ctx.project, &edits, cwd);
    } else if call.may_change_files() {
        crate::task::capture::settle(&ctx.project);
    }
    isolated(ctx, event.name(), "scope_enforcement", || {
        let mut facts = Facts::new(None);
        out.decision = enforcement::check(ctx, &mut facts, event, call);
        Ok(())
    });
    if matches!(out.decision, Some((Decision::Deny, _))) {
        return Ok(());
    }
    let ToolInput::Bash(bash) = &call.input else {
        return Ok(());
    };
    // Only a validation or a command with side effects is worth reading the task for.
    let c = &ctx.config;
    let kinds = shell::classify(
        &bash.command,
        &c.validation_commands,
        &c.side_effect_commands,
    );
    if let Some(why) = &kinds.unread {
        let note = format!("the command is not read whole ({why}): classified by what was read");
        ctx.log(crate::store::log::Level::Warn, event.name(), &note);
    }
    if !(kinds.validation || kinds.side_effect) || bash.run_in_background {
        return Ok(());
    }
    isolated(ctx, event.name(), "command_start", || {
        let asked = start(ctx, event, &bash.command, &kinds)?;
        out.decision = stronger(out.decision.take(), asked);
        Ok(())
    });
    Ok(())
}

/// Two answers to one call: a denial over a question; two questions asked as one.
fn stronger(a: Answer, b: Answer) -> Answer {
    match (a, b) {
        (Some((Decision::Ask, x)), Some((Decision::Ask, y))) => {
            Some((Decision::Ask, format!("{x}\n\n{y}")))
        }
        (Some(d @ (Decision::Deny, _)), _) | (_, Some(d @ (Decision::Deny, _))) => Some(d),
        (a, b) => a.or(b),
    }
}

/// One locked change of the task as the command starts: the repeat guard's answer for a
/// side effect, and unless it refuses, the command marked in flight in the running step (a
/// crash before its PostToolUse leaves it there, so the next session runs a validation
/// again and checks a side effect first).
fn start(ctx: &Ctx, event: &Event, command: &str, kinds: &Kinds) -> anyhow::Result<Answer> {
    let guard = ctx.config.repeat_guard;
    let session = &event.common.session_id;
    let changed = current::change(ctx, Need::First, |hook, _| {
        let asked = (kinds.side_effect && guard != RepeatGuard::Off)
            .then(|| repeat::check(hook, command))
            .flatten()
            .map(|reason| match guard {
                RepeatGuard::Deny => (Decision::Deny, reason),
                _ => (Decision::Ask, reason),
            });
        if !matches!(asked, Some((Decision::Deny, _))) {
            hook.ensure_running(ctx.config.max_attempts, ctx.now)?;
            hook.begin_command(session, command, kinds, ctx.now);
            // The session is mid-turn from here: killed before the command's PostToolUse,
            // it is a crash that names the command in flight (a session first seen here
            // would otherwise not be known at all).
            super::note(hook, event, crate::task::SessionStatus::Active, ctx);
        }
        anyhow::Ok(asked)
    })?;
    Ok(changed.map(|(r, _)| r).transpose()?.flatten())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A denial wins over a question, whichever check asked; two questions are one.
    #[test]
    fn the_stronger_answer_is_given() {
        let ask = |r: &str| Some((Decision::Ask, r.to_string()));
        let deny = Some((Decision::Deny, "no".to_string()));
        assert_eq!(stronger(ask("scope"), deny.clone()), deny);
        assert_eq!(stronger(deny.clone(), ask("repeat")), deny);
        assert_eq!(stronger(ask("scope"), None), ask("scope"));
        assert_eq!(stronger(None, ask("repeat")), ask("repeat"));
        assert_eq!(stronger(ask("a"), ask("b")), ask("a\n\nb"));
        assert_eq!(stronger(None, None), None);
    }
}
