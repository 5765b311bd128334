//! Scope enforcement before a tool runs: with `scope_enforcement: "deny"`, a write outside
//! the active intent's `owned_scope` is refused, with a reason the agent can act on, and
//! the refusal becomes a governance lesson.

use super::brain::{Category, Lesson};
use super::drift::{self, Finding};
use super::facts::Facts;
use crate::claude::event::Event;
use crate::claude::tool::ToolCall;
use crate::runtime::context::Ctx;
use crate::store::log::Level;
use crate::store::project::Located;
use waymark_core::config::ScopeEnforcement;

/// The reason to deny `call`, if it writes outside the active intent's scope. The lesson
/// is recorded here; failing to record it does not change the verdict.
pub fn check(ctx: &Ctx, facts: &mut Facts, event: &Event, call: &ToolCall) -> Option<String> {
    if ctx.config.scope_enforcement != ScopeEnforcement::Deny || !call.is_mutation() {
        return None;
    }
    let (file, chosen) = facts.intents_and_choice(ctx)?;
    let cwd = event.common.cwd.as_deref();
    let located: Vec<Located> = call
        .written_paths()
        .into_iter()
        .map(|raw| ctx.project.locate(raw, cwd))
        .collect();
    if let Some(reason) = hard_linked(ctx, &located) {
        return Some(reason);
    }
    // Each path as it is said and, through a symlink in the project, as it really is.
    let real = located.iter().filter_map(|l| ctx.project.real(l));
    let (path, who, scope) = located.iter().cloned().chain(real).find_map(|loc| {
        let findings = drift::judge(file, chosen.as_deref(), std::slice::from_ref(&loc), "");
        findings.into_iter().find_map(|f| match f {
            Finding::OutOfScope { intents, scope, .. } => {
                Some((loc.display().to_string(), intents.join(", "), scope))
            }
            _ => None,
        })
    })?;
    let scope_list = scope.join(", ");
    let reason = if scope.is_empty() {
        format!(
            "Scope Violation: {who} is not authorized to edit {path}. No intent in progress owns it; choose the one that does with `waymark intent use ID`, or ask the user to widen a scope."
        )
    } else {
        format!(
            "Scope Violation: {who} is not authorized to edit {path}. Its owned_scope is {scope_list}. Request scope expansion from the user (owned_scope in .orchestration/active_intents.yaml) or keep to those files."
        )
    };
    let lesson = Lesson {
        title: format!("Scope violation denied: {path}"),
        issue: format!(
            "{} tried to edit {path}, outside the owned_scope of {who}; waymark denied it (scope_enforcement: deny).",
            call.name
        ),
        solution: if scope.is_empty() {
            "Before editing, make sure the file belongs to the intent being worked on; switch intent with `waymark intent use ID` or ask the user to extend a scope.".into()
        } else {
            format!(
                "Keep edits within {scope_list} or ask the user to add the path to {who}'s owned_scope before touching it."
            )
        },
        intent: Some(who),
        category: Category::Governance,
        detail: None,
    };
    if let Err(e) = super::lessons::record(ctx, &lesson) {
        ctx.log(
            Level::Error,
            event.name(),
            &format!("governance lesson: {e:#}"),
        );
    }
    Some(reason)
}

/// A write to a file with more than one name (hard links) changes it under names the scope
/// cannot see: refused, in deny mode, whatever the scope says of the name used.
fn hard_linked(ctx: &Ctx, located: &[Located]) -> Option<String> {
    located.iter().find_map(|loc| {
        let names = ctx.project.names(loc)?;
        Some(format!(
            "Scope Violation: {} has {names} names (hard links): a write to it changes the file under names outside what the scope can see. Write a file of its own instead, or ask the user.",
            loc.display()
        ))
    })
}
