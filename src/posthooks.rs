//! The post-hooks of seed 002 (trace record, IntentProgress, ScopeDrift, SharedBrain,
//! VerificationFailure), run after the core bookkeeping of a tool event, each isolated.
//!
//! Order matters and is fixed: the event's own trace record is written first, so
//! IntentProgress sees it in the recent window; ScopeDrift next; then IntentProgress,
//! SharedBrain and VerificationFailure. Each runs under [`isolated`]: an error or even a
//! panic in one is logged to `.orchestration/waymark.log` and the others still run
//! (seed 002 FR-008, SC-004). What they learn is cached in [`Facts`] so the intents file
//! and the trace tail are each read at most once per event, and only when needed.

use std::panic::{self, AssertUnwindSafe};

use anyhow::Context as _;
use chrono::Duration;
use regex::Regex;

use crate::claude::event::{Event, ToolFailure};
use crate::claude::output::Output;
use crate::claude::tool::{ToolCall, ToolInput, ToolResponse};
use crate::config::ScopeEnforcement;
use crate::context::Ctx;
use crate::governance::brain::{self, Category, Lesson};
use crate::governance::drift::{self, Finding};
use crate::governance::intent::{self, IntentFile};
use crate::log::Level;
use crate::project::Located;
use crate::redact::redact;
use crate::text::{one_line, tail, truncate};
use crate::trace::{self, Record, Waymark, kind, ranges};

/// Everything the post-hooks may need to know about one finished tool call.
pub struct ToolOutcome<'a> {
    pub event: &'a Event,
    pub call: &'a ToolCall,
    /// PostToolUse: the tool's response.
    pub response: Option<&'a ToolResponse>,
    /// PostToolUseFailure: the failure.
    pub failure: Option<&'a ToolFailure>,
    /// Paths the call wrote, located against the root.
    pub paths: &'a [Located],
    /// Bash: the exit code (0 on PostToolUse, N from "Exit code N" on failure).
    pub exit_code: Option<i32>,
    /// Bash: the redacted, bounded output tail.
    pub output_tail: String,
    /// Bash: the command matched `validation_commands`.
    pub validation: bool,
    pub task_id: Option<String>,
    pub intent_id: Option<String>,
}

/// Commands and errors copied into the ledger are cut to this many characters.
const MAX_TEXT: usize = 2000;

/// Runs every post-hook for a finished tool call.
pub fn after_tool(ctx: &Ctx, outcome: &ToolOutcome, out: &mut Output) {
    // The ledger is about mutations and commands; other tools matter only when they fail
    // (a denial is a governance lesson).
    let traced = outcome.call.is_mutation() || outcome.call.command().is_some();
    if !traced && outcome.failure.is_none() {
        return;
    }
    let mut facts = Facts::new(outcome.intent_id.clone());
    let name = outcome.event.name();
    if traced {
        isolated(ctx, name, "trace", || record_tool(ctx, outcome, &mut facts));
    }
    if outcome.call.is_mutation() && outcome.failure.is_none() {
        isolated(ctx, name, "scope_drift", || {
            scope_drift(ctx, outcome, &mut facts, out)
        });
    }
    if traced {
        isolated(ctx, name, "intent_progress", || {
            intent_progress(ctx, outcome, &mut facts, out)
        });
    }
    isolated(ctx, name, "shared_brain", || {
        shared_brain(ctx, outcome, &mut facts, out)
    });
    if outcome.validation && outcome.failure.is_some() {
        isolated(ctx, name, "verification_failure", || {
            let command = outcome.call.command().unwrap_or_default();
            let intent = facts.intent_id(ctx, None);
            record_verification_failure(
                ctx,
                command,
                outcome.exit_code.unwrap_or(1),
                &outcome.output_tail,
                intent.as_deref(),
            )
        });
    }
}

