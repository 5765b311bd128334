//! PostToolUse and PostToolUseFailure: what happens after every tool call, in order.
//!
//! 1. Bookkeeping, one locked change of the task:
//!    - TaskCreate / TaskUpdate / TodoWrite move the step plan (`task::tools`);
//!    - Write / Edit / NotebookEdit: the files inside the root join the step's
//!      `files_touched`, starting or re-entering a step if needed;
//!    - Bash: `git commit`, `git push`, `gh pr create` ask for checkpoints; a validation
//!      command gets an observed receipt and, when it passed, a `validation` checkpoint
//!      (`task::validation`, the flow `waymark validate` takes too);
//!    - a step running past `checkpoint_interval` asks for an `interval` checkpoint;
//!    - the session is marked active.
//! 2. The post-hooks of docs/design.md, each isolated, in this order: the trace record
//!    (first, so that IntentProgress sees it; part of the event, written even when the
//!    deadline is near and the others are skipped), ScopeDrift, IntentProgress, SharedBrain,
//!    VerificationFailure.

use super::posthook::isolated;
use crate::claude::event::{Event, ToolFailure};
use crate::claude::output::Output;
use crate::claude::tool::{ToolCall, ToolInput, ToolResponse};
use crate::governance::{drift, facts::Facts, lessons, progress};
use crate::runtime::context::Ctx;
use crate::store::log::Level;
use crate::store::project::Located;
use crate::task::{Effect, Hook, Need, SessionStatus, checkpoint, current, tools};
use crate::trace::tool_call::{self, Outcome};
use waymark_core::shell::{self, Kinds};
use waymark_core::task::validation;
use waymark_core::text::tail;

/// Output tails copied into the ledger are cut to this many characters.
const OUTPUT_TAIL: usize = 2000;

pub fn handle(
    ctx: &Ctx,
    event: &Event,
    call: &ToolCall,
    result: Result<&ToolResponse, &ToolFailure>,
    out: &mut Output,
) -> anyhow::Result<()> {
    let seen = see(ctx, event, call, result);
    let hook = bookkeeping(ctx, event, &seen, out)?;
    post_hooks(ctx, event, &seen, hook, out);
    Ok(())
}

/// What the call was, read once for both parts: the paths it wrote, a command's result.
struct Seen<'a> {
    call: &'a ToolCall,
    result: Result<&'a ToolResponse, &'a ToolFailure>,
    paths: Vec<Located>,
    bash: Option<BashResult>,
    /// The receipt's failure lines and the ledger both use it.
    output_tail: String,
    kinds: Option<Kinds>,
    /// A validation command run in the foreground: it gets an observed receipt.
    validation: bool,
    /// Only mutations, commands and the task tools start a task or mark the session active.
    relevant: bool,
    /// A command that runs waymark and nothing else (`waymark step done 3`): the agent
    /// keeping its plan, no work of a step's. It starts no task and enters no step.
    own: bool,
    /// The files a Bash command names as it writes them (`printf … > src/a.rs`), inside
    /// the root: files the step touched, as a Write's are.
    bash_writes: Vec<String>,
}

/// Reads the call: its paths located, a Bash command's result classified.
fn see<'a>(
    ctx: &Ctx,
    event: &Event,
    call: &'a ToolCall,
    result: Result<&'a ToolResponse, &'a ToolFailure>,
) -> Seen<'a> {
    let paths = located_paths(ctx, event, call);
    let bash = bash_result(call, result);
    let output_tail = bash.as_ref().map(BashResult::tail).unwrap_or_default();
    let kinds = bash.as_ref().map(|b| {
        let c = &ctx.config;
        shell::classify(&b.command, &c.validation_commands, &c.side_effect_commands)
    });
    // A command not read whole was said so in the log by its PreToolUse.
    let validation = kinds.as_ref().is_some_and(|k| k.validation)
        && bash.as_ref().is_some_and(|b| !b.background);
    // waymark's own commands (the agent keeping its plan) are no work of the step's.
    let own = kinds.as_ref().is_some_and(|k| k.waymark);
    let relevant = call.is_mutation()
        || bash.is_some()
        || matches!(
            call.input,
            ToolInput::TaskCreate(_) | ToolInput::TaskUpdate(_) | ToolInput::TodoWrite(_)
        );
    let bash_writes = match &bash {
        Some(b) if !own => bash_writes(ctx, event, &b.command),
        _ => Vec::new(),
    };
    Seen {
        call,
        result,
        paths,
        bash,
        output_tail,
        kinds,
        validation,
        relevant,
        own,
        bash_writes,
    }
}

