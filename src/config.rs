//! Configuration: built-in defaults < user config < project `waymark.json` < environment.
//!
//! Each key is parsed and checked on its own, so one bad value costs only that key: it is
//! named in an error (for `waymark doctor` and the CLI) and its default is used (for hooks,
//! which must keep working). The origin of every effective value is kept for
//! `waymark config show`.

use std::collections::BTreeMap;
use std::env;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

/// `true`, `false` or `"prompt"`: contextd's three-way switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Switch {
    On,
    Off,
    Prompt,
}

/// What ScopeDrift does with a write outside the active intent's scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScopeEnforcement {
    Off,
    Warn,
    Deny,
}

#[derive(Debug, Clone)]
pub struct Retention {
    pub completed: Duration,
    pub failed: Duration,
    pub abandoned: Duration,
}

/// The BIP44-style path components the task key is derived along (see `receipt::keys`).
#[derive(Debug, Clone)]
pub struct KeyDerivation {
    pub purpose: u32,
    pub coin_type: u32,
    pub account: u32,
}

/// The effective configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub max_checkpoints: usize,
    pub checkpoint_interval: Duration,
    pub stale_threshold: Duration,
    pub retention: Retention,
    pub key_derivation: KeyDerivation,
    pub auto_checkpoint_on_clear: Switch,
    pub auto_resume_on_start: Switch,
    pub verify_before_clear: bool,
    pub checkpoint_threshold_percent: u8,
    pub context_window_tokens: u64,
    pub validation_commands: Vec<String>,
    pub scope_enforcement: ScopeEnforcement,
    pub trace_window: usize,
    pub resume_brief_max_chars: usize,
    pub agent_md: String,
    pub max_attempts: u32,
    pub conflict_window: Duration,
    pub hook_deadline: Duration,
    /// Where the master key lives; empty means `$XDG_CONFIG_HOME/waymark/keys/master.key`.
    pub key_file: String,
}

/// The validation command patterns used when none are configured.
pub const DEFAULT_VALIDATION_COMMANDS: &[&str] = &[
    r"\bcargo\s+(\+\S+\s+)?(test|nextest|clippy|check)\b",
    r"\b(npm|pnpm|yarn|bun)\s+(run\s+)?test\b",
    r"\bnpx\s+(jest|vitest|mocha)\b",
    r"\b(pytest|py\.test|tox|nox)\b",
    r"\bpython3?\s+-m\s+(pytest|unittest)\b",
    r"\bgo\s+(test|vet)\b",
    r"\bmake\s+(test|check)\b",
    r"\b(mvn|gradle|\./gradlew)\s+(test|verify|check)\b",
    r"\b(rspec|phpunit|ctest|dotnet\s+test|mix\s+test|swift\s+test)\b",
];

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
        write!(
            f,
            "{}: {} (from {}); using the default",
            self.key, self.message, self.origin
        )
    }
}

/// The configuration with where each value came from and what was wrong.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    /// Effective raw value and origin per key, in key order.
    pub values: BTreeMap<&'static str, (Value, Origin)>,
    pub errors: Vec<ConfigError>,
}

type Apply = fn(&mut Config, &Value) -> Result<(), String>;

struct Key {
    name: &'static str,
    default: &'static str,
    apply: Apply,
}

