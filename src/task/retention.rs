//! Retention of finished tasks (docs/design.md, Retention).
//!
//! A finished task is kept in `.orchestration/tasks/<task-id>/` (hook.json, HOOK.md,
//! history.jsonl). Cleanup removes such a directory when its hook.json says the task is
//! `completed`, `failed` or `abandoned` and its `updated_at` (the time it finished; the
//! directory's mtime when hook.json has none) is older than the retention configured for
//! that state (`retention.completed` / `.failed` / `.abandoned`: 720h / 168h / 168h).
//!
//! What is never removed, because losing it would lose something:
//! - the current task's directory (the task in `.orchestration/hook.json`) while that task
//!   is not finished: it holds the task's history, checkpoint and receipt logs;
//! - a directory whose hook.json is missing, unreadable, corrupt or of another schema
//!   version: it is reported and left for a person to judge;
//! - a symlink (rule 3, "stay in the project": a link is never followed out of
//!   `tasks/`), nor anything when `tasks/` itself is a symlink.
//!
//! [`decide`] is the pure rule; [`plan`] reads the directories (each hook.json through
//! `store::peek`) and [`remove`] acts.

use std::fs;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::HookState;
use super::model::SCHEMA_VERSION;
use super::store::{self, HOOK_JSON, Peeked, TASKS_DIR, sanitize};
use crate::store::project::Project;
use waymark_core::config::Retention;

#[derive(Debug, thiserror::Error)]
pub enum CleanupError {
    #[error(
        "cannot tell which task is current: {0}; nothing removed (fix or move .orchestration/hook.json)"
    )]
    CurrentUnknown(String),
    #[error("{0} is a symlink; cleanup does not follow it out of the project, nothing removed")]
    TasksDirIsSymlink(PathBuf),
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// What a task directory holds, as far as cleanup needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A hook.json, as [`store::peek`] read it.
    Hook(Peeked),
    /// No hook.json (e.g. only the logs of a task still running).
    NoHook,
    /// The entry is a symlink: never followed.
    Symlink,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Remove,
    Keep,
}

/// Where a task's age was measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AgeFrom {
    UpdatedAt,
    DirMtime,
}

/// The verdict on one directory of `tasks/`.
#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    /// The directory name under `tasks/`.
    pub dir: String,
    #[serde(skip)]
    pub path: PathBuf,
    pub task_id: Option<String>,
    pub state: Option<HookState>,
    pub age_seconds: Option<u64>,
    pub age_from: Option<AgeFrom>,
    pub retention_seconds: Option<u64>,
    pub action: Action,
    pub reason: String,
    /// Said on stderr as well: something a person should look at.
    #[serde(skip)]
    pub warning: Option<String>,
}

/// The retention configured for a terminal state (`None` for the others).
pub fn retention_for(state: HookState, retention: &Retention) -> Option<Duration> {
    match state {
        HookState::Completed => Some(retention.completed),
        HookState::Failed => Some(retention.failed),
        HookState::Abandoned => Some(retention.abandoned),
        _ => None,
    }
}

/// The rule, without I/O. `is_current` is true for the directory of the current task
/// when that task is not finished; `mtime` is the directory's, used when hook.json has no
/// `updated_at`.
pub fn decide(
    dir: &str,
    path: PathBuf,
    found: &Found,
    is_current: bool,
    mtime: Option<DateTime<Utc>>,
    retention: &Retention,
    now: DateTime<Utc>,
) -> Decision {
    let mut d = Decision {
        dir: dir.to_string(),
        path,
        task_id: None,
        state: None,
        age_seconds: None,
        age_from: None,
        retention_seconds: None,
        action: Action::Keep,
        reason: String::new(),
        warning: None,
    };
    let keep = |mut d: Decision, reason: String| {
        d.reason = reason;
        d
    };
    if is_current {
        if let Found::Hook(Peeked::Task { task_id, state, .. }) = found {
            d.task_id = task_id.clone();
            d.state = Some(*state);
        }
        return keep(d, "the current task".into());
    }
    let (task_id, state, updated_at) = match found {
        Found::Hook(Peeked::Task {
            task_id,
            state,
            updated_at,
        }) => (task_id, *state, *updated_at),
        Found::NoHook => return keep(d, "no hook.json: left for a person to judge".into()),
        Found::Hook(Peeked::Unreadable(why)) => {
            return keep(d, format!("unreadable hook.json ({why}): left"));
        }
        Found::Hook(Peeked::OtherSchema(v)) => {
            let why = format!("hook.json has schema version {v}, not {SCHEMA_VERSION}: left");
            return keep(d, why);
        }
        Found::Symlink => {
            d.warning = Some("a symlink: skipped, never followed out of tasks/".into());
            return keep(d, "a symlink: not followed".into());
        }
    };
    d.task_id = task_id.clone();
    d.state = Some(state);
    let Some(limit) = retention_for(state, retention) else {
        return keep(d, format!("{state}: not finished"));
    };
    let (since, from) = match (updated_at, mtime) {
        (Some(t), _) => (t, AgeFrom::UpdatedAt),
        (None, Some(t)) => (t, AgeFrom::DirMtime),
        (None, None) => return keep(d, format!("{state}, but its age is unknown: left")),
    };
    judge_age(d, state, since, from, limit, now)
}