/// The files inside the root that `command` names as it writes them; a target that is a
/// directory (`cp a.rs dir`) names the file in it.
fn bash_writes(ctx: &Ctx, event: &Event, command: &str) -> Vec<String> {
    let cwd = event.common.cwd.as_deref();
    let mut files = Vec::new();
    for t in shell::writes::of(command).targets {
        if t.path.starts_with('~') || t.path.chars().any(char::is_control) {
            continue;
        }
        let located = ctx.project.locate(&t.path, cwd);
        let Some(rel) = located.inside() else {
            continue;
        };
        // waymark's own files and git's are no work of the step's.
        let under = |d: &&str| rel == *d || rel.starts_with(&format!("{d}/"));
        if [".git", crate::store::project::STATE_DIR].iter().any(under) {
            continue;
        }
        files.push(match &t.in_dir {
            Some(name) if ctx.project.root.join(rel).is_dir() => format!("{rel}/{name}"),
            _ => rel.to_string(),
        });
    }
    files
}

/// 1. Bookkeeping, one locked change of the task; returns the task as saved, if any.
fn bookkeeping(
    ctx: &Ctx,
    event: &Event,
    seen: &Seen,
    out: &mut Output,
) -> anyhow::Result<Option<Hook>> {
    let need = match seen.call.input {
        _ if !seen.relevant || seen.own => Need::Existing,
        // A plan made after a finished task is the next task's.
        ToolInput::TaskCreate(_) | ToolInput::TaskUpdate(_) | ToolInput::TodoWrite(_) => {
            Need::Create
        }
        _ => Need::First,
    };
    let mut rewound = None;
    let changed = current::change(ctx, need, |hook, effects| -> anyhow::Result<()> {
        // A turn's first event tells a rewound conversation before the plan moves again.
        rewound = super::rewound::check(ctx, hook, &event.common.session_id, false);
        move_plan(ctx, event, seen, hook, effects)?;
        let mut inside: Vec<&str> = seen.paths.iter().filter_map(Located::inside).collect();
        inside.extend(seen.bash_writes.iter().map(String::as_str));
        let work = !inside.is_empty() || seen.bash.is_some() && !seen.own;
        if work && !super::ended_late(ctx, hook, &event.common.session_id) {
            hook.ensure_running(ctx.config.max_attempts, ctx.now)?;
        }
        for p in &inside {
            hook.touch_file(p, ctx.now);
        }
        command_bookkeeping(ctx, event, seen, hook, effects);
        if effects.is_empty() {
            let interval = ctx.config.checkpoint_interval;
            effects.extend(checkpoint::interval_due(hook, ctx.now, interval));
        }
        if seen.relevant {
            super::note(hook, event, SessionStatus::Active, ctx);
            let c = &event.common;
            if !inside.is_empty() {
                hook.note_work(&c.session_id, &inside);
            }
        }
        Ok(())
    })?;
    let hook = changed
        .map(|(result, hook)| result.map(|()| hook))
        .transpose()?;
    out.say(rewound.unwrap_or_default());
    Ok(hook)
}

/// TaskCreate / TaskUpdate / TodoWrite move the step plan; items past its limit are logged.
fn move_plan(
    ctx: &Ctx,
    event: &Event,
    seen: &Seen,
    hook: &mut Hook,
    effects: &mut Vec<Effect>,
) -> anyhow::Result<()> {
    let call = seen.call;
    let max_attempts = ctx.config.max_attempts;
    let applied = tools::apply_tool(hook, call, seen.result.ok(), max_attempts, ctx.now)?;
    if applied.refused > 0 {
        let (max, refused) = (waymark_core::task::MAX_STEPS, applied.refused);
        let why = format!(
            "{}: the plan holds at most {max} steps; {refused} items were not added",
            call.name
        );
        ctx.log(Level::Warn, event.name(), &why);
    }
    effects.extend(applied.effects);
    Ok(())
}

