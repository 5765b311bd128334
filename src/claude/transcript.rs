//! Reading Claude Code's session transcript: its tail, for context usage, and the start
//! of a turn, to tell a conversation rewound (/rewind) from one that goes on.
//!
//! The transcript is a JSONL file Claude Code only appends to. Each entry of the
//! conversation names its parent (`uuid`, `parentUuid`); a rewound conversation is one
//! whose next prompt's parent is an earlier entry, not the last one: the entries after
//! that parent stay in the file, on a branch the conversation left.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

use crate::store::{find_before, find_from_end};

#[derive(Deserialize)]
struct Line {
    message: Option<Message>,
}

#[derive(Deserialize)]
struct Message {
    usage: Option<Usage>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Usage {
    input_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
    output_tokens: u64,
}

/// Tokens in the context window at the last assistant message: its prompt (with cache
/// reads and writes) plus its output. `None` when the transcript is missing or has none.
pub fn last_context_tokens(path: &Path) -> Option<u64> {
    find_from_end(path, 256 * 1024, |line| {
        if !line.contains("\"usage\"") {
            return None;
        }
        let u = serde_json::from_str::<Line>(line).ok()?.message?.usage?;
        let prompt = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
        Some(prompt + u.output_tokens)
    })
    .ok()
    .flatten()
}

/// How a turn began, as the transcript tells once its prompt is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnStart {
    /// The prompt is not in the transcript yet (or cannot be read): ask again later.
    NotYet,
    /// The prompt follows the conversation's last entry.
    Continued,
    /// The prompt follows an earlier entry: the conversation was rewound to it. Its time,
    /// `None` when the conversation was rewound to its start (or that entry is not found).
    Rewound(Option<DateTime<Utc>>),
}

/// How far around a turn's start the transcript is read: the prompt is written just
/// after it; the entry before it, just before.
const AROUND: u64 = 2 * 1024 * 1024;
/// How far back the entry a conversation was rewound to is looked for.
const BACK: u64 = 64 * 1024 * 1024;

/// Whether the turn whose prompt was submitted when the transcript at `path` was `from`
/// bytes long (the prompt, `prompt_id`, is written after) continues the conversation.
pub fn turn_start(path: &Path, from: u64, prompt_id: Option<&str>) -> TurnStart {
    let Some(prompt) = prompt_after(path, from, prompt_id) else {
        return TurnStart::NotYet;
    };
    let last = find_before(path, prompt.at, AROUND, |line| Entry::of(line)?.uuid);
    let Ok(last) = last else {
        return TurnStart::NotYet;
    };
    if prompt.parent == last {
        return TurnStart::Continued;
    }
    let Some(parent) = prompt.parent else {
        return TurnStart::Rewound(None);
    };
    let time = find_before(path, prompt.at, BACK, |line| {
        if !line.contains(parent.as_str()) {
            return None;
        }
        let e = Entry::of(line)?;
        (e.uuid.as_deref() == Some(parent.as_str())).then_some(e.timestamp)
    });
    TurnStart::Rewound(time.ok().flatten().flatten())
}

/// The turn's prompt entry: its parent and where its line starts.
struct Prompt {
    parent: Option<String>,
    at: u64,
}

/// The first prompt entry written after `from` (the one of `prompt_id` when given).
fn prompt_after(path: &Path, from: u64, prompt_id: Option<&str>) -> Option<Prompt> {
    let mut file = crate::store::open_regular(path).ok()??;
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut bytes = Vec::new();
    file.take(AROUND).read_to_end(&mut bytes).ok()?;
    let mut at = from;
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        let start = at;
        at += line.len() as u64;
        if line.last() != Some(&b'\n') {
            break;
        }
        let Some(e) = std::str::from_utf8(line).ok().and_then(Entry::of) else {
            continue;
        };
        let id_matches = prompt_id.is_none_or(|id| e.prompt_id.as_deref() == Some(id));
        if e.is_prompt && id_matches {
            return Some(Prompt {
                parent: e.parent,
                at: start,
            });
        }
    }
    None
}

