//! Each event once, whatever registrations fire it.
//!
//! A user who ran `waymark init` and also installed the plugin has waymark registered
//! twice: Claude Code runs both commands for every event, with the same input, at the same
//! time. Without this, every Write made two trace records (`waymark doctor` names both
//! registrations and says which to remove). The first process to see an event records
//! it in `.orchestration/events.seen`; a second that finds it there does nothing.
//!
//! The record names the process that took the event and is marked done once that process
//! has handled it: a second process finding it taken by a process that is gone (killed
//! before it was done) handles the event itself.
//!
//! An event is the same when its name, its input and the Claude Code process that sent it
//! are: one process never sends one input twice within [`WINDOW`] (each tool call has its
//! own id, each prompt its own `prompt_id`), while two `claude --continue` runs do send
//! the same SessionStart. That process is `CLAUDE_PID` (Claude Code 2.1.332 sets it),
//! else the hook's Claude Code ancestor; when neither is known, only a [`BLIND_WINDOW`]
//! tells duplicates, which start within milliseconds of each other.
//!
//! Most users have one registration, and for them the record is pure cost (an open, a
//! read, two appends and four locks on every event). So it is kept only where a second
//! registration first shows itself, and, once a duplicate has been seen there ([`TWICE`]
//! exists), on every event. Claude Code and Codex read their hooks when a session starts,
//! so a second registration runs that SessionStart too; one added mid-session (Claude
//! Code's `/reload-plugins` after `/plugin install`) runs the next prompt's
//! UserPromptSubmit, the first event after the command that added it.

use std::time::Duration;

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

use sha2::{Digest, Sha256};

use crate::runtime::context::Ctx;

/// The file of recent events, one `<unix ms> <key> <pid> <taken|done>` line each (a
/// `done` line appended after its `taken`).
pub const SEEN: &str = "events.seen";
/// The registrations seen running one event twice (`waymark doctor` reads it): one line
/// `<unix ms> plugin <root>` or `<unix ms> settings` per kind, written only when a
/// duplicate is found.
const TWICE: &str = crate::store::project::REGISTRATIONS_SEEN;
/// How long an event is remembered when its Claude Code process is known.
const WINDOW: Duration = Duration::from_secs(30);
/// How long when it is not.
const BLIND_WINDOW: Duration = Duration::from_secs(2);
/// How many events are remembered at most.
const KEEP: usize = 64;
/// How long a process waits for the file before it handles the event anyway.
const WAIT: Duration = Duration::from_millis(250);

/// An event this process took, to be marked done once it is handled.
#[derive(Debug)]
#[must_use]
pub struct Claim {
    /// `events.seen` (kept open, unlocked), the key and when it was taken; `None` when
    /// nothing was recorded.
    taken: Option<(File, String, i64)>,
}

impl Claim {
    /// Marks the event handled: a duplicate arriving now has nothing left to do. One line
    /// appended to the file the claim kept open, under its lock: no second read.
    pub fn done(self, ctx: &Ctx) {
        let Some((file, key, at)) = self.taken else {
            return;
        };
        let path = ctx.project.state_file(SEEN);
        if let Ok(mut lock) = crate::store::FileLock::hold(file, &path, WAIT) {
            let line = format!("{at} {key} {} done\n", std::process::id());
            let f = lock.file();
            let _ = f
                .seek(SeekFrom::End(0))
                .and_then(|_| f.write_all(line.as_bytes()));
        }
    }
}

