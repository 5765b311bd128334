//! One reader for every trace line waymark may find: its own Agent Trace records and the
//! dialect the intent-governed forks write into the same file name (`relative_path`,
//! `contributor.entity_type` / `model_identifier`, `related[].value`, `vcs.revision_id`,
//! `mutation_class` at the top level or inside a conversation, `intent_id` here and there).
//!
//! A project that used one of those tools before waymark keeps its ledger; the post-hooks
//! read both kinds of line the same way.

use chrono::{DateTime, Utc};
use serde_json::Value;

/// What the post-hooks need from one trace line, whichever dialect wrote it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Entry {
    pub id: Option<String>,
    pub timestamp: Option<DateTime<Utc>>,
    pub session_id: Option<String>,
    pub intent_id: Option<String>,
    /// `files[].path` or `files[].relative_path`.
    pub paths: Vec<String>,
    /// Lowercased: `ai`, `human`, …
    pub contributor: Option<String>,
    pub model_id: Option<String>,
    pub revision: Option<String>,
    pub mutation_class: Option<String>,
    /// waymark's `metadata.waymark.kind` (absent in the forks' records).
    pub kind: Option<String>,
}

impl Entry {
    /// Parses one line; `None` when it is not a JSON object.
    pub fn parse(line: &str) -> Option<Entry> {
        Entry::of(&serde_json::from_str(line).ok()?)
    }

    /// [`Entry::parse`] of a line already parsed; `None` when it is not an object.
    pub fn of(v: &Value) -> Option<Entry> {
        let obj = v.as_object()?;
        let wm = v.pointer("/metadata/waymark");
        let wm_str = |k: &str| wm.and_then(|w| w.get(k)).and_then(str_of);
        let conversations = Conversations::of(v);
        let contributor = conversations.contributor().or_else(|| v.get("contributor"));
        Some(Entry {
            id: obj.get("id").and_then(str_of),
            timestamp: obj
                .get("timestamp")
                .and_then(Value::as_str)
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc)),
            session_id: wm_str("session_id")
                .or_else(|| obj.get("session_id").and_then(str_of))
                .or_else(|| conversations.related(&["session"])),
            intent_id: wm_str("intent_id")
                .or_else(|| obj.get("intent_id").and_then(str_of))
                .or_else(|| conversations.field("intent_id"))
                .or_else(|| conversations.related(&["specification", "intent", "requirement"])),
            paths: files(v)
                .filter_map(|f| {
                    f.get("path")
                        .or_else(|| f.get("relative_path"))
                        .and_then(str_of)
                })
                .collect(),
            contributor: contributor
                .and_then(|c| c.get("type").or_else(|| c.get("entity_type")))
                .and_then(str_of)
                .map(|s| s.to_ascii_lowercase()),
            model_id: contributor
                .and_then(|c| c.get("model_id").or_else(|| c.get("model_identifier")))
                .and_then(str_of),
            revision: v
                .get("vcs")
                .and_then(|vcs| vcs.get("revision").or_else(|| vcs.get("revision_id")))
                .and_then(str_of),
            mutation_class: wm_str("mutation_class")
                .or_else(|| obj.get("mutation_class").and_then(str_of))
                .or_else(|| conversations.field("mutation_class")),
            kind: wm_str("kind"),
        })
    }
}

/// The conversations of a line's files (`files[].conversations[]`), where the forks keep
/// what waymark keeps in its metadata.
struct Conversations<'a>(Vec<&'a Value>);

impl<'a> Conversations<'a> {
    fn of(v: &'a Value) -> Conversations<'a> {
        Conversations(
            files(v)
                .flat_map(|f| f.get("conversations").and_then(Value::as_array))
                .flatten()
                .collect(),
        )
    }

    /// The first conversation's field `k`.
    fn field(&self, k: &str) -> Option<String> {
        self.0.iter().find_map(|c| c.get(k).and_then(str_of))
    }

    /// The value (else the url) of the first `related[]` entry whose type is one of
    /// `types`, in any case.
    fn related(&self, types: &[&str]) -> Option<String> {
        self.0
            .iter()
            .filter_map(|c| c.get("related").and_then(Value::as_array))
            .flatten()
            .find(|r| {
                r.get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| types.iter().any(|x| t.eq_ignore_ascii_case(x)))
            })
            .and_then(|r| r.get("value").or_else(|| r.get("url")).and_then(str_of))
    }