/// PreToolUse: scope enforcement. With `scope_enforcement: "deny"`, a write outside the
/// active intent's `owned_scope` is denied, and the denial becomes a governance lesson.
pub fn before_tool(ctx: &Ctx, event: &Event, call: &ToolCall, out: &mut Output) {
    if ctx.config.scope_enforcement != ScopeEnforcement::Deny || !call.is_mutation() {
        return;
    }
    isolated(ctx, event.name(), "scope_enforcement", || {
        let mut facts = Facts::new(None);
        let Some((file, chosen)) = facts.intents_and_choice(ctx) else {
            return Ok(());
        };
        let cwd = event.common.cwd.as_deref();
        for raw in call.written_paths() {
            let loc = ctx.project.locate(raw, cwd);
            let findings = drift::judge(file, chosen.as_deref(), std::slice::from_ref(&loc), "");
            let Some(Finding::OutOfScope { intents, scope, .. }) = findings
                .into_iter()
                .find(|f| matches!(f, Finding::OutOfScope { .. }))
            else {
                continue;
            };
            let who = intents.join(", ");
            let path = loc.display().to_string();
            let reason = if scope.is_empty() {
                format!(
                    "Scope Violation: {who} is not authorized to edit {path}. No intent in progress owns it; choose the one that does with `waymark intent use ID`, or ask the user to widen a scope."
                )
            } else {
                format!(
                    "Scope Violation: {who} is not authorized to edit {path}. Its owned_scope is {}. Request scope expansion from the user (owned_scope in .orchestration/active_intents.yaml) or keep to those files.",
                    scope.join(", ")
                )
            };
            out.deny = Some(reason.clone());
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
                        "Keep edits within {} or ask the user to add the path to {who}'s owned_scope before touching it.",
                        scope.join(", ")
                    )
                },
                intent: Some(who.clone()),
                category: Category::Governance,
                detail: None,
            };
            if let Err(e) = record_lesson(ctx, &lesson) {
                ctx.log(
                    Level::Error,
                    event.name(),
                    &format!("governance lesson: {e:#}"),
                );
            }
            break;
        }
        Ok(())
    });
}

/// PermissionDenied: a governance lesson.
pub fn permission_denied(ctx: &Ctx, event: &Event, call: &ToolCall, reason: &str) {
    isolated(ctx, event.name(), "shared_brain", || {
        let mut facts = Facts::new(None);
        let target = target(ctx, event, call);
        let intent = facts.intent_id(ctx, None);
        let reason = redact(&one_line(reason));
        let lesson = Lesson {
            title: format!("Permission denied: {} {}", call.name, truncate(&target, 60)),
            issue: format!(
                "Claude Code denied {} on {}: {}",
                call.name,
                truncate(&target, 200),
                if reason.is_empty() { "no reason given" } else { &reason }
            ),
            solution: "Do not retry the same call. Ask the user for permission, or reach the goal with an allowed tool or path.".into(),
            intent,
            category: Category::Governance,
            detail: None,
        };
        record_lesson(ctx, &lesson)
    });
}

/// A failed validation (`waymark validate`, or an observed one): a verification-failure
/// lesson in AGENT.md.
pub fn verification_failure(
    ctx: &Ctx,
    command: &str,
    exit_code: i32,
    output_tail: &str,
    intent_id: Option<&str>,
) {
    isolated(ctx, "validate", "verification_failure", || {
        record_verification_failure(ctx, command, exit_code, output_tail, intent_id)
    });
}

fn record_verification_failure(
    ctx: &Ctx,
    command: &str,
    exit_code: i32,
    output_tail: &str,
    intent_id: Option<&str>,
) -> anyhow::Result<()> {
    let cmd = truncate(&one_line(&redact(command)), 200);
    let lesson = Lesson {
        title: format!("Verification failed: {}", truncate(&cmd, 80)),
        issue: format!("`{cmd}` exited with code {exit_code}."),
        solution: format!(
            "Fix what the output below shows, then run `{cmd}` again; do not mark the step done until it passes."
        ),
        intent: intent_id.map(str::to_string),
        category: Category::VerificationFailure,
        detail: Some(redact(output_tail)),
    };
    record_lesson(ctx, &lesson)
}

