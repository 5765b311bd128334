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
                    .find(|i| crate::scope::in_scope(&i.owned_scope, p))
            }),
        }
    }
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
}
