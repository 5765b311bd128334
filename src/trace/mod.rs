//! The Agent Trace ledger: `.orchestration/agent_trace.jsonl`, one record per line.
//!
//! Records follow the Agent Trace spec (cursor/agent-trace, spec 0.1.0; its JSON schema
//! is kept in `tests/fixtures/agent-trace/` and every kind of record is validated against
//! it in the tests). waymark's own facts about an event live under `metadata.waymark`.
//! Events that touch no file (a Bash result, an intent transition, scope warnings) are
//! records with `files: []`.
//!
//! The records and their chain are `waymark_core::trace` (re-exported here). This module
//! writes them, one locked append per record ([`crate::store::append_chained`]), and reads
//! the ledger: always a tail read ([`recent`]), so neither costs more as the ledger grows;
//! `waymark trace --verify` reads it whole ([`verify`]).
//!

pub mod tool_call;

use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use crate::claude::codex::Agent;
use crate::claude::event::Event;
use crate::claude::tool::ToolCall;
use crate::runtime::context::Ctx;
use crate::store;
use crate::store::project::Project;
use waymark_core::config::Config;
use waymark_redact::Clean;

pub use waymark_core::trace::*;

pub const TRACE_FILE: &str = "agent_trace.jsonl";

/// Each record in the recent window is assumed to be at most this large on average when
/// bounding the bytes a tail read may take (records carry at most a 2,000-character
/// output tail, so most are far smaller).
const BYTES_PER_RECORD: u64 = 8 * 1024;
/// Whatever the window, a tail read never takes more than this.
const MAX_TAIL_BYTES: u64 = 4 * 1024 * 1024;

/// Who wrote the attributed lines: the AI, with the model when it is known.
///
/// The model is not in PostToolUse's input, and reading it from the transcript would cost
/// a file read per event, so it comes from the environment: `WAYMARK_MODEL_ID`, else
/// `ANTHROPIC_MODEL` (what Claude Code itself is told to use), normalized to the
/// models.dev form the spec asks for (`claude-…` → `anthropic/claude-…`).
pub fn contributor() -> Contributor {
    let model = ["WAYMARK_MODEL_ID", "ANTHROPIC_MODEL"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.trim().is_empty()));
    Contributor {
        kind: "ai".into(),
        model_id: model.map(|m| normalize_model_id(m.trim())),
    }
}

/// The contributor of a change one event made: Codex CLI names its model on every event
/// (`model`, "gpt-5.5" → `openai/gpt-5.5`); Claude Code's is [`contributor`].
pub fn contributor_of(event: &Event) -> Contributor {
    let told = event.common.model.as_deref().map(str::trim);
    match (event.agent, told.filter(|m| !m.is_empty())) {
        (Agent::Codex, Some(model)) => Contributor {
            kind: "ai".into(),
            model_id: Some(normalize_model_id(model)),
        },
        _ => contributor(),
    }
}

/// `tool` for a record made for `agent`. The schema requires a version with the name;
/// neither agent tells hooks its version, so it is its variable ([`Agent::version_var`])
/// when set, else "unknown".
fn tool_of(agent: Agent) -> Tool {
    Tool {
        name: agent.tool_name().into(),
        version: std::env::var(agent.version_var())
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| "unknown".into()),
    }
}

/// A new record, made `now` with a fresh id at the project's revision.
pub fn record(project: &Project, now: DateTime<Utc>, waymark: Waymark) -> Record {
    let id = uuid::Uuid::new_v4().to_string();
    let revision = crate::git::head_revision(&project.root);
    let tool = tool_of(Agent::of_record(waymark.agent.as_deref()));
    Record::new(id, now, revision, tool, waymark)
}

/// What every record about one tool call carries: the event, the session, the tool call
/// and the task. The caller sets the kind and the facts.
pub fn about(event: &Event, call: &ToolCall, task_id: Option<String>) -> Waymark {
    Waymark {
        event: event.name().into(),
        session_id: event.common.session_id.clone(),
        tool_use_id: call.tool_use_id.clone(),
        tool_name: Some(call.name.clone()),
        task_id,
        agent_id: event.common.agent_id.clone().filter(|a| !a.is_empty()),
        agent_type: event.common.agent_type.clone().filter(|a| !a.is_empty()),
        agent: event.agent.recorded(),
        ..Default::default()
    }
}

pub fn trace_path(project: &Project) -> PathBuf {
    project.state_file(TRACE_FILE)
}

/// The ledger's authenticated head (`waymark_core::trace::head`), beside it; this
/// machine's, never shared (`.gitignore`).
pub const HEAD_FILE: &str = "trace.head";

