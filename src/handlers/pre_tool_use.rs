//! PreToolUse: governance before a tool runs. With `scope_enforcement: "deny"`, a write
//! outside the active intent's scope is denied and the denial becomes a governance lesson.

use super::posthook::isolated;
use crate::claude::event::Event;
use crate::claude::output::Output;
use crate::claude::tool::ToolCall;
use crate::context::Ctx;
use crate::governance::{enforcement, facts::Facts};

pub fn handle(ctx: &Ctx, event: &Event, call: &ToolCall, out: &mut Output) -> anyhow::Result<()> {
    isolated(ctx, event.name(), "scope_enforcement", || {
        let mut facts = Facts::new(None);
        if let Some(reason) = enforcement::check(ctx, &mut facts, event, call) {
            out.deny = Some(reason);
        }
        Ok(())
    });
    Ok(())
}
