//! The task on disk: `hook.json` (the task) and `plan.json` (its plan), changed under one
//! lock, with the last good copy of each, the task's logs and its archive.
//!
//! - Every change happens under `hook.json.lock`: load, change, save, HOOK.md.
//! - A save writes what the change added to the task's logs (`tasks/<id>/*.jsonl`) first,
//!   then `plan.json` when the plan changed, then `hook.json`; each file is replaced
//!   atomically and keeps the one before as its `.bak`. hook.json names the plan that
//!   goes with it (`plan_version`): a plan.json of another version is from a save killed
//!   between the two writes, and its `.bak` is the plan that goes with hook.json.
//! - A hook.json that does not parse is restored from its `.bak`; the bad file is kept as
//!   `hook.json.corrupt-<time>` and the restore is reported. If both are bad, nothing is
//!   overwritten and the error is returned.
//! - A hook.json of another schema major version is never overwritten; schemas 1 and 2
//!   are read as schema 3 (`task::migrate`) and written as such at the next save.
//! - HOOK.md is rewritten when what it shows changed; a finished task's hook.json, plan
//!   and HOOK.md are copied into its folder.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use super::logs::{
    CHECKPOINTS_LOG, HISTORY_LOG, RECEIPTS_LOG, TASKS_DIR, TURNS_LOG, checkpoints, read_log,
    sanitize, task_dir,
};
use super::machine::HookState;
use super::migrate::{self, Migrated};
use super::model::{Hook, SCHEMA_VERSION, Step};
use crate::store::project::Project;
use crate::store::{self, FileLock};
use waymark_core::receipt::ValidationReceipt;
use waymark_core::recovery::hookmd;
use waymark_redact::Clean;

pub const HOOK_JSON: &str = "hook.json";
pub const PLAN_JSON: &str = "plan.json";
pub const HOOK_MD: &str = "HOOK.md";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "hook.json has schema version {found}, this waymark writes {SCHEMA_VERSION}: not touching it (upgrade waymark, or move the file aside)"
    )]
    Schema { found: String },
    #[error("hook.json is corrupt ({0}) and hook.json.bak cannot restore it; it is left as it is")]
    Corrupt(String),
    #[error("task state (.orchestration/hook.json): {0}")]
    Io(#[from] io::Error),
    #[error("task state (.orchestration/hook.json): {0}")]
    Lock(#[from] store::LockError),
    /// The lock was held by another process past this hook's deadline before this process
    /// had changed anything: the event can be kept whole and applied later.
    #[error(
        "task state (.orchestration/hook.json) is locked by another process past the deadline: {0}"
    )]
    Busy(store::LockError),
}

/// Set once hook.json was saved for the event being handled: a lock timeout after that
/// cannot defer the event (part of it is applied), before it can.
static SAVED: AtomicBool = AtomicBool::new(false);

/// Marks the start of an event's handling (see [`StoreError::Busy`]).
pub fn begin_event() {
    SAVED.store(false, SeqCst);
}

/// Whether the event being handled saved the task: then HOOK.md says what hook.json does
/// (the save wrote it unless it already said so).
pub fn saved_this_event() -> bool {
    SAVED.load(SeqCst)
}

/// What loading found besides the hook.
#[derive(Debug, Default)]
pub struct LoadNote {
    /// Set when hook.json was corrupt and restored from hook.json.bak.
    pub restored: Option<String>,
}

pub fn hook_path(project: &Project) -> PathBuf {
    project.state_file(HOOK_JSON)
}

fn plan_path(project: &Project) -> PathBuf {
    project.state_file(PLAN_JSON)
}

/// `plan.json`: the plan, and the version hook.json names it by.
#[derive(Debug, Deserialize)]
struct PlanFile {
    plan_version: u64,
    steps: Vec<Step>,
}

/// [`PlanFile`] as a save writes it.
#[derive(Serialize)]
struct PlanOut<'a> {
    plan_version: u64,
    steps: &'a [Step],
}