/// The claim on `event` (its name and input `bytes`) of the Claude Code process that runs
/// this hook, or `None` when another process took it (it is handled there). Taken when
/// that cannot be told (the file cannot be read or locked): an event handled twice is
/// better than one lost.
///
/// Only [`watched`] events are recorded; the rest are taken without a word.
pub fn claim(ctx: &Ctx, event: &str, bytes: &[u8]) -> Option<Claim> {
    let untracked = Some(Claim { taken: None });
    if !watched(ctx, event) {
        return untracked;
    }
    let sender = sender();
    let window = if sender.is_empty() {
        BLIND_WINDOW
    } else {
        WINDOW
    };
    let key = key(event, &sender, bytes);
    let now = ctx.now.timestamp_millis();
    match remember(ctx, &key, now, window) {
        Ok(Some(file)) => Some(Claim {
            taken: Some((file, key, now)),
        }),
        Ok(None) => {
            note_twice(ctx);
            None
        }
        Err(_) => untracked,
    }
}

/// Whether `event` is recorded: always once a second registration was seen, and before
/// that a SessionStart or a UserPromptSubmit, where two registrations meet first (they
/// make the state directory if the project has none yet, as the prompt's task would a
/// moment later). A directory that cannot be made leaves the event unrecorded, as any
/// failure here does.
fn watched(ctx: &Ctx, event: &str) -> bool {
    match event {
        "SessionStart" | "UserPromptSubmit" => {
            crate::store::make_dir(&ctx.project.state_dir()).is_ok()
        }
        _ => ctx.project.state_file(TWICE).exists(),
    }
}

/// This process found its event taken by another: waymark is registered twice. Which
/// registration this one is (the plugin, by `CLAUDE_PLUGIN_ROOT`, or a settings file's
/// hook) is noted once per kind in [`TWICE`]: the rare case costs only when it is seen,
/// and `waymark doctor` can name a plugin no settings file names (`--plugin-dir`).
fn note_twice(ctx: &Ctx) {
    let kind = match std::env::var_os("CLAUDE_PLUGIN_ROOT") {
        Some(root) => format!("plugin {}", std::path::Path::new(&root).display()),
        None => "settings".to_string(),
    };
    let path = ctx.project.state_file(TWICE);
    let known = std::fs::read_to_string(&path).unwrap_or_default();
    let noted = |l: &str| l.split_once(' ').is_some_and(|(_, k)| k == kind);
    if known.lines().any(noted) {
        return;
    }
    let line = format!("{} {kind}", ctx.now.timestamp_millis());
    let _ = crate::store::append_line(&path, waymark_redact::Clean::text(&line));
}

/// The Claude Code process that sent the event, "" when unknown.
fn sender() -> String {
    match std::env::var("CLAUDE_PID") {
        Ok(pid) if !pid.is_empty() => pid,
        _ => crate::runtime::process::owner()
            .map(|o| format!("{}.{}", o.pid, o.start))
            .unwrap_or_default(),
    }
}

/// The first 16 bytes of SHA-256 of the event's name, its sender and its input, in hex.
fn key(event: &str, sender: &str, bytes: &[u8]) -> String {
    let mut h = Sha256::new();
    for part in [event.as_bytes(), sender.as_bytes(), bytes] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    waymark_core::text::hex(&h.finalize()[..16])
}

/// Records `key` at `now`, taken by this process, unless it was done or is taken by a
/// process still running within `window`: the file, kept open for [`Claim::done`], or
/// `None` when it was. The file is its own lock (it is rewritten in place, never renamed):
/// its line is appended, and the file rewritten to its young lines only once it holds
/// twice [`KEEP`].
fn remember(ctx: &Ctx, key: &str, now: i64, window: Duration) -> io::Result<Option<File>> {
    let mut lock = crate::store::open_in_place(&ctx.project.state_file(SEEN), WAIT)?;
    let f = lock.file();
    let mut text = String::new();
    f.read_to_string(&mut text)?;
    let (taken, mut young) = recent(&text, key, now, window, running);
    if taken {
        return Ok(None);
    }
    let line = format!("{now} {key} {} taken\n", std::process::id());
    if text.lines().count() >= 2 * KEEP {
        young.push(line);
        let text = young.concat();
        f.rewind()?;
        f.write_all(text.as_bytes())?;
        f.set_len(text.len() as u64)?;
    } else {
        f.write_all(line.as_bytes())?;
    }
    Ok(Some(lock.release()))
}

