//! The Agent Trace ledger: `.orchestration/agent_trace.jsonl`, one record per line.
//!
//! Records follow the Agent Trace spec (cursor/agent-trace, spec 0.1.0; its JSON schema
//! is kept in `tests/fixtures/agent-trace/` and every kind of record is validated against
//! it in the tests). waymark's own facts about an event live under `metadata.waymark`.
//! Events that touch no file (a Bash result, an intent transition, scope warnings) are
//! records with `files: []`.
//!
//! This module is the records and their chain; the application appends them (one locked
//! append per record) and reads the ledger's tail.
//!
//! The ledger is tamper-evident ([`chain`]): each record names the SHA-256 of the line
//! before it, read from the file's end under the append lock; `waymark trace --verify`
//! ([`chain::Verifier`]) names the first bad line, and lists where a merged branch joins.

pub mod anchor;
pub mod chain;
pub mod dialect;
pub mod head;
pub mod ranges;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use chain::{BadLine, Verified, Verifier, link};
pub use dialect::Entry;
pub use head::{HeadCheck, TraceHead};
pub use ranges::LineRange;

/// The `version` written in every record: the spec's current form, `X.Y.Z` (its schema
/// since February 2026; tests/fixtures/agent-trace/SOURCE.md). Records an older waymark
/// wrote say `"0.1"`; nothing reads the version, so both are read alike.
pub const SPEC_VERSION: &str = "0.1.0";

/// The name recorded in `tool.name`.
pub const TOOL_NAME: &str = "claude-code";

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
    pub ranges: Vec<LineRange>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contributor {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
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
    /// The agent that made the call when it is not Claude Code (`codex`: Codex CLI); the
    /// record's `tool` names it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// SHA-256 (hex) of the line before this record in the ledger; empty for the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prev: Option<String>,
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
    /// Record `id`, made `now` at git `revision` (the commit HEAD names) by `tool`.
    pub fn new(
        id: String,
        now: DateTime<Utc>,
        revision: Option<String>,
        tool: Tool,
        waymark: Waymark,
    ) -> Record {
        Record {
            version: SPEC_VERSION.into(),
            id,
            timestamp: now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            vcs: revision.map(|revision| Vcs {
                kind: "git".into(),
                revision,
            }),
            tool: Some(tool),
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
                ranges: ranges.to_vec(),
            }],
        });
    }

    pub fn waymark(&self) -> Option<&Waymark> {
        self.metadata.as_ref().map(|m| &m.waymark)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_omit_what_is_unknown() {
        let mut r = Record::new(
            "id".into(),
            Utc::now(),
            None,
            Tool {
                name: TOOL_NAME.into(),
                version: "2.1.332".into(),
            },
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
    fn a_provider_already_named_is_kept() {
        for id in [
            "claude-opus-4-8/thinking",
            "gpt-4o/mini",
            "gemini-2.5-pro/preview",
        ] {
            assert_eq!(normalize_model_id(id), id);
        }
        assert_eq!(normalize_model_id("gpt-4o"), "openai/gpt-4o");
        assert_eq!(
            normalize_model_id("gemini-2.5-pro"),
            "google/gemini-2.5-pro"
        );
    }

    #[test]
    fn a_records_waymark_facts_are_its_metadata() {
        let facts = Waymark {
            kind: kind::BASH.into(),
            event: "PostToolUse".into(),
            command: Some("cargo test".into()),
            exit_code: Some(101),
            ..Default::default()
        };
        let tool = Tool {
            name: TOOL_NAME.into(),
            version: "2.1.332".into(),
        };
        let r = Record::new("id".into(), Utc::now(), None, tool, facts.clone());
        assert_eq!(r.waymark(), Some(&facts));
        // A record another tool wrote, without metadata, has none.
        let foreign =
            r#"{"version":"0.1.0","id":"x","timestamp":"2026-01-01T00:00:00Z","files":[]}"#;
        let foreign: Record = serde_json::from_str(foreign).unwrap();
        assert_eq!(foreign.waymark(), None);
    }
}
