//! A checkpoint's capture: what it cost I/O to learn about the world at that moment (the
//! step's files: size, time, content hash; whether the work tree had uncommitted changes),
//! kept as `.orchestration/tasks/<task>/checkpoints/<checkpoint>.json`.
//!
//! A checkpoint itself records only what is cheap and exact at once (its trigger, step,
//! branch and HEAD read from `.git`), under the hook.json lock. The capture is taken after
//! the lock is released: inline for a command, by a forked copy of the hook for a hook
//! ([`run`]), so that no hook waits for git or for hashing, and no other hook waits for the
//! lock while one does.
//!
//! **Exact all the same.** The capture holds `.orchestration/capture.lock` from before the
//! hook answers until its record is written (the forked copy inherits the hook's hold).
//! An edit whose files are known (Write, Edit, NotebookEdit, apply_patch) keeps them as
//! they are for it and goes on at once ([`before_edit`], `preimage`); whatever else may
//! change the project's files next waits for it first ([`settle`]): the PreToolUse of
//! any other tool that may write (Bash), UserPromptSubmit, and the commands that change
//! or compare files. So a snapshot is the tree as it was when its checkpoint was made, not
//! after the agent's next edit. A capture killed midway leaves its checkpoint without a
//! record, which readers call missing, and its temporary index, which the next capture
//! removes.
//!
//! Nearly always no capture is in flight, so waiting for one must cost nothing then: the
//! lock's holder keeps `capture.held` beside it ([`Exclusive`]), and [`settle`] takes the
//! lock only when that file is there (one `stat`, where taking and releasing the lock were
//! six system calls on every tool call that may write).
//!
//! Living in the task's own folder, captures are archived and cleaned up with their task.

use std::io;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::store;
use crate::store::project::Project;
use crate::task::logs::task_dir;
use waymark_core::task::FileSnapshot;

mod preimage;

/// Files larger than this are snapshotted by size and time only (hash `"too-large"`).
const MAX_HASHED_BYTES: u64 = 64 * 1024 * 1024;

/// The capture record of one checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capture {
    pub checkpoint_id: String,
    pub captured_at: DateTime<Utc>,
    /// Whether the work tree had changes not committed (waymark's own files aside); `None`
    /// outside git.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_dirty: Option<bool>,
    /// The step's files at that moment.
    #[serde(default)]
    pub files: Vec<FileSnapshot>,
    /// The commit holding the whole work tree at that moment (`git::snapshot`), under
    /// `refs/waymark/checkpoints/<task>/<checkpoint>`; `None` outside git.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// Files the snapshot left out, holding a secret (`git::snapshot::Withheld`): by hash.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<Withheld>,
}

use crate::git::snapshot::Withheld;
use crate::runtime::context::{CaptureMode, CaptureRequest};

/// `.orchestration/tasks/<task>/checkpoints/<checkpoint>.json`.
pub fn path(project: &Project, task_id: &str, checkpoint_id: &str) -> PathBuf {
    let name = crate::task::logs::sanitize(checkpoint_id);
    task_dir(project, task_id)
        .join("checkpoints")
        .join(format!("{name}.json"))
}

