//! hook.json on disk: locked read-modify-write, the last good copy, the archive.
//!
//! - Every change happens under `hook.json.lock`: load, mutate, save, regenerate HOOK.md.
//! - Before hook.json is replaced, the current file (which just parsed, so is good) is
//!   hard-linked to `hook.json.bak`: the last good state costs no extra write.
//! - A hook.json that does not parse is restored from the `.bak`; the bad file is kept as
//!   `hook.json.corrupt-<time>` and the restore is reported. If both are bad, nothing is
//!   overwritten and the error is returned.
//! - A hook.json of another schema major version is never overwritten.
//! - Each change's history events, checkpoints and receipts are appended to the task's
//!   logs in `tasks/<id>/` before hook.json is replaced (docs/state.md); a finished task's
//!   hook.json and HOOK.md are copied there too.

use std::fs;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use super::machine::HookState;
use super::model::{
    Hook, Journal, Lazy, PlanOutline, RECENT_CHECKPOINTS, RECENT_RECEIPTS, SCHEMA_VERSION, Step,
    StepCheckpoint, Steps,
};
use super::outline::Outline;
use crate::project::Project;
use crate::receipt::ValidationReceipt;
use crate::recovery::hookmd;
use crate::redact::{Clean, Part, Vouched};
use crate::store::{self, FileLock};

pub const HOOK_JSON: &str = "hook.json";
/// The task's logs, in its folder `tasks/<id>/`: appended to, never rewritten.
pub const HISTORY_LOG: &str = "history.jsonl";
pub const CHECKPOINTS_LOG: &str = "checkpoints.jsonl";
pub const RECEIPTS_LOG: &str = "receipts.jsonl";
/// The plan at the start of each turn, what a rewound conversation puts it back to.
pub const TURNS_LOG: &str = "turns.jsonl";
/// Beside the receipts log: the id of its last receipt known to be on disk.
pub const RECEIPTS_SYNCED: &str = "receipts.synced";
/// How many receipts hook.json holds for a log not yet synced before a save syncs it
/// itself (the forked copy of each hook that adds one syncs it, so this is reached only
/// when those copies cannot run).
const MAX_UNSYNCED_RECEIPTS: usize = 4;
pub const HOOK_MD: &str = "HOOK.md";
pub const TASKS_DIR: &str = "tasks";

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
static SAVED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Marks the start of an event's handling (see [`StoreError::Busy`]).
pub fn begin_event() {
    SAVED.store(false, std::sync::atomic::Ordering::SeqCst);
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

pub fn task_dir(project: &Project, task_id: &str) -> PathBuf {
    project.state_dir().join(TASKS_DIR).join(sanitize(task_id))
}

/// Loads hook.json without taking the lock (for read-only commands).
pub fn load(project: &Project) -> Result<(Option<Hook>, LoadNote), StoreError> {
    let path = hook_path(project);
    let (bak, swap) = (path.with_extension("json.bak"), store::swap_name(&path));
    let bytes = match store::read(&path, &[&bak, &swap]) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((None, LoadNote::default())),
        Err(e) => return Err(e.into()),
    };
    match parse(&bytes) {
        Ok(hook) => Ok((Some(hook), LoadNote::default())),
        Err(StoreError::Corrupt(why)) => restore_from_bak(project, &path, &bytes, &why),
        Err(e) => Err(e),
    }
}

fn parse(bytes: &[u8]) -> Result<Hook, StoreError> {
    // The common case in one pass: a current file straight into the model (going through
    // a `Value` first doubled the time every event holds the hook.json lock), from text
    // checked as UTF-8 at once rather than string by string.
    if let Ok(text) = std::str::from_utf8(bytes) {
        if let Some(mut hook) = with_written_plan(text).or_else(|| serde_json::from_str(text).ok())
        {
            if readable(&hook.schema_version) {
                hook.redacted_by.clear();
                forget_unproven_outline(&mut hook);
                migrate(&mut hook);
                return Ok(hook);
            }
        }
    }
    // Otherwise say precisely why: another schema (reported as such, and never touched),
    // or anything else that is not a task (`[]`, `{}`, `null`, a torn file): corrupt, and
    // restorable from the last good copy.
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    if let Some(found) = value.get("schema_version").and_then(|v| v.as_str()) {
        if !readable(found) {
            return Err(StoreError::Schema {
                found: found.into(),
            });
        }
    }
    let mut hook: Hook = serde_json::from_value(value)
        .map_err(|e| StoreError::Corrupt(format!("not a task: {e}")))?;
    forget_unproven_outline(&mut hook);
    migrate(&mut hook);
    Ok(hook)
}

/// What a file says it derived from its sealed members (the outline, the block's sum)
/// is taken only with members their sum proves, left unparsed: beside a plan edited by
/// hand, or written by another build, it would be stale.
fn forget_unproven_outline(hook: &mut Hook) {
    if !hook.steps.read_unparsed() {
        hook.outline = PlanOutline::default();
        hook.listed.clear();
    }
}

/// A hook.json as waymark writes it, its plan read on its own: the JSON value after the
/// top-level `"steps": `, and the rest of the file with `[]` in its place. `None` for a file
/// laid out otherwise (by hand).
///
/// When the rest records this redactor and the sum of the members a save seals as they
/// stand ([`members`]: the newest checkpoints and receipts, the outline, the plan), they
/// are kept unparsed until something reads them ([`Steps::unparsed`], [`Lazy::unparsed`]).
/// Otherwise (an older layout, another version's file, a member edited by hand) the plan
/// is parsed now, ending where the parser finds its end, and the rest with it; both parse
/// only when that value was the plan whole, which is then vouched for to be written back
/// as it was read ([`Vouched`]).
fn with_written_plan(text: &str) -> Option<Hook> {
    let Members {
        plan_at, sealed, ..
    } = members(text)?;
    if text[plan_at..].starts_with("[]") {
        return None;
    }
    if let Some(Sealed { from, parts }) = sealed {
        let rest = [&text[..from], "\n  \"steps\": []", &text[parts[3].end..]].concat();
        if let Ok(mut hook) = serde_json::from_str::<Hook>(&rest) {
            let texts = parts.map(|part| &text[part]);
            let proven = Vouched::proven(texts, &hook.redacted_by, &hook.plan_sum, PLAN);
            if let Some([checkpoints, receipts, outline, plan]) = proven {
                hook.recent_checkpoints = Lazy::unparsed(checkpoints);
                hook.recent_receipts = Lazy::unparsed(receipts);
                hook.outline = PlanOutline::unparsed(outline);
                hook.steps = Steps::unparsed(plan);
                return Some(hook);
            }
        }
    }
    let (steps, plan) = Vouched::parse_first::<Vec<Step>>(&text[plan_at..]).ok()?;
    let (before, after) = (&text[..plan_at], &text[plan_at + plan.end()..]);
    let mut hook: Hook = serde_json::from_str(&[before, "[]", after].concat()).ok()?;
    hook.steps = steps.into();
    if let Some(json) = plan.vouch(&hook.redacted_by) {
        hook.steps.keep_read(json);
    }
    Some(hook)
}

/// The lines that open the members a save seals with `plan_sum`, in the order it writes
/// them, last in the file (the plan the very last), and the line of the sum.
const SEALED: [&str; 4] = [
    "\n  \"recent_checkpoints\": ",
    "\n  \"recent_receipts\": ",
    "\n  \"outline\": ",
    STEPS,
];
const STEPS: &str = "\n  \"steps\": ";
const SUM: &str = "\n  \"plan_sum\": ";

/// Where a hook.json holds its plan: [`members`].
struct Members {
    /// Where the plan's value starts.
    plan_at: usize,
    /// Where the value of `plan_sum` starts, quoted, if the file has one.
    sum_at: Option<usize>,
    /// The sealed members, when they stand as a save lays them out.
    sealed: Option<Sealed>,
}

