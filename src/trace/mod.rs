//! The Agent Trace ledger: `.orchestration/agent_trace.jsonl`, one record per line.
//!
//! Records follow the Agent Trace spec (cursor/agent-trace, spec 0.1.0; its JSON schema
//! is kept in `tests/fixtures/agent-trace/` and every kind of record is validated against
//! it in the tests). waymark's own facts about an event live under `metadata.waymark`.
//! Events that touch no file (a Bash result, an intent transition, scope warnings) are
//! records with `files: []`.
//!
//! Writing is one locked append per record ([`crate::store::append_chained`]); reading is
//! always a tail read ([`recent`]), so neither costs more as the ledger grows.
//!
//! The ledger is tamper-evident: each record names the SHA-256 of the line before it
//! (`metadata.waymark.prev`), read from the file's end under the append lock, so a line
//! edited or removed (or inserted with a link to no line of the ledger) breaks the chain
//! at the line after it, and `waymark trace --verify` ([`verify`]) names the first bad
//! line. Records that link to an earlier line are where a merged branch joins (docs/git.md)
//! and are listed as joins, not breaks: whole records added that way show there.

pub mod dialect;
pub mod ranges;
pub mod tool_call;

use std::io;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::claude::event::Event;
use crate::claude::tool::ToolCall;
use crate::project::Project;
use crate::store;

pub use dialect::Entry;
pub use ranges::LineRange;

pub const TRACE_FILE: &str = "agent_trace.jsonl";

/// The `version` written in every record: the spec's current form, `X.Y.Z` (its schema
/// since February 2026; tests/fixtures/agent-trace/SOURCE.md). Records an older waymark
/// wrote say `"0.1"`; nothing reads the version, so both are read alike.
pub const SPEC_VERSION: &str = "0.1.0";

/// The name recorded in `tool.name`.
pub const TOOL_NAME: &str = "claude-code";

/// Each record in the recent window is assumed to be at most this large on average when
/// bounding the bytes a tail read may take (records carry at most a 2,000-character
/// output tail, so most are far smaller).
const BYTES_PER_RECORD: u64 = 8 * 1024;
/// Whatever the window, a tail read never takes more than this.
const MAX_TAIL_BYTES: u64 = 4 * 1024 * 1024;

/// One Agent Trace record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub version: String,
    pub id: String,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vcs: Option<Vcs>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<Tool>,
    pub files: Vec<FileEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vcs {
    #[serde(rename = "type")]
    pub kind: String,
    pub revision: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Root-relative; a path outside the root is recorded absolute (and warned about).
    pub path: String,
    pub conversations: Vec<Conversation>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contributor: Option<Contributor>,
    pub ranges: Vec<Range>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contributor {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Range {
    pub start_line: u64,
    pub end_line: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    pub waymark: Waymark,
}

/// What kind of fact a record holds (`metadata.waymark.kind`).
pub mod kind {
    pub const MUTATION: &str = "mutation";
    pub const BASH: &str = "bash";
    pub const TOOL_FAILURE: &str = "tool_failure";
    pub const TRANSITION: &str = "transition";
    pub const SCOPE_WARNING: &str = "scope_warning";
    pub const REWIND: &str = "rewind";
}

/// waymark's facts about the event behind a record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Waymark {
    pub kind: String,
    pub event: String,
    #[serde(default)]
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent_id: Option<String>,
    /// `create`, `overwrite`, `edit`, `notebook_edit` for mutations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutation_class: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Redacted and bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transition: Option<Transition>,
    /// `waymark rewind`: the checkpoint the files went back to, and which files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewind: Option<crate::task::Rewound>,
    /// The subagent that made the call (Claude Code's `agent_id` and `agent_type`), when a
    /// subagent did: its work counts for the step of the session that spawned it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// SHA-256 (hex) of the line before this record in the ledger; empty for the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev: Option<String>,
}

impl Waymark {
    /// What every record about one tool call carries: the event, the session, the tool
    /// call and the task. The caller sets the kind and the facts.
    pub fn about(event: &Event, call: &ToolCall, task_id: Option<String>) -> Waymark {
        Waymark {
            event: event.name().into(),
            session_id: event.common.session_id.clone(),
            tool_use_id: call.tool_use_id.clone(),
            tool_name: Some(call.name.clone()),
            task_id,
            agent_id: event.common.agent_id.clone().filter(|a| !a.is_empty()),
            agent_type: event.common.agent_type.clone().filter(|a| !a.is_empty()),
            ..Default::default()
        }
    }
}

/// An intent's status change, as recorded by IntentProgress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    pub intent_id: String,
    pub from: String,
    pub to: String,
    /// The acceptance criteria that were found met.
    pub criteria: Vec<String>,
}

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