/// The capture of a checkpoint, when it was taken.
pub fn load(project: &Project, task_id: &str, checkpoint_id: &str) -> Option<Capture> {
    let bytes = std::fs::read(path(project, task_id, checkpoint_id)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Takes the capture and writes its record; the captures of checkpoints older than the
/// task's newest `keep` go.
pub fn take(
    project: &Project,
    request: &CaptureRequest,
    now: DateTime<Utc>,
    token: &str,
) -> io::Result<Capture> {
    use crate::git::snapshot;
    snapshot::remove_old_indexes(&project.root);
    crate::store::faults::at("capture.begun");
    let mut staged = snapshot::stage(&project.root, &index_path(project), &request.lessons);
    crate::store::faults::at("capture.staged");
    // The step's files, and then the edits that went on meanwhile, each with its files as
    // they were before it (`preimage`: read after everything else is read).
    let files = snapshots(project, &request.files);
    let before = preimage::read(project, token);
    if let Some(s) = &mut staged {
        let kept: Vec<snapshot::Before> = before
            .iter()
            .map(|p| snapshot::Before {
                path: p.path.as_bytes(),
                file: p.mode.as_deref().map(|m| (m, p.copy.as_path())),
            })
            .collect();
        s.put_back(&project.root, &kept, &request.lessons);
        s.force(&project.root, &request.force);
    }
    let head = staged.as_ref().and_then(|s| s.head.clone());
    let withheld = staged
        .as_ref()
        .map_or_else(Vec::new, |s| s.withheld.clone());
    let git_dirty = staged.as_ref().map(|s| s.dirty);
    let work = staged.and_then(|s| s.write_tree(&project.root));
    let snapshot = work.as_ref().and_then(|w| {
        let name = snapshot::ref_name(&request.task_id, &request.checkpoint_id);
        let message = format!("waymark checkpoint {}", request.checkpoint_id);
        snapshot::save(&project.root, &w.tree, head.as_deref(), &name, &message)
    });
    drop(work);
    let capture = Capture {
        checkpoint_id: request.checkpoint_id.clone(),
        captured_at: now,
        git_dirty,
        files: preimage::over(files, &before),
        snapshot,
        withheld,
    };
    save(project, &request.task_id, &capture)?;
    prune(project, &request.task_id, request.keep)?;
    Ok(capture)
}

/// Removes the captures of the checkpoints that are no longer among the task's newest
/// `keep` (its checkpoint log holds them all).
fn prune(project: &Project, task_id: &str, keep: usize) -> io::Result<()> {
    let kept: std::collections::HashSet<String> =
        crate::task::logs::checkpoints(project, task_id, keep)?
            .into_iter()
            .map(|c| crate::task::logs::sanitize(&c.checkpoint_id))
            .collect();
    let dir = task_dir(project, task_id).join("checkpoints");
    let mut dropped = Vec::new();
    for entry in std::fs::read_dir(&dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(id) = name.strip_suffix(".json") else {
            continue;
        };
        if !kept.contains(id) {
            let _ = std::fs::remove_file(entry.path());
            dropped.push(id.to_string());
        }
    }
    // Snapshots go with their captures.
    crate::git::snapshot::drop_checkpoints(&project.root, task_id, &dropped)?;
    Ok(())
}

/// Writes a capture record (also used to keep schema 1's inline snapshots).
pub fn save(project: &Project, task_id: &str, capture: &Capture) -> io::Result<()> {
    let path = path(project, task_id, &capture.checkpoint_id);
    let json = waymark_redact::Clean::json_pretty(capture);
    store::refuse_symlink(&project.state_dir().join(crate::task::logs::TASKS_DIR))?;
    store::write_replaceable(&path, &json)
}

/// Takes the `captures` as `mode` says.
///
/// A detached capture is taken by a forked copy of the hook (no exec: starting a new
/// `waymark` cost the hook more than all its own work), in a session of its own, with
/// stdin, stdout and stderr on /dev/null: the hook exits at once, and Claude Code, waiting
/// for the hook's output to close, does not wait for the capture either. The hook is
/// single-threaded when it forks (its deadline is a timer signal, which the copy does not
/// inherit). Errors in the copy are logged.
pub fn run(
    project: &Project,
    captures: &[CaptureRequest],
    mode: CaptureMode,
    now: DateTime<Utc>,
) -> io::Result<()> {
    // Held until the captures are written: in this process, or handed to the fork.
    let held = if captures.is_empty() {
        None
    } else {
        Some(exclusive(project)?.open_to_edits()?)
    };
    let token = held.as_ref().map(|h| h.token.clone()).unwrap_or_default();
    let take_all = || -> io::Result<()> {
        for r in captures {
            take(project, r, now, &token)?;
        }
        Ok(())
    };
    if mode == CaptureMode::Inline {
        let taken = take_all();
        drop(held);
        return taken;
    }
    // SAFETY: fork in a process with one thread; the copy only takes the captures (which
    // allocate and start git: fine in the sole thread of the copy) and `_exit`s.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            detach();
            let code = match take_all() {
                Ok(()) => 0,
                Err(e) => {
                    let message = format!("after the hook: {e}");
                    let dir = project.state_dir();
                    crate::store::log::write(
                        &dir,
                        crate::store::log::Level::Error,
                        "capture",
                        &message,
                    );
                    1
                }
            };
            // The records are written: `capture.held` goes, then the lock.
            drop(held);
            // SAFETY: ends the copy without running the exit handlers of the hook.
            unsafe { libc::_exit(code) }
        }
        _ => {
            if let Some(held) = held {
                held.hand_to_child();
            }
            Ok(())
        }
    }
}