/// A finished task's directory judged by its age (since when, and told by what) against
/// `limit`, the retention of its state: removed once past it, else kept.
fn judge_age(
    mut d: Decision,
    state: HookState,
    since: DateTime<Utc>,
    from: AgeFrom,
    limit: Duration,
    now: DateTime<Utc>,
) -> Decision {
    let age = (now - since).to_std().unwrap_or(Duration::ZERO);
    d.age_seconds = Some(age.as_secs());
    d.age_from = Some(from);
    d.retention_seconds = Some(limit.as_secs());
    let ago = waymark_core::text::ago(now, since);
    let limit_text = waymark_core::text::format_duration(limit);
    let (action, verdict) = match age > limit {
        true => (Action::Remove, "past"),
        false => (Action::Keep, "within"),
    };
    d.action = action;
    d.reason = format!("{state} {ago} ago, {verdict} its retention of {limit_text}");
    d
}

/// The directory name of the current task when it is not finished; when neither
/// hook.json nor its .bak can tell, cleanup must not guess.
pub fn current_unfinished(project: &Project) -> Result<Option<String>, CleanupError> {
    let current = store::peek_current(project).map_err(CleanupError::CurrentUnknown)?;
    Ok(match current {
        Some(Peeked::Task {
            task_id: Some(id),
            state,
            ..
        }) if !state.is_terminal() => Some(sanitize(&id)),
        _ => None,
    })
}

/// Decides for every directory of `tasks/`, in name order. Reads only.
pub fn plan(
    project: &Project,
    retention: &Retention,
    now: DateTime<Utc>,
) -> Result<Vec<Decision>, CleanupError> {
    let tasks = project.state_dir().join(TASKS_DIR);
    let Some(meta) = crate::store::found(tasks.symlink_metadata())? else {
        return Ok(Vec::new());
    };
    if meta.file_type().is_symlink() {
        return Err(CleanupError::TasksDirIsSymlink(tasks));
    }
    let current = current_unfinished(project)?;
    let mut entries: Vec<_> = fs::read_dir(&tasks)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    let mut out = Vec::new();
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let meta = entry.metadata()?; // does not follow symlinks
        let found = if meta.file_type().is_symlink() {
            Found::Symlink
        } else if !meta.is_dir() {
            continue; // a stray file, not a task
        } else {
            match crate::store::found(fs::read(path.join(HOOK_JSON))) {
                Ok(b) => b.map_or(Found::NoHook, |b| Found::Hook(store::peek(&b))),
                Err(e) => Found::Hook(Peeked::Unreadable(e.to_string())),
            }
        };
        let mtime = meta.modified().ok().map(DateTime::<Utc>::from);
        let is_current = current.as_deref() == Some(name.as_str());
        out.push(decide(
            &name, path, &found, is_current, mtime, retention, now,
        ));
    }
    Ok(out)
}

/// Removes a directory the plan marked for removal. Checked again just before: a path
/// that has become a symlink is not followed (`remove_dir_all` itself never follows the
/// links inside).
pub fn remove(decision: &Decision) -> io::Result<()> {
    let meta = decision.path.symlink_metadata()?;
    if !meta.is_dir() {
        return Err(io::Error::other("no longer a plain directory; not removed"));
    }
    fs::remove_dir_all(&decision.path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration as Span;

    fn retention() -> Retention {
        Retention {
            completed: Duration::from_secs(720 * 3600),
            failed: Duration::from_secs(168 * 3600),
            abandoned: Duration::from_secs(168 * 3600),
        }
    }

    fn hook(state: HookState, updated: Option<DateTime<Utc>>) -> Found {
        Found::Hook(Peeked::Task {
            task_id: Some("t".into()),
            state,
            updated_at: updated,
        })
    }

    fn verdict(found: &Found, current: bool, mtime: Option<DateTime<Utc>>) -> Action {
        let now = Utc::now();
        decide("t", "t".into(), found, current, mtime, &retention(), now).action
    }

    #[test]
    fn each_terminal_state_has_its_retention() {
        let now = Utc::now();
        let days = |n| Some(now - Span::days(n));
        use HookState::*;
        assert_eq!(
            verdict(&hook(Completed, days(31)), false, None),
            Action::Remove
        );
        assert_eq!(
            verdict(&hook(Completed, days(29)), false, None),
            Action::Keep
        );
        assert_eq!(
            verdict(&hook(Abandoned, days(8)), false, None),
            Action::Remove
        );
        assert_eq!(
            verdict(&hook(Abandoned, days(6)), false, None),
            Action::Keep
        );
        assert_eq!(verdict(&hook(Failed, days(8)), false, None), Action::Remove);
        assert_eq!(
            verdict(&hook(StepRunning, days(400)), false, None),
            Action::Keep
        );
        assert_eq!(
            verdict(&hook(Completed, days(400)), true, None),
            Action::Keep
        );
        // No updated_at: the directory's mtime decides.
        assert_eq!(verdict(&hook(Failed, None), false, days(9)), Action::Remove);
        assert_eq!(verdict(&hook(Failed, None), false, days(1)), Action::Keep);
        assert_eq!(verdict(&hook(Failed, None), false, None), Action::Keep);
        for f in [
            Found::NoHook,
            Found::Symlink,
            Found::Hook(Peeked::Unreadable("x".into())),
            Found::Hook(Peeked::OtherSchema("2.0".into())),
        ] {
            assert_eq!(verdict(&f, false, days(1000)), Action::Keep);
        }
    }
}