/// The task as read: from a schema-3 file, or migrated from an older one (then the rest of
/// what its file held, which the next save writes).
#[derive(Default)]
struct Loaded {
    hook: Option<Hook>,
    note: LoadNote,
    migrated: Option<Migrated>,
}

/// Loads the task without taking the lock (for read-only commands).
pub fn load(project: &Project) -> Result<(Option<Hook>, LoadNote), StoreError> {
    let loaded = read(project)?;
    Ok((loaded.hook, loaded.note))
}

fn read(project: &Project) -> Result<Loaded, StoreError> {
    let path = hook_path(project);
    let (bak, swap) = (path.with_extension("json.bak"), store::swap_name(&path));
    let Some(bytes) = store::found(store::read(&path, &[&bak, &swap]))? else {
        return Ok(Loaded::default());
    };
    let (parsed, note) = match parse(&bytes) {
        Ok(p) => (p, LoadNote::default()),
        Err(StoreError::Corrupt(why)) => restore_from_bak(project, &path, &bytes, &why)?,
        Err(e) => return Err(e),
    };
    let (mut hook, migrated) = match parsed {
        Parsed::Current(mut hook) => {
            hook.steps = read_plan(project, hook.plan_version)?;
            (hook, None)
        }
        Parsed::Older(m) => (m.hook.clone(), Some(m)),
    };
    // Whatever the files hold (edited by hand, planted in a clone), what is kept is
    // bounded: every later event reads and writes it whole.
    hook.bound();
    Ok(Loaded {
        hook: Some(hook),
        note,
        migrated,
    })
}

enum Parsed {
    Current(Hook),
    Older(Migrated),
}

fn parse(bytes: &[u8]) -> Result<Parsed, StoreError> {
    // The common case in one pass, straight into the model.
    if let Ok(hook) = serde_json::from_slice::<Hook>(bytes) {
        if major(&hook.schema_version) == major(SCHEMA_VERSION) {
            return Ok(Parsed::Current(hook));
        }
    }
    // Otherwise say precisely why: another schema (reported as such, and never touched),
    // an older one (migrated), or anything else that is not a task (`[]`, `{}`, a torn
    // file): corrupt, and restorable from the last good copy.
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let version = value.get("schema_version").and_then(|v| v.as_str());
    if let Some(found) = version.filter(|v| !readable(v)) {
        return Err(StoreError::Schema {
            found: found.into(),
        });
    }
    let not_a_task = |e: serde_json::Error| StoreError::Corrupt(format!("not a task: {e}"));
    match version.map(major) {
        Some("1" | "2") => migrate::from_older(value)
            .map(Parsed::Older)
            .map_err(not_a_task),
        _ => serde_json::from_value(value)
            .map(Parsed::Current)
            .map_err(not_a_task),
    }
}

/// The plan that goes with hook.json's `version` of it: plan.json, else (a save killed
/// between writing plan.json and hook.json) plan.json.bak. No plan.json: no steps yet.
fn read_plan(project: &Project, version: u64) -> Result<Vec<Step>, StoreError> {
    let path = plan_path(project);
    let bak = path.with_extension("json.bak");
    let plan_of = |p: &Path| -> io::Result<Option<PlanFile>> {
        let bytes = store::found(store::read(p, &[&bak, &path]))?;
        Ok(bytes.and_then(|b| serde_json::from_slice(&b).ok()))
    };
    match plan_of(&path)? {
        Some(plan) if plan.plan_version == version => Ok(plan.steps),
        None if version == 0 => Ok(Vec::new()),
        newer => match plan_of(&bak)? {
            Some(plan) if plan.plan_version == version => Ok(plan.steps),
            _ => newer.map(|p| p.steps).ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "{PLAN_JSON} (version {version}) cannot be read, nor its .bak"
                ))
            }),
        },
    }
}

fn major(v: &str) -> &str {
    v.split('.').next().unwrap_or("")
}

/// Schemas this waymark reads: its own, and schemas 1 and 2, which it migrates.
fn readable(version: &str) -> bool {
    matches!(major(version), "1" | "2" | "3")
}

