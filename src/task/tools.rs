//! Claude Code's own task list, mapped onto the plan: the TaskCreate, TaskUpdate and
//! legacy TodoWrite tools (PostToolUse), and the TaskCreated / TaskCompleted events.
//!
//! Every way Claude Code tells of a step lands here, so a step means the same whichever
//! way it arrived; the rules of what a status change does are in `plan.rs`.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::machine::TransitionError;
use super::plan::{Effect, MAX_STEPS};
use super::{Hook, StepSource, StepStatus};
use crate::claude::event::TaskEvent;
use crate::claude::tool::{
    TaskCreateInput, TaskUpdateInput, TodoWriteInput, ToolCall, ToolInput, ToolResponse,
};

/// What a task tool did to the plan.
#[derive(Debug, Default)]
pub struct Applied {
    pub effects: Vec<Effect>,
    /// Items not added because the plan already holds [`MAX_STEPS`] steps.
    pub refused: usize,
}

/// Applies a TaskCreate, TaskUpdate or TodoWrite call (and its response, on success) to
/// the plan. Any other tool changes nothing.
pub fn apply_tool(
    hook: &mut Hook,
    call: &ToolCall,
    response: Option<&ToolResponse>,
    max_attempts: u32,
    now: DateTime<Utc>,
) -> Result<Applied, TransitionError> {
    let effects = match &call.input {
        ToolInput::TaskCreate(t) => task_create(hook, t, response, now),
        ToolInput::TaskUpdate(t) => task_update(hook, t, response, max_attempts, now)?,
        ToolInput::TodoWrite(todos) => return todo_write(hook, todos, max_attempts, now),
        _ => Vec::new(),
    };
    Ok(Applied {
        effects,
        refused: 0,
    })
}

/// TaskCreate: a step of the task's subject and description.
fn task_create(
    hook: &mut Hook,
    t: &TaskCreateInput,
    response: Option<&ToolResponse>,
    now: DateTime<Utc>,
) -> Vec<Effect> {
    // The id Claude Code gave the task, else the step of that name, else a new one.
    let id = match response {
        Some(ToolResponse::TaskCreate(r)) if !r.task.id.is_empty() => r.task.id.clone(),
        _ => hook
            .find_step(&t.subject)
            .map(|s| s.id.clone())
            .unwrap_or_else(|| hook.next_step_id("")),
    };
    let source = StepSource::Task;
    let form = t.active_form.as_deref();
    hook.add_step(&id, &t.subject, &t.description, form, source, now);
    Vec::new()
}

/// TaskUpdate: a known step renamed or described anew, and its status changed.
fn task_update(
    hook: &mut Hook,
    t: &TaskUpdateInput,
    response: Option<&ToolResponse>,
    max_attempts: u32,
    now: DateTime<Utc>,
) -> Result<Vec<Effect>, TransitionError> {
    let renamed = t.subject.is_some() || t.active_form.is_some() || t.description.is_some();
    if renamed && hook.step(&t.task_id).is_some() {
        let subject = t.subject.as_deref().unwrap_or_default();
        let description = t.description.as_deref().unwrap_or_default();
        let (form, source) = (t.active_form.as_deref(), StepSource::Task);
        hook.add_step(&t.task_id, subject, description, form, source, now);
    }
    // The response says what the status really became.
    let status = match response {
        Some(ToolResponse::TaskUpdate(r)) => r
            .status_change
            .as_ref()
            .map(|c| c.to.clone())
            .or(t.status.clone()),
        _ => t.status.clone(),
    };
    match status.as_deref().and_then(StepStatus::parse) {
        Some(st) => hook.set_step_status(&t.task_id, st, max_attempts, now),
        None => Ok(Vec::new()),
    }
}

/// TodoWrite: each item a step (matched by id, else by name), with its status; items past
/// the plan's limit are refused.
fn todo_write(
    hook: &mut Hook,
    todos: &TodoWriteInput,
    max_attempts: u32,
    now: DateTime<Utc>,
) -> Result<Applied, TransitionError> {
    let mut applied = Applied::default();
    // Items are matched to steps by name through an index, not a scan per item.
    let mut by_name: HashMap<String, String> = hook
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
                None if hook.steps.len() >= MAX_STEPS => {
                    applied.refused += 1;
                    continue;
                }
                None => hook.next_step_id("todo-"),
            },
        };
        let form = todo.active_form.as_deref();
        if !hook.add_step(&id, &todo.content, "", form, StepSource::Todo, now) {
            applied.refused += 1;
            continue;
        }
        by_name.entry(todo.content.clone()).or_insert(id.clone());
        if let Some(st) = StepStatus::parse(&todo.status) {
            if hook.step(&id).is_some_and(|s| s.status != st) {
                let effects = hook.set_step_status(&id, st, max_attempts, now)?;
                applied.effects.extend(effects);
            }
        }
    }
    Ok(applied)
}

/// TaskCreated: a step of that id (a fresh one when Claude Code gave none).
pub fn created(hook: &mut Hook, e: &TaskEvent, now: DateTime<Utc>) {
    let id = match e.task_id.is_empty() {
        true => hook.next_step_id(""),
        false => e.task_id.clone(),
    };
    add_task_step(hook, &id, e, now);
}

/// The step of Claude Code's task `e`, under `id`.
fn add_task_step(hook: &mut Hook, id: &str, e: &TaskEvent, now: DateTime<Utc>) {
    let (subject, description) = (&e.task_subject, &e.task_description);
    hook.add_step(id, subject, description, None, StepSource::Task, now);
}

/// TaskCompleted: the step is completed (added first when waymark had not seen it).
pub fn completed(
    hook: &mut Hook,
    e: &TaskEvent,
    max_attempts: u32,
    now: DateTime<Utc>,
) -> Result<Vec<Effect>, TransitionError> {
    if hook.step(&e.task_id).is_none() && !e.task_subject.is_empty() {
        add_task_step(hook, &e.task_id, e, now);
    }
    hook.set_step_status(&e.task_id, StepStatus::Completed, max_attempts, now)
}