/// The members a save seals ([`SEALED`]), one after the other.
struct Sealed {
    /// Where the first one's line starts: the rest of the file ends before it.
    from: usize,
    /// Where each one's value stands.
    parts: [Range<usize>; 4],
}

/// Where `text`, a hook.json as waymark writes it, holds its plan and the members sealed
/// with it: after the first line that begins `  "steps": ` (no JSON string holds a
/// newline, and only the top level's members are indented by two spaces), found a line at
/// a time (`text::newlines`, a compare per line: memchr's `memmem` asks the CPU for its
/// features first). The plan, the file's last member, ends at the `]` that closes the
/// file's last line but one, and each sealed member before it with the comma before the
/// next one's line. `None` for a file laid out otherwise.
fn members(text: &str) -> Option<Members> {
    let bytes = text.as_bytes();
    let (mut lines, mut sum_at) = ([None; 4], None);
    let at = crate::text::newlines(bytes).find(|&i| {
        if bytes[i..].starts_with(SUM.as_bytes()) {
            sum_at = Some(i + SUM.len());
        }
        match SEALED
            .iter()
            .position(|m| bytes[i..].starts_with(m.as_bytes()))
        {
            Some(k) => {
                lines[k].get_or_insert(i);
                k == 3
            }
            None => false,
        }
    })?;
    let plan_at = at + STEPS.len();
    let last = text.trim_end().strip_suffix('}')?.trim_end();
    let sealed = sealed(text, lines, last.len());
    Some(Members {
        plan_at,
        sum_at,
        sealed,
    })
}

/// The sealed members, from the lines that open them (each found before the plan's, the
/// last, or not at all), when they follow one another as a save writes them: each value
/// ends with the comma before the next one's line, the plan's at `end`, the `]` that
/// closes the file's last line but one.
fn sealed(text: &str, lines: [Option<usize>; 4], end: usize) -> Option<Sealed> {
    let [a, b, c, d] = lines;
    let lines = [a?, b?, c?, d?];
    let laid_out = lines
        .windows(2)
        .all(|w| w[0] < w[1] && text[..w[1]].ends_with(','))
        && text[..end].ends_with("\n  ]")
        && end > lines[3] + STEPS.len();
    laid_out.then(|| Sealed {
        from: lines[0],
        parts: std::array::from_fn(|k| {
            let start = lines[k] + SEALED[k].len();
            start..lines.get(k + 1).map_or(end, |next| next - 1)
        }),
    })
}

/// Which of the members a save seals are as they were read (their text kept, to be
/// written back): what neither needs sealing anew nor HOOK.md's part of it rendered.
struct AsRead {
    /// The plan and its outline.
    plan: bool,
    receipts: bool,
    checkpoints: bool,
}

impl AsRead {
    fn of(hook: &Hook) -> AsRead {
        AsRead {
            plan: hook.steps.read_json().is_some() && hook.outline.read_json().is_some(),
            receipts: hook.recent_receipts.read_json().is_some(),
            checkpoints: hook.recent_checkpoints.read_json().is_some(),
        }
    }

    fn all(&self) -> bool {
        self.plan && self.receipts && self.checkpoints
    }
}

/// Seals what this save writes of the plan: its outline, drawn anew for a changed plan,
/// and `plan_sum`, written as [`SUM_TO_COME`] when a sealed member is not as read. True
/// when the sum is to come ([`seal_sum`]).
fn seal_plan(hook: &mut Hook, as_read: &AsRead) -> bool {
    if !as_read.plan {
        hook.outline = PlanOutline::from(Some(Outline::of(&hook.steps)));
        hook.steps.outlined();
    }
    // An empty plan is written `[]` and read as such: nothing to prove.
    if hook.steps.is_empty() {
        hook.plan_sum.clear();
        return false;
    }
    if !as_read.all() {
        hook.plan_sum = SUM_TO_COME.into();
    }
    !as_read.all()
}

/// HOOK.md's block ([`hookmd::block`]) as this save writes it, and its sum in `listed`.
///
/// The block is taken back from HOOK.md when `listed` holds there for the hook as read
/// (`before`), each part whose source is as read: the listing for a plan as read
/// (otherwise the lines of the steps still as read, `hookmd::relisting`), the receipts'
/// and the checkpoints' sections for those as read. The rest is rendered (and redacted).
/// The sum is taken of each part on its own, so that it proves where the parts were cut
/// (an id edited by hand may hold a heading), and of `checkpoint_count` ([`block_kind`]).
fn block(project: &Project, hook: &mut Hook, before: Option<&Hook>, as_read: &AsRead) -> Clean {
    let (kept, found) = match before.and_then(|read| block_kept(project, read)) {
        Some((block, _)) if as_read.all() => return block,
        Some((block, found)) => (block, Some(found)),
        None => (Clean::default(), None),
    };
    let kept_part = |as_read: bool, part: fn(&hookmd::Found) -> &Range<usize>| {
        let found = found.as_ref().filter(|_| as_read)?;
        Some(vec![Part::Kept(part(found).clone())])
    };
    // The block starts with the listing: the listing's ranges are the block's.
    let listing = kept_part(as_read.plan, |f| &f.listing).unwrap_or_else(|| {
        let before = found.as_ref().map(|f| &kept.as_str()[f.listing.clone()]);
        hookmd::relisting(&hook.steps, before)
    });
    let receipts = kept_part(as_read.receipts, |f| &f.receipts)
        .unwrap_or_else(|| vec![Part::New(hookmd::receipts(hook))]);
    let checkpoints = kept_part(as_read.checkpoints, |f| &f.checkpoints)
        .unwrap_or_else(|| vec![Part::New(hookmd::checkpoints(hook))]);
    let [listing, receipts, checkpoints] =
        [listing, receipts, checkpoints].map(|parts| Clean::splice(&kept, &parts));
    let block = Clean::concat(&[&listing, &receipts, &checkpoints]);
    let (a, b) = (listing.len(), listing.len() + receipts.len());
    let found = hookmd::Found {
        listing: 0..a,
        receipts: a..b,
        checkpoints: b..block.len(),
    };
    hook.listed = block.sum(&found.parts(), block_kind(hook));
    block
}

/// What `plan_sum` holds while hook.json is made, for [`seal_sum`] to write the sum over:
/// as long as one, so that nothing after it moves.
const SUM_TO_COME: &str = "0000000000000000";

/// Writes into `json`, the hook.json a save has just made, the sum of the members it
/// seals as they stand in it, over [`SUM_TO_COME`]: the plan is serialized once, with the
/// file, and its sum taken of the very text written. Where they cannot be found (no save
/// lays a file out so) the placeholder stays, which proves nothing: the plan is parsed
/// when next read.
fn seal_sum(json: &mut Clean) {
    let text = json.as_str();
    let found = members(text).and_then(|m| {
        // `sum_at` is the value's opening quote.
        let at = m.sum_at? + 1;
        text[at..]
            .starts_with(SUM_TO_COME)
            .then_some((at..at + SUM_TO_COME.len(), m.sealed?.parts))
    });
    if let Some((at, parts)) = found {
        json.write_sum(at, parts, PLAN);
    }
}

/// What the plan's sum says it is: a hash of the source that defines a step
/// (src/task/model.rs) and how a plan is read (src/task/steps.rs), and its outline
/// (src/task/outline.rs). A waymark built from
/// another version of those files (the same version number, built from another commit)
/// parses a plan it did not write rather than trusting that it parses.
const PLAN: u64 = {
    use crate::text::{FNV_BASIS, fnv1a};
    let model = fnv1a(FNV_BASIS, include_str!("model.rs").as_bytes());
    let lazy = fnv1a(model, include_str!("lazy.rs").as_bytes());
    let steps = fnv1a(lazy, include_str!("steps.rs").as_bytes());
    fnv1a(steps, include_str!("outline.rs").as_bytes())
};