    /// The first conversation's contributor.
    fn contributor(&self) -> Option<&'a Value> {
        self.0.iter().find_map(|c| c.get("contributor"))
    }
}

fn files(v: &Value) -> impl Iterator<Item = &Value> {
    v.get("files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn str_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forks_dialect() {
        let line = r#"{"id":"a1","timestamp":"2026-02-21T10:00:00Z","vcs":{"revision_id":"abc123"},
            "mutation_class":"AST_REFACTOR",
            "files":[{"relative_path":"src/auth/login.ts","conversations":[{"url":"s-1",
              "contributor":{"entity_type":"AI","model_identifier":"claude-3-5-sonnet"},
              "ranges":[{"start_line":1,"end_line":4,"content_hash":"sha256:00"}],
              "related":[{"type":"specification","value":"INT-001"}]}]}]}"#
            .replace('\n', "");
        let e = Entry::parse(&line).unwrap();
        assert_eq!(e.paths, vec!["src/auth/login.ts"]);
        assert_eq!(e.intent_id.as_deref(), Some("INT-001"));
        assert_eq!(e.contributor.as_deref(), Some("ai"));
        assert_eq!(e.model_id.as_deref(), Some("claude-3-5-sonnet"));
        assert_eq!(e.revision.as_deref(), Some("abc123"));
        assert_eq!(e.mutation_class.as_deref(), Some("AST_REFACTOR"));
        assert!(e.timestamp.is_some());
    }

    #[test]
    fn mutation_class_inside_a_conversation_and_intent_id_on_it() {
        let line = r#"{"id":"b","timestamp":"2026-02-21T10:00:00.000Z","files":[{"relative_path":"x","conversations":[{"intent_id":"INT-9","mutation_class":"INTENT_EVOLUTION","ranges":[]}]}]}"#;
        let e = Entry::parse(line).unwrap();
        assert_eq!(e.intent_id.as_deref(), Some("INT-9"));
        assert_eq!(e.mutation_class.as_deref(), Some("INTENT_EVOLUTION"));
    }

    #[test]
    fn waymarks_own_records() {
        let line = r#"{"version":"0.1","id":"c","timestamp":"2026-02-21T10:00:00.000Z","vcs":{"type":"git","revision":"deadbeef"},"files":[{"path":"src/a.rs","conversations":[{"contributor":{"type":"ai","model_id":"anthropic/claude-opus-4-8"},"ranges":[]}]}],"metadata":{"waymark":{"kind":"mutation","event":"PostToolUse","session_id":"s-1","intent_id":"INT-1","mutation_class":"edit"}}}"#;
        let e = Entry::parse(line).unwrap();
        assert_eq!(e.session_id.as_deref(), Some("s-1"));
        assert_eq!(e.intent_id.as_deref(), Some("INT-1"));
        assert_eq!(e.paths, vec!["src/a.rs"]);
        assert_eq!(e.kind.as_deref(), Some("mutation"));
        assert_eq!(e.revision.as_deref(), Some("deadbeef"));
        assert!(Entry::parse("not json").is_none());
        assert!(Entry::parse("[1]").is_none());
    }

    /// A number is read as its text; an empty string is no value, so the next place that
    /// may hold the field is read (waymark writes `session_id` even when it is empty).
    #[test]
    fn numbers_are_text_and_empty_strings_are_missing() {
        let line = r#"{"id":42,"intent_id":7,"files":[{"path":"src/a.rs","conversations":[{"ranges":[],"related":[{"type":"session","value":"s-9"}]}]}],"metadata":{"waymark":{"kind":"bash","event":"PostToolUse","session_id":"","intent_id":""}}}"#;
        let e = Entry::parse(line).unwrap();
        assert_eq!(e.id.as_deref(), Some("42"));
        assert_eq!(e.intent_id.as_deref(), Some("7"));
        assert_eq!(e.session_id.as_deref(), Some("s-9"));
        let e = Entry::parse(r#"{"id":"","session_id":""}"#).unwrap();
        assert_eq!((e.id, e.session_id), (None, None));
    }
}