/// Bash: the checkpoints a commit or push asks for, side effects noted, a validation's receipt.
fn command_bookkeeping(
    ctx: &Ctx,
    event: &Event,
    seen: &Seen,
    hook: &mut Hook,
    effects: &mut Vec<Effect>,
) {
    let (Some(b), Some(k)) = (&seen.bash, &seen.kinds) else {
        return;
    };
    hook.end_command(&event.common.session_id, Some(&b.command));
    if b.exit_code == Some(0) {
        effects.extend(checkpoint::vcs_effects(&b.command, &b.stdout, &b.stderr, k));
        // The check the brief names for what a crash left unknown: the guard lets it be.
        waymark_core::recovery::repeat::settle(hook, &b.command);
    }
    if k.side_effect && !b.background {
        hook.note_side_effect(&b.command, b.exit_code.unwrap_or(-1), ctx.now);
    }
    if seen.validation {
        let duration = event
            .common
            .duration_ms
            .map(std::time::Duration::from_millis);
        let exit_code = b.exit_code.unwrap_or(-1);
        let run = validation::observed(
            &b.command, exit_code, &b.stdout, &b.stderr, duration, ctx.now,
        );
        current::count_uncounted_receipts(ctx, hook);
        let (sealed, key_error) = crate::receipt::sealed(&ctx.config, hook, None, run);
        if let Some(e) = key_error {
            let why = format!("{} stored unsigned: {e}", sealed.receipt.receipt_id);
            ctx.log(Level::Warn, "receipt", &why);
        }
        effects.extend(validation::record(hook, sealed, &seen.output_tail, ctx.now));
    }
}

/// 2. The post-hooks, each isolated, in order. The trace record is part of the event:
///    it is written even when the deadline is near (a kept event applied late must not
///    lose it), and the others are skipped then.
fn post_hooks(ctx: &Ctx, event: &Event, seen: &Seen, hook: Option<Hook>, out: &mut Output) {
    // The ledger is about mutations and commands; other tools matter only when they fail
    // (a denial is a governance lesson).
    let (call, failure) = (seen.call, seen.result.err());
    let traced = call.is_mutation() || call.command().is_some();
    if !traced && failure.is_none() {
        return;
    }
    let name = event.name();
    let about = crate::trace::about(event, call, hook.as_ref().map(|h| h.task_id.clone()));
    let receipt = hook
        .as_ref()
        .and_then(|h| h.recent_receipts.last())
        .map(|r| r.receipt_id.clone());
    let mut facts = facts(ctx, event, hook);
    let first_inside = seen.paths.iter().find_map(Located::inside);
    let exit_code = seen.bash.as_ref().and_then(|b| b.exit_code);
    let outcome = Outcome {
        event,
        call,
        response: seen.result.ok(),
        failure,
        paths: &seen.paths,
        exit_code,
        output_tail: &seen.output_tail,
        validation: seen.validation,
    };
    if traced {
        isolated(ctx, name, "trace", || {
            let intent = facts.intent_id(ctx, first_inside);
            tool_call::record(ctx, &outcome, &about, intent)
        });
    }
    if ctx.short_of_time() {
        let why = "deadline near: post-hooks after the trace record skipped";
        ctx.log(Level::Warn, name, why);
        return;
    }
    if call.is_mutation() && failure.is_none() {
        isolated(ctx, name, "scope_drift", || {
            drift::run(ctx, &mut facts, &about, &seen.paths, out)
        });
    }
    if traced {
        isolated(ctx, name, "intent_progress", || {
            progress::run(ctx, &mut facts, &about, first_inside, out)
        });
    }
    isolated(ctx, name, "shared_brain", || {
        lessons::shared_brain(ctx, &mut facts, &outcome, out)
    });
    if seen.validation {
        validation_lessons(ctx, name, seen, &mut facts, exit_code, receipt);
    }
}