/// What the turn check reads of a transcript line: entries of the conversation itself
/// (not a subagent's, not Claude Code's own bookkeeping lines, which have no `uuid`).
#[derive(Debug, Default)]
struct Entry {
    uuid: Option<String>,
    parent: Option<String>,
    timestamp: Option<DateTime<Utc>>,
    prompt_id: Option<String>,
    /// A prompt: a user entry with text and no tool result.
    is_prompt: bool,
}

impl Entry {
    fn of(line: &str) -> Option<Entry> {
        if !line.contains("\"uuid\"") {
            return None;
        }
        let v: Value = serde_json::from_str(line).ok()?;
        let uuid = v.get("uuid")?.as_str()?.to_string();
        if v["isSidechain"] == true || !v.as_object()?.contains_key("parentUuid") {
            return None;
        }
        let text = match &v["message"]["content"] {
            Value::String(_) => true,
            Value::Array(blocks) => {
                blocks.iter().any(|b| b["type"] == "text")
                    && !blocks.iter().any(|b| b["type"] == "tool_result")
            }
            _ => false,
        };
        Some(Entry {
            uuid: Some(uuid),
            parent: v["parentUuid"].as_str().map(str::to_string),
            timestamp: v["timestamp"].as_str().and_then(|t| t.parse().ok()),
            prompt_id: v["promptId"].as_str().map(str::to_string),
            is_prompt: v["type"] == "user" && text && v["isMeta"] != true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the line holding `needle` starts, and the prompt id on it.
    fn line_of(text: &str, needle: &str) -> (u64, Option<String>) {
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            if line.contains(needle) && line.contains("\"type\":\"user\"") {
                let v: Value = serde_json::from_str(line).unwrap();
                return (at, v["promptId"].as_str().map(str::to_string));
            }
            at += line.len() as u64;
        }
        panic!("no {needle:?}")
    }

    /// A transcript Claude Code 2.1.332 wrote: two turns, then a third that goes on from
    /// the end of the first (tests/e2e/capture.rs made it with the real CLI).
    #[test]
    fn a_rewound_conversation_is_told_from_one_that_goes_on() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/claude-code-2.1.332/transcript-rewound.jsonl");
        let text = std::fs::read_to_string(&p).unwrap();
        let (first, id) = line_of(&text, "\"First turn\"");
        assert_eq!(turn_start(&p, first, id.as_deref()), TurnStart::Continued);
        let (second, id) = line_of(&text, "\"Second turn\"");
        assert_eq!(turn_start(&p, second, id.as_deref()), TurnStart::Continued);
        // Asked before the prompt is written, and with no prompt id: the same answers.
        assert_eq!(turn_start(&p, second - 1, None), TurnStart::Continued);
        let (third, id) = line_of(&text, "\"Rewound turn\"");
        let kept = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|e| e["type"] == "assistant" && e.to_string().contains("first turn done"))
            .unwrap();
        let at: DateTime<Utc> = kept["timestamp"].as_str().unwrap().parse().unwrap();
        assert_eq!(
            turn_start(&p, third, id.as_deref()),
            TurnStart::Rewound(Some(at))
        );
        assert_eq!(
            turn_start(&p, third, Some("another prompt")),
            TurnStart::NotYet
        );
        assert_eq!(turn_start(&p, text.len() as u64, None), TurnStart::NotYet);
        assert_eq!(
            turn_start(Path::new("/nonexistent"), 0, None),
            TurnStart::NotYet
        );
    }

    #[test]
    fn reads_the_recorded_transcript() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/claude-code-2.1.197/transcript-sample.jsonl");
        assert_eq!(last_context_tokens(&p), Some(20581 + 22));
        assert_eq!(last_context_tokens(Path::new("/nonexistent")), None);
    }
}
