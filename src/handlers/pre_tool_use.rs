//! PreToolUse: checks before a tool runs. A tool that may change files first waits for a
//! checkpoint's snapshot in flight (`capture::settle`). With `scope_enforcement: "deny"`, a write
//! outside the active intent's scope is denied and the denial becomes a governance lesson.
//! With `repeat_guard` (`"ask"` by default), a step resumed after a crash that is about to
//! repeat one of its side effects (a push, a pull request, a deploy) is asked about, or
//! refused.

use super::posthook::isolated;
use crate::claude::event::Event;
use crate::claude::output::{Decision, Output};
use crate::claude::tool::{ToolCall, ToolInput};
use crate::governance::{enforcement, facts::Facts};
use crate::runtime::context::Ctx;
use waymark_core::config::RepeatGuard;
use waymark_core::recovery::repeat;

pub fn handle(ctx: &Ctx, event: &Event, call: &ToolCall, out: &mut Output) -> anyhow::Result<()> {
    // A checkpoint's snapshot in flight is the tree before this call's changes.
    if call.may_change_files() {
        crate::task::capture::settle(&ctx.project);
    }
    isolated(ctx, event.name(), "scope_enforcement", || {
        let mut facts = Facts::new(None);
        if let Some(reason) = enforcement::check(ctx, &mut facts, event, call) {
            out.decision = Some((Decision::Deny, reason));
        }
        Ok(())
    });
    if out.decision.is_some() || ctx.config.repeat_guard == RepeatGuard::Off {
        return Ok(());
    }
    let ToolInput::Bash(bash) = &call.input else {
        return Ok(());
    };
    // Only a command with side effects is worth reading the task for.
    let c = &ctx.config;
    if !waymark_core::shell::classify(&bash.command, &[], &c.side_effect_commands).side_effect {
        return Ok(());
    }
    isolated(ctx, event.name(), "repeat_guard", || {
        let hook = crate::task::current::load(ctx)?;
        if let Some(reason) = hook.as_ref().and_then(|h| repeat::check(h, &bash.command)) {
            let decision = match ctx.config.repeat_guard {
                RepeatGuard::Deny => Decision::Deny,
                _ => Decision::Ask,
            };
            out.decision = Some((decision, reason));
        }
        Ok(())
    });
    Ok(())
}