/// VerificationFailure, and its settling: a failed validation leaves a lesson; a passing
/// one (with its receipt) settles the lesson its command's failure left.
fn validation_lessons(
    ctx: &Ctx,
    name: &str,
    seen: &Seen,
    facts: &mut Facts,
    exit_code: Option<i32>,
    receipt: Option<String>,
) {
    let command = seen.call.command().unwrap_or_default();
    if seen.result.is_err() {
        isolated(ctx, name, "verification_failure", || {
            let intent = facts.intent_id(ctx, None);
            let code = exit_code.unwrap_or(1);
            let tail = &seen.output_tail;
            lessons::verification_failure(ctx, command, code, tail, intent.as_deref())
        });
    } else if let Some(receipt) = receipt.filter(|_| exit_code == Some(0)) {
        isolated(ctx, name, "lesson_settled", || {
            lessons::settle(ctx, command, &receipt)
        });
    }
}

/// What the post-hooks share: the task's intent, whether other sessions are at work on it.
fn facts(ctx: &Ctx, event: &Event, hook: Option<Hook>) -> Facts {
    let window = chrono::Duration::from_std(ctx.config.conflict_window).unwrap_or_default();
    let others = hook.as_ref().is_some_and(|h| {
        let me = &event.common.session_id;
        h.others_since(me, ctx.now - window).next().is_some()
    });
    let mut facts = Facts::new(hook.and_then(|h| h.intent_id));
    facts.other_sessions = others;
    facts
}

/// The paths a call wrote, located against the root. A path with control characters (a
/// NUL, a newline, an escape) names no real file and would forge lines in HOOK.md and the
/// brief the next agent reads: it is dropped. Each refusal is logged; a path outside the
/// root is kept (as `Outside`: recorded in the trace, never tracked as touched nor written).
fn located_paths(ctx: &Ctx, event: &Event, call: &ToolCall) -> Vec<Located> {
    let cwd = event.common.cwd.as_deref();
    let mut out = Vec::new();
    for p in call.written_paths() {
        let name = &call.name;
        if p.chars().any(char::is_control) {
            let p = waymark_core::text::truncate(p, 200);
            let why = format!("{name}: path with a control character ignored: {p:?}");
            ctx.log(Level::Warn, event.name(), &why);
            continue;
        }
        let located = ctx.project.locate(p, cwd);
        if let Located::Outside(abs) = &located {
            let abs = waymark_core::text::truncate(abs, 300);
            let why = format!("{name}: {abs} is outside the project: not tracked as touched");
            ctx.log(Level::Info, event.name(), &why);
        }
        out.push(located);
    }
    out
}

/// A Bash call's result, from PostToolUse or PostToolUseFailure.
struct BashResult {
    command: String,
    exit_code: Option<i32>,
    stdout: String,
    stderr: String,
    background: bool,
}

impl BashResult {
    /// The redacted, bounded end of the output, for the ledger.
    fn tail(&self) -> String {
        if self.stderr.is_empty() {
            return tail(self.stdout.trim(), OUTPUT_TAIL);
        }
        let all = format!("{}\n{}", self.stdout, self.stderr);
        tail(all.trim(), OUTPUT_TAIL)
    }
}

fn bash_result(call: &ToolCall, result: Result<&ToolResponse, &ToolFailure>) -> Option<BashResult> {
    let ToolInput::Bash(input) = &call.input else {
        return None;
    };
    let base = BashResult {
        command: input.command.clone(),
        exit_code: None,
        stdout: String::new(),
        stderr: String::new(),
        background: input.run_in_background,
    };
    Some(match result {
        Ok(ToolResponse::Bash(r)) => BashResult {
            exit_code: (!r.interrupted).then_some(0),
            stdout: r.stdout.clone(),
            stderr: r.stderr.clone(),
            ..base
        },
        Ok(_) => BashResult {
            exit_code: Some(0),
            ..base
        },
        Err(f) => BashResult {
            exit_code: f.exit_code().or(Some(1)),
            stdout: f.output().to_string(),
            ..base
        },
    })
}
