//! `waymark task …` and `waymark step …`: drive the task by hand (people, scripts, agents
//! that do not use Claude Code's task list).

use crate::cmd::{ExitCode, Outcome};
use std::path::PathBuf;

use clap::Subcommand;

use crate::runtime::context::Ctx;
use crate::task::current::{self, live_task, new_task};
use crate::task::store::{StoreError, Updated};
use crate::task::{
    CheckpointTrigger, Effect, Hook, HookState, SessionStatus, StepSource, StepStatus,
};

#[derive(Debug, Subcommand)]
pub enum TaskCmd {
    /// Start a new task (finishing nothing: an unfinished task must be done or abandoned first).
    Start {
        /// Task id (default: the active intent's id, else task-YYYYMMDD-HHMMSS).
        #[arg(long)]
        id: Option<String>,
        /// Steps of the plan, in order.
        #[arg(long = "step")]
        steps: Vec<String>,
    },
    /// Mark the task completed.
    Done,
    /// Mark the task failed.
    Fail,
    /// Abandon the task.
    Abandon,
}

#[derive(Debug, Subcommand)]
pub enum StepCmd {
    /// Add steps to the plan, in order.
    Add {
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Start (or re-enter) a step, by number (as `waymark plan` lists it), id or name.
    Start { step: String },
    /// Complete a step.
    Done { step: String },
    /// Fail a step (its next start is a new attempt).
    Fail { step: String },
    /// Grant a step that has used its attempts one more, and start it: the way out of
    /// HUMAN NEEDED once a person says so (`step start` is refused there).
    Retry { step: String },
    /// Say that the side effects a crash left unknown (or done) in the resumed step were
    /// checked where they act: the repeat guard no longer asks before they run again.
    Checked,
}

pub fn task(root: Option<PathBuf>, cmd: TaskCmd) -> Outcome {
    let ctx = super::ctx(root);
    let result = current::update(&ctx, |slot, effects| -> anyhow::Result<String> {
        match cmd {
            TaskCmd::Start { id, steps } => {
                if let Some(h) = slot.as_ref().filter(|h| !h.state.is_terminal()) {
                    return Err(anyhow::anyhow!(
                        "task {} is still {}: finish it (`waymark task done|fail|abandon`) first",
                        h.task_id,
                        h.state
                    ));
                }
                let mut hook = new_task(&ctx, slot.as_ref());
                if let Some(id) = id {
                    hook.task_id = id;
                }
                for name in steps {
                    let sid = hook.next_step_id("step-");
                    hook.add_step(&sid, &name, "", None, StepSource::Manual, ctx.now);
                }
                let msg = format!(
                    "Started task {} with {}",
                    hook.task_id,
                    waymark_core::text::count(hook.steps.len() as u64, "step")
                );
                *slot = Some(hook);
                Ok(msg)
            }
            TaskCmd::Done | TaskCmd::Fail | TaskCmd::Abandon => {
                let hook = live(slot)?;
                let to = match cmd {
                    TaskCmd::Done => HookState::Completed,
                    TaskCmd::Fail => HookState::Failed,
                    _ => HookState::Abandoned,
                };
                if to == HookState::Completed {
                    let done = "Task completed".to_string();
                    effects.push(Effect::Checkpoint(
                        CheckpointTrigger::StepComplete,
                        done,
                        None,
                    ));
                }
                hook.finish(to, ctx.now)?;
                Ok(format!("Task {} is {}", hook.task_id, hook.state))
            }
        }
    });
    report(result)
}

pub fn step(root: Option<PathBuf>, cmd: StepCmd) -> Outcome {
    let ctx = super::ctx(root);
    let result = current::update(&ctx, |slot, effects| -> anyhow::Result<String> {
        // Steps added are a plan, which starts a task; the others move a step of the task
        // in progress, and after a finished one there is none (none is made for them).
        let hook = match cmd {
            StepCmd::Add { .. } => live_task(&ctx, slot),
            _ => live(slot)?,
        };
        let rewound = rewound_first(&ctx, hook);
        let (target, status) = match cmd {
            StepCmd::Add { names } => {
                let added = hook.plan(&names, StepSource::Manual, ctx.now);
                return Ok(format!(
                    "{rewound}Added {}.\n{}",
                    waymark_core::text::count(added as u64, "step"),
                    listing(hook)
                ));
            }
            StepCmd::Checked => return Ok(checked(hook, ctx.now)),
            StepCmd::Retry { step } => return retry(&ctx, hook, &step),
            StepCmd::Start { step } => (step, StepStatus::InProgress),
            StepCmd::Done { step } => (step, StepStatus::Completed),
            StepCmd::Fail { step } => (step, StepStatus::Failed),
        };
        let said = apply(&ctx, hook, &target, status, effects)?;
        note_agent_session(hook, ctx.now);
        Ok(format!("{rewound}{said}"))
    });
    report(result)
}

/// `waymark step checked`: what the repeat guard now lets run again. What the crash left
/// unknown is settled: the recovery is over (later briefs do not announce the crash).
fn checked(hook: &mut Hook, now: chrono::DateTime<chrono::Utc>) -> String {
    let settled = waymark_core::recovery::repeat::settle_all(hook);
    if settled.is_empty() {
        return "Nothing to check: the repeat guard holds no side effect of this step.".into();
    }
    hook.end_recovery("step_checked", now);
    let listed: Vec<String> = settled
        .iter()
        .map(|c| format!("`{}`", waymark_core::text::one_line(c)))
        .collect();
    format!(
        "Checked: {}. The repeat guard no longer asks before they run again; run one again only if the check showed it did not land.",
        listed.join("; ")
    )
}

/// `waymark plan [STEP…]`: adds the steps the plan does not hold yet, in order, and prints
/// the plan numbered (the numbers `waymark step start|done N` take). Without steps it only
/// prints the plan. This is how an agent with no task-list tool keeps its plan
/// (docs/plan.md).
pub fn plan(root: Option<PathBuf>, names: Vec<String>) -> Outcome {
    let ctx = super::ctx(root);
    let listed = |hook: Option<&Hook>| match hook.filter(|h| !h.state.is_terminal()) {
        Some(hook) => listing(hook),
        None => format!("No plan yet: {PLAN_HOWTO}"),
    };
    // From Claude Code's Bash, the listing comes after the rewound conversation's plan is
    // put back (a change; rewinds are Claude Code's alone); elsewhere it only reads.
    if names.is_empty() && claude_session().is_none() {
        super::say(&listed(super::load_hook(&ctx)?.as_ref()));
        return Ok(ExitCode::SUCCESS);
    }
    let result = current::update(&ctx, |slot, _| -> anyhow::Result<String> {
        if names.is_empty() {
            let live = slot.as_mut().filter(|h| !h.state.is_terminal());
            let rewound = live.map(|hook| rewound_first(&ctx, hook));
            return Ok(format!(
                "{}{}",
                rewound.unwrap_or_default(),
                listed(slot.as_ref())
            ));
        }
        let hook = live_task(&ctx, slot);
        let rewound = rewound_first(&ctx, hook);
        let added = hook.plan(&names, StepSource::Manual, ctx.now);
        note_agent_session(hook, ctx.now);
        let already = match names.len() - added {
            0 => String::new(),
            skipped => format!(" ({skipped} already in it)"),
        };
        Ok(format!(
            "{rewound}Added {} to the plan{already}.\n{}",
            waymark_core::text::count(added as u64, "step"),
            listing(hook)
        ))
    });
    report(result)
}

/// How to keep a plan with waymark, in one line.
pub const PLAN_HOWTO: &str = "record it with `waymark plan \"first step\" \"second step\" …`, then \
     `waymark step start N` before step N and `waymark step done N` after it.";

/// The plan numbered as `waymark step … N` takes it, with each step's status.
fn listing(hook: &Hook) -> String {
    let mut out = format!("Plan of task {} ({}):", hook.task_id, hook.state);
    // The catch-all for work with no plan is no step of the user's: not listed, not numbered.
    let live = hook
        .steps
        .iter()
        .filter(|s| s.status != StepStatus::Deleted && s.source != StepSource::Implicit);
    for (n, s) in live.enumerate() {
        let mark = match s.status {
            StepStatus::Completed => "x",
            StepStatus::InProgress => ">",
            StepStatus::Failed => "!",
            _ => " ",
        };
        out.push_str(&format!("\n  {:>2}. [{mark}] {}", n + 1, s.name));
    }
    out.push_str(
        "\nStart step N with `waymark step start N`; finish it with `waymark step done N`.",
    );
    out
}

/// A command the agent ran from its shell tool ([`agent_session`]): the step it moved is
/// that session's step, as a hook event would have recorded it.
fn note_agent_session(hook: &mut Hook, now: chrono::DateTime<chrono::Utc>) {
    if let Some(session) = agent_session() {
        hook.note_session(&session, None, SessionStatus::Active, now);
        hook.note_work(&session, &[]);
    }
}

/// The session whose agent runs this command from its shell tool: Claude Code puts
/// `CLAUDE_CODE_SESSION_ID` in its Bash tool's environment, Codex CLI `CODEX_THREAD_ID`
/// in its shell's (the thread id is the `session_id` of its hook events).
fn agent_session() -> Option<String> {
    claude_session().or_else(|| set("CODEX_THREAD_ID"))
}

/// The Claude Code session whose agent runs this command from its Bash tool.
fn claude_session() -> Option<String> {
    set("CLAUDE_CODE_SESSION_ID")
}

/// The environment variable `name`, unless it is unset or empty.
fn set(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|s| !s.is_empty())
}

