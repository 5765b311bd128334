//! The layers of the configuration (user file, project file, environment), merged key by
//! key, with where each effective value came from.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Config, project_config_path, user_config_dir};
use waymark_core::config::table::{ENV_ALIASES, KEYS, key_names, refused_from_project};

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "where")]
pub enum Origin {
    Default,
    User(String),
    Project(String),
    Env(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => write!(f, "default"),
            Origin::User(p) => write!(f, "user config {p}"),
            Origin::Project(p) => write!(f, "project config {p}"),
            Origin::Env(v) => write!(f, "environment ${v}"),
        }
    }
}

/// A value that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigError {
    pub key: String,
    pub origin: Origin,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (key, message, origin) = (&self.key, &self.message, &self.origin);
        write!(f, "{key}: {message} (from {origin}); using the default")
    }
}

/// The configuration with where each value came from and what was wrong.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub errors: Vec<ConfigError>,
    /// The layers it was made from, for [`Loaded::values`].
    layers: Vec<(Map<String, Value>, Origin)>,
}

impl Loaded {
    /// The effective raw value and its origin per key, in key order (`config show`).
    pub fn values(&self) -> BTreeMap<&'static str, (Value, Origin)> {
        merge(&self.layers, &mut Vec::new()).1
    }
}

/// Loads the layers for a project. Never fails: problems are in `errors`.
pub fn load(root: &Path) -> Loaded {
    let mut layers: Vec<(Map<String, Value>, Origin)> = Vec::new();
    let mut errors = Vec::new();
    let user = Origin::User as fn(String) -> Origin;
    let files = [
        user_config_dir().map(|d| (d.join("config.json"), user)),
        Some((project_config_path(root), Origin::Project)),
    ];
    for (path, origin) in files.into_iter().flatten() {
        let origin = origin(path.display().to_string());
        match read_layer(&path) {
            Ok(Some(map)) => layers.push((map, origin)),
            Ok(None) => {}
            Err(message) => errors.push(ConfigError {
                key: "(file)".into(),
                origin,
                message,
            }),
        }
    }
    layers.push(env_layer());
    from_layers(layers, errors)
}

fn from_layers(mut layers: Vec<(Map<String, Value>, Origin)>, errors: Vec<ConfigError>) -> Loaded {
    let mut errors = errors;
    layers.retain(|(map, _)| !map.is_empty());
    // Nothing configured (the usual case): the defaults, with no key to look up.
    let config = match layers.is_empty() {
        true => Config::default(),
        false => merge(&layers, &mut errors).0,
    };
    Loaded {
        config,
        errors,
        layers,
    }
}

/// The configuration and each key's effective value and origin; the errors join `errors`.
fn merge(
    layers: &[(Map<String, Value>, Origin)],
    errors: &mut Vec<ConfigError>,
) -> (Config, BTreeMap<&'static str, (Value, Origin)>) {
    let mut config = Config::default();
    let mut values = BTreeMap::new();
    for key in KEYS {
        let mut effective = (key.default_value(), Origin::Default);
        for (map, origin) in layers {
            let Some(v) = lookup(map, key.name) else {
                continue;
            };
            let origin = match origin {
                Origin::Env(_) => Origin::Env(env_var_of(map, key.name)),
                o => o.clone(),
            };
            let before = config.clone();
            let refused = match (key.apply)(&mut config, v) {
                Ok(()) if matches!(origin, Origin::Project(_)) => {
                    refused_from_project(key.name, &before, &config).map(str::to_string)
                }
                Ok(()) => None,
                Err(message) => Some(message.to_string()),
            };
            match refused {
                None => effective = (v.clone(), origin),
                Some(message) => {
                    errors.push(ConfigError {
                        key: key.name.into(),
                        origin,
                        message,
                    });
                    // What was in force before this layer stays.
                    config = before;
                }
            }
        }
        values.insert(key.name, effective);
    }
    (config, values)
}

/// Parses and checks one value for a key without touching any file (for `config set`).
pub fn check(key: &str, value: &Value) -> anyhow::Result<()> {
    let k = KEYS.iter().find(|k| k.name == key).ok_or_else(|| {
        anyhow::anyhow!(
            "unknown key `{key}`; known keys: {}",
            key_names().collect::<Vec<_>>().join(", ")
        )
    })?;
    Ok((k.apply)(&mut Config::default(), value)?)
}

/// Reads a JSON config file. `Ok(None)` when it does not exist.
fn read_layer(path: &Path) -> Result<Option<Map<String, Value>>, String> {
    let text = crate::store::found(fs::read_to_string(path));
    let Some(text) = text.map_err(|e| format!("cannot read {}: {e}", path.display()))? else {
        return Ok(None);
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(mut map)) => {
            // contextd and ATLAS keep these settings under a `hooks` object.
            if let Some(Value::Object(hooks)) = map.remove("hooks") {
                for (k, v) in hooks {
                    map.entry(k).or_insert(v);
                }
            }
            Ok(Some(map))
        }
        Ok(_) => Err(format!("{} is not a JSON object", path.display())),
        Err(e) => Err(format!("{} is not valid JSON: {e}", path.display())),
    }
}