/// Appends one record, chained to the line before it, and before it the head it makes,
/// under the user's key (`config`'s). Returns the fragment of a torn last line that was
/// cut off first, if a writer had been killed mid-record (the caller logs it).
pub fn append(project: &Project, config: &Config, mut rec: Record) -> io::Result<Option<String>> {
    let path = trace_path(project);
    store::append_chained(&path, |last| {
        let prev = last.map(link).unwrap_or_default();
        if let Some(m) = rec.metadata.as_mut() {
            m.waymark.prev = Some(prev.clone());
        }
        let line = Clean::json(&rec);
        // Before the line: a kill between the two leaves a head naming a line never
        // written, which `--verify` tells from tampering (`HeadCheck::Interrupted`). It is
        // written in place, under the ledger's lock: a kill while writing it leaves it torn
        // (unreadable: `--verify` says so and checks the chain alone; the next append
        // counts the lines anew), never a temp file. A head that cannot be written does
        // not cost the record; `--verify` names the lines after the head it has.
        let head = next_head(project, config, &path, &prev, line.as_bytes());
        let _ = store::write_regenerable(&project.state_file(HEAD_FILE), &Clean::json(&head));
        line
    })
}

/// Appends a new record of `waymark`'s facts, made now ([`record`], [`append`]).
pub fn append_new(ctx: &Ctx, waymark: Waymark) -> io::Result<Option<String>> {
    let made = record(&ctx.project, ctx.now, waymark);
    append(&ctx.project, &ctx.config, made)
}

/// The head after `line` is appended, its MAC made with the user's key (created on first
/// use, as for receipts; without a usable key the head is kept unauthenticated).
fn next_head(
    project: &Project,
    config: &Config,
    path: &Path,
    prev: &str,
    line: &[u8],
) -> TraceHead {
    let before = read_head(project);
    let count = || count_lines(path);
    let mut head = TraceHead::after(before.as_ref(), prev, line, count);
    if let Ok(signer) = crate::receipt::signer(config) {
        head.mac = signer.mac(head::KEY_PATH, &head.message());
    }
    head
}

/// The head as last written here, if there is one to read.
pub fn read_head(project: &Project) -> Option<TraceHead> {
    let bytes = std::fs::read(project.state_file(HEAD_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// How many lines the ledger has: read whole, only when the head does not name its last
/// line (the first append, or lines that came from elsewhere since).
fn count_lines(path: &Path) -> u64 {
    let bytes = std::fs::read(path).unwrap_or_default();
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// Walks the ledger at `path` once, line by line ([`Verifier`]); an absent ledger is an
/// empty one.
pub fn verify(path: &Path) -> io::Result<Verified> {
    let Some(file) = crate::store::found(std::fs::File::open(path))? else {
        return Ok(Verified::default());
    };
    let mut reader = io::BufReader::with_capacity(64 * 1024, file);
    let mut verifier = Verifier::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 || !verifier.push(&line) {
            return Ok(verifier.finish());
        }
    }
}

/// The last records of the ledger, as raw lines (oldest first), read from the file's
/// tail: at most `window` lines and a byte budget proportional to it. A torn last line is
/// left out.
pub type Recent = store::TailLines;

pub fn recent(project: &Project, window: usize) -> io::Result<Recent> {
    let bytes = (window as u64)
        .saturating_mul(BYTES_PER_RECORD)
        .min(MAX_TAIL_BYTES);
    store::read_tail_lines(&trace_path(project), window, bytes)
}

impl Recent {
    /// The lines parsed into entries (either dialect); lines that are not records are skipped.
    pub fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        self.lines.iter().filter_map(|l| Entry::parse(l))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::store::project::temp_project as project;

    /// A configuration whose key lives in `dir` (never the user's).
    fn keyed(dir: &Path) -> Config {
        let key_file = dir.join("keys/master.key").to_string_lossy().into_owned();
        Config {
            key_file,
            ..Config::default()
        }
    }

    #[test]
    fn recent_reads_the_tail_and_tolerates_a_torn_line() {
        let (d, p) = project();
        let config = keyed(d.path());
        for i in 0..50 {
            let w = Waymark {
                kind: kind::BASH.into(),
                event: "PostToolUse".into(),
                command: Some(format!("echo {i}")),
                ..Default::default()
            };
            append(&p, &config, record(&p, Utc::now(), w)).unwrap();
        }
        use std::io::Write;
        std::fs::OpenOptions::new()
            .append(true)
            .open(trace_path(&p))
            .unwrap()
            .write_all(b"{\"version\":\"0.1\",\"id\":")
            .unwrap();
        let r = recent(&p, 10).unwrap();
        assert!(r.torn);
        assert_eq!(r.lines.len(), 10);
        assert!(r.lines[9].contains("echo 49"));
        assert_eq!(r.entries().count(), 10);
        // The next append repairs the torn line.
        let torn = append(&p, &config, record(&p, Utc::now(), Waymark::default())).unwrap();
        assert!(torn.is_some());
        assert!(!recent(&p, 10).unwrap().torn);
    }
}