fn restore_from_bak(
    project: &Project,
    path: &Path,
    bad: &[u8],
    why: &str,
) -> Result<(Parsed, LoadNote), StoreError> {
    let bak = path.with_extension("json.bak");
    let good = fs::read(&bak).map_err(|_| StoreError::Corrupt(why.into()))?;
    let parsed = parse(&good).map_err(|_| StoreError::Corrupt(why.into()))?;
    let stamp = Utc::now().format("%Y%m%dT%H%M%S");
    let kept = project.state_file(&format!("hook.json.corrupt-{stamp}"));
    store::write_verbatim(&kept, bad)?;
    store::write_verbatim(path, &good)?;
    let restored = Some(format!(
        "hook.json was corrupt ({why}); restored the last good state from hook.json.bak, kept the bad file as {}",
        kept.display()
    ));
    Ok((parsed, LoadNote { restored }))
}

/// What a hook.json says of its task, read leniently (only these fields, so that an older
/// file missing others still tells) and without writing anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peeked {
    /// `updated_at` is `None` when absent or not a time.
    Task {
        task_id: Option<String>,
        state: HookState,
        updated_at: Option<DateTime<Utc>>,
    },
    /// Not JSON, or no valid `state`.
    Unreadable(String),
    /// Another schema major version.
    OtherSchema(String),
}

/// Reads a hook.json's task id, state and `updated_at`.
pub fn peek(bytes: &[u8]) -> Peeked {
    use serde_json::Value;
    let v: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => return Peeked::Unreadable(e.to_string()),
    };
    if let Some(ver) = v.get("schema_version").and_then(Value::as_str) {
        if !readable(ver) {
            return Peeked::OtherSchema(ver.to_string());
        }
    }
    let Some(state) = v["state"].as_str().and_then(HookState::parse) else {
        return Peeked::Unreadable("no valid `state`".into());
    };
    Peeked::Task {
        task_id: v["task_id"].as_str().map(str::to_string),
        state,
        updated_at: v["updated_at"]
            .as_str()
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .map(|t| t.with_timezone(&Utc)),
    }
}

/// The current task as [`peek`] sees it: hook.json, or hook.json.bak (the same task one
/// write earlier) when hook.json cannot say which task it is. Never restores, never
/// writes. `Err` says why neither could tell.
pub fn peek_current(project: &Project) -> Result<Option<Peeked>, String> {
    let path = hook_path(project);
    let read = |p: &Path| match store::found(fs::read(p)) {
        Ok(b) => Ok(b.map(|b| peek(&b))),
        Err(e) => Err(e.to_string()),
    };
    let usable = |p: &Peeked| matches!(p, Peeked::Task { task_id, .. } if task_id.is_some());
    match read(&path)? {
        None => Ok(None),
        Some(p) if usable(&p) => Ok(Some(p)),
        Some(bad) => match read(&path.with_extension("json.bak")) {
            Ok(Some(p)) if usable(&p) => Ok(Some(p)),
            _ => Err(match bad {
                Peeked::Unreadable(why) => format!("hook.json is unreadable ({why})"),
                Peeked::OtherSchema(v) => format!("hook.json is of schema version {v}"),
                Peeked::Task { .. } => "hook.json is without a task id".into(),
            }),
        },
    }
}

/// The result of [`update`].
#[derive(Debug)]
pub struct Updated<R> {
    pub value: R,
    pub note: LoadNote,
    /// The hook as saved (None when there is none).
    pub hook: Option<Hook>,
    pub changed: bool,
}