/// Runs one post-hook; an error or a panic is logged and goes no further.
fn isolated(ctx: &Ctx, event: &str, hook: &str, f: impl FnOnce() -> anyhow::Result<()>) {
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        injected_panic(hook);
        f()
    }));
    match result {
        Ok(Ok(())) => {}
        Ok(Err(e)) => ctx.log(Level::Error, event, &format!("post-hook {hook}: {e:#}")),
        Err(payload) => {
            let msg = crate::text::panic_message(payload.as_ref());
            ctx.log(
                Level::Error,
                event,
                &format!("post-hook {hook} panicked: {msg}"),
            );
        }
    }
}

/// Debug builds only: `WAYMARK_TEST_PANIC=intent_progress,trace` makes those post-hooks
/// panic, so the tests can show that one failing post-hook leaves the others intact.
#[cfg(debug_assertions)]
fn injected_panic(hook: &str) {
    if std::env::var("WAYMARK_TEST_PANIC").is_ok_and(|v| v.split(',').any(|h| h.trim() == hook)) {
        panic!("injected panic in {hook} (WAYMARK_TEST_PANIC)");
    }
}

#[cfg(not(debug_assertions))]
fn injected_panic(_hook: &str) {}

/// What the post-hooks of one event read, each at most once and only when asked for.
struct Facts {
    /// The task's intent, a hint for choosing the active intent.
    task_intent: Option<String>,
    /// `waymark intent use` choice, else the task's intent.
    chosen: Option<String>,
    intents: Option<Option<IntentFile>>,
    recent: Option<trace::Recent>,
}

impl Facts {
    fn new(task_intent: Option<String>) -> Facts {
        Facts {
            task_intent,
            chosen: None,
            intents: None,
            recent: None,
        }
    }

    /// The intents file, when it exists and parses. A malformed file is logged (once per
    /// event) and treated as absent, so every other hook keeps working.
    fn intents(&mut self, ctx: &Ctx) -> Option<&IntentFile> {
        if self.intents.is_none() {
            let loaded = match intent::load(&ctx.project) {
                Ok(Some(f)) => Some(f),
                // No intents file is the normal state of a project that does not use
                // intents; it is an error only when one was evidently in use.
                Ok(None) => {
                    let in_use = self
                        .task_intent
                        .clone()
                        .or_else(|| intent::chosen(&ctx.project));
                    if let Some(id) = in_use {
                        ctx.log(
                            Level::Error,
                            "intents",
                            &format!(
                                "{} is missing but intent {id} is in use; intent governance is off until it is restored",
                                intent::intents_path(&ctx.project).display()
                            ),
                        );
                    }
                    None
                }
                Err(e) => {
                    ctx.log(
                        Level::Error,
                        "intents",
                        &format!("{e}; intent governance is off until it is fixed"),
                    );
                    None
                }
            };
            if loaded.is_some() {
                self.chosen = intent::chosen(&ctx.project).or(self.task_intent.clone());
            }
            self.intents = Some(loaded);
        }
        self.intents.as_ref().and_then(Option::as_ref)
    }

    /// The intents file with the chosen intent's id (see [`Facts::chosen`]).
    fn intents_and_choice(&mut self, ctx: &Ctx) -> Option<(&IntentFile, Option<String>)> {
        self.intents(ctx);
        let chosen = self.chosen.clone();
        self.intents
            .as_ref()
            .and_then(Option::as_ref)
            .map(|f| (f, chosen))
    }

    /// The id of the intent the event works under, if any.
    fn intent_id(&mut self, ctx: &Ctx, path: Option<&str>) -> Option<String> {
        let task_intent = self.task_intent.clone();
        match self.intents_and_choice(ctx) {
            Some((f, chosen)) => f.active(chosen.as_deref(), path).map(|i| i.id.clone()),
            None => task_intent,
        }
    }

    fn recent(&mut self, ctx: &Ctx) -> anyhow::Result<&trace::Recent> {
        if self.recent.is_none() {
            let r = trace::recent(&ctx.project, ctx.config.trace_window)
                .context("cannot read the trace tail")?;
            self.recent = Some(r);
        }
        Ok(self.recent.as_ref().expect("just read"))
    }
}