/// The kind of the block's sum (`listed`): the source that renders it
/// (src/recovery/hookmd.rs), from the plan and the newest receipts and checkpoints alone.
const LISTING: u64 = crate::text::fnv1a(
    crate::text::FNV_BASIS,
    include_str!("../recovery/hookmd.rs").as_bytes(),
);

/// The kind of the block's sum (`listed`): [`LISTING`], and `checkpoint_count`, the one
/// thing the block shows that hook.json holds outside its sealed members (a count edited
/// by hand then renders the block anew).
fn block_kind(hook: &Hook) -> u64 {
    crate::text::fnv1a(LISTING, &hook.checkpoint_count.to_le_bytes())
}

/// HOOK.md's block as the save that wrote `read` (the hook as read) wrote it, and where
/// its parts stand in it, when `listed`, its sum, proves it, cut into its parts where the
/// save made them.
fn block_kept(project: &Project, read: &Hook) -> Option<(Clean, hookmd::Found)> {
    /// A HOOK.md larger than this is not the one waymark wrote (the listing of
    /// [`MAX_STEPS`](super::MAX_STEPS) steps is a few hundred KiB): it is rendered anew.
    const MAX_HOOK_MD: u64 = 4 << 20;
    if read.listed.is_empty() {
        return None;
    }
    let bytes = store::read_at_most(&project.state_file(HOOK_MD), &[], MAX_HOOK_MD).ok()??;
    let found = hookmd::find_block(&bytes)?;
    let text = std::str::from_utf8(&bytes[found.block()]).ok()?;
    let found = found.in_block();
    let block = Clean::proven(text, &found.parts(), &read.listed, block_kind(read))?;
    Some((block, found))
}

/// Brings a schema-1 hook to schema 2 in memory (docs/state.md): its one session into the
/// session list, its inline history, checkpoints and receipts into the journal, which the
/// next save appends to the task's logs. A schema-2 hook has nothing to move.
fn migrate(hook: &mut Hook) {
    hook.migrate_sessions();
    let inline = !hook.legacy_history.is_empty()
        || !hook.legacy_checkpoints.is_empty()
        || !hook.legacy_receipts.is_empty();
    if !inline {
        return;
    }
    hook.history_count = hook.legacy_history_archived + hook.legacy_history.len() as u64;
    hook.checkpoint_count = hook.legacy_checkpoints.len() as u64;
    hook.receipt_count = hook.legacy_receipts.len() as u64;
    let keep = hook
        .legacy_checkpoints
        .len()
        .saturating_sub(RECENT_CHECKPOINTS);
    hook.recent_checkpoints = hook.legacy_checkpoints[keep..].to_vec().into();
    let keep = hook.legacy_receipts.len().saturating_sub(RECENT_RECEIPTS);
    hook.recent_receipts = hook.legacy_receipts[keep..]
        .iter()
        .map(crate::task::ReceiptSummary::of)
        .collect::<Vec<_>>()
        .into();
    hook.journal = Journal {
        history: std::mem::take(&mut hook.legacy_history),
        checkpoints: std::mem::take(&mut hook.legacy_checkpoints),
        receipts: std::mem::take(&mut hook.legacy_receipts),
        turns: Vec::new(),
    };
}

fn major(v: &str) -> &str {
    v.split('.').next().unwrap_or("")
}

/// Schemas this waymark reads: its own, and schema 1, which it migrates (docs/state.md).
fn readable(version: &str) -> bool {
    matches!(major(version), "1" | "2") && major(version) <= major(SCHEMA_VERSION)
}

fn restore_from_bak(
    project: &Project,
    path: &Path,
    bad: &[u8],
    why: &str,
) -> Result<(Option<Hook>, LoadNote), StoreError> {
    let bak = path.with_extension("json.bak");
    let good = fs::read(&bak).map_err(|_| StoreError::Corrupt(why.into()))?;
    let hook = parse(&good).map_err(|_| StoreError::Corrupt(why.into()))?;
    let stamp = Utc::now().format("%Y%m%dT%H%M%S");
    let kept = project.state_file(&format!("hook.json.corrupt-{stamp}"));
    store::write_verbatim(&kept, bad)?;
    store::write_verbatim(path, &good)?;
    let note = format!(
        "hook.json was corrupt ({why}); restored the last good state from hook.json.bak, kept the bad file as {}",
        kept.display()
    );
    Ok((
        Some(hook),
        LoadNote {
            restored: Some(note),
        },
    ))
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
    let Some(state) = v
        .get("state")
        .and_then(Value::as_str)
        .and_then(HookState::parse)
    else {
        return Peeked::Unreadable("no valid `state`".into());
    };
    Peeked::Task {
        task_id: v.get("task_id").and_then(Value::as_str).map(str::to_string),
        state,
        updated_at: v
            .get("updated_at")
            .and_then(Value::as_str)
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .map(|t| t.with_timezone(&Utc)),
    }
}

