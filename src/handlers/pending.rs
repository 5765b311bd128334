//! Events kept for later: a hook that cannot get the task's lock before its deadline
//! (another process holds it: a stuck hook, a long `waymark` command) keeps its event in
//! `.orchestration/pending.jsonl`, redacted like everything stored, and exits in time. The
//! next event that finds the lock free applies the kept events first, in order and at the
//! times they happened, then its own. No tool call waits past its deadline, and no event
//! is lost (docs/design.md rules 1 and 2).
//!
//! Only an event that changed nothing yet is kept: every handler's first step is its
//! change to the task, so an event whose first change timed out is whole.

use std::io;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::claude::codex::Agent;
use crate::claude::event;
use crate::runtime::context::Ctx;
use crate::store::log::Level;
use crate::store::{self, FileLock};
use waymark_redact::Clean;

/// The journal's file name, in the state directory.
pub const PENDING: &str = "pending.jsonl";

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

/// Keeps `input` (the event `name`'s hook input) for the next event to apply.
pub fn keep(ctx: &Ctx, name: &str, input: &Value, agent: Agent) -> io::Result<()> {
    let kept = Kept {
        received_at: ctx.now,
        event: name.to_string(),
        input: input.clone(),
        agent: (agent == Agent::Codex).then(|| "codex".to_string()),
    };
    store::append_line(&ctx.project.state_file(PENDING), Clean::json(&kept)).map(|_| ())
}

/// Applies the kept events, oldest first, each at its own time; stops at one that cannot
/// get the lock again (it and the rest stay kept). Does nothing when there are none, or
/// when another process is applying them.
pub fn apply(ctx: &mut Ctx) {
    let path = ctx.project.state_file(PENDING);
    if std::fs::symlink_metadata(&path).is_err() {
        return;
    }
    let Ok(Some(_lock)) = FileLock::try_acquire(&path) else {
        return;
    };
    let lines = match store::read(&path, &[]) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            ctx.log(
                Level::Error,
                "pending",
                &format!("cannot read {PENDING}: {e}"),
            );
            return;
        }
    };
    let now = ctx.now;
    let left = apply_kept(ctx, &lines);
    ctx.now = now;
    let written = match left.is_empty() {
        true => std::fs::remove_file(&path),
        false => store::write_atomic(&path, &Clean::json_lines(&left)),
    };
    if let Err(e) = written {
        ctx.log(
            Level::Error,
            "pending",
            &format!("cannot rewrite {PENDING}: {e}"),
        );
    }
}

/// Dispatches each kept event in `lines` at its own time, dropping the unreadable ones;
/// returns those to keep: the first deferred again and every one after it.
fn apply_kept(ctx: &mut Ctx, lines: &str) -> Vec<Value> {
    let mut left: Vec<Value> = Vec::new();
    for line in lines.lines().filter(|l| !l.trim().is_empty()) {
        let kept: Kept = match serde_json::from_str(line) {
            Ok(k) => k,
            Err(e) => {
                ctx.log(
                    Level::Warn,
                    "pending",
                    &format!("a kept event is unreadable, dropped: {e}"),
                );
                continue;
            }
        };
        if !left.is_empty() {
            left.push(serde_json::to_value(&kept).expect("serializable"));
            continue;
        }
        let bytes = serde_json::to_vec(&kept.input).expect("serializable");
        let mut parsed = match event::parse(Some(&kept.event), &bytes) {
            Ok(p) => p,
            Err(e) => {
                ctx.log(
                    Level::Warn,
                    "pending",
                    &format!("a kept {} event does not parse, dropped: {e}", kept.event),
                );
                continue;
            }
        };
        if let Some(agent) = kept.agent.as_deref().and_then(Agent::parse) {
            parsed.event.agent = agent;
        }
        ctx.now = kept.received_at;
        if crate::handlers::dispatch(ctx, &parsed.event).deferred {
            left.push(serde_json::to_value(&kept).expect("serializable"));
        }
    }
    left
}
