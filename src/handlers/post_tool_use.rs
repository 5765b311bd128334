//! PostToolUse and PostToolUseFailure: what happens after every tool call.
//!
//! 1. Core bookkeeping, under the hook.json lock:
//!    - TaskCreate / TaskUpdate / TodoWrite move the step plan;
//!    - Write / Edit / NotebookEdit: the files (inside the root) join the step's
//!      `files_touched`, starting or re-entering a step if needed;
//!    - Bash: `git commit`, `git push`, `gh pr create` make checkpoints; a validation
//!      command gets an observed receipt, and a `validation` checkpoint when it passed;
//!    - any event in a step running past `checkpoint_interval` makes an `interval` checkpoint.
//! 2. The post-hooks (trace record, intent progress, scope drift, lessons), each isolated.

use chrono::Duration;

use crate::claude::event::{Event, ToolFailure};
use crate::claude::output::Output;
use crate::claude::tool::{ToolCall, ToolInput, ToolResponse};
use crate::context::Ctx;
use crate::posthooks::{self, ToolOutcome};
use crate::project::Located;
use crate::redact::redact;
use crate::shell;
use crate::task::{
    CheckpointTrigger, Effect, Hook, HookState, SessionStatus, StepSource, StepStatus,
};
use crate::text::tail;

use super::{Need, with_task};

/// Output tails copied into the ledger are cut to this many characters.
pub const OUTPUT_TAIL: usize = 2000;
/// How much of the end of an output is redacted before the tail is cut from it.
const REDACT_WINDOW: usize = 16 * 1024;

pub fn handle(
    ctx: &Ctx,
    event: &Event,
    call: &ToolCall,
    result: Result<&ToolResponse, &ToolFailure>,
    out: &mut Output,
) -> anyhow::Result<()> {
    let cwd = event.common.cwd.as_deref();
    let paths = located_paths(ctx, event, call, cwd);
    let bash = bash_result(call, result);
    let kinds = bash
        .as_ref()
        .map(|b| shell::classify(&b.command, &ctx.config.validation_commands));
    let validation = kinds.as_ref().is_some_and(|k| k.validation)
        && bash.as_ref().is_some_and(|b| !b.background);
    let relevant = call.is_mutation()
        || bash.is_some()
        || matches!(
            call.input,
            ToolInput::TaskCreate(_) | ToolInput::TaskUpdate(_) | ToolInput::TodoWrite(_)
        );
    let (need, session) = if relevant {
        (Need::Create, Some(SessionStatus::Active))
    } else {
        (Need::Existing, None)
    };

    let hook = with_task(ctx, event, need, session, |hook| {
        let mut effects = plan_from_tool(ctx, hook, call, result.ok())?;
        let inside: Vec<&str> = paths.iter().filter_map(Located::inside).collect();
        if !inside.is_empty() || bash.is_some() {
            hook.ensure_running(ctx.config.max_attempts, ctx.now)?;
            for p in &inside {
                hook.touch_file(p, ctx.now);
            }
        }
        if let (Some(b), Some(k)) = (&bash, &kinds) {
            effects.extend(vcs_checkpoints(b, k));
            if validation {
                let seen = crate::receipt::Seen {
                    command: &b.command,
                    exit_code: b.exit_code.unwrap_or(-1),
                    stdout: &b.stdout,
                    stderr: &b.stderr,
                    duration: event
                        .common
                        .duration_ms
                        .map(std::time::Duration::from_millis),
                };
                let receipt = crate::receipt::observe(ctx, hook, seen);
                let (passed, id) = (receipt.exit_code == 0, receipt.receipt_id.clone());
                hook.add_receipt(receipt);
                if passed {
                    effects.push(Effect::Checkpoint(
                        CheckpointTrigger::Validation,
                        format!("Validation passed: {} ({id})", b.command),
                    ));
                }
                if b.exit_code != Some(0) {
                    hook.record_failure(ctx.now);
                }
            }
        }
        if effects.is_empty() && interval_due(hook, ctx) {
            let minutes = hook
                .current_step
                .as_ref()
                .map(|c| (ctx.now - c.started_at).num_minutes())
                .unwrap_or(0);
            effects.push(Effect::Checkpoint(
                CheckpointTrigger::Interval,
                format!("Interval checkpoint ({minutes} min into the step)"),
            ));
        }
        Ok(effects)
    })?;
    if ctx.short_of_time() {
        ctx.log(
            crate::log::Level::Warn,
            event.name(),
            "deadline near: post-hooks skipped",
        );
        return Ok(());
    }
    let outcome = ToolOutcome {
        event,
        call,
        response: result.ok(),
        failure: result.err(),
        paths: &paths,
        exit_code: bash.as_ref().and_then(|b| b.exit_code),
        output_tail: bash.as_ref().map(|b| b.tail()).unwrap_or_default(),
        validation,
        task_id: hook.as_ref().map(|h| h.task_id.clone()),
        intent_id: hook.as_ref().and_then(|h| h.intent_id.clone()),
    };
    posthooks::after_tool(ctx, &outcome, out);
    Ok(())
}