/// Every key, its default (as JSON) and how it is parsed. The single table the loader,
/// `config show`, `config set` and the env overrides all read.
const KEYS: &[Key] = &[
    Key {
        name: "max_checkpoints",
        default: "50",
        apply: |c, v| {
            c.max_checkpoints = uint(v, 1, 10_000)? as usize;
            Ok(())
        },
    },
    Key {
        name: "checkpoint_interval",
        default: "\"5m\"",
        apply: |c, v| {
            c.checkpoint_interval = duration(v)?;
            Ok(())
        },
    },
    Key {
        name: "stale_threshold",
        default: "\"5m\"",
        apply: |c, v| {
            c.stale_threshold = duration(v)?;
            Ok(())
        },
    },
    Key {
        name: "retention.completed",
        default: "\"720h\"",
        apply: |c, v| {
            c.retention.completed = duration(v)?;
            Ok(())
        },
    },
    Key {
        name: "retention.failed",
        default: "\"168h\"",
        apply: |c, v| {
            c.retention.failed = duration(v)?;
            Ok(())
        },
    },
    Key {
        name: "retention.abandoned",
        default: "\"168h\"",
        apply: |c, v| {
            c.retention.abandoned = duration(v)?;
            Ok(())
        },
    },
    Key {
        name: "key_derivation.purpose",
        default: "44",
        apply: |c, v| {
            c.key_derivation.purpose = uint(v, 0, 0x7fff_ffff)? as u32;
            Ok(())
        },
    },
    Key {
        name: "key_derivation.coin_type",
        default: "236",
        apply: |c, v| {
            c.key_derivation.coin_type = uint(v, 0, 0x7fff_ffff)? as u32;
            Ok(())
        },
    },
    Key {
        name: "key_derivation.account",
        default: "0",
        apply: |c, v| {
            c.key_derivation.account = uint(v, 0, 0x7fff_ffff)? as u32;
            Ok(())
        },
    },
    Key {
        name: "auto_checkpoint_on_clear",
        default: "true",
        apply: |c, v| {
            c.auto_checkpoint_on_clear = switch(v)?;
            Ok(())
        },
    },
    Key {
        name: "auto_resume_on_start",
        default: "true",
        apply: |c, v| {
            c.auto_resume_on_start = switch(v)?;
            Ok(())
        },
    },
    Key {
        name: "verify_before_clear",
        default: "true",
        apply: |c, v| {
            c.verify_before_clear = boolean(v)?;
            Ok(())
        },
    },
    Key {
        name: "checkpoint_threshold_percent",
        default: "70",
        apply: |c, v| {
            c.checkpoint_threshold_percent = uint(v, 70, 95)? as u8;
            Ok(())
        },
    },
    Key {
        name: "context_window_tokens",
        default: "200000",
        apply: |c, v| {
            c.context_window_tokens = uint(v, 1_000, 100_000_000)?;
            Ok(())
        },
    },
    Key {
        name: "validation_commands",
        default: "null",
        apply: |c, v| {
            c.validation_commands = patterns(v)?;
            Ok(())
        },
    },
    Key {
        name: "scope_enforcement",
        default: "\"warn\"",
        apply: |c, v| {
            c.scope_enforcement = enforcement(v)?;
            Ok(())
        },
    },
    Key {
        name: "trace_window",
        default: "200",
        apply: |c, v| {
            c.trace_window = uint(v, 1, 100_000)? as usize;
            Ok(())
        },
    },
    Key {
        name: "resume_brief_max_chars",
        default: "4000",
        apply: |c, v| {
            c.resume_brief_max_chars = uint(v, 200, 10_000)? as usize;
            Ok(())
        },
    },
    Key {
        name: "agent_md",
        default: "\"AGENT.md\"",
        apply: |c, v| {
            c.agent_md = relative_file(v)?;
            Ok(())
        },
    },
    Key {
        name: "max_attempts",
        default: "3",
        apply: |c, v| {
            c.max_attempts = uint(v, 1, 100)? as u32;
            Ok(())
        },
    },
    Key {
        name: "conflict_window",
        default: "\"10m\"",
        apply: |c, v| {
            c.conflict_window = duration(v)?;
            Ok(())
        },
    },
    Key {
        name: "hook_deadline",
        default: "\"2s\"",
        apply: |c, v| {
            c.hook_deadline = duration(v)?;
            Ok(())
        },
    },
    Key {
        name: "key_file",
        default: "\"\"",
        apply: |c, v| {
            c.key_file = string(v)?;
            Ok(())
        },
    },
];