/// Before the agent's first change of the plan in a turn: whether the conversation was
/// rewound (Claude Code's /rewind), which puts the plan back first; what to tell it.
fn rewound_first(ctx: &Ctx, hook: &mut Hook) -> String {
    // Only Claude Code's conversations are rewound (its /rewind, read from its transcript).
    let note = claude_session().and_then(|s| crate::handlers::rewound::check(ctx, hook, &s, false));
    note.map(|n| format!("{n}\n")).unwrap_or_default()
}

fn apply(
    ctx: &Ctx,
    hook: &mut Hook,
    target: &str,
    status: StepStatus,
    effects: &mut Vec<Effect>,
) -> anyhow::Result<String> {
    let id = find(hook, target)?;
    let made = hook.set_step_status(&id, status, ctx.config.max_attempts, ctx.now)?;
    effects.extend(made);
    let step = hook.step(&id).expect("exists");
    if status == StepStatus::InProgress && hook.state == HookState::AwaitingHuman {
        // One rule, whatever spent the attempts (crashes, failed validations): refused
        // every time until a person grants another.
        return Err(anyhow::anyhow!(
            "step \"{}\" has used its {} attempts: not started. A person decides how to go on: `waymark step retry {id}` grants one more attempt, `waymark step done {id}` settles it by hand, or change the plan",
            step.name,
            hook.attempts_allowed(step),
            id = waymark_core::shell::quote(&step.id)
        ));
    }
    let said = format!(
        "Step \"{}\": {} (attempt {}); task {}",
        step.name,
        step.status.as_str(),
        step.attempt,
        hook.state
    );
    // The last step done finishes the task: a plan finished does not stay open for the work
    // after it to reopen.
    let done = status == StepStatus::Completed
        && hook.state == HookState::StepPending
        && hook.all_steps_completed();
    if done {
        hook.finish(HookState::Completed, ctx.now)?;
        let id = &hook.task_id;
        return Ok(format!(
            "{said}. Every step is done: task {id} is completed."
        ));
    }
    Ok(said)
}

