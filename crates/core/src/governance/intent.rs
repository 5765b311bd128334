//! Intents, as `.orchestration/active_intents.yaml` holds them (the application reads
//! and writes the file: its `governance::intent`). The format of the intent-governed forks
//! (an `active_intents:` list of `id, name, status, owned_scope, constraints,
//! acceptance_criteria`; any other field is kept and ignored), and the shapes projects
//! write by hand: the list at the top level (or under `intents:`), statuses in any case
//! and spelling ([`Status::of`]), `title:` for `name:`, a single string for a list, numeric
//! ids, `status_history:` and other extra fields.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The canonical spellings (what `waymark init` writes, and the completed word when the
/// file gives no other hint).
pub const IN_PROGRESS: &str = "IN_PROGRESS";
pub const COMPLETED: &str = "COMPLETED";

/// The top-level keys a list of intents may sit under.
const LIST_KEYS: [&str; 2] = ["active_intents", "intents"];

/// What an intent's `status:` means to waymark, whatever its spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// `IN_PROGRESS`, `in_progress`, `In Progress`, `in-progress`, `inprogress`, `active`,
    /// `wip`, `ongoing` (any case).
    InProgress,
    /// `COMPLETED`, `completed`, `complete`, `done`, `finished` (any case).
    Completed,
    /// Anything else: `PENDING`, `planned`, `blocked`, `cancelled`, unset…
    Other,
}

impl Status {
    /// The meaning of a status value: case, `-`, `_` and spaces between words do not matter.
    pub fn of(value: &str) -> Status {
        let words: Vec<String> = value
            .split(|c: char| c == '-' || c == '_' || c.is_whitespace())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        match words.join("_").as_str() {
            "in_progress" | "inprogress" | "active" | "wip" | "ongoing" => Status::InProgress,
            "completed" | "complete" | "done" | "finished" => Status::Completed,
            _ => Status::Other,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct IntentFile {
    /// The intents, in file order (from `active_intents:`, `intents:` or the top-level list).
    pub active_intents: Vec<Intent>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Intent {
    #[serde(deserialize_with = "scalar")]
    pub id: String,
    /// `name:`, else `title:` (which stays in `extra` too).
    #[serde(default, deserialize_with = "scalar")]
    pub name: String,
    /// The status as the file spells it; [`Intent::state`] says what it means.
    #[serde(default, deserialize_with = "scalar")]
    pub status: String,
    #[serde(default, deserialize_with = "one_or_many")]
    pub owned_scope: Vec<String>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub constraints: Vec<String>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub acceptance_criteria: Vec<String>,
    /// Optional step plan for the task bound to this intent.
    #[serde(default, deserialize_with = "one_or_many")]
    pub steps: Vec<String>,
    /// Every other field (`status_history:`, `owner:`, `title:`…), kept as it was.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// A scalar as text: a number or boolean as written (`id: 7` is "7"), null as "".
fn scalar<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => s,
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    })
}

/// A list of strings, or one string standing for a one-element list (`owned_scope:
/// "src/**"`); null or a blank string is the empty list.
fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    use serde_json::Value;
    fn text<E: de::Error>(v: Value) -> Result<String, E> {
        match v {
            Value::String(s) => Ok(s),
            Value::Number(_) | Value::Bool(_) => Ok(v.to_string()),
            Value::Array(_) => Err(E::custom("expected a string, found a list")),
            Value::Object(_) => Err(E::custom("expected a string, found a mapping")),
            Value::Null => Ok(String::new()),
        }
    }
    match Value::deserialize(d)? {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .into_iter()
            .filter(|v| !v.is_null())
            .map(text)
            .collect(),
        one => {
            let s = text::<D::Error>(one)?;
            Ok(if s.trim().is_empty() {
                Vec::new()
            } else {
                vec![s]
            })
        }
    }
}

impl<'de> Deserialize<'de> for IntentFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<IntentFile, D::Error> {
        struct FileVisitor;

