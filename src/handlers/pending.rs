//! Events kept for later: a hook that cannot get the task's lock before its deadline
//! (another process holds it: a stuck hook, a long `waymark` command) keeps its event in
//! `.orchestration/pending.jsonl`, redacted like everything stored, and exits in time. The
//! next events that find the lock free apply the kept events first, in order and at the
//! times they happened, then their own. No tool call waits past its deadline, and no event
//! is lost (docs/design.md rules 1 and 2).
//!
//! Only an event that changed nothing yet is kept: every handler's first step is its
//! change to the task, so an event whose first change timed out is whole.
//!
//! Applying them is exactly once and resumable, however many there are. They are applied
//! in batches of at most [`BATCH`], by one process at a time (`pending.cursor.lock`,
//! tried without waiting), within half the hook's deadline: the rest wait for the next
//! events. Keepers append under the journal's own lock, which an applier takes only to
//! remove or cut the journal after a batch: a keeper never waits for a batch. Each event applied leaves the
//! journal at once: `pending.cursor` records how far the journal (the file whose first
//! line has the hash it names) is applied, written after each event, before the next one,
//! with the deadline held off in between (an event and its cursor are one state write).
//! A journal applied to its end is removed; one applied at least half way is cut to what
//! is left (then the cursor, naming the old first line, no longer applies to it). A
//! process killed between an event's trace record and its cursor leaves that event first
//! in line with its record written: the next one finds the record in the trace's tail and
//! moves past the event instead of applying it again.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::claude::codex::Agent;
use crate::claude::event;
use crate::runtime::context::Ctx;
use crate::store::log::Level;
use crate::store::{self, FileLock, deadline};
use waymark_redact::Clean;

/// The journal's file name, in the state directory.
pub const PENDING: &str = "pending.jsonl";
/// How far the journal is applied ([`Cursor`]), beside it.
pub const CURSOR: &str = "pending.cursor";
/// The most events applied in one batch, before the journal is removed or cut.
const BATCH: usize = 64;
/// The journal is cut to what is left only when that is at most this large (the cut is a
/// rewrite; a larger rest waits for more of it to be applied).
const CUT_AT_MOST: u64 = 16 << 20;
/// How many of the trace's last records are searched for an event's record.
const TRACE_WINDOW: usize = 64;

/// One kept event: the hook input as Claude Code sent it (redacted), and when.
#[derive(Debug, Serialize, Deserialize)]
struct Kept {
    received_at: DateTime<Utc>,
    event: String,
    input: Value,
    /// The agent that sent it, when not Claude Code (`codex`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    agent: Option<String>,
}

/// How far the journal whose first line hashes to `head` is applied: its first `offset`
/// bytes.
#[derive(Debug, Serialize, Deserialize)]
struct Cursor {
    offset: u64,
    head: String,
}

/// Keeps `input` (the event `name`'s hook input) for the next event to apply.
pub fn keep(ctx: &Ctx, name: &str, input: &Value, agent: Agent) -> io::Result<()> {
    let kept = Kept {
        received_at: ctx.now,
        event: name.to_string(),
        input: input.clone(),
        agent: agent.recorded(),
    };
    let line =
        crate::receipt::seal::seal(&ctx.config, Clean::json(&kept)).map_err(io::Error::other)?;
    store::append_line(&ctx.project.state_file(PENDING), line).map(|_| ())
}

/// Applies the kept events, oldest first, each at its own time, batch after batch while
/// more than half the hook's deadline is left; stops at one that cannot get the task's
/// lock again (it and the rest stay kept). Does nothing when there are none, or when
/// another process is applying them.
pub fn apply(ctx: &mut Ctx) {
    let path = ctx.project.state_file(PENDING);
    if std::fs::symlink_metadata(&path).is_err() {
        return;
    }
    let now = ctx.now;
    let mut first = true;
    while time_for_more(ctx) {
        match batch(ctx, &path, &mut first) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let why = format!("cannot apply the events kept in {PENDING}: {e}");
                ctx.log(Level::Error, "pending", &why);
                break;
            }
        }
    }
    ctx.now = now;
}

