//! Intents: `.orchestration/active_intents.yaml`. The format of the intent-governed forks
//! (an `active_intents:` list of `id, name, status, owned_scope, constraints,
//! acceptance_criteria`; any other field is kept and ignored), and the shapes projects
//! write by hand: the list at the top level (or under `intents:`), statuses in any case
//! and spelling ([`Status::of`]), `title:` for `name:`, a single string for a list, numeric
//! ids, `status_history:` and other extra fields.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::PathBuf;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::project::Project;

pub const INTENTS_FILE: &str = "active_intents.yaml";
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

#[derive(Debug, thiserror::Error)]
pub enum IntentError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path} is not valid: {message}")]
    Malformed { path: PathBuf, message: String },
}

/// `waymark intent use ID` writes the chosen intent's id here (one line).
pub const CHOSEN_FILE: &str = "active_intent";

/// The intent chosen with `waymark intent use`, if any.
pub fn chosen(project: &Project) -> Option<String> {
    let text = fs::read_to_string(project.state_file(CHOSEN_FILE)).ok()?;
    let id = text.trim();
    (!id.is_empty()).then(|| id.to_string())
}

pub fn intents_path(project: &Project) -> PathBuf {
    project.state_file(INTENTS_FILE)
}

/// Loads the intents. `Ok(None)` when the project has no intents file.
pub fn load(project: &Project) -> Result<Option<IntentFile>, IntentError> {
    let path = intents_path(project);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(IntentError::Io { path, source }),
    };
    parse(&text)
        .map(Some)
        .map_err(|message| IntentError::Malformed { path, message })
}

pub fn parse(text: &str) -> Result<IntentFile, String> {
    if text.trim().is_empty() {
        return Ok(IntentFile::default());
    }
    serde_saphyr::from_str::<IntentFile>(text).map_err(|e| e.to_string())
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
        !self.owned_scope.is_empty() && crate::governance::scope::in_scope(&self.owned_scope, path)
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

/// Why an intent's status could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error(transparent)]
    Intent(#[from] IntentError),
    #[error("cannot lock {path}: {message}")]
    Lock { path: PathBuf, message: String },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("intent {0} has no `status:` line waymark can change in place")]
    NoStatusLine(String),
    #[error("changing the status line of {0} would change more than its status")]
    Unsafe(String),
}

/// A status change made: the value before and the value written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub from: String,
    pub to: String,
}

/// Completes intent `id` if it is in progress: its status becomes the file's completed
/// word ([`IntentFile::completed_word`]). `None` when it is not in progress (or is gone).
pub fn complete(project: &Project, id: &str) -> Result<Option<Change>, StatusError> {
    set_status(project, id, |file, intent| {
        intent
            .is_in_progress()
            .then(|| file.completed_word(&intent.status))
    })
}