/// `claude-opus-4-8` → `anthropic/claude-opus-4-8`; ids with a provider stay as they are.
pub fn normalize_model_id(model: &str) -> String {
    let provider = [
        ("claude-", "anthropic"),
        ("gpt-", "openai"),
        ("gemini-", "google"),
    ]
    .iter()
    .find(|(p, _)| model.starts_with(p))
    .map(|(_, v)| *v);
    match provider {
        Some(p) if !model.contains('/') => format!("{p}/{model}"),
        _ => model.chars().take(250).collect(),
    }
}

/// `tool` for every record. The schema requires a version with the name; Claude Code does
/// not tell hooks its version, so it is `CLAUDE_CODE_VERSION` when set, else "unknown".
pub fn tool() -> Tool {
    Tool {
        name: TOOL_NAME.into(),
        version: std::env::var("CLAUDE_CODE_VERSION")
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| "unknown".into()),
    }
}

/// `file://` URL of the session transcript (the conversation that produced the code),
/// percent-encoded so it is a valid URI.
pub fn transcript_url(path: &str) -> Option<String> {
    if !path.starts_with('/') {
        return None;
    }
    let mut url = String::from("file://");
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            url.push(b as char);
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    Some(url)
}

impl Record {
    /// A record at `now` with a fresh id, the project's revision and the tool.
    pub fn new(project: &Project, now: DateTime<Utc>, waymark: Waymark) -> Record {
        Record {
            version: SPEC_VERSION.into(),
            id: uuid::Uuid::new_v4().to_string(),
            timestamp: now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            vcs: crate::git::head_revision(&project.root).map(|revision| Vcs {
                kind: "git".into(),
                revision,
            }),
            tool: Some(tool()),
            files: Vec::new(),
            metadata: Some(Metadata { waymark }),
        }
    }

    /// Adds one file with the ranges one conversation wrote.
    pub fn add_file(
        &mut self,
        path: &str,
        url: Option<String>,
        contributor: Contributor,
        ranges: &[LineRange],
    ) {
        self.files.push(FileEntry {
            path: path.to_string(),
            conversations: vec![Conversation {
                url,
                contributor: Some(contributor),
                ranges: ranges
                    .iter()
                    .map(|r| Range {
                        start_line: r.start_line,
                        end_line: r.end_line,
                        content_hash: r.content_hash.clone(),
                    })
                    .collect(),
            }],
        });
    }

    pub fn waymark(&self) -> Option<&Waymark> {
        self.metadata.as_ref().map(|m| &m.waymark)
    }
}

pub fn trace_path(project: &Project) -> PathBuf {
    project.state_file(TRACE_FILE)
}

/// Appends one record, chained to the line before it. Returns the fragment of a torn
/// last line that was cut off first, if a writer had been killed mid-record (the caller
/// logs it).
pub fn append(project: &Project, mut record: Record) -> io::Result<Option<String>> {
    store::append_chained(&trace_path(project), |last| {
        if let Some(m) = record.metadata.as_mut() {
            m.waymark.prev = Some(last.map(link).unwrap_or_default());
        }
        crate::redact::Clean::json(&record)
    })
}

/// What a record names as the line before it: the SHA-256 of that line, hex.
pub fn link(line: &[u8]) -> String {
    crate::receipt::sha256_hex(line)
}

/// The first line of the ledger whose chain does not hold, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based line number.
    pub line: u64,
    pub why: String,
}

/// What [`verify`] found: how many lines, from which line on they are chained, and the
/// first bad line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verified {
    pub lines: u64,
    /// The first chained record (older ledgers start unchained); None when none is.
    pub chained_from: Option<u64>,
    pub bad: Option<BadLine>,
    /// Where another branch's records join (a union merge, docs/git.md): `(line, after)`,
    /// line `line` continues line `after` (0: the empty ledger) instead of the line before.
    pub merges: Vec<(u64, u64)>,
}

