//! Scope enforcement before a tool runs: with `scope_enforcement: "deny"`, a write outside
//! the active intent's `owned_scope` is refused, with a reason the agent can act on, and
//! the refusal becomes a governance lesson. The writes judged are a Write's, Edit's or
//! NotebookEdit's path, an MCP write's paths and the files a Bash command names; a Bash
//! command that writes where its text does not say is asked about instead.

use std::path::{Path, PathBuf};

use super::brain::{Category, Lesson};
use super::drift::{self, Finding};
use super::facts::Facts;
use crate::claude::event::Event;
use crate::claude::output::{Answer, Decision};
use crate::claude::tool::ToolCall;
use crate::governance::intent::IntentFile;
use crate::runtime::context::Ctx;
use crate::store::log::Level;
use crate::store::project::Located;
use waymark_core::config::ScopeEnforcement;
use waymark_core::shell::writes::Target;

/// The answer to `call`, if it writes outside the active intent's scope (deny), or
/// writes where waymark cannot read (ask). A denial's lesson is recorded here; failing to
/// record it does not change the verdict.
pub fn check(ctx: &Ctx, facts: &mut Facts, event: &Event, call: &ToolCall) -> Answer {
    if ctx.config.scope_enforcement != ScopeEnforcement::Deny {
        return None;
    }
    let mut writes = call.writes();
    if writes.targets.is_empty() && writes.unreadable.is_empty() {
        return None;
    }
    let (file, chosen) = facts.intents_and_choice(ctx)?;
    let cwd = event.common.cwd.as_deref();
    let mut located = Vec::new();
    for t in &writes.targets {
        match lands(ctx, t, cwd) {
            Ok(l) => located.push(l),
            Err(why) => writes.unreadable.push(why),
        }
    }
    // A scope judges the path as said or as it really is.
    let scoped = |l: &&Located| {
        let judged = |l: &Located| drift::scoped(file, chosen.as_deref(), l);
        judged(l) || ctx.project.real(l).is_some_and(|r| judged(&r))
    };
    if let Some(reason) = hard_linked(ctx, located.iter().filter(scoped)) {
        return Some((Decision::Deny, reason));
    }
    // Each path as it is said and, through a symlink in the project, as it really is.
    let real = located.iter().filter_map(|l| ctx.project.real(l));
    let violation = located.iter().cloned().chain(real).find_map(|loc| {
        let findings = drift::judge(file, chosen.as_deref(), std::slice::from_ref(&loc), "");
        findings.into_iter().find_map(|f| match f {
            Finding::OutOfScope { intents, scope, .. } => {
                Some((loc.display().to_string(), intents.join(", "), scope))
            }
            _ => None,
        })
    });
    if let Some((path, who, scope)) = violation {
        return Some((Decision::Deny, deny(ctx, event, call, &path, who, &scope)));
    }
    let why = writes.unreadable.first()?;
    ask(file, chosen.as_deref(), why).map(|reason| (Decision::Ask, reason))
}

/// Where a write to `target` lands: `~/` is the home directory, and a file copied into a
/// directory lands in it. `Err`: why it cannot be told.
fn lands(ctx: &Ctx, target: &Target, cwd: Option<&str>) -> Result<Located, String> {
    let path = match target.path.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
            let home = home.ok_or_else(|| format!("`{}` is in an unknown home", target.path))?;
            format!("{}{rest}", home.to_string_lossy())
        }
        _ => target.path.clone(),
    };
    let located = ctx.project.locate(&path, cwd);
    let abs: PathBuf = match &located {
        Located::Inside(rel) => ctx.project.absolute(rel),
        Located::Outside(abs) => PathBuf::from(abs),
    };
    Ok(match &target.in_dir {
        Some(name) if Path::new(&abs).is_dir() => {
            ctx.project.locate(&format!("{path}/{name}"), cwd)
        }
        _ => located,
    })
}

/// The reason to deny a write to `path`, out of `who`'s `scope`; the lesson recorded.
fn deny(
    ctx: &Ctx,
    event: &Event,
    call: &ToolCall,
    path: &str,
    who: String,
    scope: &[String],
) -> String {
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
        let why = format!("governance lesson: {e:#}");
        ctx.log(Level::Error, event.name(), &why);
    }
    reason
}

/// The question for a command whose writes cannot all be named (`why`), when a scope
/// would judge them: none when no intent is in progress, or the active one owns no scope.
fn ask(file: &IntentFile, chosen: Option<&str>, why: &str) -> Option<String> {
    let whose = match file.active(chosen, None) {
        Some(i) if i.owned_scope.is_empty() => return None,
        Some(i) => format!("{}'s owned_scope ({})", i.id, i.owned_scope.join(", ")),
        None => {
            let running: Vec<&str> = file.running().map(|i| i.id.as_str()).collect();
            if running.is_empty() {
                return None;
            }
            format!("the owned_scope of {}", running.join(", "))
        }
    };
    Some(format!(
        "Scope check: waymark cannot tell where this command writes ({why}), so it cannot hold it to {whose}. Allow it only if it writes within that scope; or write the paths out literally."
    ))
}

/// A write to a file with more than one name (hard links) changes it under names the scope
/// cannot see: refused, in deny mode, whatever the scope says of the name used (`located`:
/// the paths a scope judges; where none does, a second name hides nothing from it).
fn hard_linked<'a>(ctx: &Ctx, mut located: impl Iterator<Item = &'a Located>) -> Option<String> {
    located.find_map(|loc| {
        let names = ctx.project.names(loc)?;
        Some(format!(
            "Scope Violation: {} has {names} names (hard links): a write to it changes the file under names outside what the scope can see. Write a file of its own instead, or ask the user.",
            loc.display()
        ))
    })
}