/// The lock a capture holds until its record is written (`capture.lock`).
const LOCK: &str = "capture";
/// Beside the lock while it is held: what [`settle`] looks for.
const HELD: &str = "capture.held";

/// The capture lock held, and `capture.held` there while it is: removed before the lock is
/// released, so a tool call that finds no `capture.held` has no capture to wait for. One
/// left by a holder that was killed makes the next [`settle`] take the lock (at once: its
/// holder is gone) and remove it.
#[derive(Debug)]
#[must_use]
pub struct Exclusive {
    /// Always `Some` but in [`Exclusive::hand_to_child`].
    lock: Option<store::FileLock>,
    held: PathBuf,
    /// The name of this hold, under which the edits that go on meanwhile keep their files
    /// (`preimage`); in `capture.held` only for a capture ([`Exclusive::open_to_edits`]).
    token: String,
}

impl Exclusive {
    /// Leaves the lock and `capture.held` to the forked copy that inherited the lock.
    fn hand_to_child(mut self) {
        if let Some(lock) = self.lock.take() {
            lock.hand_to_child();
        }
    }
}

impl Drop for Exclusive {
    fn drop(&mut self) {
        if let Some(lock) = self.lock.take() {
            let _ = std::fs::remove_file(&self.held);
            preimage::clear_token(&self.held, &self.token);
            drop(lock);
        }
    }
}

/// The temporary index a snapshot of the work tree is staged in: one name, as one process
/// at a time takes a snapshot (under [`exclusive`]); one killed midway leaves it, and the
/// next to take the lock removes it.
pub fn index_path(project: &Project) -> PathBuf {
    project.state_file("capture.index")
}

/// The capture lock, for a capture or any other snapshot of the work tree (`waymark diff`,
/// `waymark rewind`), waiting at most what the hook's deadline leaves for one in flight;
/// a temporary index a killed snapshot left is removed.
pub fn exclusive(project: &Project) -> io::Result<Exclusive> {
    let lock = store::FileLock::acquire(&project.state_file(LOCK)).map_err(io::Error::other)?;
    // What a killed holder left: its temporary index, its kept files, its half-written
    // `capture.held`.
    let _ = std::fs::remove_file(index_path(project));
    preimage::clear(project);
    store::remove_stale_temps(&project.state_dir(), &[HELD]);
    let held = project.state_file(HELD);
    let mut create = std::fs::OpenOptions::new();
    create.write(true).create(true).truncate(true);
    crate::store::open_nofollow(&held, &mut create)?;
    let nanos = Utc::now().timestamp_nanos_opt().unwrap_or_default();
    Ok(Exclusive {
        lock: Some(lock),
        held,
        token: format!("{}-{nanos}", std::process::id()),
    })
}