/// The current task as [`peek`] sees it: hook.json, or hook.json.bak (the same task one
/// write earlier) when hook.json cannot say which task it is. Never restores, never
/// writes. `Err` says why neither could tell.
pub fn peek_current(project: &Project) -> Result<Option<Peeked>, String> {
    let path = hook_path(project);
    let read = |p: &Path| -> Result<Option<Peeked>, String> {
        match fs::read(p) {
            Ok(b) => Ok(Some(peek(&b))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    };
    let usable = |p: &Peeked| {
        matches!(
            p,
            Peeked::Task {
                task_id: Some(_),
                ..
            }
        )
    };
    match read(&path)? {
        None => Ok(None),
        Some(p) if usable(&p) => Ok(Some(p)),
        Some(bad) => match read(&path.with_extension("json.bak")) {
            Ok(Some(p)) if usable(&p) => Ok(Some(p)),
            _ => Err(format!(
                "hook.json is {}",
                match bad {
                    Peeked::Unreadable(why) => format!("unreadable ({why})"),
                    Peeked::OtherSchema(v) => format!("of schema version {v}"),
                    Peeked::Task { .. } => "without a task id".into(),
                }
            )),
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
    /// The save appended receipts to the log and did not sync it: the last one's id, for
    /// [`sync_receipts`] once the hook has answered.
    pub unsynced_receipt: Option<String>,
}

/// Locked read-modify-write. `f` may create, change or leave the hook; when it changed,
/// hook.json is saved, the old one kept as `.bak`, and HOOK.md regenerated.
pub fn update<R>(
    project: &Project,
    now: DateTime<Utc>,
    f: impl FnOnce(&mut Option<Hook>) -> R,
) -> Result<Updated<R>, StoreError> {
    let path = hook_path(project);
    let _critical = crate::deadline::enter();
    let _lock = match FileLock::acquire(&path) {
        Ok(lock) => lock,
        Err(e @ store::LockError::Timeout(..))
            if !SAVED.load(std::sync::atomic::Ordering::SeqCst) =>
        {
            return Err(StoreError::Busy(e));
        }
        Err(e) => return Err(e.into()),
    };
    crate::faults::at("store.locked");
    let (before, note) = load(project)?;
    let mut hook = before.clone();
    let value = f(&mut hook);
    let changed = hook != before;
    let mut unsynced_receipt = None;
    if changed {
        if let Some(h) = hook.as_mut() {
            // Under the lock no other writer of these files is live: any temp file of
            // theirs is what a killed writer left.
            let names = [HOOK_JSON, "hook.json.bak", HOOK_MD];
            store::remove_stale_temps(&project.state_dir(), &names);
            SAVED.store(true, std::sync::atomic::Ordering::SeqCst);
            if save_locked(project, h, before.as_ref(), now)? {
                unsynced_receipt = h.unsynced_receipts.last().map(|r| r.receipt_id.clone());
            }
        }
    }
    Ok(Updated {
        value,
        note,
        hook,
        changed,
        unsynced_receipt,
    })
}

/// Saves `hook`; true when it appended receipts to a log it did not sync.
fn save_locked(
    project: &Project,
    hook: &mut Hook,
    before: Option<&Hook>,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    forget_synced_receipts(project, hook);
    let unsynced = write_journal(project, hook)?;
    // A hook saved before hook.json kept its newest receipts learns them once, here (a
    // sealed file has the member: its receipts need no parse to tell).
    let unknown = hook.recent_receipts.read_json().is_none() && hook.recent_receipts.is_empty();
    if unknown && hook.receipt_count > 0 {
        let newest: Vec<ValidationReceipt> =
            read_log(project, &hook.task_id, RECEIPTS_LOG, Some(RECENT_RECEIPTS))?;
        *hook.recent_receipts = newest.iter().map(crate::task::ReceiptSummary::of).collect();
    }
    hook.version = SCHEMA_VERSION.into();
    hook.schema_version = SCHEMA_VERSION.into();
    hook.updated_at = hook.updated_at.max(now);
    hook.redacted_by = Vouched::fingerprint();
    let as_read = AsRead::of(hook);
    let sum_to_come = seal_plan(hook, &as_read);
    let block = block(project, hook, before, &as_read);
    let mut json = Clean::json_pretty(hook);
    if sum_to_come {
        seal_sum(&mut json);
    }
    let path = hook_path(project);
    // A task is archived before hook.json says it is finished: if the archive cannot be
    // written, the task stays unfinished (and is finished at the next chance) rather than
    // finished with no copy, to be replaced by the next task (the disk test found it).
    let md = hook_md(hook, &block);
    if hook.state.is_terminal() && before.is_none_or(|b| !b.state.is_terminal()) {
        archive(project, hook, &json, &md)?;
    }
    store::replace_keeping_previous(&path, &path.with_extension("json.bak"), &json)?;
    crate::faults::at("store.saved");
    store::write_regenerable(&project.state_file(HOOK_MD), &md)?;
    Ok(unsynced)
}

/// Appends what the change added to the task's logs, before hook.json says so: a log may
/// hold a line hook.json does not count yet (the writer was killed in between), never
/// the other way round. Receipts are proof: what a power cut could take from their log
/// before it reaches the disk, hook.json (synced) holds until it has (`unsynced_receipts`,
/// docs/receipts.md), and the log is given it back first. True when receipts were
/// appended and not synced.
fn write_journal(project: &Project, hook: &mut Hook) -> Result<bool, StoreError> {
    let journal = std::mem::take(&mut hook.journal);
    if journal == Journal::default() {
        return Ok(false);
    }
    let dir = task_dir(project, &hook.task_id);
    no_links_to(project, &dir)?;
    store::make_dir(&dir)?;
    for c in &journal.checkpoints {
        keep_inline_capture(project, &hook.task_id, c)?;
    }
    if !journal.history.is_empty() {
        store::append_lines(&dir.join(HISTORY_LOG), &Clean::json_lines(&journal.history))?;
    }
    if !journal.checkpoints.is_empty() {
        store::append_lines(
            &dir.join(CHECKPOINTS_LOG),
            &Clean::json_lines(&journal.checkpoints),
        )?;
    }
    if !journal.turns.is_empty() {
        store::append_lines(&dir.join(TURNS_LOG), &Clean::json_lines(&journal.turns))?;
    }
    if !journal.receipts.is_empty() {
        let log = dir.join(RECEIPTS_LOG);
        let unsynced = &hook.unsynced_receipts;
        let mut lost = 0;
        store::append_after(&log, |last| {
            let last = last.and_then(|l| serde_json::from_slice(l).ok());
            let given_back = crate::receipt::chain::unlogged(unsynced, last.as_ref());
            lost = given_back.len();
            Clean::json_lines(
                &given_back
                    .iter()
                    .chain(&journal.receipts)
                    .collect::<Vec<_>>(),
            )
        })?;
        if lost > 0 {
            let message = format!(
                "{RECEIPTS_LOG} had lost its last {lost} receipt(s) (a power cut?): given back from hook.json"
            );
            crate::log::write(
                &project.state_dir(),
                crate::log::Level::Warn,
                "receipts",
                &message,
            );
        }
        hook.unsynced_receipts.extend(journal.receipts);
        if hook.unsynced_receipts.len() <= MAX_UNSYNCED_RECEIPTS {
            return Ok(true);
        }
        store::sync_appended(&log)?;
        hook.unsynced_receipts.clear();
    }
    Ok(false)
}

/// Of hook.json's `unsynced_receipts`, those its log is not known to hold on disk: the
/// ones after the receipt [`sync_receipts`] last said it synced. A receipt missing from
/// the log before that was not taken by a power cut, and is not given back.
fn still_unsynced<'a>(project: &Project, hook: &'a Hook) -> &'a [ValidationReceipt] {
    let unsynced = &hook.unsynced_receipts;
    if unsynced.is_empty() {
        return unsynced;
    }
    let marker = task_dir(project, &hook.task_id).join(RECEIPTS_SYNCED);
    let through = std::fs::read_to_string(marker).unwrap_or_default();
    match unsynced.iter().position(|r| r.receipt_id == through.trim()) {
        Some(i) => &unsynced[i + 1..],
        None => unsynced,
    }
}

/// Drops from hook.json the receipts its log is known to hold on disk.
fn forget_synced_receipts(project: &Project, hook: &mut Hook) {
    let synced = hook.unsynced_receipts.len() - still_unsynced(project, hook).len();
    hook.unsynced_receipts.drain(..synced);
}

/// Makes the task's receipts log durable, up to and including receipt `through`, and says
/// so beside it, for the next save to drop them from hook.json. Done after the hook has
/// answered (by its forked copy), so that no validation waits for a second fsync.
pub fn sync_receipts(project: &Project, task_id: &str, through: &str) -> io::Result<()> {
    let dir = task_dir(project, task_id);
    store::sync_appended(&dir.join(RECEIPTS_LOG))?;
    store::write_replaceable(&dir.join(RECEIPTS_SYNCED), &Clean::text(through))
}

/// Schema 1 kept a checkpoint's file snapshots and dirtiness inline; schema 2 keeps them as
/// its capture record, written before the checkpoint goes to the log: nothing is lost.
fn keep_inline_capture(project: &Project, task_id: &str, c: &StepCheckpoint) -> io::Result<()> {
    if (c.legacy_files.is_empty() && c.legacy_dirty.is_none())
        || crate::capture::load(project, task_id, &c.checkpoint_id).is_some()
    {
        return Ok(());
    }
    let capture = crate::capture::Capture {
        checkpoint_id: c.checkpoint_id.clone(),
        captured_at: c.created_at,
        git_dirty: c.legacy_dirty,
        files: c.legacy_files.clone(),
        snapshot: None,
    };
    crate::capture::save(project, task_id, &capture)
}

/// The task's checkpoints: the newest `max` (`max_checkpoints`) of its log.
pub fn checkpoints(
    project: &Project,
    task_id: &str,
    max: usize,
) -> io::Result<Vec<StepCheckpoint>> {
    read_log(project, task_id, CHECKPOINTS_LOG, Some(max))
}

/// The task's receipts, every one, oldest first: its log, and what hook.json holds that a
/// power cut took from the log's end (given back to the log at the next validation).
pub fn receipts(project: &Project, hook: &Hook) -> io::Result<Vec<ValidationReceipt>> {
    let mut receipts: Vec<ValidationReceipt> =
        read_log(project, &hook.task_id, RECEIPTS_LOG, None)?;
    let lost = crate::receipt::chain::unlogged(still_unsynced(project, hook), receipts.last());
    receipts.extend_from_slice(lost);
    Ok(receipts)
}

/// The newest `newest` entries of a task's log (all when `None`), oldest first; lines
/// that do not parse (a torn last line, a hand edit) are skipped.
pub fn read_log<T: serde::de::DeserializeOwned>(
    project: &Project,
    task_id: &str,
    name: &str,
    newest: Option<usize>,
) -> io::Result<Vec<T>> {
    let path = task_dir(project, task_id).join(name);
    let lines = match newest {
        Some(n) => store::read_tail_lines(&path, n, (n as u64 + 1) * 64 * 1024)?.lines,
        None => match store::read(&path, &[]) {
            Ok(bytes) => String::from_utf8_lossy(&bytes)
                .lines()
                .map(str::to_string)
                .collect(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        },
    };
    Ok(lines
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

/// Regenerates HOOK.md from a hook (the hook alone: it keeps the newest checkpoints and
/// receipts, so no log is read).
pub fn write_hook_md(project: &Project, hook: &Hook) -> io::Result<()> {
    let block = Clean::text(&hookmd::block(hook));
    store::write_regenerable(&project.state_file(HOOK_MD), &hook_md(hook, &block))
}

/// HOOK.md for `hook`, around `block`, its listing of the plan and sections of the newest
/// receipts and checkpoints (redacted on its own: it starts and ends at a section
/// heading, where no secret can straddle the seam).
fn hook_md(hook: &Hook, block: &Clean) -> Clean {
    let head = hookmd::head(hook, chrono::Utc::now());
    Clean::concat(&[
        &Clean::text(&head),
        block,
        &Clean::text(&hookmd::tail(hook)),
    ])
}

/// Copies a finished task's hook.json and HOOK.md into `tasks/<id>/`.
fn archive(project: &Project, hook: &Hook, json: &Clean, md: &Clean) -> io::Result<()> {
    let dir = task_dir(project, &hook.task_id);
    no_links_to(project, &dir)?;
    store::make_dir(&dir)?;
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

/// Task ids come from intents (user text): keep them to safe file names.
pub fn sanitize(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_matches('.').to_string();
    if s.is_empty() { "task".into() } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::machine::HookState;

    use crate::project::temp_project as project;

    #[test]
    fn update_creates_saves_and_keeps_bak() {
        let (_d, p) = project();
        let now = Utc::now();
        update(&p, now, |h| *h = Some(Hook::new("t1", "w", 0, now))).unwrap();
        assert!(hook_path(&p).exists());
        let text = fs::read_to_string(hook_path(&p)).unwrap();
        assert!(
            !text.contains(SUM_TO_COME),
            "an empty plan has no sum: {text}"
        );
        assert!(p.state_file(HOOK_MD).exists());
        update(&p, now, |h| {
            h.as_mut().unwrap().last_prompt = Some("x".into())
        })
        .unwrap();
        let bak: Hook =
            serde_json::from_slice(&fs::read(p.state_file("hook.json.bak")).unwrap()).unwrap();
        assert_eq!(bak.last_prompt, None);
    }

    /// A saved task whose plan is one pending step, "Parse".
    fn one_step_task() -> (tempfile::TempDir, Project, DateTime<Utc>) {
        let (d, p) = project();
        let now = Utc::now();
        update(&p, now, |h| {
            let mut hook = Hook::new("t1", "w", 0, now);
            hook.add_step("1", "Parse", "", None, crate::task::StepSource::Task, now);
            *h = Some(hook);
        })
        .unwrap();
        (d, p, now)
    }

    /// The summary of a passed `cargo test` of step "Parse", as HOOK.md lists it.
    fn passed_parse(now: DateTime<Utc>) -> crate::task::ReceiptSummary {
        crate::task::ReceiptSummary {
            receipt_id: "rcpt-1".into(),
            step_name: "Parse".into(),
            command: "cargo test".into(),
            exit_code: 0,
            duration: "1s".into(),
            observed: true,
            completed_at: now,
        }
    }

    /// A change that adds a manual checkpoint, described `description`.
    fn add_checkpoint(now: DateTime<Utc>, description: &str) -> impl Fn(&mut Option<Hook>) {
        move |h| {
            let hook = h.as_mut().unwrap();
            let head = crate::git::head::Head::default();
            let manual = crate::task::CheckpointTrigger::Manual;
            let cp = crate::task::checkpoint::build(hook, manual, description, None, head, now);
            hook.push_checkpoint(cp);
        }
    }

    /// A save that leaves the plan as it is.
    fn change_something_else(p: &Project, now: DateTime<Utc>) {
        update(p, now, |h| {
            h.as_mut().unwrap().last_prompt = Some("go".into())
        })
        .unwrap();
    }

    /// The JSON of the members a save seals, as hook.json holds them: the newest
    /// checkpoints and receipts, the outline and the plan.
    fn sealed_parts(text: &str) -> [&str; 4] {
        let parts = members(text).unwrap().sealed.expect("sealed").parts;
        parts.map(|part| &text[part])
    }

    /// The plan's JSON from `"steps": ` to the file's closing `}` (the plan is written
    /// last), as hook.json holds it.
    fn steps_json(p: &Project) -> String {
        let text = fs::read_to_string(hook_path(p)).unwrap();
        let from = text.find("\"steps\": ").unwrap();
        let to = text.trim_end().strip_suffix('}').unwrap().len();
        text[from..to].to_string()
    }

    /// A save that leaves the plan alone writes HOOK.md from the outline hook.json keeps
    /// and the listing HOOK.md holds: the plan is not parsed, not even for a receipt that
    /// comes in. A listing edited in HOOK.md, a plan edited in hook.json: each is rendered
    /// anew from the plan.
    #[test]
    fn a_save_that_leaves_the_plan_alone_writes_hook_md_without_parsing_it() {
        use crate::task::{StepSource, StepStatus};
        let (_d, p, now) = one_step_task();
        update(&p, now, |h| {
            let hook = h.as_mut().unwrap();
            hook.add_step("2", "Test", "", None, StepSource::Task, now);
            hook.set_step_status("1", StepStatus::InProgress, 3, now)
                .unwrap();
            hook.set_step_status("1", StepStatus::Completed, 3, now)
                .unwrap();
            hook.steps[0].receipt_ids.push("rcpt-1".into());
        })
        .unwrap();
        let md_path = p.state_file(HOOK_MD);
        let read_md = || fs::read_to_string(&md_path).unwrap();
        let listing = |md: &str| md[hookmd::find_block(md.as_bytes()).unwrap().listing].to_string();
        let save = || {
            let saved = update(&p, now, |h| {
                let hook = h.as_mut().unwrap();
                hook.history_count += 1;
            })
            .unwrap();
            saved.hook.unwrap().steps.is_parsed()
        };
        let first = read_md();

        assert!(!save(), "the plan is not parsed");
        let md = read_md();
        assert_eq!(listing(&md), listing(&first));
        assert!(
            md.contains("Start step 2 \"Test\" (attempt 1 of 3)"),
            "{md}"
        );
        assert!(md.contains("Do not repeat step 1 \"Parse\""), "{md}");
        assert!(md.contains("| 1 | Parse |") && md.contains("- [ ] 2. Test — pending"));
        assert!(
            md.contains(" | `rcpt-1` |\n"),
            "the table names the step's receipt"
        );

        fs::write(&md_path, md.replace("- [ ] 2. Test", "- [x] 2. Test")).unwrap();
        assert!(save(), "a listing edited in HOOK.md is rendered anew");
        assert_eq!(listing(&read_md()), listing(&first));

        let receipt_in = update(&p, now, |h| {
            h.as_mut().unwrap().recent_receipts.push(passed_parse(now))
        })
        .unwrap();
        assert!(
            !receipt_in.hook.unwrap().steps.is_parsed(),
            "a receipt coming in leaves the listing alone"
        );
        let md = read_md();
        assert_eq!(listing(&md), listing(&first));
        assert!(
            md.contains("| `rcpt-1` | Parse | `cargo test` | 0 |"),
            "{md}"
        );

        let text = fs::read_to_string(hook_path(&p)).unwrap();
        fs::write(hook_path(&p), text.replace("\"Test\"", "\"Test all\"")).unwrap();
        assert!(save(), "a plan edited by hand is parsed");
        let md = read_md();
        assert!(md.contains("Start step 2 \"Test all\""), "{md}");
        assert!(md.contains("- [ ] 2. Test all — pending"), "{md}");
        assert!(!save());
    }

    /// The newest checkpoints and receipts are sealed with the plan: a save that adds
    /// neither parses neither, writes both back byte for byte and takes HOOK.md's sections
    /// of them back from HOOK.md; a checkpoint added writes its list and its section anew,
    /// leaves the receipts as read, and seals the file again. Either edited by hand (in
    /// hook.json or in HOOK.md) is parsed or rendered anew, the edit kept.
    #[test]
    fn the_newest_checkpoints_and_receipts_are_parsed_only_when_changed() {
        let (_d, p, now) = one_step_task();
        let add = |description| add_checkpoint(now, description);
        update(&p, now, add("First checkpoint")).unwrap();
        update(&p, now, |h| {
            h.as_mut().unwrap().recent_receipts.push(passed_parse(now))
        })
        .unwrap();
        let (json, md) = (hook_path(&p), p.state_file(HOOK_MD));
        let read = |path: &Path| fs::read_to_string(path).unwrap();
        let first = read(&json);
        let receipt_row = "| `rcpt-1` | Parse | `cargo test` | 0 | 1s | observed |";

        let prompt = |text: &str| {
            let saved = update(&p, now, |h| {
                h.as_mut().unwrap().last_prompt = Some(text.into())
            });
            saved.unwrap().hook.unwrap()
        };
        let hook = prompt("go");
        assert!(!hook.recent_checkpoints.is_parsed() && !hook.recent_receipts.is_parsed());
        let text = read(&json);
        assert_eq!(sealed_parts(&text)[..2], sealed_parts(&first)[..2]);
        assert!(read(&md).contains(receipt_row) && read(&md).contains("First checkpoint"));

        let saved = update(&p, now, add("Second checkpoint"))
            .unwrap()
            .hook
            .unwrap();
        assert!(!saved.recent_receipts.is_parsed());
        let text = read(&json);
        assert_eq!(sealed_parts(&text)[1], sealed_parts(&first)[1]);
        let hook = load(&p).unwrap().0.unwrap();
        assert!(
            !hook.recent_checkpoints.is_parsed(),
            "the file is sealed again"
        );
        assert_eq!(hook.recent_checkpoints.len(), 2);
        let page = read(&md);
        assert!(
            page.contains(receipt_row) && page.contains("Second checkpoint"),
            "{page}"
        );
        let whole = hookmd::block(&hook);
        assert_eq!(
            &page[hookmd::find_block(page.as_bytes()).unwrap().block()],
            whole
        );

        // Edited by hand in HOOK.md: its block is rendered anew.
        fs::write(&md, page.replace("| observed |", "| forged |")).unwrap();
        prompt("again");
        assert!(read(&md).contains(receipt_row));
        // In hook.json: the sum no longer holds, the lists are parsed, the edit is kept.
        let edited = read(&json).replace("Second checkpoint", "Second, renamed");
        fs::write(&json, edited).unwrap();
        let hook = load(&p).unwrap().0.unwrap();
        assert!(hook.recent_checkpoints.is_parsed() && hook.steps.is_parsed());
        prompt("and again");
        assert!(read(&md).contains("Second, renamed"));
        let hook = load(&p).unwrap().0.unwrap();
        assert!(!hook.recent_checkpoints.is_parsed(), "and sealed again");
    }

    /// The block's sum proves where its parts were cut: an id edited by hand to hold a
    /// heading (an id is rendered as it is) makes HOOK.md split the block elsewhere, and
    /// the block is then rendered anew, never taken back cut short: the receipts' rows
    /// and the Step Plan stay on the page.
    #[test]
    fn a_heading_in_an_id_never_cuts_what_a_save_takes_back() {
        use crate::task::StepStatus;
        let (_d, p, now) = one_step_task();
        update(&p, now, |h| {
            let hook = h.as_mut().unwrap();
            hook.set_step_status("1", StepStatus::Completed, 1, now)
                .unwrap();
            hook.steps[0].receipt_ids.push("rcpt-9".into());
            hook.recent_receipts.push(passed_parse(now));
            let mut second = passed_parse(now);
            second.receipt_id = "rcpt-2".into();
            hook.recent_receipts.push(second);
        })
        .unwrap();
        let (json, md) = (hook_path(&p), p.state_file(HOOK_MD));
        let text = fs::read_to_string(&json).unwrap();
        let edited = text
            .replace("\"rcpt-2\"", "\"rcpt-2\\n## Checkpoint Timeline\\n\"")
            .replace("\"rcpt-9\"", "\"rcpt-9\\n## Validation Receipts\\n\"");
        assert_ne!(edited, text);
        fs::write(&json, edited).unwrap();
        let prompt = |text: &str| {
            update(&p, now, |h| {
                h.as_mut().unwrap().last_prompt = Some(text.into())
            })
            .unwrap()
        };
        prompt("sealed again, the edit kept");
        // A checkpoint: the receipts' part would be kept, the checkpoints' rendered.
        update(&p, now, add_checkpoint(now, "cp")).unwrap();
        // A receipt: the listing's part would be kept, the receipts' rendered.
        update(&p, now, |h| {
            h.as_mut().unwrap().recent_receipts.push(passed_parse(now))
        })
        .unwrap();
        prompt("once more");
        let page = fs::read_to_string(&md).unwrap();
        let hook = load(&p).unwrap().0.unwrap();
        let whole = hookmd::block(&hook);
        assert!(page.contains(&whole), "{page}");
        assert!(
            page.contains("## Step Plan") && page.contains("| `rcpt-1` |"),
            "{page}"
        );
    }

    /// What the block shows of hook.json outside its sealed members (how many checkpoints
    /// the task made) is in its sum: a count edited by hand renders the timeline anew.
    #[test]
    fn a_checkpoint_count_edited_by_hand_renders_the_timeline_anew() {
        let (_d, p, now) = one_step_task();
        update(&p, now, add_checkpoint(now, "cp")).unwrap();
        let path = hook_path(&p);
        let text = fs::read_to_string(&path).unwrap();
        let edited = text.replace("\"checkpoint_count\": 1,", "\"checkpoint_count\": 9,");
        assert_ne!(edited, text);
        fs::write(&path, edited).unwrap();
        assert!(!load(&p).unwrap().0.unwrap().recent_checkpoints.is_parsed());
        change_something_else(&p, now);
        let page = fs::read_to_string(p.state_file(HOOK_MD)).unwrap();
        assert!(page.contains("(8 earlier: `waymark checkpoints`"), "{page}");
    }

    /// A file written before the newest checkpoints and receipts were sealed (they stood
    /// after `recovery`, the sum over the outline and the plan alone) is read whole, loses
    /// nothing, and is written in the sealed layout at its next save.
    #[test]
    fn a_file_from_before_the_seal_is_read_whole_and_sealed_at_its_next_save() {
        let (_d, p, now) = one_step_task();
        update(&p, now, |h| {
            add_checkpoint(now, "Kept")(h);
            h.as_mut().unwrap().recent_receipts.push(passed_parse(now));
        })
        .unwrap();
        let text = fs::read_to_string(hook_path(&p)).unwrap();
        let [checkpoints, receipts, ..] = sealed_parts(&text);
        let lines = format!(
            "\n  \"recent_checkpoints\": {checkpoints},\n  \"recent_receipts\": {receipts},"
        );
        let old = text.replace(&lines, "").replace(
            "\n  \"checkpoint_count\"",
            &format!("{lines}\n  \"checkpoint_count\""),
        );
        assert_ne!(old, text);
        assert!(
            members(&old).unwrap().sealed.is_some(),
            "laid out like a sealed file"
        );
        fs::write(hook_path(&p), &old).unwrap();

        let hook = load(&p).unwrap().0.unwrap();
        assert!(hook.steps.is_parsed(), "its sum does not hold: read whole");
        assert_eq!(hook.recent_checkpoints[0].description, "Kept");
        assert_eq!(hook.recent_receipts[0].receipt_id, "rcpt-1");
        change_something_else(&p, now);
        let saved = fs::read_to_string(hook_path(&p)).unwrap();
        assert_eq!(sealed_parts(&saved)[..2], [checkpoints, receipts]);
        let hook = load(&p).unwrap().0.unwrap();
        assert!(!hook.steps.is_parsed() && !hook.recent_checkpoints.is_parsed());
    }

    /// A validation of the running step (its receipt waits in the step's context) saves
    /// without parsing the plan; leaving the step links the receipt to it in the plan.
    #[test]
    fn a_validation_of_the_running_step_leaves_the_plan_unparsed() {
        use crate::task::StepStatus;
        let (_d, p, now) = one_step_task();
        update(&p, now, |h| {
            h.as_mut()
                .unwrap()
                .set_step_status("1", StepStatus::InProgress, 3, now)
                .unwrap();
        })
        .unwrap();
        let run = crate::receipt::validation::observed("cargo test", 0, "", "", None, now);
        let receipt = crate::receipt::ValidationReceipt::new("Parse", run);
        let id = receipt.receipt_id.clone();
        let saved = update(&p, now, |h| h.as_mut().unwrap().add_receipt(receipt)).unwrap();
        assert!(!saved.hook.unwrap().steps.is_parsed());
        let md = fs::read_to_string(p.state_file(HOOK_MD)).unwrap();
        assert!(
            md.contains(&format!("| `{id}` | Parse | `cargo test` | 0 |")),
            "{md}"
        );

        let left = update(&p, now, |h| {
            h.as_mut()
                .unwrap()
                .set_step_status("1", StepStatus::Completed, 3, now)
                .unwrap();
        })
        .unwrap();
        assert_eq!(left.hook.unwrap().steps[0].receipt_ids, [id.as_str()]);
        let md = fs::read_to_string(p.state_file(HOOK_MD)).unwrap();
        assert!(md.contains(&format!(" | `{id}` |\n")), "{md}");
    }

    #[test]
    fn a_plan_nothing_changed_is_written_back_as_it_was_read_and_a_changed_one_anew() {
        let (_d, p, now) = one_step_task();
        // The plan's JSON as this redactor wrote it, spaced out by hand: what tells a plan
        // written back from one serialized again.
        let written = steps_json(&p);
        let spaced = written.replace("\"Parse\"", "  \"Parse\"  ");
        let text = fs::read_to_string(hook_path(&p))
            .unwrap()
            .replace(&written, &spaced);
        fs::write(hook_path(&p), &text).unwrap();

        change_something_else(&p, now);
        assert_eq!(steps_json(&p), spaced, "an unchanged plan is kept as read");

        update(&p, now, |h| {
            let hook = h.as_mut().unwrap();
            hook.set_step_status("1", crate::task::StepStatus::InProgress, 3, now)
                .unwrap();
        })
        .unwrap();
        let again = steps_json(&p);
        assert!(
            again.contains("\"name\": \"Parse\"") && again.contains("in_progress"),
            "{again}"
        );
    }

    #[test]
    fn a_plan_another_redactor_wrote_goes_through_the_rules_again() {
        let (_d, p, now) = one_step_task();
        // A secret in the plan of a file an older redactor (another fingerprint) wrote.
        let secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let text = fs::read_to_string(hook_path(&p)).unwrap();
        let stamp = crate::redact::Vouched::fingerprint();
        assert!(text.contains(&stamp), "a save records its redactor");
        let text = text
            .replace("\"Parse\"", &format!("\"token {secret}\""))
            .replace(&stamp, "0000000000000000");
        fs::write(hook_path(&p), &text).unwrap();
        change_something_else(&p, now);
        let saved = fs::read_to_string(hook_path(&p)).unwrap();
        assert!(!saved.contains(secret), "{saved}");
        assert!(saved.contains(&stamp));
    }

    #[test]
    fn a_plan_laid_out_by_hand_is_never_written_back_broken() {
        let (_d, p, now) = one_step_task();
        // Still this redactor's stamp, but a list inside the plan closed at the top
        // level's indentation: the plan's end is not where the layout says.
        let text = fs::read_to_string(hook_path(&p)).unwrap().replace(
            "\"status\": \"pending\"",
            "\"status\": \"pending\", \"receipt_ids\": [\n  \"rcpt-1\"\n  ]",
        );
        assert!(text.contains(&crate::redact::Vouched::fingerprint()));
        fs::write(hook_path(&p), &text).unwrap();
        change_something_else(&p, now);
        let (hook, _) = load(&p).unwrap();
        assert_eq!(hook.unwrap().steps[0].receipt_ids, ["rcpt-1"]);
    }

    #[test]
    fn the_plan_is_parsed_on_its_own_where_waymark_writes_it() {
        let (_d, p, _now) = one_step_task();
        let text = fs::read_to_string(hook_path(&p)).unwrap();
        let hook = with_written_plan(&text).expect("the layout waymark writes");
        assert_eq!(hook.steps[0].name, "Parse");
        // Laid out otherwise (on one line): the whole file is parsed, the plan with it.
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let one_line = serde_json::to_string(&value).unwrap();
        assert!(with_written_plan(&one_line).is_none());
        assert_eq!(parse(one_line.as_bytes()).unwrap().steps[0].name, "Parse");
        // A serializer other than the store's (`waymark status --json`) gets the steps.
        let value = serde_json::to_value(&hook).unwrap();
        assert_eq!(value["steps"][0]["name"], "Parse", "{value}");
        let plain = serde_json::to_string(&hook).unwrap();
        assert!(plain.contains(r#""steps":[{"id":"#), "{plain}");
    }

    /// The plan waymark wrote, proven by its sum, is not parsed until read, and a save that
    /// does not read it writes it back byte for byte. Edited by hand (the sum no longer
    /// holds), it is parsed at once: the edit is kept, and an edit that breaks it is a
    /// corrupt file restored from the .bak, never a failure later on.
    #[test]
    fn a_plan_proven_by_its_sum_is_parsed_only_when_read() {
        let (_d, p, now) = one_step_task();
        let path = hook_path(&p);
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            text.trim_end().ends_with("  ]\n}"),
            "the plan is the last member: {text}"
        );
        let hook = parse(text.as_bytes()).unwrap();
        assert!(!hook.steps.is_parsed() && !hook.outline.is_parsed());
        assert_ne!(
            hook.plan_sum, SUM_TO_COME,
            "the sum is written over its placeholder"
        );
        let before = hook.clone();
        assert_eq!(hook.steps[0].name, "Parse");
        assert!(
            hook.steps.is_parsed() && before.steps.is_parsed(),
            "a clone shares the parse"
        );
        update(&p, now, |h| {
            h.as_mut().unwrap().last_prompt = Some("go on".into())
        })
        .unwrap();
        let saved = fs::read_to_string(&path).unwrap();
        let plan = |t: &str| t[t.find("\n  \"steps\": ").unwrap()..].to_string();
        assert_eq!(plan(&saved), plan(&text), "written back as read");
        // The sum holds for this build's definition of a step only.
        let hook: Hook = serde_json::from_str(&saved).unwrap();
        let parts = sealed_parts(&saved);
        let stamp = crate::redact::Vouched::fingerprint();
        let sum = &hook.plan_sum;
        assert!(Vouched::proven(parts, &stamp, sum, PLAN).is_some());
        assert!(Vouched::proven(parts, &stamp, sum, PLAN ^ 1).is_none());
        // And the outline saved with it: an outline edited by hand is not taken, and is
        // drawn anew from the plan.
        let outline = parts[2];
        let edited = outline.replace("\"step_count\": 1", "\"step_count\": 7");
        let mut edited_parts = parts;
        edited_parts[2] = &edited;
        assert!(Vouched::proven(edited_parts, &stamp, sum, PLAN).is_none());
        fs::write(&path, saved.replace(outline, &edited)).unwrap();
        let hook = load(&p).unwrap().0.unwrap();
        assert!(hook.steps.is_parsed());
        assert_eq!(hook.outline().step_count, 1);

        // Edited by hand: a renamed step is kept, a broken one restores the .bak.
        fs::write(&path, saved.replace("\"Parse\"", "\"Parse all\"")).unwrap();
        let edited = load(&p).unwrap().0.unwrap();
        assert!(edited.steps.is_parsed());
        assert_eq!(edited.steps[0].name, "Parse all");
        fs::write(&path, saved.replace("\"index\": 0", "\"index\": \"first\"")).unwrap();
        let (restored, note) = load(&p).unwrap();
        assert_eq!(restored.unwrap().steps[0].name, "Parse");
        assert!(note.restored.is_some());
    }

    /// A change to one step writes the others back as they were read: here a step spaced
    /// by hand in a file whose sum was made again for it (still this waymark's own file).
    #[test]
    fn a_changed_plan_writes_the_steps_it_did_not_change_as_read() {
        let (_d, p, now) = one_step_task();
        update(&p, now, |h| {
            let hook = h.as_mut().unwrap();
            hook.add_step("2", "Test", "", None, crate::task::StepSource::Task, now);
        })
        .unwrap();
        let path = hook_path(&p);
        let text = fs::read_to_string(&path).unwrap();
        let spaced = text.replace("\"Test\"", "  \"Test\"  ");
        let stamp = Vouched::fingerprint();
        let parts = sealed_parts(&spaced).map(|json| {
            let (_, parsed) = Vouched::parse_first::<serde_json::Value>(json).unwrap();
            parsed.vouch(&stamp).unwrap()
        });
        let sum = Vouched::sum(&parts.iter().collect::<Vec<_>>(), PLAN);
        let old_sum = serde_json::from_str::<Hook>(&text).unwrap().plan_sum;
        fs::write(&path, spaced.replace(&old_sum, &sum)).unwrap();

        update(&p, now, |h| {
            let hook = h.as_mut().unwrap();
            hook.set_step_status("1", crate::task::StepStatus::InProgress, 3, now)
                .unwrap();
        })
        .unwrap();
        let saved = fs::read_to_string(&path).unwrap();
        assert!(
            saved.contains("\"name\":   \"Test\"  "),
            "step 2 as read: {saved}"
        );
        assert!(saved.contains("in_progress"), "step 1 anew: {saved}");
        let hook = parse(saved.as_bytes()).unwrap();
        assert!(
            !hook.steps.is_parsed(),
            "and the file proves its plan again"
        );
        assert_eq!(hook.steps[1].name, "Test");
        assert_eq!(hook.steps[0].status, crate::task::StepStatus::InProgress);
    }

    /// A change to a long plan parses the steps it changes and the few the outline names,
    /// and relists only their lines: HOOK.md's listing is always the one the whole plan
    /// renders, through steps started, completed, renamed, deleted and added, a completed
    /// step given a receipt, and the first step completed (the table starts).
    #[test]
    fn a_change_to_a_long_plan_relists_only_the_steps_it_changed() {
        use crate::task::{StepSource, StepStatus};
        let (_d, p, now) = one_step_task();
        update(&p, now, |h| {
            let hook = h.as_mut().unwrap();
            for n in 2..=40 {
                let name = format!("Part {n}");
                hook.add_step(&n.to_string(), &name, "", None, StepSource::Task, now);
            }
        })
        .unwrap();
        let md_path = p.state_file(HOOK_MD);
        let relisted = |change: &dyn Fn(&mut Hook)| {
            let saved = update(&p, now, |h| change(h.as_mut().unwrap())).unwrap();
            let md = fs::read_to_string(&md_path).unwrap();
            let (hook, _) = load(&p).unwrap();
            let whole = Clean::text(&hookmd::listing(&hook.unwrap().steps));
            assert_eq!(
                &md[hookmd::find_block(md.as_bytes()).unwrap().listing],
                whole.as_str()
            );
            saved.hook.unwrap().steps.parsed()
        };
        let status = |id: &'static str, to| {
            move |h: &mut Hook| {
                h.set_step_status(id, to, 3, now).unwrap();
            }
        };
        let parsed = relisted(&status("1", StepStatus::InProgress));
        assert!(parsed <= 8, "{parsed} of 40 steps parsed");
        let parsed = relisted(&status("1", StepStatus::Completed));
        assert!(parsed <= 10, "{parsed} of 40 steps parsed");
        relisted(&status("7", StepStatus::InProgress));
        relisted(&|h| h.steps[0].receipt_ids.push("rcpt-1".into()));
        relisted(&|h| {
            h.add_step(
                "12",
                "Part 12, renamed | with a bar",
                "",
                None,
                StepSource::Task,
                now,
            );
        });
        relisted(&status("20", StepStatus::Deleted));
        relisted(&status("7", StepStatus::Completed));
        relisted(&|h| {
            h.add_step(
                "41",
                "Part 41\non two lines",
                "",
                None,
                StepSource::Task,
                now,
            );
        });
        relisted(&status("41", StepStatus::Completed));
        let md = fs::read_to_string(&md_path).unwrap();
        assert!(md.contains("| 41 | Part 41 on two lines |"), "{md}");
        assert!(
            md.contains("- [x] 41. Part 41 on two lines — completed"),
            "{md}"
        );
        assert!(md.contains("- [-] 20. Part 20 — deleted"), "{md}");
        assert!(
            md.contains("- [ ] 12. Part 12, renamed | with a bar — pending"),
            "{md}"
        );
    }

    #[test]
    fn corrupt_hook_is_restored_from_bak() {
        let (_d, p) = project();
        let now = Utc::now();
        update(&p, now, |h| *h = Some(Hook::new("t1", "w", 0, now))).unwrap();
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
        update(&p, now, |h| *h = Some(Hook::new("t1", "w", 0, now))).unwrap();
        let text = fs::read_to_string(hook_path(&p))
            .unwrap()
            .replace("\"schema_version\": \"2.0\"", "\"schema_version\": \"3.0\"");
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
        assert!(task_dir(&p, "INT-1").join(HOOK_JSON).exists());
        assert!(task_dir(&p, "INT-1").join(HOOK_MD).exists());
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
            peek(br#"{"state":"completed","schema_version":"3.1"}"#),
            Peeked::OtherSchema(_)
        ));
    }
}