/// The paths a call wrote, located against the root. A path with control characters (a
/// NUL, a newline, an escape) names no real file and would forge lines in HOOK.md and the
/// brief the next agent reads: it is dropped. Each refusal is logged; a path outside the
/// root is kept (as `Outside`: recorded in the trace, never tracked as touched nor written).
fn located_paths(ctx: &Ctx, event: &Event, call: &ToolCall, cwd: Option<&str>) -> Vec<Located> {
    let mut out = Vec::new();
    for p in call.written_paths() {
        if p.chars().any(char::is_control) {
            ctx.log(
                crate::log::Level::Warn,
                event.name(),
                &format!(
                    "{}: path with a control character ignored: {:?}",
                    call.name,
                    crate::text::truncate(p, 200)
                ),
            );
            continue;
        }
        let located = ctx.project.locate(p, cwd);
        if let Located::Outside(abs) = &located {
            ctx.log(
                crate::log::Level::Info,
                event.name(),
                &format!(
                    "{}: {} is outside the project: not tracked as touched",
                    call.name,
                    crate::text::truncate(abs, 300)
                ),
            );
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
        let text = if self.stderr.is_empty() {
            self.stdout.clone()
        } else {
            format!("{}\n{}", self.stdout, self.stderr)
        };
        // Redact a window, not the whole output (a listing of 10,000 files, a 50 MB log):
        // wide enough that a secret cut by the window's edge is still recognised (a PEM
        // key's BEGIN line may fall outside it: redact() masks an END without a BEGIN).
        let window = tail(text.trim(), REDACT_WINDOW);
        tail(&redact(&window), OUTPUT_TAIL)
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

/// Step-plan changes from Claude Code's task tools.
fn plan_from_tool(
    ctx: &Ctx,
    hook: &mut Hook,
    call: &ToolCall,
    response: Option<&ToolResponse>,
) -> anyhow::Result<Vec<Effect>> {
    let max = ctx.config.max_attempts;
    Ok(match &call.input {
        ToolInput::TaskCreate(t) => {
            let id = match response {
                Some(ToolResponse::TaskCreate(r)) if !r.task.id.is_empty() => r.task.id.clone(),
                _ => hook
                    .find_step(&t.subject)
                    .map(|s| s.id.clone())
                    .unwrap_or_else(|| hook.next_step_id("")),
            };
            hook.add_step(
                &id,
                &t.subject,
                &t.description,
                t.active_form.as_deref(),
                StepSource::Task,
                ctx.now,
            );
            Vec::new()
        }
        ToolInput::TaskUpdate(t) => {
            if t.subject.is_some() || t.active_form.is_some() || t.description.is_some() {
                let (s, d) = (
                    t.subject.clone().unwrap_or_default(),
                    t.description.clone().unwrap_or_default(),
                );
                if hook.step(&t.task_id).is_some() {
                    hook.add_step(
                        &t.task_id,
                        &s,
                        &d,
                        t.active_form.as_deref(),
                        StepSource::Task,
                        ctx.now,
                    );
                }
            }
            let status = match response {
                Some(ToolResponse::TaskUpdate(r)) => r
                    .status_change
                    .as_ref()
                    .map(|c| c.to.clone())
                    .or(t.status.clone()),
                _ => t.status.clone(),
            };
            match status.as_deref().and_then(StepStatus::parse) {
                Some(st) => hook.set_step_status(&t.task_id, st, max, ctx.now)?,
                None => Vec::new(),
            }
        }
        ToolInput::TodoWrite(todos) => {
            let mut effects = Vec::new();
            let mut refused = 0;
            // Items are matched to steps by name through an index, not a scan per item.
            let mut by_name: std::collections::HashMap<String, String> = hook
                .steps
                .iter()
                .filter(|s| s.source == StepSource::Todo)
                .map(|s| (s.name.clone(), s.id.clone()))
                .collect();
            for todo in &todos.todos {
                let id = match todo.id.clone().filter(|i| !i.is_empty()) {
                    Some(id) => id,
                    None => match by_name.get(&todo.content) {
                        Some(id) => id.clone(),
                        None if hook.steps.len() >= crate::task::MAX_STEPS => {
                            refused += 1;
                            continue;
                        }
                        None => hook.next_step_id("todo-"),
                    },
                };
                if !hook.add_step(
                    &id,
                    &todo.content,
                    "",
                    todo.active_form.as_deref(),
                    StepSource::Todo,
                    ctx.now,
                ) {
                    refused += 1;
                    continue;
                }
                by_name.entry(todo.content.clone()).or_insert(id.clone());
                if let Some(st) = StepStatus::parse(&todo.status) {
                    if hook.step(&id).is_some_and(|s| s.status != st) {
                        effects.extend(hook.set_step_status(&id, st, max, ctx.now)?);
                    }
                }
            }
            if refused > 0 {
                ctx.log(
                    crate::log::Level::Warn,
                    "PostToolUse",
                    &format!(
                        "TodoWrite: the plan holds at most {} steps; {refused} items were not added",
                        crate::task::MAX_STEPS
                    ),
                );
            }
            effects
        }
        _ => Vec::new(),
    })
}

fn vcs_checkpoints(b: &BashResult, k: &shell::Kinds) -> Vec<Effect> {
    if b.exit_code != Some(0) {
        return Vec::new();
    }
    let mut effects = Vec::new();
    if k.git_commit {
        let hash = shell::commit_hash(&b.stdout).map(|h| h[..h.len().min(12)].to_string());
        let msg = shell::commit_message(&b.command);
        let desc = match (hash, msg) {
            (Some(h), Some(m)) => format!("Commit {h}: {m}"),
            (Some(h), None) => format!("Commit {h}"),
            (None, Some(m)) => format!("Commit: {m}"),
            (None, None) => "Commit".to_string(),
        };
        effects.push(Effect::Checkpoint(CheckpointTrigger::GitCommit, desc));
    }
    if k.git_push {
        effects.push(Effect::Checkpoint(
            CheckpointTrigger::GitPush,
            format!("Push: {}", crate::text::one_line(&b.command)),
        ));
    }
    if k.pr_create {
        let url = shell::pr_url(&format!("{}\n{}", b.stdout, b.stderr));
        effects.push(Effect::Checkpoint(
            CheckpointTrigger::PrCreated,
            url.map(|u| format!("PR created: {u}"))
                .unwrap_or_else(|| "PR created".into()),
        ));
    }
    effects
}

/// True when the running step has gone `checkpoint_interval` without a checkpoint.
fn interval_due(hook: &Hook, ctx: &Ctx) -> bool {
    if hook.state != HookState::StepRunning {
        return false;
    }
    let Some(step) = &hook.current_step else {
        return false;
    };
    let last = hook
        .last_checkpoint()
        .map(|c| c.created_at.max(step.started_at))
        .unwrap_or(step.started_at);
    let interval = Duration::from_std(ctx.config.checkpoint_interval).unwrap_or(Duration::MAX);
    ctx.now - last >= interval
}