        impl<'de> Visitor<'de> for FileVisitor {
            type Value = IntentFile;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of intents, or a mapping with an `active_intents:` list")
            }

            fn visit_unit<E: de::Error>(self) -> Result<IntentFile, E> {
                Ok(IntentFile::default())
            }

            fn visit_none<E: de::Error>(self) -> Result<IntentFile, E> {
                Ok(IntentFile::default())
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<IntentFile, A::Error> {
                let mut intents = Vec::new();
                while let Some(i) = seq.next_element::<Intent>()? {
                    intents.push(i);
                }
                Ok(IntentFile::new(intents))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<IntentFile, A::Error> {
                let mut found: Option<(String, Vec<Intent>)> = None;
                while let Some(key) = map.next_key::<serde_json::Value>()? {
                    let key = match key {
                        serde_json::Value::String(k) if LIST_KEYS.contains(&k.as_str()) => k,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    let list = map.next_value::<Option<Vec<Intent>>>()?;
                    if let Some((first, _)) = &found {
                        return Err(de::Error::custom(format!(
                            "both `{first}:` and `{key}:` list intents; keep one"
                        )));
                    }
                    found = Some((key, list.unwrap_or_default()));
                }
                Ok(IntentFile::new(
                    found.map(|(_, list)| list).unwrap_or_default(),
                ))
            }
        }

        d.deserialize_any(FileVisitor)
    }
}

/// Why an intents file could not be read as one: the YAML parser's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Malformed(pub String);

/// The intents `text` holds (none in an empty file).
pub fn parse(text: &str) -> Result<IntentFile, Malformed> {
    if text.trim().is_empty() {
        return Ok(IntentFile::default());
    }
    serde_saphyr::from_str::<IntentFile>(text).map_err(|e| Malformed(e.to_string()))
}

impl Intent {
    /// What the intent's status means.
    pub fn state(&self) -> Status {
        Status::of(&self.status)
    }

    pub fn is_in_progress(&self) -> bool {
        self.state() == Status::InProgress
    }

    /// True when the intent has an `owned_scope` and it holds `path`.
    pub fn owns(&self, path: &str) -> bool {
        !self.owned_scope.is_empty() && super::scope::in_scope(&self.owned_scope, path)
    }
}

impl IntentFile {
    /// The file of these intents, each named by its `title:` when it has no `name:`.
    pub fn new(mut intents: Vec<Intent>) -> IntentFile {
        for i in intents.iter_mut().filter(|i| i.name.trim().is_empty()) {
            if let Some(serde_json::Value::String(title)) = i.extra.get("title") {
                i.name = title.clone();
            }
        }
        IntentFile {
            active_intents: intents,
        }
    }

    pub fn get(&self, id: &str) -> Option<&Intent> {
        self.active_intents.iter().find(|i| i.id == id)
    }

    /// The intents in progress, in file order.
    pub fn running(&self) -> impl Iterator<Item = &Intent> {
        self.active_intents.iter().filter(|i| i.is_in_progress())
    }

    /// The active intent: the chosen one if it is in progress, else the only one in
    /// progress, else (several in progress) the one whose scope holds `path`.
    pub fn active(&self, chosen: Option<&str>, path: Option<&str>) -> Option<&Intent> {
        if let Some(i) = chosen
            .and_then(|c| self.get(c))
            .filter(|i| i.is_in_progress())
        {
            return Some(i);
        }
        let running: Vec<_> = self.running().collect();
        match running.as_slice() {
            [] => None,
            [one] => Some(one),
            many => path.and_then(|p| many.iter().copied().find(|i| i.owns(p))),
        }
    }