/// Whether another kept event may be applied: half the deadline is the event's own.
pub(super) fn time_for_more(ctx: &Ctx) -> bool {
    let reserve = (ctx.config.hook_deadline / 2).max(Duration::from_millis(300));
    deadline::left().is_none_or(|left| left > reserve)
}

/// Applies one batch under the journal's lock; true when events are left to apply and
/// this one was not stopped by a deferred event. `first`: no event was looked at yet (the
/// first may have been applied by a process killed before its cursor was written).
fn batch(ctx: &mut Ctx, path: &Path, first: &mut bool) -> io::Result<bool> {
    let cursor = ctx.project.state_file(CURSOR);
    let Some(_applying) = FileLock::try_acquire(&cursor).map_err(io::Error::other)? else {
        return Ok(false);
    };
    let Some(mut journal) = Journal::open(ctx, path)? else {
        return Ok(false);
    };
    for _ in 0..BATCH {
        let Some((line, next)) = journal.next_line()? else {
            break;
        };
        if std::mem::take(first) && already_traced(ctx, &line) {
            let why = "a kept event was applied by a process that ended before moving past it: not applied again";
            ctx.log(Level::Warn, "pending", why);
            journal.advance(next)?;
            continue;
        }
        let critical = deadline::enter();
        if apply_one(ctx, &line) == Applied::Deferred {
            return Ok(false);
        }
        journal.advance(next)?;
        drop(critical);
        if !time_for_more(ctx) {
            break;
        }
    }
    journal.finish(ctx)
}

#[derive(PartialEq, Eq)]
enum Applied {
    Done,
    /// The task's lock was busy again: the event stays first in line.
    Deferred,
}

/// Dispatches the kept event `line` at its own time; an unreadable one is dropped, and so
/// is one this machine did not keep (no seal of its own: a journal the repository carries).
fn apply_one(ctx: &mut Ctx, line: &[u8]) -> Applied {
    if !crate::receipt::seal::sealed_here(&ctx.config, line) {
        let why = "a kept event this machine did not keep (no seal of its own: carried in by the repository?), dropped";
        ctx.log(Level::Warn, "pending", why);
        return Applied::Done;
    }
    let kept: Kept = match serde_json::from_slice(line) {
        Ok(k) => k,
        Err(e) => {
            let why = format!("a kept event is unreadable, dropped: {e}");
            ctx.log(Level::Warn, "pending", &why);
            return Applied::Done;
        }
    };
    let bytes = serde_json::to_vec(&kept.input).expect("serializable");
    let mut parsed = match event::parse(Some(&kept.event), &bytes) {
        Ok(p) => p,
        Err(e) => {
            let why = format!("a kept {} event does not parse, dropped: {e}", kept.event);
            ctx.log(Level::Warn, "pending", &why);
            return Applied::Done;
        }
    };
    parsed.event.agent = Agent::of_record(kept.agent.as_deref());
    match super::dispatch_late(ctx, &parsed.event, "kept", kept.received_at) {
        Some(handled) if handled.deferred => Applied::Deferred,
        _ => Applied::Done,
    }
}

/// Whether the kept event `line` is a tool call whose trace record is among the trace's
/// last ones: it was applied, and its cursor not written.
fn already_traced(ctx: &Ctx, line: &[u8]) -> bool {
    let Ok(kept) = serde_json::from_slice::<Kept>(line) else {
        return false;
    };
    // Only these write a tool call's record (a PreToolUse kept shares its id).
    ["PostToolUse", "PostToolUseFailure"].contains(&kept.event.as_str())
        && kept.input["tool_use_id"]
            .as_str()
            .is_some_and(|id| traced(ctx, id))
}

/// Whether the tool call `id`'s trace record is among the trace's last ones: its
/// PostToolUse was applied (only a PostToolUse writes a tool call's record).
pub(super) fn traced(ctx: &Ctx, id: &str) -> bool {
    if id.is_empty() {
        return false;
    }
    let Ok(recent) = crate::trace::recent(&ctx.project, TRACE_WINDOW) else {
        return false;
    };
    recent.lines.iter().any(|l| {
        l.contains(id)
            && serde_json::from_str::<Value>(l)
                .is_ok_and(|v| v["metadata"]["waymark"]["tool_use_id"] == id)
    })
}