/// contextd's environment variables, accepted as aliases.
const ENV_ALIASES: &[(&str, &str)] = &[
    (
        "CONTEXTD_AUTO_CHECKPOINT_ON_CLEAR",
        "auto_checkpoint_on_clear",
    ),
    ("CONTEXTD_AUTO_RESUME_ON_START", "auto_resume_on_start"),
    ("CONTEXTD_AUTO_RESUME", "auto_resume_on_start"),
    (
        "CONTEXTD_CHECKPOINT_THRESHOLD",
        "checkpoint_threshold_percent",
    ),
    ("CONTEXTD_VERIFY_BEFORE_CLEAR", "verify_before_clear"),
];

impl Default for Config {
    fn default() -> Config {
        let mut c = Config {
            max_checkpoints: 0,
            checkpoint_interval: Duration::ZERO,
            stale_threshold: Duration::ZERO,
            retention: Retention {
                completed: Duration::ZERO,
                failed: Duration::ZERO,
                abandoned: Duration::ZERO,
            },
            key_derivation: KeyDerivation {
                purpose: 0,
                coin_type: 0,
                account: 0,
            },
            auto_checkpoint_on_clear: Switch::On,
            auto_resume_on_start: Switch::On,
            verify_before_clear: true,
            checkpoint_threshold_percent: 0,
            context_window_tokens: 0,
            validation_commands: Vec::new(),
            scope_enforcement: ScopeEnforcement::Warn,
            trace_window: 0,
            resume_brief_max_chars: 0,
            agent_md: String::new(),
            max_attempts: 0,
            conflict_window: Duration::ZERO,
            hook_deadline: Duration::ZERO,
            key_file: String::new(),
        };
        for key in KEYS {
            let v: Value = serde_json::from_str(key.default).expect("defaults are valid JSON");
            (key.apply)(&mut c, &v).expect("defaults are valid values");
        }
        c
    }
}

/// The user config file: `$XDG_CONFIG_HOME/waymark/config.json` (`~/.config` when unset).
pub fn user_config_dir() -> Option<PathBuf> {
    env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|d| d.join("waymark"))
}

impl Config {
    /// The master key file: `key_file` when set, else `$XDG_CONFIG_HOME/waymark/keys/master.key`.
    pub fn key_path(&self) -> Option<PathBuf> {
        if !self.key_file.is_empty() {
            return Some(PathBuf::from(&self.key_file));
        }
        user_config_dir().map(|d| d.join("keys").join("master.key"))
    }
}

/// The project config file.
pub fn project_config_path(root: &Path) -> PathBuf {
    root.join(crate::project::STATE_DIR).join("waymark.json")
}

/// Every key name, in table order (for `config show` and documentation).
pub fn key_names() -> impl Iterator<Item = &'static str> {
    KEYS.iter().map(|k| k.name)
}