/// The environment variables whose names start with one of `prefixes`, as UTF-8.
fn env_with_prefix(prefixes: &[&str]) -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| prefixes.iter().any(|p| k.starts_with(p)))
        .collect()
}

/// Environment overrides as a layer. Values are JSON when they parse as JSON
/// (`false`, `80`, `["a"]`), strings otherwise (`5m`, `prompt`).
/// The environment is read in one pass, and only variables with waymark's or contextd's
/// prefix are looked at: a hook pays nothing for the keys nobody set.
fn env_layer() -> (Map<String, Value>, Origin) {
    let mut map = Map::new();
    let parse = |raw: String| serde_json::from_str(&raw).unwrap_or(Value::String(raw));
    let ours = env_with_prefix(&["WAYMARK_", "CONTEXTD_"]);
    if ours.is_empty() {
        return (map, Origin::Env(String::new()));
    }
    // Aliases first, so that waymark's own name for a key wins over contextd's.
    let aliases = ENV_ALIASES.iter().map(|(var, key)| (var.to_string(), *key));
    let names = KEYS.iter().map(|k| (env_name(k.name), k.name));
    for (var, key) in aliases.chain(names) {
        if let Some((_, raw)) = ours.iter().find(|(k, _)| *k == var) {
            map.insert(key.to_string(), parse(raw.clone()));
            map.insert(format!("\0env:{key}"), Value::String(var));
        }
    }
    (map, Origin::Env(String::new()))
}

/// `retention.completed` → `WAYMARK_RETENTION_COMPLETED`.
pub fn env_name(key: &str) -> String {
    format!("WAYMARK_{}", key.replace('.', "_").to_uppercase())
}

fn env_var_of(map: &Map<String, Value>, key: &str) -> String {
    map.get(&format!("\0env:{key}"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Finds `a.b` as `{"a":{"b":…}}` or as a literal `"a.b"` key.
fn lookup<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if let Some(v) = map.get(key) {
        return Some(v);
    }
    let (head, rest) = key.split_once('.')?;
    match map.get(head)? {
        Value::Object(inner) => lookup(inner, rest),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_by_prefix() {
        // The test process's own environment: PATH is set, a made-up prefix matches nothing.
        assert!(env_with_prefix(&["PATH"]).iter().any(|(k, _)| k == "PATH"));
        assert!(env_with_prefix(&["WAYMARK_TEST_NO_SUCH_PREFIX_"]).is_empty());
    }
    use serde_json::json;
    use std::time::Duration;
    use waymark_core::config::Switch;

    fn layer(v: Value, origin: Origin) -> (Map<String, Value>, Origin) {
        (v.as_object().unwrap().clone(), origin)
    }

    #[test]
    fn later_layers_win_and_origins_are_kept() {
        let l = from_layers(
            vec![
                layer(
                    json!({"max_checkpoints": 10, "retention": {"failed": "1h"}}),
                    Origin::User("u".into()),
                ),
                layer(json!({"max_checkpoints": 20}), Origin::Project("p".into())),
            ],
            vec![],
        );
        assert_eq!(l.config.max_checkpoints, 20);
        assert_eq!(l.values()["max_checkpoints"].1, Origin::Project("p".into()));
        assert_eq!(l.config.retention.failed, Duration::from_secs(3600));
        assert!(l.errors.is_empty());
    }

    #[test]
    fn a_bad_value_is_named_and_falls_back() {
        let l = from_layers(
            vec![
                layer(
                    json!({"checkpoint_threshold_percent": 60}),
                    Origin::Project("p".into()),
                ),
                layer(
                    json!({"auto_resume_on_start": "maybe", "stale_threshold": "soon"}),
                    Origin::User("u".into()),
                ),
            ],
            vec![],
        );
        assert_eq!(l.config.checkpoint_threshold_percent, 70);
        assert_eq!(l.config.auto_resume_on_start, Switch::On);
        let mut keys: Vec<_> = l.errors.iter().map(|e| e.key.as_str()).collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "auto_resume_on_start",
                "checkpoint_threshold_percent",
                "stale_threshold"
            ]
        );
        assert!(
            l.errors
                .iter()
                .any(|e| e.message.contains("out of range 70–95"))
        );
    }

    #[test]
    fn hooks_object_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.json");
        fs::write(&p, r#"{"hooks":{"verify_before_clear":false}}"#).unwrap();
        let map = read_layer(&p).unwrap().unwrap();
        assert_eq!(map["verify_before_clear"], json!(false));
    }

    #[test]
    fn env_names() {
        assert_eq!(
            env_name("retention.completed"),
            "WAYMARK_RETENTION_COMPLETED"
        );
        assert!(
            check("nope", &json!(1))
                .unwrap_err()
                .to_string()
                .contains("unknown key")
        );
        assert!(check("validation_commands", &json!(["("])).is_err());
    }
}
