//! Intents: `.orchestration/active_intents.yaml`, in the format the intent-governed forks
//! use (`active_intents:` list of `id, name, status, owned_scope, constraints,
//! acceptance_criteria`; any other field is kept and ignored).

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::PathBuf;

use serde::Deserialize;

use crate::project::Project;

pub const INTENTS_FILE: &str = "active_intents.yaml";
pub const IN_PROGRESS: &str = "IN_PROGRESS";
pub const COMPLETED: &str = "COMPLETED";

#[derive(Debug, Clone, Default, Deserialize)]
pub struct IntentFile {
    #[serde(default)]
    pub active_intents: Vec<Intent>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Intent {
    #[serde(deserialize_with = "scalar")]
    pub id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub owned_scope: Vec<String>,
    #[serde(default)]
    pub constraints: Vec<String>,
    #[serde(default)]
    pub acceptance_criteria: Vec<String>,
    /// Optional step plan for the task bound to this intent.
    #[serde(default)]
    pub steps: Vec<String>,
    /// Every other field, kept as it was.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

fn scalar<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    })
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
    pub fn is_in_progress(&self) -> bool {
        self.status.eq_ignore_ascii_case(IN_PROGRESS)
    }
}

impl IntentFile {
    pub fn get(&self, id: &str) -> Option<&Intent> {
        self.active_intents.iter().find(|i| i.id == id)
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
        let running: Vec<_> = self
            .active_intents
            .iter()
            .filter(|i| i.is_in_progress())
            .collect();
        match running.as_slice() {
            [] => None,
            [one] => Some(one),
            many => path.and_then(|p| {
                many.iter()
                    .copied()
                    .find(|i| crate::governance::scope::in_scope(&i.owned_scope, p))
            }),
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

/// Sets intent `id`'s status to `to` if it is currently `from` (case-insensitive), by
/// rewriting only that intent's `status:` line: comments, order, quoting and formatting
/// of the rest of the file stay byte for byte. Done under the file's lock, so two hooks
/// that see the criteria met at once make one transition. Returns the previous status
/// when it changed, `None` when the intent was not in status `from` (or is gone).
pub fn set_status(
    project: &Project,
    id: &str,
    from: &str,
    to: &str,
) -> Result<Option<String>, StatusError> {
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
    let Some(current) = before.get(id).map(|i| i.status.clone()) else {
        return Ok(None);
    };
    if !current.eq_ignore_ascii_case(from) {
        return Ok(None);
    }
    let new_text =
        rewrite_status(&text, id, to).ok_or_else(|| StatusError::NoStatusLine(id.into()))?;
    // The edit is textual; check that the YAML now says exactly what was meant.
    let after = parse(&new_text).map_err(|_| StatusError::Unsafe(id.into()))?;
    let same_elsewhere = before.active_intents.len() == after.active_intents.len()
        && before
            .active_intents
            .iter()
            .zip(&after.active_intents)
            .all(|(a, b)| {
                a.id == b.id
                    && a.owned_scope == b.owned_scope
                    && a.acceptance_criteria == b.acceptance_criteria
                    && (a.status == b.status || (a.id == id && b.status == to))
            });
    if !same_elsewhere || after.get(id).map(|i| i.status.as_str()) != Some(to) {
        return Err(StatusError::Unsafe(id.into()));
    }
    crate::store::write_verbatim(&path, new_text.as_bytes())
        .map_err(|source| StatusError::Write { path, source })?;
    Ok(Some(current))
}

/// The YAML text with intent `id`'s `status:` value replaced by `to`, keeping the line's
/// quoting, spacing and trailing comment. `None` when the intent or its status line cannot
/// be found in block style (a flow-style item is left alone).
pub fn rewrite_status(text: &str, id: &str, to: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // The line holding `id: <id>` and the column its key starts at.
    let (id_line, col) = lines.iter().enumerate().find_map(|(n, line)| {
        let (key_col, key, value) = key_value(line)?;
        (key == "id" && unquote(value.0) == id).then_some((n, key_col))
    })?;
    // The item starts at the `- ` whose dash sits two columns left of the keys.
    let start = (0..=id_line).rev().find(|&n| {
        let l = lines[n];
        let indent = l.len() - l.trim_start_matches(' ').len();
        indent + 2 == col && l.trim_start_matches(' ').starts_with("- ")
    })?;
    let end = (start + 1..lines.len())
        .find(|&n| {
            let l = lines[n];
            let t = l.trim_start_matches(' ');
            let indent = l.len() - t.len();
            !(t.trim().is_empty() || t.starts_with('#')) && indent < col
        })
        .unwrap_or(lines.len());
    let status_line = (start..end)
        .find(|&n| key_value(lines[n]).is_some_and(|(c, key, _)| c == col && key == "status"))?;
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
    }

    #[test]
    fn set_status_under_lock_once() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path().to_path_buf());
        let path = intents_path(&project);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, SAMPLE).unwrap();
        let prev = set_status(&project, "INT-001", IN_PROGRESS, COMPLETED).unwrap();
        assert_eq!(prev.as_deref(), Some("IN_PROGRESS"));
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            SAMPLE.replace("\"IN_PROGRESS\"", "\"COMPLETED\"")
        );
        assert_eq!(
            set_status(&project, "INT-001", IN_PROGRESS, COMPLETED).unwrap(),
            None
        );
        assert_eq!(
            set_status(&project, "nope", IN_PROGRESS, COMPLETED).unwrap(),
            None
        );
    }
}