/// The trace record of the tool call itself.
fn record_tool(ctx: &Ctx, o: &ToolOutcome, facts: &mut Facts) -> anyhow::Result<()> {
    let first_inside = o.paths.iter().find_map(Located::inside);
    let mut wm = Waymark {
        kind: if o.failure.is_some() && o.call.is_mutation() {
            kind::TOOL_FAILURE.into()
        } else if o.call.is_mutation() {
            kind::MUTATION.into()
        } else {
            kind::BASH.into()
        },
        event: o.event.name().into(),
        session_id: o.event.common.session_id.clone(),
        tool_use_id: o.call.tool_use_id.clone(),
        tool_name: Some(o.call.name.clone()),
        task_id: o.task_id.clone(),
        intent_id: facts.intent_id(ctx, first_inside),
        ..Default::default()
    };
    if let Some(cmd) = o.call.command() {
        wm.command = Some(truncate(&redact(cmd), MAX_TEXT));
        wm.exit_code = o.exit_code;
        wm.output_tail = Some(o.output_tail.clone()).filter(|t| !t.is_empty());
        wm.validation = o.validation.then_some(true);
    } else if let Some(f) = o.failure {
        wm.output_tail = Some(tail(&redact(f.error.trim()), MAX_TEXT));
    }
    let mut record = Record::new(&ctx.project, ctx.now, wm);
    if o.call.is_mutation() && o.failure.is_none() {
        let (class, ranges) = mutation(o);
        let waymark = &mut record.metadata.as_mut().expect("set by new").waymark;
        waymark.mutation_class = Some(class.into());
        let url = o
            .event
            .common
            .transcript_path
            .as_deref()
            .and_then(trace::transcript_url);
        let contributor = trace::contributor();
        for loc in o.paths {
            if let Located::Outside(p) = loc {
                waymark.warnings.push(format!(
                    "{p} is outside the project root: recorded, never written by waymark"
                ));
            }
        }
        for loc in o.paths {
            record.add_file(loc.display(), url.clone(), contributor.clone(), &ranges);
        }
    }
    if let Some(torn) = trace::append(&ctx.project, &record)? {
        ctx.log(
            Level::Warn,
            o.event.name(),
            &format!("the trace ended in a torn line, cut before appending: {torn}"),
        );
    }
    Ok(())
}

/// The mutation class and the attributed line ranges of a Write, Edit or NotebookEdit.
fn mutation(o: &ToolOutcome) -> (&'static str, Vec<ranges::LineRange>) {
    match (&o.call.input, o.response) {
        (ToolInput::Write(_), Some(ToolResponse::Write(r)))
            if r.kind.as_deref() == Some("update") =>
        {
            ("overwrite", ranges::from_patch(&r.structured_patch))
        }
        (ToolInput::Write(w), Some(ToolResponse::Write(r))) => (
            "create",
            ranges::whole_content(r.content.as_deref().unwrap_or(&w.content)),
        ),
        (ToolInput::Write(w), _) => ("write", ranges::whole_content(&w.content)),
        (ToolInput::Edit(_), Some(ToolResponse::Edit(r))) => {
            ("edit", ranges::from_patch(&r.structured_patch))
        }
        (ToolInput::Edit(_), _) => ("edit", Vec::new()),
        _ => ("notebook_edit", Vec::new()),
    }
}

