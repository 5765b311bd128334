//! Parsing one configuration value. Each parser says what it expected, in words a user
//! can act on.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::table::DEFAULT_VALIDATION_COMMANDS;

/// Why a configuration value was refused: what was expected, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadValue(pub String);
use super::{RepeatGuard, ScopeEnforcement, Switch};

pub(super) fn uint(v: &Value, min: u64, max: u64) -> Result<u64, BadValue> {
    let n = match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .ok_or_else(|| BadValue(format!("expected a whole number, got {v}")))?;
    if n < min || n > max {
        return Err(BadValue(format!("{n} is out of range {min}–{max}")));
    }
    Ok(n)
}

pub(super) fn boolean(v: &Value) -> Result<bool, BadValue> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s == "true" => Ok(true),
        Value::String(s) if s == "false" => Ok(false),
        _ => Err(BadValue(format!("expected true or false, got {v}"))),
    }
}

pub(super) fn switch(v: &Value) -> Result<Switch, BadValue> {
    match v {
        Value::String(s) if s == "prompt" => Ok(Switch::Prompt),
        other => boolean(other)
            .map(|b| if b { Switch::On } else { Switch::Off })
            .map_err(|_| BadValue(format!("expected true, false or \"prompt\", got {v}"))),
    }
}

pub(super) fn enforcement(v: &Value) -> Result<ScopeEnforcement, BadValue> {
    match v.as_str() {
        Some("off") => Ok(ScopeEnforcement::Off),
        Some("warn") => Ok(ScopeEnforcement::Warn),
        Some("deny") => Ok(ScopeEnforcement::Deny),
        _ => Err(BadValue(format!(
            "expected \"off\", \"warn\" or \"deny\", got {v}"
        ))),
    }
}

pub(super) fn repeat_guard(v: &Value) -> Result<RepeatGuard, BadValue> {
    match v.as_str() {
        Some("off") => Ok(RepeatGuard::Off),
        Some("ask") => Ok(RepeatGuard::Ask),
        Some("deny") => Ok(RepeatGuard::Deny),
        _ => Err(BadValue(format!(
            "expected \"off\", \"ask\" or \"deny\", got {v}"
        ))),
    }
}

/// A list of regexes (an empty list is none).
pub(super) fn regexes(v: &Value) -> Result<Vec<String>, BadValue> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Array(_) if v.as_array().is_some_and(Vec::is_empty) => Ok(Vec::new()),
        Value::Array(_) => patterns(v),
        _ => Err(BadValue(format!("expected a list of regexes, got {v}"))),
    }
}

pub(super) fn string(v: &Value) -> Result<String, BadValue> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| BadValue(format!("expected a string, got {v}")))
}

pub(super) fn relative_file(v: &Value) -> Result<String, BadValue> {
    let s = string(v)?;
    let p = Path::new(&s);
    if s.is_empty()
        || p.is_absolute()
        || p.components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(BadValue(format!(
            "expected a file name inside the project, got {v}"
        )));
    }
    Ok(s)
}

pub(super) fn patterns(v: &Value) -> Result<Vec<String>, BadValue> {
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
                    .ok_or_else(|| BadValue(format!("expected regex strings, got {item}")))?;
                // The defaults are known to compile (a test says so): every event loads
                // them, and compiling nine regexes would be most of its work.
                if !DEFAULT_VALIDATION_COMMANDS.contains(&s) {
                    regex::Regex::new(s).map_err(|e| BadValue(format!("bad regex {s:?}: {e}")))?;
                }
                Ok(s.to_string())
            })
            .collect(),
        _ => Err(BadValue(format!("expected a list of regexes, got {v}"))),
    }
}

pub(super) fn duration(v: &Value) -> Result<Duration, BadValue> {
    match v {
        Value::String(s) => parse_duration(s),
        // A bare number could mean seconds or minutes: the unit is asked for, not guessed.
        Value::Number(n) => Err(BadValue(format!(
            "{n} has no unit: write \"{n}s\", \"{n}m\" or \"{n}h\""
        ))),
        _ => Err(BadValue(format!(
            "expected a duration such as \"5m\", got {v}"
        ))),
    }
}

/// Parses `"5m"`, `"720h"`, `"1h30m"`, `"250ms"`, `"2s"`, `"7d"`.
pub fn parse_duration(s: &str) -> Result<Duration, BadValue> {
    let bad = || {
        BadValue(format!(
            "expected a duration such as \"5m\" or \"720h\", got {s:?}"
        ))
    };
    let s = s.trim();
    if s.is_empty() {
        return Err(bad());
    }
    if s.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(BadValue(format!(
            "{s:?} has no unit: write \"{s}s\", \"{s}m\" or \"{s}h\""
        )));
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_default_validation_commands_compile() {
        for p in DEFAULT_VALIDATION_COMMANDS {
            assert!(regex::Regex::new(p).is_ok(), "{p}");
        }
    }

    #[test]
    fn switches_and_durations() {
        assert_eq!(switch(&json!("prompt")).unwrap(), Switch::Prompt);
        assert_eq!(switch(&json!("false")).unwrap(), Switch::Off);
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("5 minutes").is_err());
        assert!(parse_duration("m").is_err());
        // No unit: an error that says which to write, as a string or a number.
        let e = parse_duration("30").unwrap_err().to_string();
        assert!(e.contains("has no unit") && e.contains("\"30s\""), "{e}");
        assert!(duration(&json!(30)).unwrap_err().0.contains("\"30m\""));
    }
}