impl Config {
    /// Loads the layers for a project. Never fails: problems are in `errors`.
    pub fn load(root: &Path) -> Loaded {
        let mut layers: Vec<(Map<String, Value>, Origin)> = Vec::new();
        let mut errors = Vec::new();
        let files = [
            user_config_dir().map(|d| (d.join("config.json"), true)),
            Some((project_config_path(root), false)),
        ];
        for (path, user) in files.into_iter().flatten() {
            let shown = path.display().to_string();
            let origin = if user {
                Origin::User(shown)
            } else {
                Origin::Project(shown)
            };
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
        Self::from_layers(&layers, errors)
    }

    fn from_layers(
        layers: &[(Map<String, Value>, Origin)],
        mut errors: Vec<ConfigError>,
    ) -> Loaded {
        let mut config = Config::default();
        let mut values = BTreeMap::new();
        for key in KEYS {
            let mut effective = (
                serde_json::from_str(key.default).expect("valid default"),
                Origin::Default,
            );
            for (map, origin) in layers {
                let Some(v) = lookup(map, key.name) else {
                    continue;
                };
                let origin = match origin {
                    Origin::Env(_) => Origin::Env(env_var_of(map, key.name)),
                    o => o.clone(),
                };
                match (key.apply)(&mut config, v) {
                    Ok(()) => effective = (v.clone(), origin),
                    Err(message) => {
                        errors.push(ConfigError {
                            key: key.name.into(),
                            origin,
                            message,
                        });
                        // Re-apply what was in force before this layer.
                        let _ = (key.apply)(&mut config, &effective.0);
                    }
                }
            }
            values.insert(key.name, effective);
        }
        Loaded {
            config,
            values,
            errors,
        }
    }

    /// Parses and checks one value for a key without touching any file (for `config set`).
    pub fn check(key: &str, value: &Value) -> Result<(), String> {
        let k = KEYS.iter().find(|k| k.name == key).ok_or_else(|| {
            format!(
                "unknown key `{key}`; known keys: {}",
                key_names().collect::<Vec<_>>().join(", ")
            )
        })?;
        (k.apply)(&mut Config::default(), value)
    }
}

/// Reads a JSON config file. `Ok(None)` when it does not exist.
fn read_layer(path: &Path) -> Result<Option<Map<String, Value>>, String> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
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

/// Environment overrides as a layer. Values are JSON when they parse as JSON
/// (`false`, `80`, `["a"]`), strings otherwise (`5m`, `prompt`).
fn env_layer() -> (Map<String, Value>, Origin) {
    let mut map = Map::new();
    let parse = |raw: String| serde_json::from_str(&raw).unwrap_or(Value::String(raw));
    for (var, key) in ENV_ALIASES {
        if let Ok(raw) = env::var(var) {
            map.insert((*key).to_string(), parse(raw));
            map.insert(format!("\0env:{key}"), Value::String((*var).to_string()));
        }
    }
    for key in KEYS {
        let var = env_name(key.name);
        if let Ok(raw) = env::var(&var) {
            map.insert(key.name.to_string(), parse(raw));
            map.insert(format!("\0env:{}", key.name), Value::String(var));
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

fn uint(v: &Value, min: u64, max: u64) -> Result<u64, String> {
    let n = match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .ok_or_else(|| format!("expected a whole number, got {v}"))?;
    if n < min || n > max {
        return Err(format!("{n} is out of range {min}–{max}"));
    }
    Ok(n)
}

fn boolean(v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s == "true" => Ok(true),
        Value::String(s) if s == "false" => Ok(false),
        _ => Err(format!("expected true or false, got {v}")),
    }
}

fn switch(v: &Value) -> Result<Switch, String> {
    match v {
        Value::String(s) if s == "prompt" => Ok(Switch::Prompt),
        other => boolean(other)
            .map(|b| if b { Switch::On } else { Switch::Off })
            .map_err(|_| format!("expected true, false or \"prompt\", got {v}")),
    }
}

fn enforcement(v: &Value) -> Result<ScopeEnforcement, String> {
    match v.as_str() {
        Some("off") => Ok(ScopeEnforcement::Off),
        Some("warn") => Ok(ScopeEnforcement::Warn),
        Some("deny") => Ok(ScopeEnforcement::Deny),
        _ => Err(format!("expected \"off\", \"warn\" or \"deny\", got {v}")),
    }
}

fn string(v: &Value) -> Result<String, String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("expected a string, got {v}"))
}

fn relative_file(v: &Value) -> Result<String, String> {
    let s = string(v)?;
    let p = Path::new(&s);
    if s.is_empty()
        || p.is_absolute()
        || p.components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(format!("expected a file name inside the project, got {v}"));
    }
    Ok(s)
}

fn patterns(v: &Value) -> Result<Vec<String>, String> {
    match v {
        Value::Null => Ok(DEFAULT_VALIDATION_COMMANDS
            .iter()
            .map(|s| s.to_string())
            .collect()),
        Value::Array(items) if items.is_empty() => Ok(DEFAULT_VALIDATION_COMMANDS
            .iter()
            .map(|s| s.to_string())
            .collect()),
        Value::Array(items) => items
            .iter()
            .map(|item| {
                let s = item
                    .as_str()
                    .ok_or_else(|| format!("expected regex strings, got {item}"))?;
                regex::Regex::new(s).map_err(|e| format!("bad regex {s:?}: {e}"))?;
                Ok(s.to_string())
            })
            .collect(),
        _ => Err(format!("expected a list of regexes, got {v}")),
    }
}