/// ScopeDrift: judge every path against the active intent's scope and the intent map.
fn scope_drift(
    ctx: &Ctx,
    o: &ToolOutcome,
    facts: &mut Facts,
    out: &mut Output,
) -> anyhow::Result<()> {
    if ctx.config.scope_enforcement == ScopeEnforcement::Off {
        return Ok(());
    }
    let Some((file, chosen)) = facts.intents_and_choice(ctx) else {
        return Ok(());
    };
    if drift::running(file).is_empty() {
        return Ok(());
    }
    let map_path = crate::governance::intent_map::map_path(&ctx.project);
    let map_text = std::fs::read_to_string(&map_path).unwrap_or_default();
    let findings = drift::judge(file, chosen.as_deref(), o.paths, &map_text);
    if findings.is_empty() {
        return Ok(());
    }
    let mut notes = Vec::new();
    let mut intent_id = None;
    for f in &findings {
        if let Finding::Expansion { path, intent, name } = f {
            crate::governance::intent_map::add(&ctx.project, intent, name, path)
                .context("cannot update intent_map.md")?;
        }
        match f {
            Finding::NearBoundary { intent, .. } | Finding::Expansion { intent, .. } => {
                intent_id.get_or_insert_with(|| intent.clone());
            }
            Finding::OutOfScope { intents, .. } if intents.len() == 1 => {
                intent_id.get_or_insert_with(|| intents[0].clone());
            }
            _ => {}
        }
        notes.push(f.message());
    }
    let wm = Waymark {
        kind: kind::SCOPE_WARNING.into(),
        event: o.event.name().into(),
        session_id: o.event.common.session_id.clone(),
        tool_use_id: o.call.tool_use_id.clone(),
        tool_name: Some(o.call.name.clone()),
        task_id: o.task_id.clone(),
        intent_id,
        warnings: notes,
        ..Default::default()
    };
    trace::append(&ctx.project, &Record::new(&ctx.project, ctx.now, wm))?;
    for f in findings.iter().filter(|f| f.is_warning()) {
        out.say(format!("waymark: {}", f.message()));
    }
    Ok(())
}

/// IntentProgress: all acceptance criteria of the active intent met in the recent trace
/// window → the intent becomes COMPLETED (only its status line changes) and the transition
/// is recorded. Some met → nothing changes.
fn intent_progress(
    ctx: &Ctx,
    o: &ToolOutcome,
    facts: &mut Facts,
    out: &mut Output,
) -> anyhow::Result<()> {
    let first_inside = o.paths.iter().find_map(Located::inside);
    let Some((file, chosen)) = facts.intents_and_choice(ctx) else {
        return Ok(());
    };
    let Some(active) = file.active(chosen.as_deref(), first_inside) else {
        return Ok(());
    };
    if active.acceptance_criteria.is_empty() {
        return Ok(());
    }
    let (id, name, criteria) = (
        active.id.clone(),
        active.name.clone(),
        active.acceptance_criteria.clone(),
    );
    let recent = facts.recent(ctx)?;
    // waymark's own transition and scope records quote criteria and scopes: not evidence.
    let lines: Vec<&str> = recent
        .lines
        .iter()
        .map(String::as_str)
        .filter(|l| {
            !l.contains("\"kind\":\"transition\"") && !l.contains("\"kind\":\"scope_warning\"")
        })
        .collect();
    let ev = intent::evaluate(&criteria, &lines);
    for e in &ev.errors {
        ctx.log(
            Level::Warn,
            "intents",
            &format!("{id}: criterion not evaluated: {e}"),
        );
    }
    if !ev.all_met() {
        return Ok(());
    }
    let Some(from) = intent::set_status(&ctx.project, &id, intent::IN_PROGRESS, intent::COMPLETED)?
    else {
        return Ok(());
    };
    let wm = Waymark {
        kind: kind::TRANSITION.into(),
        event: o.event.name().into(),
        session_id: o.event.common.session_id.clone(),
        tool_use_id: o.call.tool_use_id.clone(),
        tool_name: Some(o.call.name.clone()),
        task_id: o.task_id.clone(),
        intent_id: Some(id.clone()),
        transition: Some(trace::Transition {
            intent_id: id.clone(),
            from,
            to: intent::COMPLETED.into(),
            criteria: ev.met.clone(),
        }),
        ..Default::default()
    };
    trace::append(&ctx.project, &Record::new(&ctx.project, ctx.now, wm))?;
    out.say(format!(
        "waymark: intent {id} ({name}) is now COMPLETED: all {} acceptance criteria were met in the recent trace.",
        ev.met.len()
    ));
    Ok(())
}