/// `waymark step retry N`: one more attempt granted, and the step started as it.
fn retry(ctx: &Ctx, hook: &mut Hook, target: &str) -> anyhow::Result<String> {
    let id = find(hook, target)?;
    let before = hook.step(&id).map_or(0, |s| s.granted);
    hook.retry_step(&id, ctx.config.max_attempts, ctx.now)?;
    note_agent_session(hook, ctx.now);
    let step = hook.step(&id).expect("exists");
    let granted = match step.granted > before {
        true => ", one granted past max_attempts",
        false => "",
    };
    Ok(format!(
        "Step \"{}\": {} (attempt {} of {}{granted}); task {}",
        step.name,
        step.status.as_str(),
        step.attempt,
        hook.attempts_allowed(step),
        hook.state
    ))
}

/// The id of the step `target` names (a number, an id or a name).
fn find(hook: &Hook, target: &str) -> anyhow::Result<String> {
    hook.find_step(target)
        .map(|s| s.id.clone())
        .ok_or_else(|| anyhow::anyhow!("no step `{target}` (see `waymark status`)"))
}

fn live(slot: &mut Option<Hook>) -> anyhow::Result<&mut Hook> {
    match slot.as_mut() {
        Some(h) if !h.state.is_terminal() => Ok(h),
        Some(h) => Err(anyhow::anyhow!(
            "task {} is {}: start a new one with `waymark task start`",
            h.task_id,
            h.state
        )),
        None => anyhow::bail!("no task (start one with `waymark task start`)"),
    }
}

fn report(result: Result<Updated<anyhow::Result<String>>, StoreError>) -> Outcome {
    let msg = result.map_err(super::failed)?.value.map_err(super::usage)?;
    super::say(&msg);
    Ok(ExitCode::SUCCESS)
}