    /// Every intent an event on `path` works toward: the active one ([`IntentFile::active`])
    /// and each other intent in progress whose `owned_scope` holds `path`, in file order.
    pub fn working_on(&self, chosen: Option<&str>, path: Option<&str>) -> Vec<&Intent> {
        let active = self.active(chosen, path);
        self.active_intents
            .iter()
            .filter(|i| {
                active.is_some_and(|a| std::ptr::eq(*i, a))
                    || (i.is_in_progress() && path.is_some_and(|p| i.owns(p)))
            })
            .collect()
    }

    /// The word a completed status is spelled with in this file: the spelling another
    /// intent's completed status already uses (the first in file order), else `completed`
    /// in the case style of `current` (the in-progress value being replaced): `COMPLETED`
    /// when it is all capitals (`IN_PROGRESS`, `ACTIVE`), `Completed` when it starts with a
    /// capital (`In Progress`, `Active`), `completed` otherwise (`in_progress`, `active`).
    pub fn completed_word(&self, current: &str) -> String {
        if let Some(done) = self
            .active_intents
            .iter()
            .find(|i| i.state() == Status::Completed)
        {
            return done.status.clone();
        }
        let mut letters = current.chars().filter(|c| c.is_alphabetic()).peekable();
        let first_upper = letters.peek().is_some_and(|c| c.is_uppercase());
        if letters.clone().all(char::is_uppercase) {
            COMPLETED.to_string()
        } else if first_upper {
            "Completed".to_string()
        } else {
            "completed".to_string()
        }
    }
}

/// A status change made: the value before and the value written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub from: String,
    pub to: String,
}

/// Why an intent's status line cannot be changed in place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error(transparent)]
    Malformed(#[from] Malformed),
    #[error("intent {0} has no `status:` line waymark can change in place")]
    NoStatusLine(String),
    #[error("changing the status line of {0} would change more than its status")]
    Unsafe(String),
}

/// The intents file `text` with intent `id`'s status set to what `to` says given the file
/// and the intent (`None`: leave it), by rewriting only that intent's `status:` line:
/// comments, order, quoting and formatting of the rest stay byte for byte. The edit is
/// textual, so the new text is parsed again and must say exactly what was meant: the same
/// intents, field for field, but for this one's status. `None` when `to` left it, or the
/// intent is not there.
pub fn edit_status(
    text: &str,
    id: &str,
    to: impl FnOnce(&IntentFile, &Intent) -> Option<String>,
) -> Result<Option<(String, Change)>, EditError> {
    let before = parse(text)?;
    let Some(current) = before.get(id) else {
        return Ok(None);
    };
    let Some(to) = to(&before, current) else {
        return Ok(None);
    };
    let from = current.status.clone();
    let new_text =
        rewrite_status(text, id, &to).ok_or_else(|| EditError::NoStatusLine(id.into()))?;
    let after = parse(&new_text).map_err(|_| EditError::Unsafe(id.into()))?;
    let mut expected = before.clone();
    if let Some(i) = expected.active_intents.iter_mut().find(|i| i.id == id) {
        i.status = to.clone();
    }
    if after != expected {
        return Err(EditError::Unsafe(id.into()));
    }
    Ok(Some((new_text, Change { from, to })))
}

/// The YAML text with intent `id`'s `status:` value replaced by `to`, keeping the line's
/// quoting, spacing and trailing comment. Only the intent's own `status:` key is taken (at
/// its item's key column: never one nested deeper, as in `status_history:` entries).
/// `None` when the intent or its status line cannot be found in block style (a flow-style
/// list or item is left alone).
pub fn rewrite_status(text: &str, id: &str, to: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let item = items(&lines)?.into_iter().find(|item| {
        item.key(&lines, "id")
            .and_then(|n| key_value(lines[n]))
            .is_some_and(|(_, _, (value, _))| unquote(value) == id)
    })?;
    let status_line = item.key(&lines, "status")?;
    let line = lines[status_line];
    let (_, _, (value, value_at)) = key_value(line)?;
    let quote = match value.chars().next() {
        Some(q @ ('"' | '\'')) => q.to_string(),
        _ => String::new(),
    };
    let (head, tail) = (&line[..value_at], &line[value_at + value.len()..]);
    let new_line = format!("{head}{quote}{to}{quote}{tail}");
    let (before, after) = (&lines[..status_line], &lines[status_line + 1..]);
    Some(before.concat() + &new_line + &after.concat())
}

/// One block-style item of the list of intents: its lines `start..end` and the column its
/// keys start at.
struct Item {
    start: usize,
    end: usize,
    col: usize,
}

impl Item {
    /// The line of the item's own key `key` (at the item's key column).
    fn key(&self, lines: &[&str], key: &str) -> Option<usize> {
        (self.start..self.end)
            .find(|&n| key_value(lines[n]).is_some_and(|(c, k, _)| c == self.col && k == key))
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Not blank, not only a comment.
fn is_content(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#')
}

/// A block sequence entry: `- …` or a lone `-`.
fn is_entry(line: &str) -> bool {
    let t = line.trim_start_matches(' ').trim_end_matches(['\n', '\r']);
    t == "-" || t.starts_with("- ")
}

/// The items of the list of intents: the top-level list, or the block list under the
/// top-level `active_intents:` (or `intents:`) key. `None` when there is no such block list.
fn items(lines: &[&str]) -> Option<Vec<Item>> {
    let first = lines
        .iter()
        .position(|l| is_content(l) && !l.starts_with("---") && !l.starts_with('%'))?;
    let from = if is_entry(lines[first]) {
        first
    } else {
        let key = lines.iter().position(|l| {
            !is_entry(l)
                && key_value(l)
                    .is_some_and(|(c, k, (v, _))| c == 0 && LIST_KEYS.contains(&k) && v.is_empty())
        })?;
        (key + 1..lines.len()).find(|&n| is_content(lines[n]))?
    };
    if !is_entry(lines[from]) {
        return None;
    }
    let list_indent = indent(lines[from]);
    let mut starts = Vec::new();
    let mut end = lines.len();
    for (n, line) in lines.iter().enumerate().skip(from) {
        if !is_content(line) {
            continue;
        }
        let ind = indent(line);
        if ind == list_indent && is_entry(line) {
            starts.push(n);
        } else if ind <= list_indent {
            end = n;
            break;
        }
    }
    let items = starts
        .iter()
        .enumerate()
        .map(|(k, &start)| {
            let end = starts.get(k + 1).copied().unwrap_or(end);
            // The keys start after the dash, or (a lone `-`) on the next content line.
            let col = key_value(lines[start])
                .map(|(c, ..)| c)
                .or_else(|| {
                    (start + 1..end)
                        .find(|&n| is_content(lines[n]))
                        .map(|n| indent(lines[n]))
                })
                .unwrap_or(list_indent + 2);
            Item { start, end, col }
        })
        .collect();
    Some(items)
}

/// For a block-mapping line `[- ]key: value  # comment`: the key's column, the key, and the
/// value (without comment or trailing space) with its byte offset in the line.
fn key_value(line: &str) -> Option<(usize, &str, (&str, usize))> {
    let body = line.trim_end_matches(['\n', '\r']);
    let t = body.trim_start_matches(' ');
    let mut col = body.len() - t.len();
    let t = match t.strip_prefix("- ") {
        Some(rest) => {
            let rest2 = rest.trim_start_matches(' ');
            col += 2 + (rest.len() - rest2.len());
            rest2
        }
        None => t,
    };
    let colon = t.find(':')?;
    let key = &t[..colon];
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let after = &t[colon + 1..];
    if !(after.is_empty() || after.starts_with(' ')) {
        return None;
    }
    let value_start = col + colon + 1 + (after.len() - after.trim_start().len());
    let rest = &body[value_start..];
    let value = match rest.chars().next() {
        Some(q @ ('"' | '\'')) => {
            let close = rest[1..].find(q)? + 2;
            &rest[..close]
        }
        // `key:  # comment`: no value on the line.
        Some('#') => "",
        _ => rest.split(" #").next().unwrap_or("").trim_end(),
    };
    Some((col, key, (value, value_start)))
}

fn unquote(v: &str) -> &str {
    v.trim_matches(|c| c == '"' || c == '\'')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governance::testing::SAMPLE_INTENTS as SAMPLE;

    #[test]
    fn parses_the_forks_format_and_keeps_extra_fields() {
        let f = parse(SAMPLE).unwrap();
        assert_eq!(f.active_intents.len(), 2);
        let i = &f.active_intents[0];
        assert_eq!(i.owned_scope, vec!["src/auth/**", "src/middleware/jwt.ts"]);
        assert_eq!(i.extra["owner"], serde_json::json!("alice"));
        assert_eq!(f.active(None, None).unwrap().id, "INT-001");
    }

    #[test]
    fn malformed_is_an_error() {
        assert!(parse("active_intents: [ {id: ").is_err());
        assert!(parse("active_intents: 5").is_err());
        assert!(parse("just a string").is_err());
        assert!(parse("- id: A\n  owned_scope: {a: 1}\n").is_err());
        let both = parse("active_intents: []\nintents: []\n").unwrap_err();
        assert!(both.0.contains("keep one"), "{both}");
    }

    #[test]
    fn empty_and_comment_only_files_have_no_intents() {
        for text in [
            "",
            "# nothing yet\n",
            "active_intents: []\n",
            "active_intents:\n",
            "~\n",
            "version: 1\n",
        ] {
            assert_eq!(parse(text).unwrap(), IntentFile::default(), "{text:?}");
        }
    }

    #[test]
    fn status_synonyms() {
        for s in [
            "IN_PROGRESS",
            "in_progress",
            "active",
            "In Progress",
            "in-progress",
            "ACTIVE",
            "InProgress",
            " wip ",
        ] {
            assert_eq!(Status::of(s), Status::InProgress, "{s}");
        }
        for s in [
            "COMPLETED",
            "completed",
            "done",
            "Done",
            "complete",
            "Finished",
        ] {
            assert_eq!(Status::of(s), Status::Completed, "{s}");
        }
        for s in [
            "PENDING",
            "planned",
            "blocked",
            "",
            "in",
            "not done",
            "CANCELLED",
        ] {
            assert_eq!(Status::of(s), Status::Other, "{s}");
        }
    }

    #[test]
    fn the_completed_word_follows_the_file() {
        let none = IntentFile::default();
        assert_eq!(none.completed_word("IN_PROGRESS"), "COMPLETED");
        assert_eq!(none.completed_word("ACTIVE"), "COMPLETED");
        assert_eq!(none.completed_word("in_progress"), "completed");
        assert_eq!(none.completed_word("active"), "completed");
        assert_eq!(none.completed_word("inProgress"), "completed");
        assert_eq!(none.completed_word("In Progress"), "Completed");
        assert_eq!(none.completed_word("In-progress"), "Completed");
        assert_eq!(none.completed_word("Active"), "Completed");
        assert_eq!(none.completed_word(""), "COMPLETED");
        // Another intent's completed spelling wins, exactly as written.
        let f = parse("- id: A\n  status: Done\n- id: B\n  status: in_progress\n").unwrap();
        assert_eq!(f.completed_word("in_progress"), "Done");
    }

    #[test]
    fn working_on_is_the_active_intent_and_every_running_owner_of_the_path() {
        let f = parse(
            "- {id: A, status: IN_PROGRESS, owned_scope: ['src/**']}\n\
             - {id: B, status: active, owned_scope: src/a.rs}\n\
             - {id: C, status: PENDING, owned_scope: ['src/**']}\n\
             - {id: D, status: IN_PROGRESS, owned_scope: ['docs/**']}\n\
             - {id: E, status: IN_PROGRESS}\n",
        )
        .unwrap();
        let ids = |v: Vec<&Intent>| v.into_iter().map(|i| i.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(f.working_on(None, Some("src/a.rs"))), ["A", "B"]);
        assert_eq!(ids(f.working_on(None, Some("src/b.rs"))), ["A"]);
        assert_eq!(
            ids(f.working_on(Some("D"), Some("src/a.rs"))),
            ["A", "B", "D"]
        );
        assert_eq!(ids(f.working_on(Some("E"), None)), ["E"]);
        assert!(f.working_on(None, None).is_empty());
        assert!(f.working_on(None, Some("README.md")).is_empty());
    }

    #[test]
    fn status_rewrite_changes_only_that_line() {
        let out = rewrite_status(SAMPLE, "INT-001", COMPLETED).unwrap();
        assert_eq!(
            out,
            SAMPLE.replace("status: \"IN_PROGRESS\"", "status: \"COMPLETED\"")
        );
        let plain = "active_intents:\n- id: A   # first\n  status: IN_PROGRESS # keep me\n  name: x\n- name: B\n  id: 'B'\n  status: 'IN_PROGRESS'\n";
        let out = rewrite_status(plain, "B", COMPLETED).unwrap();
        assert_eq!(
            out,
            plain.replace("status: 'IN_PROGRESS'", "status: 'COMPLETED'")
        );
        let out = rewrite_status(plain, "A", COMPLETED).unwrap();
        assert_eq!(
            out,
            plain.replacen("IN_PROGRESS # keep", "COMPLETED # keep", 1)
        );
        assert_eq!(rewrite_status(plain, "C", COMPLETED), None);
        // No status line in the item: nothing to rewrite (a later item's line is not taken).
        let missing =
            "active_intents:\n  - id: A\n    name: x\n  - id: B\n    status: IN_PROGRESS\n";
        assert_eq!(rewrite_status(missing, "A", COMPLETED), None);
        // Status as the first key of the item.
        let first = "active_intents:\n  - status: IN_PROGRESS\n    id: A\n";
        assert_eq!(
            rewrite_status(first, "A", "DONE").unwrap(),
            "active_intents:\n  - status: DONE\n    id: A\n"
        );
        // A lone dash, the keys on the lines below.
        let lone = "-\n  id: A\n  status: active\n";
        assert_eq!(
            rewrite_status(lone, "A", "completed").unwrap(),
            "-\n  id: A\n  status: completed\n"
        );
        // Flow style is left alone.
        assert_eq!(
            rewrite_status("active_intents: [{id: A, status: x}]\n", "A", "y"),
            None
        );
        assert_eq!(rewrite_status("- {id: A, status: x}\n", "A", "y"), None);
    }

    #[test]
    fn status_rewrite_never_takes_a_nested_status_or_id() {
        let text = "active_intents:\n  - id: A\n    status_history:\n    - status: IN_PROGRESS\n      id: B\n    - {status: PENDING}\n    notes: |\n      status: x\n    status: IN_PROGRESS\n  - id: B\n    status: PENDING\n";
        assert_eq!(
            rewrite_status(text, "A", "DONE").unwrap(),
            text.replace("    status: IN_PROGRESS\n  -", "    status: DONE\n  -")
        );
        // `id: B` inside A's history is not intent B.
        assert_eq!(
            rewrite_status(text, "B", "DONE").unwrap(),
            text.replace("status: PENDING\n", "status: DONE\n")
        );
    }

    #[test]
    fn a_file_that_is_not_a_list_of_intents_says_what_was_expected() {
        for text in ["just a string\n", "42\n", "true\n"] {
            let e = parse(text).unwrap_err();
            assert!(
                e.0.contains("a list of intents, or a mapping with an `active_intents:` list"),
                "{text:?}: {e}"
            );
        }
    }

    fn complete(f: &IntentFile, i: &Intent) -> Option<String> {
        Some(f.completed_word(&i.status))
    }

    #[test]
    fn edit_status_rewrites_the_line_and_reports_the_change() {
        let (text, change) = edit_status(SAMPLE, "INT-001", complete).unwrap().unwrap();
        assert_eq!(
            text,
            SAMPLE.replace("status: \"IN_PROGRESS\"", "status: \"COMPLETED\"")
        );
        let want = Change {
            from: "IN_PROGRESS".into(),
            to: "COMPLETED".into(),
        };
        assert_eq!(change, want);
        // The second intent, in the file's own spelling of the completed word.
        let two = "- id: A\n  status: done\n- id: B\n  status: in progress\n";
        let (text, change) = edit_status(two, "B", complete).unwrap().unwrap();
        assert_eq!(text, "- id: A\n  status: done\n- id: B\n  status: done\n");
        assert_eq!(
            (change.from.as_str(), change.to.as_str()),
            ("in progress", "done")
        );
    }

    #[test]
    fn edit_status_leaves_the_file_alone_when_there_is_nothing_to_change() {
        assert_eq!(edit_status(SAMPLE, "INT-404", complete), Ok(None));
        assert_eq!(edit_status(SAMPLE, "INT-001", |_, _| None), Ok(None));
        assert_eq!(edit_status("", "INT-001", complete), Ok(None));
    }

    #[test]
    fn edit_status_refuses_what_it_cannot_change_in_place() {
        let unsafe_ = |id: &str| Err(EditError::Unsafe(id.into()));
        // A value the YAML would read as something else than the status meant.
        let plain = "- id: A\n  status: active\n";
        let to = |s: &'static str| move |_: &IntentFile, _: &Intent| Some(s.to_string());
        assert_eq!(edit_status(plain, "A", to("done # yes")), unsafe_("A"));
        assert_eq!(edit_status(plain, "A", to("done: yes")), unsafe_("A"));
        let quoted = "- id: A\n  status: \"active\"\n";
        assert_eq!(edit_status(quoted, "A", to("say \"done\"")), unsafe_("A"));
        // Flow style has no status line of its own.
        assert_eq!(
            edit_status("- {id: A, status: active}\n", "A", to("done")),
            Err(EditError::NoStatusLine("A".into()))
        );
        assert!(matches!(
            edit_status("- id: [A\n", "A", to("done")),
            Err(EditError::Malformed(_))
        ));
    }

    #[test]
    fn status_rewrite_finds_the_list_in_every_block_shape() {
        let cases = [
            (
                "a comment and a blank line first",
                "# intents\n\n- id: A\n  status: active\n",
            ),
            ("a document marker", "---\n- id: A\n  status: active\n"),
            ("a directive", "%YAML 1.2\n---\n- id: A\n  status: active\n"),
            (
                "blank and comment lines under the key",
                "active_intents:\n\n  # first\n  - id: A\n    status: active\n",
            ),
            (
                "other top-level keys and mappings first",
                "version: 1\nmeta:\n  owner: me\nactive_intents:\n- id: A\n  status: active\n",
            ),
            (
                "a comment after the key",
                "intents:  # the list\n- id: A\n  status: active\n",
            ),
            ("spaces after the dash", "-   id: A\n    status: active\n"),
            (
                "a comment after a lone dash",
                "- # JWT: the auth work\n    id: A\n    status: active\n",
            ),
            (
                "a quoted id with a hash",
                "- id: \"bug #12\"\n  status: active\n",
            ),
        ];
        for (shape, text) in cases {
            let id = if text.contains("#12") { "bug #12" } else { "A" };
            assert_eq!(
                rewrite_status(text, id, "done").as_deref(),
                Some(text.replace("status: active", "status: done").as_str()),
                "{shape}"
            );
            let edited = edit_status(text, id, |_, _| Some("done".into()));
            assert!(matches!(edited, Ok(Some(_))), "{shape}: {edited:?}");
        }
    }
}