/// Whether process `pid` exists (`kill(pid, 0)`).
fn running(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only asks whether the process exists; nothing is sent.
    let sent = unsafe { libc::kill(pid, 0) } == 0;
    sent || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Whether `key` is among the lines of `text` younger than `window` at `now`, done or
/// taken by a process `alive` says runs; and the young lines to keep (the newest
/// [`KEEP`] - 1), each with its newline.
fn recent(
    text: &str,
    key: &str,
    now: i64,
    window: Duration,
    alive: impl Fn(u32) -> bool,
) -> (bool, Vec<String>) {
    let window = window.as_millis() as i64;
    let young: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .filter(|f| f.len() == 4)
        .filter(|f| f[0].parse::<i64>().is_ok_and(|at| now - at < window))
        .collect();
    let taken = young
        .iter()
        .any(|f| f[1] == key && (f[3] == "done" || f[2].parse().is_ok_and(&alive)));
    let skip = young.len().saturating_sub(KEEP - 1);
    let kept = young[skip..]
        .iter()
        .map(|f| format!("{}\n", f.join(" ")))
        .collect();
    (taken, kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_a_duplicate_within_its_window_once_done_or_while_its_taker_runs() {
        let text = "1000 aa 7 taken\n5000 bb 7 taken\n6000 cc 9 taken\n6100 dd 9 done\n";
        let window = Duration::from_secs(10);
        let alive = |pid| pid == 7;
        assert!(recent(text, "aa", 10_999, window, alive).0);
        assert!(
            !recent(text, "aa", 11_000, window, alive).0,
            "past the window"
        );
        assert!(!recent(text, "ee", 6_000, window, alive).0);
        assert!(
            !recent(text, "cc", 6_500, window, alive).0,
            "its taker was killed"
        );
        assert!(recent(text, "dd", 6_500, window, alive).0, "done");
        assert_eq!(
            recent(text, "ee", 12_000, window, alive).1,
            ["5000 bb 7 taken\n", "6000 cc 9 taken\n", "6100 dd 9 done\n"]
        );
        assert!(!recent("junk\n\n12 \n12 aa 1\n", "aa", 20, window, alive).0);
    }

    #[test]
    fn the_file_keeps_the_newest_events_only() {
        let text: String = (0..200).map(|i| format!("{i} k{i} 1 done\n")).collect();
        let (_, kept) = recent(&text, "x", 200, Duration::from_secs(60), |_| true);
        assert_eq!(kept.len(), KEEP - 1);
        assert_eq!(kept.last().unwrap(), "199 k199 1 done\n");
    }

    #[test]
    fn a_process_is_running_until_it_is_gone() {
        assert!(running(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!running(pid));
    }

    #[test]
    fn the_key_tells_events_senders_and_inputs_apart() {
        let k = key("Stop", "42", b"{}");
        assert_eq!(k.len(), 32);
        assert_eq!(k, key("Stop", "42", b"{}"));
        assert_ne!(k, key("Stop", "43", b"{}"));
        assert_ne!(k, key("SessionEnd", "42", b"{}"));
        assert_ne!(k, key("Stop", "42", b"{ }"));
        assert_ne!(key("ab", "c", b""), key("a", "bc", b""));
    }

    /// A project where a second registration was seen: every event is recorded.
    fn registered_twice() -> (tempfile::TempDir, Ctx) {
        let (d, project) = crate::store::project::temp_project();
        let ctx = Ctx::new(project);
        crate::store::make_dir(&ctx.project.state_dir()).unwrap();
        std::fs::write(ctx.project.state_file(TWICE), "1 settings\n").unwrap();
        (d, ctx)
    }

    #[test]
    fn only_session_starts_and_prompts_are_recorded_until_a_second_registration_is_seen() {
        let (_d, project) = crate::store::project::temp_project();
        let ctx = Ctx::new(project);
        let seen = || std::fs::read_to_string(ctx.project.state_file(SEEN)).unwrap_or_default();
        // A session's start is recorded, in a project with no state directory yet too.
        let start = b"{\"source\":\"startup\"}";
        let first = claim(&ctx, "SessionStart", start).unwrap();
        assert_eq!(seen().lines().count(), 1, "{}", seen());
        // So is a prompt.
        claim(&ctx, "UserPromptSubmit", b"{\"prompt_id\":\"p1\"}")
            .unwrap()
            .done(&ctx);
        assert_eq!(seen().lines().count(), 3, "{}", seen());
        // Other events cost nothing while one registration is all there is: the same
        // input twice is two events.
        for event in ["PostToolUse", "PreToolUse", "Stop"] {
            let input = b"{\"tool_use_id\":\"t1\"}";
            assert!(claim(&ctx, event, input).is_some());
            assert!(claim(&ctx, event, input).is_some());
        }
        assert_eq!(seen().lines().count(), 3, "{}", seen());
        // A second registration's copy of the start is met, and noted.
        assert!(claim(&ctx, "SessionStart", start).is_none());
        assert!(ctx.project.state_file(TWICE).exists());
        first.done(&ctx);
        // From then on every event is recorded, and a copy finds it.
        let write = b"{\"tool_use_id\":\"t2\"}";
        claim(&ctx, "PostToolUse", write).unwrap().done(&ctx);
        assert!(claim(&ctx, "PostToolUse", write).is_none());
    }

    /// A registration added mid-session (`/reload-plugins`) is met at the next prompt.
    #[test]
    fn a_second_registration_added_mid_session_is_met_at_the_next_prompt() {
        let (_d, project) = crate::store::project::temp_project();
        let ctx = Ctx::new(project);
        let prompt = b"{\"prompt_id\":\"p2\"}";
        let first = claim(&ctx, "UserPromptSubmit", prompt).unwrap();
        assert!(claim(&ctx, "UserPromptSubmit", prompt).is_none());
        first.done(&ctx);
        assert!(ctx.project.state_file(TWICE).exists());
    }

    /// Lines are appended (a claim reads the file once, its done writes one line) and the
    /// file is cut back to its young lines once it holds twice [`KEEP`]: it stays small.
    #[test]
    fn the_file_grows_by_appends_and_is_cut_back_to_its_young_lines() {
        let (_d, ctx) = registered_twice();
        let path = ctx.project.state_file(SEEN);
        let lines = || std::fs::read_to_string(&path).unwrap().lines().count();
        for i in 0..500 {
            let input = format!("{{\"tool_use_id\":\"t{i}\"}}");
            claim(&ctx, "PostToolUse", input.as_bytes())
                .unwrap()
                .done(&ctx);
            assert!(lines() <= 2 * KEEP + 1, "{} lines after {i}", lines());
        }
        // The newest events are still known.
        assert!(claim(&ctx, "PostToolUse", b"{\"tool_use_id\":\"t499\"}").is_none());
    }

    #[test]
    fn the_second_process_with_the_same_event_does_nothing() {
        let (_d, ctx) = registered_twice();
        let first = claim(&ctx, "PostToolUse", b"{\"tool_use_id\":\"t1\"}").unwrap();
        assert!(claim(&ctx, "PostToolUse", b"{\"tool_use_id\":\"t1\"}").is_none());
        first.done(&ctx);
        assert!(claim(&ctx, "PostToolUse", b"{\"tool_use_id\":\"t1\"}").is_none());
        let seen = std::fs::read_to_string(ctx.project.state_file(SEEN)).unwrap();
        assert!(
            seen.ends_with(&format!(" {} done\n", std::process::id())),
            "{seen}"
        );
        assert!(claim(&ctx, "PostToolUse", b"{\"tool_use_id\":\"t2\"}").is_some());
        assert!(claim(&ctx, "PreToolUse", b"{\"tool_use_id\":\"t1\"}").is_some());
    }
}
