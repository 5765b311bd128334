//! The lessons of docs/design.md (Post-hooks: US3), and where they come from: SharedBrain
//! (governance violations, scope conflicts), VerificationFailure (a failed validation)
//! and the PermissionDenied event. Each is built here and kept in AGENT.md by [`brain`].

use anyhow::Context as _;
use chrono::Duration;

use super::brain::{self, Category, Lesson};
use super::drift;
use super::facts::Facts;
use crate::claude::event::{Event, ToolFailure};
use crate::claude::output::Output;
use crate::claude::tool::{ToolCall, ToolInput};
use crate::runtime::context::Ctx;
use crate::store::landing::Last;
use crate::store::project::Located;
use crate::trace;
use crate::trace::tool_call::Outcome;
use waymark_core::governance::recall::About;
use waymark_core::text::{one_line, truncate};

/// The name of AGENT.md's lock, in the state directory.
pub const LESSONS_LOCK: &str = "lessons";

/// Adds a lesson to AGENT.md, which must land inside the root, outside `.git` and the
/// state directory, where it really lands (`store::landing`; never through a symlink out).
pub fn record(ctx: &Ctx, lesson: &Lesson) -> anyhow::Result<()> {
    let rel = &ctx.config.agent_md;
    let path = lessons_file(ctx).map_err(|why| anyhow::anyhow!("{why}; lesson not written"))?;
    // AGENT.md is committed with the project: its lock lives in the state directory.
    let lock = ctx.project.state_file(LESSONS_LOCK);
    brain::record(&path, &lock, lesson, ctx.now)
        .with_context(|| format!("cannot write the lesson to {rel}"))?;
    Ok(())
}

/// Where the lessons file really lands: a link inside the project (AGENT.md -> CLAUDE.md)
/// is written where it leads, once that is judged.
fn lessons_file(ctx: &Ctx) -> Result<std::path::PathBuf, String> {
    let rel = std::path::Path::new(&ctx.config.agent_md);
    ctx.project.landing(rel, Last::Followed)
}

/// VerificationFailure: a failed validation (`waymark validate`, or one the agent ran
/// through Bash) becomes a lesson with the command, its exit code and the output's end.
pub fn verification_failure(
    ctx: &Ctx,
    command: &str,
    exit_code: i32,
    output_tail: &str,
    intent_id: Option<&str>,
) -> anyhow::Result<()> {
    let cmd = truncate(&one_line(command), 200);
    let lesson = Lesson {
        title: waymark_core::governance::recall::verification_title(command),
        issue: format!("`{cmd}` exited with code {exit_code}."),
        solution: format!(
            "Fix what the output below shows, then run `{cmd}` again; do not mark the step done until it passes."
        ),
        intent: intent_id.map(str::to_string),
        category: Category::VerificationFailure,
        detail: Some(output_tail.to_string()),
    };
    record(ctx, &lesson)
}

/// A validation of `command` passed (with receipt `receipt`): the lesson its failure left,
/// if any, is settled, and no longer shown to the next agent (`recall`). AGENT.md is read
/// only when it is there.
pub fn settle(ctx: &Ctx, command: &str, receipt: &str) -> anyhow::Result<()> {
    let path = lessons_file(ctx).map_err(|why| anyhow::anyhow!("{why}; lesson not settled"))?;
    if !path.is_file() {
        return Ok(());
    }
    let lock = ctx.project.state_file(LESSONS_LOCK);
    let settle = |text: &str| {
        waymark_core::governance::recall::settled(text, command, receipt, ctx.now).map(|t| (t, ()))
    };
    crate::store::edit_text(&path, &lock, settle)
        .with_context(|| format!("cannot settle the lesson in {}", ctx.config.agent_md))?;
    Ok(())
}

/// The lessons the next agent is shown at its session's start (`recall`), within
/// `max_chars`: none when the lessons file is not there, or is no file inside the project.
pub fn recall(ctx: &Ctx, about: &About, max_chars: usize) -> Option<String> {
    let path = lessons_file(ctx).ok()?;
    // Hundreds of lessons are tens of KiB; a larger file is read by its first MiB.
    let mut text = String::new();
    let file = std::fs::File::open(&path).ok()?;
    std::io::Read::read_to_string(&mut std::io::Read::take(file, 1 << 20), &mut text).ok()?;
    waymark_core::governance::recall::recall(&text, about, max_chars)
}

/// PermissionDenied: Claude Code refused a tool call.
pub fn permission_denied(
    ctx: &Ctx,
    facts: &mut Facts,
    event: &Event,
    call: &ToolCall,
    reason: &str,
) -> anyhow::Result<()> {
    let target = target(ctx, event, call);
    let reason = one_line(reason);
    let lesson = Lesson {
        title: format!("Permission denied: {} {}", call.name, truncate(&target, 60)),
        issue: format!(
            "Claude Code denied {} on {}: {}",
            call.name,
            truncate(&target, 200),
            if reason.is_empty() { "no reason given" } else { &reason }
        ),
        solution: "Do not retry the same call. Ask the user for permission, or reach the goal with an allowed tool or path.".into(),
        intent: facts.intent_id(ctx, None),
        category: Category::Governance,
        detail: None,
    };
    record(ctx, &lesson)
}

