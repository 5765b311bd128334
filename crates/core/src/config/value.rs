//! Parsing one configuration value. Each parser says what it expected, in words a user
//! can act on.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::{RepeatGuard, ScopeEnforcement, Switch};

/// Why a configuration value was refused: what was expected, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadValue(pub String);

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
    // Never git's directory nor waymark's state: the lessons file is appended to, and
    // `.git/config` or `.orchestration/hook.json` would stop git or waymark (issue 43).
    let mut names = p.components().filter_map(|c| match c {
        std::path::Component::Normal(n) => n.to_str(),
        _ => None,
    });
    let first = names.clone().next();
    if first == Some(crate::rewind::STATE_DIR)
        || names.any(|n| crate::rewind::is_dot_git(n.as_bytes()))
    {
        return Err(BadValue(format!(
            "expected a file of the project, not inside `.git` nor `{}`, got {v}",
            crate::rewind::STATE_DIR
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
        Value::Array(items) if items.is_empty() => patterns(&Value::Null),
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

    /// A whole number within its range, both bounds included; also written as a string,
    /// as an environment variable gives it.
    #[test]
    fn a_whole_number_is_taken_within_its_range_bounds_included() {
        for (v, n) in [
            (json!(70), Some(70)),
            (json!(95), Some(95)),
            (json!(80), Some(80)),
            (json!("95"), Some(95)),
            (json!(" 70 "), Some(70)),
            (json!(69), None),
            (json!(96), None),
            (json!(200), None),
            (json!("96"), None),
            (json!(0), None),
            (json!(-1), None),
            (json!(80.5), None),
            (json!("eighty"), None),
            (json!(true), None),
            (json!(null), None),
        ] {
            assert_eq!(uint(&v, 70, 95).ok(), n, "{v}");
        }
        assert_eq!(uint(&json!(0), 0, 0x7fff_ffff), Ok(0));
        assert_eq!(uint(&json!(0x7fff_ffff), 0, 0x7fff_ffff), Ok(0x7fff_ffff));
        assert_eq!(
            uint(&json!(96), 70, 95).unwrap_err().0,
            "96 is out of range 70–95"
        );
    }

    /// Each spelling a value has, and nothing else (not `"yes"`, not `"Deny"`).
    #[test]
    fn switches_and_modes_take_only_their_words() {
        for (v, b) in [
            (json!(true), Some(true)),
            (json!(false), Some(false)),
            (json!("true"), Some(true)),
            (json!("false"), Some(false)),
            (json!("yes"), None),
            (json!("True"), None),
            (json!(1), None),
        ] {
            assert_eq!(boolean(&v).ok(), b, "{v}");
        }
        use RepeatGuard as R;
        use ScopeEnforcement as E;
        for (word, enforced, guard) in [
            ("off", Some(E::Off), Some(R::Off)),
            ("warn", Some(E::Warn), None),
            ("ask", None, Some(R::Ask)),
            ("deny", Some(E::Deny), Some(R::Deny)),
            ("Deny", None, None),
            ("block", None, None),
        ] {
            assert_eq!(enforcement(&json!(word)).ok(), enforced, "{word}");
            assert_eq!(repeat_guard(&json!(word)).ok(), guard, "{word}");
        }
        assert!(enforcement(&json!(null)).is_err() && repeat_guard(&json!(true)).is_err());
    }

    /// `side_effect_commands`: none (null or an empty list) or regexes that compile.
    #[test]
    fn side_effect_commands_are_regexes_or_none() {
        for none in [json!(null), json!([])] {
            assert_eq!(regexes(&none), Ok(Vec::new()), "{none}");
        }
        assert_eq!(
            regexes(&json!([r"^\./deploy\.sh\b", "kubectl apply"])),
            Ok(vec![
                r"^\./deploy\.sh\b".to_string(),
                "kubectl apply".into()
            ])
        );
        for bad in [json!(["("]), json!([1]), json!(r"^\./deploy"), json!(true)] {
            assert!(regexes(&bad).is_err(), "{bad}");
        }
        assert!(
            regexes(&json!(["("]))
                .unwrap_err()
                .0
                .starts_with("bad regex \"(\"")
        );
    }

    /// `validation_commands`: none configured (null or an empty list) means the defaults;
    /// otherwise exactly the list, each a regex that compiles.
    #[test]
    fn validation_commands_are_the_defaults_or_the_list_given() {
        let defaults: Vec<String> = DEFAULT_VALIDATION_COMMANDS
            .iter()
            .map(|s| s.to_string())
            .collect();
        for none in [json!(null), json!([])] {
            assert_eq!(patterns(&none), Ok(defaults.clone()), "{none}");
        }
        let given = json!([r"^just\s+ci$", DEFAULT_VALIDATION_COMMANDS[0]]);
        assert_eq!(
            patterns(&given),
            Ok(vec![
                r"^just\s+ci$".to_string(),
                DEFAULT_VALIDATION_COMMANDS[0].into()
            ])
        );
        for bad in [json!(["cargo (test"]), json!([1]), json!("cargo test")] {
            assert!(patterns(&bad).is_err(), "{bad}");
        }
    }

    /// `agent_md`: a file inside the project, named relative to its root.
    #[test]
    fn the_lessons_file_is_a_relative_path_inside_the_project() {
        for ok in [
            "AGENT.md",
            "docs/AGENT.md",
            "./notes/lessons.md",
            "a..b.md",
            ".gitignore.md",
            "docs/.orchestration/notes.md",
        ] {
            assert_eq!(relative_file(&json!(ok)), Ok(ok.to_string()), "{ok}");
        }
        for bad in [
            json!(""),
            json!("/etc/AGENT.md"),
            json!("../AGENT.md"),
            json!("docs/../../x.md"),
            json!(3),
            json!(".git/config"),
            json!(".git/hooks/pre-commit"),
            json!("./.git/hooks/x"),
            json!("sub/.GIT/config"),
            json!(".Git"),
            json!(".orchestration/hook.json"),
            json!("./.orchestration/AGENT.md"),
        ] {
            assert!(relative_file(&bad).is_err(), "{bad}");
        }
        assert_eq!(string(&json!("a key path")), Ok("a key path".to_string()));
        assert!(string(&json!(["a"])).is_err());
    }

    #[test]
    fn durations_take_each_unit() {
        for (text, secs) in [
            ("250ms", 0.25),
            ("2s", 2.0),
            ("5m", 300.0),
            ("720h", 2_592_000.0),
            ("7d", 604_800.0),
            ("1d12h", 129_600.0),
            ("1h30m", 5400.0),
            ("1.5h", 5400.0),
            (" 5m ", 300.0),
        ] {
            assert_eq!(
                parse_duration(text),
                Ok(Duration::from_secs_f64(secs)),
                "{text}"
            );
        }
        for bad in ["", "5x", "5m30", "d", "5 minutes"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
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
