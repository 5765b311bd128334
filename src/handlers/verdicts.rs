//! Codex CLI's shell calls, held until their exit code is known.
//!
//! Codex's PostToolUse for its shell tool carries the command's output but no exit code
//! (0.169.0: `tool_response` is the output string). The model's copy of the result,
//! "… Process exited with code N …", goes into the session's rollout (`transcript_path`)
//! only after the PostToolUse hooks return. So waymark holds such a call in
//! `.orchestration/codex-bash.jsonl` and applies it at the session's next event (its next
//! tool call, its Stop), when the rollout has the verdict: a non-zero code is applied as
//! the PostToolUseFailure Claude Code sends, so a failing validation gets a failing
//! receipt and a passing one a passing receipt, as with Claude Code. A call whose verdict
//! never reached the rollout (its session killed in between) is applied at the next
//! event of another session, or the same session's Stop or SessionStart, as a command
//! whose end was not seen (no exit code: never a passing receipt).
//!
//! Only `waymark hook --agent codex` comes here: Claude Code's events never read this file.

use std::io;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::claude::codex::{self, Agent};
use crate::claude::event::{self, Event};
use crate::runtime::context::Ctx;
use crate::store::log::Level;
use crate::store::{self, FileLock};
use waymark_redact::Clean;

/// The held calls' file, in the state directory.
pub const VERDICTS: &str = "codex-bash.jsonl";
/// How much of the end of a rollout is read for a call's output.
const ROLLOUT_TAIL: u64 = 8 * 1024 * 1024;

/// One held call: its PostToolUse input (already in Claude Code's shape), and when.
#[derive(Debug, Serialize, Deserialize)]
struct Held {
    received_at: DateTime<Utc>,
    session_id: String,
    transcript_path: Option<String>,
    call_id: String,
    input: Value,
}

/// What the rollout says of call `call_id`: `None` while its output is not there yet,
/// else its exit code (`None` inside when the output names none).
pub fn verdict(transcript: Option<&str>, call_id: &str) -> Option<Option<i32>> {
    let path = std::path::Path::new(transcript?);
    let output = store::find_from_end(path, ROLLOUT_TAIL, |line| codex::call_output(line, call_id));
    output.ok().flatten().map(|text| codex::exit_code(&text))
}

/// Holds a shell call's PostToolUse (`input`, adapted) until its verdict is known.
pub fn hold(ctx: &Ctx, event: &Event, input: &Value) -> io::Result<()> {
    let call_id = input["tool_use_id"].as_str().unwrap_or_default();
    let held = Held {
        received_at: ctx.now,
        session_id: event.common.session_id.clone(),
        transcript_path: event.common.transcript_path.clone(),
        call_id: call_id.to_string(),
        input: input.clone(),
    };
    let line =
        crate::receipt::seal::seal(&ctx.config, Clean::json(&held)).map_err(io::Error::other)?;
    store::append_line(&ctx.project.state_file(VERDICTS), line).map(|_| ())
}

/// Applies the held calls whose verdict is known by the time of `now_event` (or never
/// will be), oldest first, each at its own time; returns what they have to tell the agent.
///
/// Each is applied exactly once, as a kept event is (`handlers::pending`): the file is
/// rewritten without it right after, both one state write the deadline holds off for; a
/// call whose trace record is already there was applied by a process that ended before
/// the rewrite, and is not applied again. No call is begun in the second half of the
/// hook's deadline: the rest wait for the next event.
pub fn settle(ctx: &mut Ctx, now_event: &Event) -> Vec<String> {
    let path = ctx.project.state_file(VERDICTS);
    if std::fs::symlink_metadata(&path).is_err() {
        return Vec::new();
    }
    let Ok(Some(_lock)) = FileLock::try_acquire(&path) else {
        return Vec::new();
    };
    let Some(mut queue) = read_held(ctx, &path) else {
        return Vec::new();
    };
    let now = ctx.now;
    let mut said = Vec::new();
    let mut left = Vec::new();
    while let Some(held) = queue.pop_front() {
        let last_chance = held.session_id != now_event.common.session_id
            || matches!(now_event.name(), "Stop" | "SessionEnd" | "SessionStart");
        let code = match verdict(held.transcript_path.as_deref(), &held.call_id) {
            Some(code) => code,
            None if last_chance => None,
            None => {
                left.push(held);
                continue;
            }
        };
        if !super::pending::time_for_more(ctx) {
            left.push(held);
            left.extend(queue.drain(..));
            break;
        }
        let _writing = crate::store::deadline::enter();
        if super::pending::traced(ctx, &held.call_id) {
            let why = "a held call was applied by a process that ended before moving past it: not applied again";
            ctx.log(Level::Warn, "codex", why);
        } else {
            apply(ctx, held, code, &mut said);
        }
        crate::store::faults::at("held.applied");
        rewrite(ctx, &path, left.iter().chain(&queue));
    }
    ctx.now = now;
    said
}