/// The journal open under its lock: where the next event to apply is.
struct Journal {
    path: PathBuf,
    cursor_path: PathBuf,
    reader: BufReader<File>,
    len: u64,
    head: String,
    offset: u64,
}

impl Journal {
    /// The journal at `path` from where its cursor says; `None` when it is gone.
    fn open(ctx: &Ctx, path: &Path) -> io::Result<Option<Journal>> {
        let opened = store::found(store::open_nofollow(path, OpenOptions::new().read(true)))?;
        let Some((mut file, meta)) = opened else {
            return Ok(None);
        };
        let len = meta.len();
        let head = first_line_hash(&mut file)?;
        let cursor_path = ctx.project.state_file(CURSOR);
        let offset = read_cursor(&cursor_path)
            .filter(|c| c.head == head && c.offset <= len)
            .map_or(0, |c| c.offset);
        let torn = offset > 0 && !newline_before(&mut file, offset)?;
        let offset = if torn { 0 } else { offset };
        file.seek(SeekFrom::Start(offset))?;
        Ok(Some(Journal {
            path: path.to_path_buf(),
            cursor_path,
            reader: BufReader::with_capacity(64 * 1024, file),
            len,
            head,
            offset,
        }))
    }

    /// The next whole line (without its newline) and the offset after it; `None` at the
    /// end, or at a torn last line (a keeper killed mid-write; the next keep cuts it).
    fn next_line(&mut self) -> io::Result<Option<(Vec<u8>, u64)>> {
        let mut line = Vec::new();
        let n = (&mut self.reader)
            .take(self.len - self.offset)
            .read_until(b'\n', &mut line)?;
        if n == 0 || line.last() != Some(&b'\n') {
            return Ok(None);
        }
        line.pop();
        Ok(Some((line, self.offset + n as u64)))
    }

    /// Moves past the event that ends at `next`: it has left the journal.
    fn advance(&mut self, next: u64) -> io::Result<()> {
        self.offset = next;
        let cursor = Cursor {
            offset: next,
            head: self.head.clone(),
        };
        store::write_replaceable(&self.cursor_path, &Clean::json(&cursor))
    }

    /// After a batch, under the journal's own lock (keepers append under it; they never
    /// wait for a batch, only for this): the journal removed when it is applied to its end
    /// (a torn last line with it), cut to what is left when at least half is applied; true
    /// when events are left. Events kept during the batch are counted in.
    fn finish(mut self, ctx: &Ctx) -> io::Result<bool> {
        let Ok(_lock) = FileLock::acquire(&self.path) else {
            return Ok(true);
        };
        self.len = self.reader.get_ref().metadata()?.len();
        let rest = self.len - self.offset;
        self.reader.seek(SeekFrom::Start(self.offset))?;
        if self.next_line()?.is_none() {
            if rest > 0 {
                let why =
                    format!("a torn kept event ({rest} bytes) at the end of {PENDING}, dropped");
                ctx.log(Level::Warn, "pending", &why);
            }
            std::fs::remove_file(&self.path)?;
            store::remove_if_there(&self.cursor_path)?;
            return Ok(false);
        }
        if self.offset >= rest && rest <= CUT_AT_MOST {
            let _critical = deadline::enter();
            let mut left = Vec::with_capacity(rest as usize);
            let file = self.reader.get_mut();
            file.seek(SeekFrom::Start(self.offset))?;
            file.take(rest).read_to_end(&mut left)?;
            // Already redacted when kept: written back as it is.
            store::write_verbatim(&self.path, &left)?;
            store::remove_if_there(&self.cursor_path)?;
        }
        Ok(true)
    }
}