/// Walks the ledger once, line by line, checking that every chained record names the
/// line before it, and that no record after the chain began is unchained. Lines before
/// the first chained record (written by an older waymark) are counted, not checked.
///
/// A record may instead name an earlier line: that is where a second branch's records
/// begin after git merged two branches' ledgers by union (`.gitattributes`). It is
/// reported in [`Verified::merges`], not as a break: lines joined that way cannot be told
/// from whole records inserted there, so the report says where they are.
pub fn verify(path: &std::path::Path) -> io::Result<Verified> {
    use std::io::BufRead;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Verified::default()),
        Err(e) => return Err(e),
    };
    let mut reader = io::BufReader::with_capacity(64 * 1024, file);
    let mut found = Verified::default();
    // Every line's link (its first 128 bits) to its number, for a merge's join.
    let mut seen: std::collections::HashMap<u128, u64> = std::collections::HashMap::new();
    let short = |link: &str| {
        link.get(..32)
            .and_then(|h| u128::from_str_radix(h, 16).ok())
    };
    let mut previous = String::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        found.lines += 1;
        let n = found.lines;
        let Some(body) = line.strip_suffix(b"\n") else {
            found.bad = Some(BadLine {
                line: n,
                why: "the last line is torn (no newline): a writer was killed, the next append cuts it".into(),
            });
            break;
        };
        let prev = serde_json::from_slice::<Record>(body)
            .ok()
            .and_then(|r| r.metadata)
            .and_then(|m| m.waymark.prev);
        let why = match (&prev, found.chained_from) {
            (None, None) => None,
            (None, Some(_)) => Some("it carries no link to the line before it: it was not written by waymark, or was edited".to_string()),
            (Some(p), _) => {
                found.chained_from.get_or_insert(n);
                // The first chained record of a ledger begun by an older waymark links to
                // an unchained line: that is checked like any other.
                let joins = match p.as_str() {
                    "" => Some(0),
                    p => short(p).and_then(|k| seen.get(&k).copied()),
                };
                if *p == previous {
                    None
                } else if let Some(after) = joins.filter(|_| n > 1) {
                    found.merges.push((n, after));
                    None
                } else {
                    Some(match n {
                        1 => "it names a line before it, but it is the first line: lines were removed from the start".to_string(),
                        _ => format!("it does not name line {} as the line before it, nor any earlier line: line {} was changed, or lines were removed or inserted between them", n - 1, n - 1),
                    })
                }
            }
        };
        if let Some(why) = why {
            found.bad = Some(BadLine { line: n, why });
            break;
        }
        previous = link(body);
        if let Some(k) = short(&previous) {
            seen.insert(k, n);
        }
    }
    Ok(found)
}

/// The last records of the ledger, as raw lines (oldest first), read from the file's
/// tail: at most `window` lines and a byte budget proportional to it. A torn last line is
/// left out.
#[derive(Debug, Default)]
pub struct Recent {
    pub lines: Vec<String>,
    pub torn: bool,
}

pub fn recent(project: &Project, window: usize) -> io::Result<Recent> {
    let bytes = (window as u64)
        .saturating_mul(BYTES_PER_RECORD)
        .min(MAX_TAIL_BYTES);
    let t = store::read_tail_lines(&trace_path(project), window, bytes)?;
    Ok(Recent {
        lines: t.lines,
        torn: t.torn,
    })
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

    use crate::project::temp_project as project;

    #[test]
    fn records_round_trip_and_omit_what_is_unknown() {
        let (_d, p) = project();
        let mut r = Record::new(
            &p,
            Utc::now(),
            Waymark {
                kind: kind::MUTATION.into(),
                event: "PostToolUse".into(),
                session_id: "s1".into(),
                ..Default::default()
            },
        );
        r.add_file(
            "src/a.rs",
            transcript_url("/home/dev/a b.jsonl"),
            Contributor {
                kind: "ai".into(),
                model_id: None,
            },
            &ranges::whole_content("x\ny\n"),
        );
        let text = serde_json::to_string(&r).unwrap();
        assert!(!text.contains("model_id"));
        assert!(!text.contains("\"vcs\""), "no repository, no vcs");
        assert!(text.contains("file:///home/dev/a%20b.jsonl"));
        assert_eq!(serde_json::from_str::<Record>(&text).unwrap(), r);
    }

    #[test]
    fn model_ids_follow_models_dev() {
        assert_eq!(
            normalize_model_id("claude-opus-4-8"),
            "anthropic/claude-opus-4-8"
        );
        assert_eq!(normalize_model_id("openai/gpt-4o"), "openai/gpt-4o");
        assert_eq!(normalize_model_id("opus"), "opus");
    }

    #[test]
    fn recent_reads_the_tail_and_tolerates_a_torn_line() {
        let (_d, p) = project();
        for i in 0..50 {
            let w = Waymark {
                kind: kind::BASH.into(),
                event: "PostToolUse".into(),
                command: Some(format!("echo {i}")),
                ..Default::default()
            };
            append(&p, Record::new(&p, Utc::now(), w)).unwrap();
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
        let torn = append(&p, Record::new(&p, Utc::now(), Waymark::default())).unwrap();
        assert!(torn.is_some());
        assert!(!recent(&p, 10).unwrap().torn);
    }
}