/// SharedBrain: governance violations carried by a tool error, and scope conflicts (a file
/// two running intents claim, or one two sessions changed within `conflict_window`).
/// Failed validations are VerificationFailure's, not repeated here.
fn shared_brain(
    ctx: &Ctx,
    o: &ToolOutcome,
    facts: &mut Facts,
    out: &mut Output,
) -> anyhow::Result<()> {
    let mut errors = Vec::new();
    if let Some(f) = o.failure.filter(|_| !o.validation) {
        if let Some(lesson) = denial_lesson(ctx, o, f, facts) {
            if let Err(e) = record_lesson(ctx, &lesson) {
                errors.push(e);
            }
        }
    }
    if o.call.is_mutation() && o.failure.is_none() {
        for path in o.paths.iter().filter_map(Located::inside) {
            for lesson in conflicts(ctx, o, path, facts, out)? {
                if let Err(e) = record_lesson(ctx, &lesson) {
                    errors.push(e);
                }
            }
        }
    }
    match errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// A tool error that carries a denial (not a command's own failure) → a governance lesson.
fn denial_lesson(ctx: &Ctx, o: &ToolOutcome, f: &ToolFailure, facts: &mut Facts) -> Option<Lesson> {
    if f.exit_code().is_some() || f.is_interrupt {
        return None;
    }
    let re =
        Regex::new(r"(?i)\b(denied|deny|permission|not permitted|not allowed|blocked)\b").ok()?;
    if !re.is_match(&f.error) {
        return None;
    }
    let target = target(ctx, o.event, o.call);
    let error = truncate(&one_line(&redact(&f.error)), 300);
    Some(Lesson {
        title: format!("Tool call denied: {} {}", o.call.name, truncate(&target, 60)),
        issue: format!("{} on {} failed with a denial: {error}", o.call.name, truncate(&target, 200)),
        solution: "Do not retry the same call. Find out which rule denied it (permissions, a hook, the intent's scope) and work within it, or ask the user.".into(),
        intent: facts.intent_id(ctx, o.paths.iter().find_map(Located::inside)),
        category: Category::Governance,
        detail: None,
    })
}

/// Scope-conflict coordination notes for one mutated path.
fn conflicts(
    ctx: &Ctx,
    o: &ToolOutcome,
    path: &str,
    facts: &mut Facts,
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
    let session = o.event.common.session_id.as_str();
    if session.is_empty() {
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
            .map(|t| crate::text::ago(ctx.now, t))
            .unwrap_or_default();
        out.say(format!(
            "waymark: {path} was also changed {ago} ago by another session ({other}); coordinate before going on."
        ));
        lessons.push(Lesson {
            title: format!("Scope conflict: {path} changed by two sessions"),
            issue: format!(
                "Sessions {other} and {session} both changed {path} within {} of each other.",
                crate::text::ago(ctx.now, since)
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
fn target(ctx: &Ctx, event: &Event, call: &ToolCall) -> String {
    if let Some(p) = call.written_paths().first() {
        return ctx
            .project
            .locate(p, event.common.cwd.as_deref())
            .display()
            .to_string();
    }
    if let Some(c) = call.command() {
        return one_line(&redact(c));
    }
    match &call.input {
        ToolInput::Other(v) => ["file_path", "path", "url", "pattern"]
            .iter()
            .find_map(|k| v.get(*k).and_then(|x| x.as_str()))
            .map(|s| one_line(&redact(s)))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// Adds a lesson to AGENT.md, which must lie inside the root (never through a symlink out).
fn record_lesson(ctx: &Ctx, lesson: &Lesson) -> anyhow::Result<()> {
    let located = ctx.project.locate(&ctx.config.agent_md, None);
    let Located::Inside(rel) = located else {
        anyhow::bail!(
            "{} is outside the project root; lesson not written",
            ctx.config.agent_md
        );
    };
    let path = ctx.project.absolute(&rel);
    brain::record(&path, lesson, ctx.now)
        .with_context(|| format!("cannot write the lesson to {rel}"))?;
    Ok(())
}