impl Exclusive {
    /// Names the hold in `capture.held` (renamed into place: an edit reads the whole name
    /// or none), so that an edit goes on while the capture runs, its files kept for it
    /// (`before_edit`). Only a capture does: an edit waits for a rewind or a diff, whose
    /// `capture.held` is empty.
    fn open_to_edits(self) -> io::Result<Exclusive> {
        let token = waymark_redact::Clean::text(&self.token);
        store::write_replaceable(&self.held, &token)?;
        Ok(self)
    }
}

/// Waits for the capture in flight, if any: called before anything that may change the
/// project's files (see the module's doc). Costs one `stat` when none is.
pub fn settle(project: &Project) {
    if project.state_file(HELD).exists() {
        let _ = exclusive(project);
    }
}

/// Before an edit whose files are `paths` (as the event names them, against `cwd`): keeps
/// them as they are for the capture in flight, if any, and goes on at once; waits for the
/// capture as [`settle`] does when one of them cannot be kept. Costs one failed `open`
/// when no capture is in flight.
pub fn before_edit(project: &Project, paths: &[&str], cwd: Option<&str>) {
    let Ok(token) = store::read(&project.state_file(HELD), &[]) else {
        return;
    };
    // `<pid>-<nanos>`, as `exclusive` names it; anything else (empty: a rewind or a diff
    // holds the lock) is waited for.
    let token = String::from_utf8_lossy(&token);
    let named = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit() || b == b'-');
    let kept = named && preimage::keep(project, &token, paths, cwd);
    if !kept {
        let _ = exclusive(project);
    }
}

/// The forked copy leaves the hook's session and lets go of the pipes Claude Code reads.
fn detach() {
    // SAFETY: setsid, open, dup2 and close on descriptors this process owns.
    unsafe {
        libc::setsid();
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            if null > 2 {
                libc::close(null);
            }
        }
    }
}

/// A snapshot of each of `files` (root-relative).
pub fn snapshots(project: &Project, files: &[String]) -> Vec<FileSnapshot> {
    files.iter().map(|f| snapshot(project, f)).collect()
}

/// A file's state now. A missing file is a snapshot with `exists: false`.
pub fn snapshot(project: &Project, rel: &str) -> FileSnapshot {
    snapshot_of(rel, &project.absolute(rel))
}

/// The snapshot of the file `rel` as the file at `path` is (the file itself, or a copy).
fn snapshot_of(rel: &str, path: &Path) -> FileSnapshot {
    let missing = FileSnapshot {
        path: rel.to_string(),
        size: 0,
        mod_time: String::new(),
        sha256: String::new(),
        exists: false,
    };
    let Ok(meta) = std::fs::metadata(path) else {
        return missing;
    };
    if !meta.is_file() {
        return missing;
    }
    let mod_time = meta
        .modified()
        .ok()
        .map(|t| waymark_core::text::stamp(DateTime::<Utc>::from(t)))
        .unwrap_or_default();
    let sha256 = if meta.len() > MAX_HASHED_BYTES {
        "too-large".to_string()
    } else {
        hash_prefix(path).unwrap_or_default()
    };
    FileSnapshot {
        path: rel.to_string(),
        size: meta.len(),
        mod_time,
        sha256,
        exists: true,
    }
}

/// The first 16 hex digits of the file's SHA-256 (a file snapshot's `sha256`).
fn hash_prefix(path: &Path) -> io::Result<String> {
    crate::store::sha256_file(path).map(|h| h[..16].to_string())
}