/// Locked read-modify-write. `f` may create, change or leave the hook; when it changed,
/// it is saved ([`save`]).
pub fn update<R>(
    project: &Project,
    now: DateTime<Utc>,
    f: impl FnOnce(&mut Option<Hook>) -> R,
) -> Result<Updated<R>, StoreError> {
    let path = hook_path(project);
    let _lock = match FileLock::acquire(&path) {
        Ok(lock) => lock,
        Err(e @ store::LockError::Timeout(..)) if !SAVED.load(SeqCst) => {
            return Err(StoreError::Busy(e));
        }
        Err(e) => return Err(e.into()),
    };
    crate::store::faults::at("store.locked");
    let Loaded {
        hook: before,
        note,
        migrated,
    } = read(project)?;
    let mut hook = before.clone();
    let value = f(&mut hook);
    let changed = hook != before || migrated.is_some();
    if let Some(h) = hook.as_mut().filter(|_| changed) {
        // Under the lock no other writer of these files is live: any temp file of theirs
        // is what a killed writer left.
        let names = [
            HOOK_JSON,
            "hook.json.bak",
            PLAN_JSON,
            "plan.json.bak",
            HOOK_MD,
        ];
        store::remove_stale_temps(&project.state_dir(), &names);
        SAVED.store(true, SeqCst);
        save(project, h, before.as_ref(), migrated, now)?;
    }
    Ok(Updated {
        value,
        note,
        hook,
        changed,
    })
}

/// Saves `hook` (changed from `before`, as read): the logs, the plan if it changed,
/// hook.json, then HOOK.md if what it shows changed.
fn save(
    project: &Project,
    hook: &mut Hook,
    before: Option<&Hook>,
    migrated: Option<Migrated>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    write_journal(project, hook, migrated.as_ref())?;
    crate::store::faults::at("store.logged");
    hook.version = SCHEMA_VERSION.into();
    hook.schema_version = SCHEMA_VERSION.into();
    hook.updated_at = hook.updated_at.max(now);
    let plan_changed = migrated.is_some() || before.is_none_or(|b| b.steps != hook.steps);
    if plan_changed {
        hook.plan_version += 1;
    }
    let plan = Clean::json_pretty(&PlanOut {
        plan_version: hook.plan_version,
        steps: &hook.steps,
    });
    if plan_changed {
        let path = plan_path(project);
        store::replace_keeping_previous(&path, &path.with_extension("json.bak"), &plan)?;
    }
    let json = Clean::json_pretty(hook);
    let md = Clean::text(&hookmd::render(hook));
    // A task is archived before hook.json says it is finished: if the archive cannot be
    // written, the task stays unfinished (and is finished at the next chance) rather than
    // finished with no copy, to be replaced by the next task (the disk test found it).
    if hook.state.is_terminal() && before.is_none_or(|b| !b.state.is_terminal()) {
        archive(project, hook, &json, &plan, &md)?;
    }
    let path = hook_path(project);
    store::replace_keeping_previous(&path, &path.with_extension("json.bak"), &json)?;
    crate::store::faults::at("store.saved");
    store::write_regenerable_if_changed(&project.state_file(HOOK_MD), &md)?;
    Ok(())
}

/// Appends what the change added to the task's logs, before hook.json says so: a log may
/// hold a line hook.json does not count yet (the writer was killed in between), never
/// the other way round. The receipts log is synced: receipts are proof. A migrated task's
/// inline snapshots become capture records, and the receipts its file held that the log
/// lacks are given back first.
fn write_journal(
    project: &Project,
    hook: &mut Hook,
    migrated: Option<&Migrated>,
) -> Result<(), StoreError> {
    let journal = std::mem::take(&mut hook.journal);
    let given_back = migrated.map_or(&[][..], |m| &m.unsynced_receipts);
    if journal == Default::default() && migrated.is_none() {
        return Ok(());
    }
    let dir = task_dir(project, &hook.task_id);
    no_links_to(project, &dir)?;
    store::make_dir(&dir)?;
    for c in migrated.iter().flat_map(|m| &m.captures) {
        keep_inline_capture(project, &hook.task_id, c)?;
    }
    if !journal.history.is_empty() {
        store::append_lines(&dir.join(HISTORY_LOG), &Clean::json_lines(&journal.history))?;
    }
    if !journal.checkpoints.is_empty() {
        let lines = Clean::json_lines(&journal.checkpoints);
        store::append_lines(&dir.join(CHECKPOINTS_LOG), &lines)?;
    }
    if !journal.receipts.is_empty() || !given_back.is_empty() {
        let log = dir.join(RECEIPTS_LOG);
        store::append_after(&log, |last| {
            let last = last.and_then(|l| serde_json::from_slice(l).ok());
            let lost = waymark_core::receipt::chain::unlogged(given_back, last.as_ref());
            Clean::json_lines(&lost.iter().chain(&journal.receipts).collect::<Vec<_>>())
        })?;
        store::sync_appended(&log)?;
    }
    if !journal.turns.is_empty() {
        store::append_lines(&dir.join(TURNS_LOG), &Clean::json_lines(&journal.turns))?;
    }
    Ok(())
}