/// Sets intent `id`'s status to what `to` says given the file and the intent (`None`:
/// leave it), by rewriting only that intent's `status:` line: comments, order, quoting and
/// formatting of the rest of the file stay byte for byte. Done under the file's lock, so
/// two hooks that see the criteria met at once make one transition. `None` when `to` left
/// it, or the intent is gone.
pub fn set_status(
    project: &Project,
    id: &str,
    to: impl FnOnce(&IntentFile, &Intent) -> Option<String>,
) -> Result<Option<Change>, StatusError> {
    let path = intents_path(project);
    let _lock = crate::store::FileLock::acquire(&path).map_err(|e| StatusError::Lock {
        path: path.clone(),
        message: e.to_string(),
    })?;
    let text = fs::read_to_string(&path).map_err(|source| IntentError::Io {
        path: path.clone(),
        source,
    })?;
    let before = parse(&text).map_err(|message| IntentError::Malformed {
        path: path.clone(),
        message,
    })?;
    let Some(current) = before.get(id) else {
        return Ok(None);
    };
    let Some(to) = to(&before, current) else {
        return Ok(None);
    };
    let from = current.status.clone();
    let new_text =
        rewrite_status(&text, id, &to).ok_or_else(|| StatusError::NoStatusLine(id.into()))?;
    // The edit is textual; check that the YAML now says exactly what was meant: the same
    // intents, field for field, but for this one's status.
    let after = parse(&new_text).map_err(|_| StatusError::Unsafe(id.into()))?;
    let mut expected = before.clone();
    if let Some(i) = expected.active_intents.iter_mut().find(|i| i.id == id) {
        i.status = to.clone();
    }
    if after != expected {
        return Err(StatusError::Unsafe(id.into()));
    }
    crate::store::write_verbatim(&path, new_text.as_bytes())
        .map_err(|source| StatusError::Write { path, source })?;
    Ok(Some(Change { from, to }))
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
    let mut new_line = String::with_capacity(line.len() + to.len());
    new_line.push_str(&line[..value_at]);
    new_line.push_str(&quote);
    new_line.push_str(to);
    new_line.push_str(&quote);
    new_line.push_str(&line[value_at + value.len()..]);
    let mut out = String::with_capacity(text.len() + to.len());
    for (n, l) in lines.iter().enumerate() {
        out.push_str(if n == status_line { &new_line } else { l });
    }
    Some(out)
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

    const SAMPLE: &str = r#"
# intents for the sprint
active_intents:
  - id: "INT-001"
    name: "JWT Authentication Migration"
    status: "IN_PROGRESS"
    owned_scope:
      - "src/auth/**"
      - "src/middleware/jwt.ts"
    constraints:
      - "Must not use external auth providers"
    acceptance_criteria:
      - "Unit tests in tests/auth/ pass"
    owner: alice
  - id: INT-002
    name: Docs
    status: PENDING
"#;

    fn project_with(text: &str) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path().to_path_buf());
        let path = intents_path(&project);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        (dir, project)
    }

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
        assert!(both.contains("keep one"), "{both}");
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
    fn complete_under_lock_once() {
        let (_dir, project) = project_with(SAMPLE);
        let change = complete(&project, "INT-001").unwrap().unwrap();
        assert_eq!(
            change,
            Change {
                from: "IN_PROGRESS".into(),
                to: "COMPLETED".into()
            }
        );
        assert_eq!(
            fs::read_to_string(intents_path(&project)).unwrap(),
            SAMPLE.replace("\"IN_PROGRESS\"", "\"COMPLETED\"")
        );
        assert_eq!(complete(&project, "INT-001").unwrap(), None);
        assert_eq!(complete(&project, "INT-002").unwrap(), None);
        assert_eq!(complete(&project, "nope").unwrap(), None);
    }

    #[test]
    fn a_rewrite_that_would_change_more_is_refused() {
        // B's status is an alias of A's: rewriting A's line would change B's too (or break
        // it); the re-parse catches it and the file stays as it was.
        let text = "- id: A\n  status: &s in_progress\n- id: B\n  status: *s\n";
        let (_dir, project) = project_with(text);
        assert!(matches!(
            complete(&project, "A"),
            Err(StatusError::Unsafe(_))
        ));
        assert_eq!(fs::read_to_string(intents_path(&project)).unwrap(), text);
    }

    /// Ten shapes of intent file as projects write them: each parses, its one intent in
    /// progress is found, and completing it changes only that intent's status line, in the
    /// file's own spelling.
    #[test]
    fn real_world_shapes_parse_and_complete_in_their_own_convention() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/intents");
        // (file, the intent in progress, its name, intents in the file, completed word)
        let cases = [
            (
                "01-forks-quoted.yaml",
                "INT-001",
                "JWT Authentication Migration",
                2,
                "COMPLETED",
            ),
            (
                "02-top-level-list.yaml",
                "AUTH-2",
                "Session expiry",
                2,
                "DONE",
            ),
            (
                "03-lowercase.yaml",
                "feat-search",
                "Full-text search",
                3,
                "completed",
            ),
            (
                "04-title.yaml",
                "I-10",
                "Migrate the CLI to clap 4",
                2,
                "completed",
            ),
            (
                "05-status-history.yaml",
                "INT-7",
                "Nil-safe parser",
                2,
                "COMPLETED",
            ),
            (
                "06-comments-flow.yaml",
                "ST-1",
                "Write-ahead log",
                2,
                "COMPLETED",
            ),
            ("07-numeric-ids.yaml", "2", "Billing page", 3, "Done"),
            (
                "08-single-string.yaml",
                "PARSE-2",
                "Streaming parser",
                2,
                "completed",
            ),
            (
                "09-mixed-case.yaml",
                "UX-4",
                "Keyboard shortcuts",
                2,
                "Completed",
            ),
            (
                "10-extra-top-level.yaml",
                "LS-3",
                "Idempotent payments API",
                2,
                "COMPLETED",
            ),
        ];
        let mut seen = 0;
        for (name, id, title, count, word) in cases {
            let text = fs::read_to_string(format!("{dir}/{name}")).unwrap();
            let file = parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(file.active_intents.len(), count, "{name}");
            assert_eq!(file.running().count(), 1, "{name}");
            let active = file.active(None, None).unwrap();
            assert_eq!(
                (active.id.as_str(), active.name.as_str()),
                (id, title),
                "{name}"
            );
            assert!(!active.owned_scope.is_empty(), "{name}");

            let (_tmp, project) = project_with(&text);
            let change = complete(&project, id)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .unwrap_or_else(|| panic!("{name}: not completed"));
            assert_eq!(change.from, active.status, "{name}");
            assert_eq!(change.to, word, "{name}");
            let after = fs::read_to_string(intents_path(&project)).unwrap();
            let (old, new): (Vec<_>, Vec<_>) = (
                text.split_inclusive('\n').collect(),
                after.split_inclusive('\n').collect(),
            );
            assert_eq!(old.len(), new.len(), "{name}");
            let changed: Vec<_> = (0..old.len()).filter(|&n| old[n] != new[n]).collect();
            assert_eq!(changed.len(), 1, "{name}: {after}");
            let n = changed[0];
            assert!(
                old[n].trim_start().starts_with("status:"),
                "{name}: {}",
                old[n]
            );
            assert_eq!(new[n], old[n].replacen(&change.from, word, 1), "{name}");
            let reparsed = parse(&after).unwrap();
            assert_eq!(
                reparsed.get(id).unwrap().state(),
                Status::Completed,
                "{name}"
            );
            assert_eq!(complete(&project, id).unwrap(), None, "{name}");
            seen += 1;
        }
        assert_eq!(
            seen,
            fs::read_dir(dir).unwrap().count(),
            "every fixture is tested"
        );
    }

    #[test]
    fn shapes_in_detail() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/intents");
        let read =
            |name: &str| parse(&fs::read_to_string(format!("{dir}/{name}")).unwrap()).unwrap();
        // A single string is a one-element list.
        let f = read("08-single-string.yaml");
        let i = f.get("PARSE-2").unwrap();
        assert_eq!(i.owned_scope, ["src/parser/**"]);
        assert_eq!(i.constraints, ["no new dependencies"]);
        assert_eq!(i.acceptance_criteria, ["test result: ok"]);
        assert_eq!(i.steps, ["write the tokenizer"]);
        assert_eq!(
            f.get("PARSE-3").unwrap().owned_scope,
            ["src/parser/recover.rs"]
        );
        // status_history is kept, as written.
        let f = read("05-status-history.yaml");
        let h = &f.get("INT-7").unwrap().extra["status_history"];
        assert_eq!(h[1]["status"], "IN_PROGRESS");
        assert_eq!(
            f.get("INT-8").unwrap().extra["status_history"][0],
            "PENDING 2026-01-02"
        );
        // Flow lists and comments.
        let f = read("06-comments-flow.yaml");
        let i = f.get("ST-1").unwrap();
        assert_eq!(i.owned_scope, ["src/wal/**", "src/storage/mod.rs"]);
        assert_eq!(i.constraints, ["no unsafe", "keep the on-disk format"]);
        assert_eq!(i.acceptance_criteria[1], r"re:\d+ passed");
        // `title:` names the intent and is kept.
        let f = read("04-title.yaml");
        assert_eq!(f.get("I-11").unwrap().name, "Man page");
        assert_eq!(f.get("I-11").unwrap().extra["title"], "Man page");
        // Numeric ids are text.
        assert_eq!(read("07-numeric-ids.yaml").active_intents[0].id, "1");
    }
}