/// Files whose state differs from the snapshot (changed, appeared or vanished).
pub fn changed_since(project: &Project, snapshots: &[FileSnapshot]) -> Vec<String> {
    snapshots
        .iter()
        .filter_map(|s| {
            let now = snapshot(project, &s.path);
            match (s.exists, now.exists) {
                (true, false) => Some(format!("`{}` (deleted)", s.path)),
                (false, true) => Some(format!("`{}` (created)", s.path)),
                (true, true) if now.sha256 != s.sha256 || now.size != s.size => Some(format!(
                    "`{}` (modified: {} → {} bytes)",
                    s.path, s.size, now.size
                )),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool call waits for a capture in flight, and only then: with none, it looks for
    /// `capture.held` and takes no lock (no lock file is even made).
    #[test]
    fn a_tool_call_waits_for_the_holder_of_the_capture_lock_and_only_then() {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at(dir.path().to_path_buf());
        std::fs::create_dir_all(p.state_dir()).unwrap();
        settle(&p);
        assert!(!p.state_file("capture.lock").exists());
        let held = exclusive(&p).unwrap();
        assert!(p.state_file(HELD).exists());
        let released = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let waiter = {
            let (p, released) = (p.clone(), released.clone());
            std::thread::spawn(move || {
                settle(&p);
                released.load(std::sync::atomic::Ordering::SeqCst)
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(100));
        released.store(true, std::sync::atomic::Ordering::SeqCst);
        drop(held);
        assert!(
            waiter.join().unwrap(),
            "settle returned before the lock was released"
        );
        assert!(!p.state_file(HELD).exists());
    }

    /// A holder killed leaves `capture.held` (and its temporary index): the next tool call
    /// takes the free lock at once and removes both.
    #[test]
    fn what_a_killed_holder_left_is_cleared_by_the_next_wait() {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at(dir.path().to_path_buf());
        std::fs::create_dir_all(p.state_dir()).unwrap();
        std::fs::write(p.state_file(HELD), "").unwrap();
        std::fs::write(index_path(&p), "torn").unwrap();
        settle(&p);
        assert!(!p.state_file(HELD).exists());
        assert!(!index_path(&p).exists());
    }

    #[test]
    fn snapshots_and_changes() {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at(dir.path().to_path_buf());
        std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").unwrap();
        let s = snapshot(&p, "a.rs");
        assert!(s.exists);
        assert_eq!(s.size, 10);
        assert_eq!(s.sha256.len(), 16);
        assert!(!snapshot(&p, "nope.rs").exists);
        assert!(changed_since(&p, std::slice::from_ref(&s)).is_empty());
        std::fs::write(dir.path().join("a.rs"), "fn a() { b() }\n").unwrap();
        assert_eq!(changed_since(&p, &[s]).len(), 1);
    }

    #[test]
    fn a_capture_is_kept_with_its_task() {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at(dir.path().to_path_buf());
        std::fs::write(dir.path().join("a.rs"), "x").unwrap();
        // The task's checkpoint log: two checkpoints, of which the newest one is kept.
        let log = dir
            .path()
            .join(".orchestration/tasks/T-1/checkpoints.jsonl");
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        let line = |id: &str| {
            format!(
                r#"{{"checkpoint_id":"{id}","created_at":"2026-01-01T00:00:00Z","description":"d","trigger":"manual"}}"#
            )
        };
        std::fs::write(&log, format!("{}\n{}\n", line("ckpt-1"), line("ckpt-2"))).unwrap();
        let request = |id: &str| {
            vec![CaptureRequest {
                task_id: "T-1".into(),
                checkpoint_id: id.into(),
                files: vec!["a.rs".into()],
                keep: 1,
                lessons: "AGENT.md".into(),
                force: Vec::new(),
            }]
        };
        run(&p, &request("ckpt-1"), CaptureMode::Inline, Utc::now()).unwrap();
        assert!(
            load(&p, "T-1", "ckpt-1").is_none(),
            "not among the newest kept"
        );
        run(&p, &request("ckpt-2"), CaptureMode::Inline, Utc::now()).unwrap();
        let c = load(&p, "T-1", "ckpt-2").unwrap();
        assert_eq!(c.files[0].size, 1);
        assert_eq!(c.git_dirty, None, "not a git work tree");
        assert!(path(&p, "T-1", "ckpt-2").starts_with(dir.path().join(".orchestration/tasks/T-1")));
    }
}