fn duration(v: &Value) -> Result<Duration, String> {
    match v {
        Value::String(s) => parse_duration(s),
        Value::Number(n) => n
            .as_u64()
            .map(Duration::from_secs)
            .ok_or_else(|| format!("expected a duration such as \"5m\", got {v}")),
        _ => Err(format!("expected a duration such as \"5m\", got {v}")),
    }
}

/// Parses `"5m"`, `"720h"`, `"1h30m"`, `"250ms"`, `"2s"`, `"7d"`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("expected a duration such as \"5m\" or \"720h\", got {s:?}");
    let s = s.trim();
    if s.is_empty() {
        return Err(bad());
    }
    let mut total = Duration::ZERO;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let n: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let secs = match &rest[..unit_len] {
            "ms" => n / 1000.0,
            "s" => n,
            "m" => n * 60.0,
            "h" => n * 3600.0,
            "d" => n * 86400.0,
            _ => return Err(bad()),
        };
        total += Duration::from_secs_f64(secs);
        rest = &rest[unit_len..];
    }
    Ok(total)
}

/// Formats a duration the way it is configured: `5m`, `720h`, `1h30m`, `2s`.
pub fn format_duration(d: Duration) -> String {
    let secs = d.as_secs();
    if secs == 0 {
        return format!("{}ms", d.as_millis());
    }
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 {
        out.push_str(&format!("{s}s"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn layer(v: Value, origin: Origin) -> (Map<String, Value>, Origin) {
        (v.as_object().unwrap().clone(), origin)
    }

    #[test]
    fn defaults_match_the_design() {
        let c = Config::default();
        assert_eq!(c.max_checkpoints, 50);
        assert_eq!(c.checkpoint_interval, Duration::from_secs(300));
        assert_eq!(c.retention.completed, Duration::from_secs(720 * 3600));
        assert_eq!(c.key_derivation.coin_type, 236);
        assert_eq!(c.auto_resume_on_start, Switch::On);
        assert_eq!(c.checkpoint_threshold_percent, 70);
        assert_eq!(c.scope_enforcement, ScopeEnforcement::Warn);
        assert_eq!(c.trace_window, 200);
        assert_eq!(c.resume_brief_max_chars, 4000);
    }

    #[test]
    fn later_layers_win_and_origins_are_kept() {
        let l = Config::from_layers(
            &[
                layer(
                    json!({"max_checkpoints": 10, "retention": {"failed": "1h"}}),
                    Origin::User("u".into()),
                ),
                layer(json!({"max_checkpoints": 20}), Origin::Project("p".into())),
            ],
            vec![],
        );
        assert_eq!(l.config.max_checkpoints, 20);
        assert_eq!(l.values["max_checkpoints"].1, Origin::Project("p".into()));
        assert_eq!(l.config.retention.failed, Duration::from_secs(3600));
        assert!(l.errors.is_empty());
    }

    #[test]
    fn a_bad_value_is_named_and_falls_back() {
        let l = Config::from_layers(
            &[
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
    fn switches_and_durations() {
        assert_eq!(switch(&json!("prompt")).unwrap(), Switch::Prompt);
        assert_eq!(switch(&json!("false")).unwrap(), Switch::Off);
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("5 minutes").is_err());
        assert!(parse_duration("m").is_err());
        assert_eq!(format_duration(Duration::from_secs(5400)), "1h30m");
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
            Config::check("nope", &json!(1))
                .unwrap_err()
                .contains("unknown key")
        );
        assert!(Config::check("validation_commands", &json!(["("])).is_err());
    }
}