/// SharedBrain, after a tool call: a tool error that carries a denial, and scope
/// conflicts (a file two running intents claim, or one two sessions changed within
/// `conflict_window`). Failed validations are VerificationFailure's, not repeated here.
pub fn shared_brain(
    ctx: &Ctx,
    facts: &mut Facts,
    o: &Outcome,
    out: &mut Output,
) -> anyhow::Result<()> {
    let (event, call, failure, paths) = (o.event, o.call, o.failure, o.paths);
    let mut lessons = Vec::new();
    if let Some(f) = failure.filter(|_| !o.validation) {
        let intent = facts.intent_id(ctx, paths.iter().find_map(Located::inside));
        lessons.extend(denial(ctx, event, call, f, intent));
    }
    if call.is_mutation() && failure.is_none() {
        for path in paths.iter().filter_map(Located::inside) {
            lessons.extend(conflicts(ctx, facts, event, path, out)?);
        }
    }
    // Every lesson is tried; the first error is reported.
    let mut first_error = None;
    for lesson in &lessons {
        if let Err(e) = record(ctx, lesson) {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// A tool error that carries a denial (not a command's own failure) → a governance lesson.
fn denial(
    ctx: &Ctx,
    event: &Event,
    call: &ToolCall,
    f: &ToolFailure,
    intent: Option<String>,
) -> Option<Lesson> {
    if f.exit_code().is_some() || f.is_interrupt {
        return None;
    }
    if !says_denied(&f.error) {
        return None;
    }
    let target = target(ctx, event, call);
    let error = truncate(&one_line(&f.error), 300);
    Some(Lesson {
        title: format!("Tool call denied: {} {}", call.name, truncate(&target, 60)),
        issue: format!("{} on {} failed with a denial: {error}", call.name, truncate(&target, 200)),
        solution: "Do not retry the same call. Find out which rule denied it (permissions, a hook, the intent's scope) and work within it, or ask the user.".into(),
        intent,
        category: Category::Governance,
        detail: None,
    })
}

/// Whether an error message says the call was refused: one of the words `denied`, `deny`,
/// `permission`, `blocked`, or `not permitted` / `not allowed`, in any case.
fn says_denied(error: &str) -> bool {
    let lower = error.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words
        .iter()
        .any(|w| ["denied", "deny", "permission", "blocked"].contains(w))
        || words
            .windows(2)
            .any(|p| p[0] == "not" && ["permitted", "allowed"].contains(&p[1]))
}

/// Scope-conflict coordination notes for one mutated path.
fn conflicts(
    ctx: &Ctx,
    facts: &mut Facts,
    event: &Event,
    path: &str,
    out: &mut Output,
) -> anyhow::Result<Vec<Lesson>> {
    let mut lessons = Vec::new();
    let active = facts.intent_id(ctx, Some(path));
    if let Some(file) = facts.intents(ctx) {
        let claim = drift::claimants(file, path);
        if claim.len() >= 2 {
            let ids: Vec<&str> = claim.iter().map(|i| i.id.as_str()).collect();
            lessons.push(Lesson {
                title: format!("Scope conflict: {path} is claimed by {}", ids.join(" and ")),
                issue: format!(
                    "{path} matches the owned_scope of {} intents in progress ({}); changes for one may undo the other's.",
                    ids.len(),
                    ids.join(", ")
                ),
                solution: "Coordinate before editing: give the file to one intent (narrow the other's owned_scope) or finish one intent first.".into(),
                intent: active.clone(),
                category: Category::ScopeConflict,
                detail: None,
            });
        }
    }
    let session = event.common.session_id.as_str();
    if session.is_empty() || !facts.other_sessions {
        return Ok(lessons);
    }
    let since = ctx.now - Duration::from_std(ctx.config.conflict_window).unwrap_or(Duration::MAX);
    let recent = facts.recent(ctx)?;
    // Cheap text filters first: only lines naming the path and not this session's own
    // are parsed (in the usual one-session project, none).
    let other = recent
        .lines
        .iter()
        .rev()
        .filter(|l| l.contains(path) && !l.contains(session))
        .filter_map(|l| trace::Entry::parse(l))
        .filter(|e| e.paths.iter().any(|p| p == path))
        .filter(|e| e.timestamp.is_some_and(|t| t >= since))
        .find_map(|e| {
            e.session_id
                .filter(|s| s != session)
                .map(|s| (s, e.timestamp))
        });
    if let Some((other, when)) = other {
        let ago = when
            .map(|t| waymark_core::text::ago(ctx.now, t))
            .unwrap_or_default();
        out.say(format!(
            "waymark: {path} was also changed {ago} ago by another session ({other}); coordinate before going on."
        ));
        lessons.push(Lesson {
            title: format!("Scope conflict: {path} changed by two sessions"),
            issue: format!(
                "Sessions {other} and {session} both changed {path} within {} of each other.",
                waymark_core::text::ago(ctx.now, since)
            ),
            solution: "Let one session own the file at a time: split the work by files or intents, and re-read the file before editing it.".into(),
            intent: active,
            category: Category::ScopeConflict,
            detail: None,
        });
    }
    Ok(lessons)
}

/// What a call acted on, for a lesson's title: the path it writes, the command, or the tool.
pub fn target(ctx: &Ctx, event: &Event, call: &ToolCall) -> String {
    if let Some(p) = call.written_paths().first() {
        let cwd = event.common.cwd.as_deref();
        return ctx.project.locate(p, cwd).display().to_string();
    }
    if let Some(c) = call.command() {
        return one_line(c);
    }
    match &call.input {
        ToolInput::Other(v) => ["file_path", "path", "url", "pattern"]
            .iter()
            .find_map(|k| v.get(*k).and_then(|x| x.as_str()))
            .map(one_line)
            .unwrap_or_default(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denials_are_told_by_their_words() {
        for e in [
            "Permission to use Bash has been denied.",
            "BLOCKED by hook",
            "Operation not permitted",
            "writes are not allowed here",
        ] {
            assert!(says_denied(e), "{e}");
        }
        for e in [
            "Exit code 1",
            "permissions.rs not found",
            "undeniable",
            "the deployment failed",
        ] {
            assert!(!says_denied(e), "{e}");
        }
    }
}