/// The SHA-256 of the file's first line (of all of it, when it has no newline), read in
/// pieces; the file is left anywhere.
fn first_line_hash(file: &mut File) -> io::Result<String> {
    let mut reader = BufReader::new(file);
    let mut hash = Sha256::new();
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        if let Some(i) = buf.iter().position(|&b| b == b'\n') {
            hash.update(&buf[..i]);
            break;
        }
        let n = buf.len();
        hash.update(buf);
        reader.consume(n);
    }
    Ok(waymark_core::text::hex(&hash.finalize()))
}

/// Whether the byte before `offset` is a newline: a cursor points at a line's start.
fn newline_before(file: &mut File, offset: u64) -> io::Result<bool> {
    let mut byte = [0u8; 1];
    file.seek(SeekFrom::Start(offset - 1))?;
    file.read_exact(&mut byte)?;
    Ok(byte[0] == b'\n')
}

fn read_cursor(path: &Path) -> Option<Cursor> {
    let bytes = store::read_at_most(path, &[], 4096).ok()??;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::project::temp_project;

    /// A context in a scratch project whose journal holds `text`.
    fn journal(text: &str) -> (tempfile::TempDir, Ctx, PathBuf) {
        let (dir, project) = temp_project();
        std::fs::create_dir_all(project.state_dir()).unwrap();
        let path = project.state_file(PENDING);
        std::fs::write(&path, text).unwrap();
        (dir, Ctx::new(project), path)
    }

    fn lines(j: &mut Journal) -> Vec<String> {
        let mut out = Vec::new();
        while let Some((l, next)) = j.next_line().unwrap() {
            j.offset = next;
            out.push(String::from_utf8(l).unwrap());
        }
        out
    }

    /// The cursor applies only to the journal whose first line it names, and only at a
    /// line's start: a journal cut or made anew is read from its start.
    #[test]
    fn a_cursor_applies_only_to_its_own_journal() {
        let (_d, ctx, path) = journal("a\nb\nc\n");
        let mut j = Journal::open(&ctx, &path).unwrap().unwrap();
        assert_eq!(j.next_line().unwrap(), Some((b"a".to_vec(), 2)));
        j.advance(2).unwrap();
        let mut j = Journal::open(&ctx, &path).unwrap().unwrap();
        assert_eq!(lines(&mut j), ["b", "c"]);
        // Cut to its rest: the old cursor names another first line.
        std::fs::write(&path, "b\nc\n").unwrap();
        let mut j = Journal::open(&ctx, &path).unwrap().unwrap();
        assert_eq!(lines(&mut j), ["b", "c"]);
        // A cursor inside a line is not trusted.
        std::fs::write(&path, "a\nb\nc\n").unwrap();
        j = Journal::open(&ctx, &path).unwrap().unwrap();
        j.advance(3).unwrap();
        let mut j = Journal::open(&ctx, &path).unwrap().unwrap();
        assert_eq!(lines(&mut j), ["a", "b", "c"]);
    }

    /// A torn last line (a keeper killed mid-write) is not applied; the journal applied up
    /// to it is removed with it, and its cursor.
    #[test]
    fn a_torn_last_line_is_not_applied_and_goes_with_the_journal() {
        let (_d, ctx, path) = journal("a\n{\"torn");
        let mut j = Journal::open(&ctx, &path).unwrap().unwrap();
        assert_eq!(lines(&mut j), ["a"]);
        j.advance(2).unwrap();
        assert!(!j.finish(&ctx).unwrap());
        assert!(!path.exists());
        assert!(!ctx.project.state_file(CURSOR).exists());
    }

    /// Half applied, the journal is cut to its rest (and the cursor goes); less, it stays.
    #[test]
    fn a_journal_half_applied_is_cut_to_its_rest() {
        let (_d, ctx, path) = journal("a\nb\nc\nd\n");
        let mut j = Journal::open(&ctx, &path).unwrap().unwrap();
        j.next_line().unwrap();
        j.advance(2).unwrap();
        assert!(j.finish(&ctx).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\nb\nc\nd\n");
        let mut j = Journal::open(&ctx, &path).unwrap().unwrap();
        j.next_line().unwrap();
        j.advance(4).unwrap();
        assert!(j.finish(&ctx).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "c\nd\n");
        assert!(!ctx.project.state_file(CURSOR).exists());
    }
}