/// The held calls this machine held, oldest first; the file is rewritten without any other
/// (`held_here`). `None` when it cannot be read.
fn read_held(ctx: &Ctx, path: &std::path::Path) -> Option<std::collections::VecDeque<Held>> {
    let bytes = store::read(path, &[]).map_err(|e| {
        let why = format!("cannot read {VERDICTS}: {e}");
        ctx.log(Level::Error, "codex", &why);
    });
    let text = String::from_utf8_lossy(&bytes.ok()?).into_owned();
    let here: Vec<&str> = text.lines().filter(|l| held_here(ctx, l)).collect();
    let held = here.iter().filter_map(|l| serde_json::from_str(l).ok());
    let queue: std::collections::VecDeque<Held> = held.collect();
    if here.len() < text.lines().count() {
        rewrite(ctx, path, queue.iter());
    }
    Some(queue)
}

/// Whether the held call `line` is one this machine held (sealed here); one that is not
/// (a journal the repository carries in, with a planted rollout) is dropped, and said so.
fn held_here(ctx: &Ctx, line: &str) -> bool {
    let here = crate::receipt::seal::sealed_here(&ctx.config, line.as_bytes());
    if !here {
        let why = "a held call this machine did not hold (no seal of its own: carried in by the repository?), dropped";
        ctx.log(Level::Warn, "codex", why);
    }
    here
}

/// The held calls' file as `rest`, each line sealed again: removed when nothing is left.
fn rewrite<'a>(ctx: &Ctx, path: &std::path::Path, rest: impl Iterator<Item = &'a Held>) {
    let sealed: Result<Vec<Clean>, _> = rest
        .map(|h| crate::receipt::seal::seal(&ctx.config, Clean::json(h)))
        .collect();
    let written = match sealed {
        Ok(lines) if lines.is_empty() => std::fs::remove_file(path),
        Ok(lines) => store::write_atomic(path, &Clean::joined_lines(lines)),
        Err(e) => Err(io::Error::other(e)),
    };
    if let Err(e) = written {
        let why = format!("cannot rewrite {VERDICTS}: {e}");
        ctx.log(Level::Error, "codex", &why);
    }
}

/// Applies one held call with its exit code, at the time it was received.
fn apply(ctx: &mut Ctx, held: Held, code: Option<i32>, said: &mut Vec<String>) {
    let mut input = held.input;
    let name = codex::with_exit_code("PostToolUse", &mut input, code);
    let mut parsed = match event::from_value(Some(&name), input.clone()) {
        Ok(p) => p,
        Err(e) => {
            let why = format!("a held call does not parse, dropped: {e}");
            return ctx.log(Level::Warn, "codex", &why);
        }
    };
    parsed.event.agent = Agent::Codex;
    let Some(handled) = super::dispatch_late(ctx, &parsed.event, "held", held.received_at) else {
        return;
    };
    said.extend(handled.out.context);
    if handled.deferred {
        if let Err(e) = super::pending::keep(ctx, &name, &input, Agent::Codex) {
            ctx.log(Level::Error, "codex", &format!("a held call was lost: {e}"));
        }
    }
}