/// Schema 1 kept a checkpoint's file snapshots and dirtiness inline: they become its
/// capture record, written before the checkpoint goes to the log, so nothing is lost.
fn keep_inline_capture(
    project: &Project,
    task_id: &str,
    c: &migrate::InlineCapture,
) -> io::Result<()> {
    let id = &c.checkpoint.checkpoint_id;
    if crate::task::capture::load(project, task_id, id).is_some() {
        return Ok(());
    }
    let capture = crate::task::capture::Capture {
        checkpoint_id: id.clone(),
        captured_at: c.checkpoint.created_at,
        git_dirty: c.git_dirty,
        files: c.files.clone(),
        snapshot: None,
        withheld: Vec::new(),
    };
    crate::task::capture::save(project, task_id, &capture)
}

/// Whether a checkpoint of any task has the id `wanted`, or one starting with it: what
/// tells a mistyped id from a checkpoint whose snapshot is gone.
pub fn checkpoint_exists(project: &Project, wanted: &str) -> bool {
    let Ok(tasks) = fs::read_dir(project.state_dir().join(TASKS_DIR)) else {
        return false;
    };
    tasks.flatten().any(|task| {
        let Ok(bytes) = store::read(&task.path().join(CHECKPOINTS_LOG), &[]) else {
            return false;
        };
        String::from_utf8_lossy(&bytes).lines().any(|l| {
            serde_json::from_str::<serde_json::Value>(l).is_ok_and(|c| {
                c["checkpoint_id"]
                    .as_str()
                    .is_some_and(|id| id.starts_with(wanted))
            })
        })
    })
}

/// The task's receipts, every one, oldest first: its log.
pub fn receipts(project: &Project, hook: &Hook) -> io::Result<Vec<ValidationReceipt>> {
    read_log(project, &hook.task_id, RECEIPTS_LOG, None)
}

/// Every task's receipt log (`tasks/<id>/receipts.jsonl`), by task directory, sorted: for
/// `waymark verify` and `waymark key export`, which need the receipts where no hook.json is
/// (a CI checkout holds the logs the user committed, not the task state).
pub fn receipt_logs(project: &Project) -> io::Result<Vec<(String, Vec<ValidationReceipt>)>> {
    task_dirs(project, |e| e.path().join(RECEIPTS_LOG).is_file())?
        .into_iter()
        .map(|name| Ok((name.clone(), read_log(project, &name, RECEIPTS_LOG, None)?)))
        .collect()
}

/// The finished tasks kept in `tasks/<id>/hook.json` (their archive), by directory name,
/// each as it reads; for checking every task's receipts (`receipts --verify --all`).
pub fn archived(project: &Project) -> io::Result<Vec<(String, Result<Hook, StoreError>)>> {
    let dir = project.state_dir().join(TASKS_DIR);
    let names = task_dirs(project, |e| e.file_type().is_ok_and(|t| t.is_dir()))?;
    let read = |name: &str| -> Result<Option<Hook>, StoreError> {
        let Some(bytes) = store::found(fs::read(dir.join(name).join(HOOK_JSON)))? else {
            return Ok(None);
        };
        let mut hook = match parse(&bytes)? {
            Parsed::Current(h) => h,
            Parsed::Older(m) => m.hook,
        };
        // A finished task's file is bounded as the current one is when read.
        hook.bound();
        Ok(Some(hook))
    };
    Ok(names
        .into_iter()
        .filter_map(|name| {
            let hook = read(&name).transpose()?;
            Some((name, hook))
        })
        .collect())
}

/// The names of the task directories (`tasks/<id>`) `keep` keeps, sorted.
fn task_dirs(project: &Project, keep: impl Fn(&fs::DirEntry) -> bool) -> io::Result<Vec<String>> {
    let entries = store::found(fs::read_dir(project.state_dir().join(TASKS_DIR)))?;
    let mut names: Vec<String> = entries
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| keep(e))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

/// `current`, then each archived task (by directory name) that is not it: every task, for
/// `log --all`, `receipts --all` and `verify`; the archives that cannot be read are named apart.
pub fn every_task(
    project: &Project,
    current: Option<Hook>,
) -> io::Result<(Vec<Hook>, Vec<String>)> {
    let mut hooks: Vec<Hook> = current.into_iter().collect();
    let mut unreadable = Vec::new();
    for (name, hook) in archived(project)? {
        match hook {
            Ok(h) if hooks.iter().all(|k| k.task_id != h.task_id) => hooks.push(h),
            Ok(_) => {}
            Err(e) => unreadable.push(format!("task {name}: {e}")),
        }
    }
    Ok((hooks, unreadable))
}

/// The receipts at the end of the task's log that hook.json's receipt head does not count:
/// what a save killed between appending a receipt and writing hook.json left. The next
/// receipt is chained after them (`Hook::count_receipts`), never after the head alone,
/// which would make an honest log look reordered.
pub fn uncounted_receipts(project: &Project, hook: &Hook) -> io::Result<Vec<ValidationReceipt>> {
    const TAIL: usize = 16;
    let tail: Vec<ValidationReceipt> = read_log(project, &hook.task_id, RECEIPTS_LOG, Some(TAIL))?;
    let counted = |r: &ValidationReceipt| {
        hook.receipt_head
            .as_ref()
            .is_some_and(|h| waymark_core::receipt::chain::link(r) == h.link)
    };
    Ok(match tail.iter().rposition(counted) {
        Some(i) => tail[i + 1..].to_vec(),
        None if hook.receipt_head.is_none() && tail.len() < TAIL => tail,
        None => Vec::new(),
    }
    .into_iter()
    .filter(|r| r.sig_version >= waymark_core::receipt::chain::CHAINED_SINCE)
    .collect())
}

/// Regenerates HOOK.md from a hook (the hook alone: it keeps the newest checkpoints and
/// receipts, so no log is read).
pub fn write_hook_md(project: &Project, hook: &Hook) -> io::Result<()> {
    let md = Clean::text(&hookmd::render(hook));
    store::write_regenerable(&project.state_file(HOOK_MD), &md)
}

/// Copies a finished task's hook.json, plan and HOOK.md into `tasks/<id>/`.
fn archive(
    project: &Project,
    hook: &Hook,
    json: &Clean,
    plan: &Clean,
    md: &Clean,
) -> io::Result<()> {
    let dir = task_dir(project, &hook.task_id);
    no_links_to(project, &dir)?;
    store::make_dir(&dir)?;
    store::write_atomic(&dir.join(PLAN_JSON), plan)?;
    store::write_atomic(&dir.join(HOOK_JSON), json)?;
    store::write_atomic(&dir.join(HOOK_MD), md)
}

/// Refuses to write into `tasks/` or `tasks/<id>/` when either is a symbolic link.
fn no_links_to(project: &Project, task_dir: &Path) -> io::Result<()> {
    store::refuse_symlink(&project.state_dir().join(TASKS_DIR))?;
    store::refuse_symlink(task_dir)
}

/// The next task's index: one past the current hook's, or the number of archived tasks.
pub fn next_task_index(project: &Project, current: Option<&Hook>) -> u32 {
    match current {
        Some(h) => h.task_index + 1,
        None => fs::read_dir(project.state_dir().join(TASKS_DIR))
            .map(|d| {
                d.filter(|e| e.as_ref().is_ok_and(|e| e.path().is_dir()))
                    .count() as u32
            })
            .unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::project::temp_project as project;
    use crate::task::{StepSource, StepStatus};

    fn new_task(p: &Project, now: DateTime<Utc>) {
        update(p, now, |h| *h = Some(Hook::new("t1", "w", 0, now))).unwrap();
    }

    #[test]
    fn update_creates_saves_and_keeps_bak() {
        let (_d, p) = project();
        let now = Utc::now();
        new_task(&p, now);
        assert!(hook_path(&p).exists() && plan_path(&p).exists());
        assert!(p.state_file(HOOK_MD).exists());
        update(&p, now, |h| {
            h.as_mut().unwrap().last_prompt = Some("x".into())
        })
        .unwrap();
        let bak: Hook =
            serde_json::from_slice(&fs::read(p.state_file("hook.json.bak")).unwrap()).unwrap();
        assert_eq!(bak.last_prompt, None);
        let (hook, _) = load(&p).unwrap();
        assert_eq!(hook.unwrap().last_prompt.as_deref(), Some("x"));
    }

    /// The plan is its own file, written when it changes and only then; hook.json names
    /// the version that goes with it.
    #[test]
    fn the_plan_is_written_when_it_changes_and_only_then() {
        let (_d, p) = project();
        let now = Utc::now();
        new_task(&p, now);
        let written = || fs::metadata(plan_path(&p)).unwrap().modified().unwrap();
        let first = written();
        std::thread::sleep(std::time::Duration::from_millis(20));
        update(&p, now, |h| {
            h.as_mut().unwrap().last_prompt = Some("x".into())
        })
        .unwrap();
        assert_eq!(written(), first, "the plan did not change");
        update(&p, now, |h| {
            let h = h.as_mut().unwrap();
            h.add_step("1", "Parse", "", None, StepSource::Task, now);
        })
        .unwrap();
        assert_ne!(written(), first);
        let (hook, _) = load(&p).unwrap();
        let hook = hook.unwrap();
        assert_eq!(hook.steps[0].name, "Parse");
        assert_eq!(hook.plan_version, 2);
        let text = fs::read_to_string(hook_path(&p)).unwrap();
        assert!(
            !text.contains("Parse"),
            "the plan is not in hook.json: {text}"
        );
    }

    /// Killed between writing the plan and hook.json: hook.json names the plan before, and
    /// that is the one read (plan.json.bak); the next save writes both anew.
    #[test]
    fn a_save_killed_between_the_plan_and_hook_json_reads_the_plan_that_goes_with_it() {
        let (_d, p) = project();
        let now = Utc::now();
        new_task(&p, now);
        update(&p, now, |h| {
            let h = h.as_mut().unwrap();
            h.add_step("1", "Parse", "", None, StepSource::Task, now);
        })
        .unwrap();
        let hook_before = fs::read(hook_path(&p)).unwrap();
        update(&p, now, |h| {
            let h = h.as_mut().unwrap();
            h.steps[0].status = StepStatus::Completed;
        })
        .unwrap();
        // As if the save had stopped after plan.json.
        fs::write(hook_path(&p), &hook_before).unwrap();
        let (hook, _) = load(&p).unwrap();
        assert_eq!(hook.unwrap().steps[0].status, StepStatus::Pending);
        update(&p, now, |h| {
            h.as_mut().unwrap().last_prompt = Some("go on".into())
        })
        .unwrap();
        let (hook, _) = load(&p).unwrap();
        assert_eq!(hook.unwrap().steps[0].status, StepStatus::Pending);
    }

    #[test]
    fn hook_md_is_written_when_what_it_shows_changed() {
        let (_d, p) = project();
        let now = Utc::now();
        new_task(&p, now);
        let md = p.state_file(HOOK_MD);
        fs::write(&md, "tampered").unwrap();
        let (mut hook, _) = load(&p).unwrap();
        let hook = hook.as_mut().unwrap();
        write_hook_md(&p, hook).unwrap();
        let rendered = fs::read_to_string(&md).unwrap();
        assert!(rendered.starts_with("# HOOK: t1"));
        let written = fs::metadata(&md).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        update(&p, now, |h| {
            let s = &mut h.as_mut().unwrap().history_count;
            *s += 0;
        })
        .unwrap();
        assert_eq!(fs::metadata(&md).unwrap().modified().unwrap(), written);
    }

    #[test]
    fn corrupt_hook_is_restored_from_bak() {
        let (_d, p) = project();
        let now = Utc::now();
        new_task(&p, now);
        update(&p, now, |h| {
            h.as_mut().unwrap().last_prompt = Some("x".into())
        })
        .unwrap();
        fs::write(hook_path(&p), b"{ torn").unwrap();
        let (hook, note) = load(&p).unwrap();
        assert_eq!(hook.unwrap().task_id, "t1");
        assert!(note.restored.unwrap().contains("restored"));
        // Restored on disk too, and the bad bytes kept.
        assert!(serde_json::from_slice::<Hook>(&fs::read(hook_path(&p)).unwrap()).is_ok());
        assert!(fs::read_dir(p.state_dir()).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("hook.json.corrupt-")
        }));
    }

    #[test]
    fn corrupt_without_bak_is_an_error_and_is_not_overwritten() {
        let (_d, p) = project();
        fs::create_dir_all(p.state_dir()).unwrap();
        fs::write(hook_path(&p), b"not json").unwrap();
        let err = update(&p, Utc::now(), |h| {
            *h = Some(Hook::new("t", "w", 0, Utc::now()))
        })
        .unwrap_err();
        assert!(matches!(err, StoreError::Corrupt(_)));
        assert_eq!(fs::read(hook_path(&p)).unwrap(), b"not json");
    }

    #[test]
    fn other_schema_is_refused() {
        let (_d, p) = project();
        let now = Utc::now();
        new_task(&p, now);
        let text = fs::read_to_string(hook_path(&p))
            .unwrap()
            .replace("\"schema_version\": \"3.0\"", "\"schema_version\": \"4.0\"");
        fs::write(hook_path(&p), &text).unwrap();
        assert!(matches!(load(&p).unwrap_err(), StoreError::Schema { .. }));
        assert!(update(&p, now, |_| ()).is_err());
        assert_eq!(fs::read_to_string(hook_path(&p)).unwrap(), text);
    }

    #[test]
    fn finished_tasks_are_archived() {
        let (_d, p) = project();
        let now = Utc::now();
        update(&p, now, |h| {
            let mut hook = Hook::new("INT-1", "w", 0, now);
            hook.finish(HookState::Abandoned, now).unwrap();
            *h = Some(hook);
        })
        .unwrap();
        for file in [HOOK_JSON, PLAN_JSON, HOOK_MD] {
            assert!(task_dir(&p, "INT-1").join(file).exists(), "{file}");
        }
        assert_eq!(sanitize("../x y"), "_x_y");
    }

    #[test]
    fn reads_only_what_it_needs() {
        let f = peek(
            br#"{"task_id":"a","state":"abandoned","updated_at":"2024-01-02T03:04:05Z","schema_version":"1.0"}"#,
        );
        assert!(matches!(
            f,
            Peeked::Task {
                state: HookState::Abandoned,
                updated_at: Some(_),
                ..
            }
        ));
        assert!(matches!(
            peek(br#"{"state":"completed"}"#),
            Peeked::Task {
                updated_at: None,
                ..
            }
        ));
        assert!(matches!(peek(b"{ torn"), Peeked::Unreadable(_)));
        assert!(matches!(
            peek(br#"{"state":"done"}"#),
            Peeked::Unreadable(_)
        ));
        assert!(matches!(
            peek(br#"{"state":"completed","schema_version":"9.0"}"#),
            Peeked::OtherSchema(_)
        ));
    }
}
