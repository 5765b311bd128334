//! Every configuration key: its name, its default (as JSON) and how its value is parsed.

use serde_json::Value;

use super::Config;
use super::value::*;

pub type Apply = fn(&mut Config, &Value) -> Result<(), BadValue>;

pub struct Key {
    pub name: &'static str,
    /// The default as JSON text; empty for the one default that is a table of its own
    /// ([`DEFAULT_VALIDATION_COMMANDS`]).
    pub default: &'static str,
    pub apply: Apply,
}

/// A key: a const constructor, the table's rows being one call each.
const fn key(name: &'static str, default: &'static str, apply: Apply) -> Key {
    Key {
        name,
        default,
        apply,
    }
}

/// Sets a configuration field to the value parsed for it.
fn set<T>(field: &mut T, value: T) -> Result<(), BadValue> {
    *field = value;
    Ok(())
}

impl Key {
    /// The default value, as `config show` prints it and the loader starts from.
    pub fn default_value(&self) -> Value {
        match self.default {
            "" => Value::from(DEFAULT_VALIDATION_COMMANDS.to_vec()),
            text => serde_json::from_str(text).expect("defaults are valid JSON"),
        }
    }
}

/// Every key, its default (as JSON) and how it is parsed. The single table the loader,
/// `config show`, `config set` and the env overrides all read.
pub const KEYS: &[Key] = &[
    key("max_checkpoints", "50", |c, v| {
        set(&mut c.max_checkpoints, uint(v, 1, 10_000)? as usize)
    }),
    key("checkpoint_interval", "\"5m\"", |c, v| {
        set(&mut c.checkpoint_interval, duration(v)?)
    }),
    key("stale_threshold", "\"5m\"", |c, v| {
        set(&mut c.stale_threshold, duration(v)?)
    }),
    key("retention.completed", "\"720h\"", |c, v| {
        set(&mut c.retention.completed, duration(v)?)
    }),
    key("retention.failed", "\"168h\"", |c, v| {
        set(&mut c.retention.failed, duration(v)?)
    }),
    key("retention.abandoned", "\"168h\"", |c, v| {
        set(&mut c.retention.abandoned, duration(v)?)
    }),
    key("key_derivation.purpose", "44", |c, v| {
        set(
            &mut c.key_derivation.purpose,
            uint(v, 0, 0x7fff_ffff)? as u32,
        )
    }),
    key("key_derivation.coin_type", "236", |c, v| {
        set(
            &mut c.key_derivation.coin_type,
            uint(v, 0, 0x7fff_ffff)? as u32,
        )
    }),
    key("key_derivation.account", "0", |c, v| {
        set(
            &mut c.key_derivation.account,
            uint(v, 0, 0x7fff_ffff)? as u32,
        )
    }),
    key("auto_checkpoint_on_clear", "true", |c, v| {
        set(&mut c.auto_checkpoint_on_clear, switch(v)?)
    }),
    key("auto_resume_on_start", "true", |c, v| {
        set(&mut c.auto_resume_on_start, switch(v)?)
    }),
    key("verify_before_clear", "true", |c, v| {
        set(&mut c.verify_before_clear, boolean(v)?)
    }),
    key("plan_note", "true", |c, v| {
        set(&mut c.plan_note, boolean(v)?)
    }),
    key("checkpoint_threshold_percent", "70", |c, v| {
        set(&mut c.checkpoint_threshold_percent, uint(v, 70, 95)? as u8)
    }),
    key("context_window_tokens", "200000", |c, v| {
        set(&mut c.context_window_tokens, uint(v, 1_000, 100_000_000)?)
    }),
    key("validation_commands", "", |c, v| {
        set(&mut c.validation_commands, patterns(v)?)
    }),
    key("side_effect_commands", "[]", |c, v| {
        set(&mut c.side_effect_commands, regexes(v)?)
    }),
    key("repeat_guard", "\"ask\"", |c, v| {
        set(&mut c.repeat_guard, repeat_guard(v)?)
    }),
    key("scope_enforcement", "\"warn\"", |c, v| {
        set(&mut c.scope_enforcement, enforcement(v)?)
    }),
    key("trace_window", "200", |c, v| {
        set(&mut c.trace_window, uint(v, 1, 100_000)? as usize)
    }),
    key("resume_brief_max_chars", "4000", |c, v| {
        set(
            &mut c.resume_brief_max_chars,
            uint(v, 200, 10_000)? as usize,
        )
    }),
    key("agent_md", "\"AGENT.md\"", |c, v| {
        set(&mut c.agent_md, relative_file(v)?)
    }),
    key("max_attempts", "3", |c, v| {
        set(&mut c.max_attempts, uint(v, 1, 100)? as u32)
    }),
    key("conflict_window", "\"10m\"", |c, v| {
        set(&mut c.conflict_window, duration(v)?)
    }),
    key("hook_deadline", "\"2s\"", |c, v| {
        set(&mut c.hook_deadline, duration(v)?)
    }),
    key("key_file", "\"\"", |c, v| set(&mut c.key_file, string(v)?)),
    key("commit_trailers", "false", |c, v| {
        set(&mut c.commit_trailers, boolean(v)?)
    }),
];

/// The keys only the user's own configuration or the environment may set, never a
/// project's `waymark.json`: a repository is untrusted input, and must not choose the key
/// that signs the user's receipts (where it is, or how a task's key is derived from it).
pub const USER_ONLY: &[&str] = &[
    "key_file",
    "key_derivation.purpose",
    "key_derivation.coin_type",
    "key_derivation.account",
];

/// How strict `config` is on key `name`, for the keys a project's `waymark.json` may only
/// tighten (the repeat guard, scope enforcement: off, then ask or warn, then deny); `None`
/// for the others. A repository must not switch off what protects the user.
fn strictness(name: &str, config: &super::Config) -> Option<u8> {
    match name {
        "repeat_guard" => Some(config.repeat_guard as u8),
        "scope_enforcement" => Some(config.scope_enforcement as u8),
        _ => None,
    }
}

/// Why a project's `waymark.json` may not change key `name` from `before` to `after`, if
/// it may not: the keys of [`USER_ONLY`] at all, the protections looser. The one rule the
/// loader applies to the project layer (a repository is untrusted input).
pub fn refused_from_project(
    name: &str,
    before: &super::Config,
    after: &super::Config,
) -> Option<&'static str> {
    if USER_ONLY.contains(&name) {
        return Some(
            "a project's waymark.json may not set it (a repository must not choose your signing key): set it in your own config.json or the environment",
        );
    }
    (strictness(name, after) < strictness(name, before)).then_some(
        "a project's waymark.json may make it stricter, never looser: set it in your own config.json or the environment",
    )
}

/// contextd's environment variables, accepted as aliases.
pub const ENV_ALIASES: &[(&str, &str)] = &[
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

/// Every key name, in table order (for `config show` and documentation).
pub fn key_names() -> impl Iterator<Item = &'static str> {
    KEYS.iter().map(|k| k.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The keys docs/configuration.md's table documents, in its order (a row such as
    /// `retention.completed` / `.failed` names its siblings by their last part).
    fn documented_keys() -> Vec<String> {
        let readme = include_str!("../../../../docs/configuration.md");
        let table = readme
            .split_once("| key | default | meaning |")
            .expect("docs/configuration.md has the configuration table")
            .1;
        let mut keys = Vec::new();
        for row in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
            let mut parent = "";
            for name in row.split('|').nth(1).unwrap().split('/') {
                let name = name.trim().trim_matches('`');
                match name.strip_prefix('.') {
                    Some(last) => keys.push(format!("{parent}.{last}")),
                    None => {
                        parent = name.split('.').next().unwrap();
                        keys.push(name.to_string());
                    }
                }
            }
        }
        keys
    }

    /// `config show` and the "known keys" of an error list every key, in the order
    /// docs/configuration.md documents them.
    #[test]
    fn every_key_is_named_as_the_docs_document_it() {
        assert_eq!(key_names().collect::<Vec<_>>(), documented_keys());
    }

    #[test]
    fn every_alias_names_a_key() {
        for (alias, key) in ENV_ALIASES {
            assert!(key_names().any(|k| k == *key), "{alias} → {key}");
        }
    }

    /// The ranges docs/configuration.md gives are the ones a value is checked against, bounds included.
    #[test]
    fn the_documented_ranges_are_enforced() {
        for (name, min, max) in [
            ("checkpoint_threshold_percent", 70, 95),
            ("resume_brief_max_chars", 200, 10_000),
        ] {
            let key = KEYS.iter().find(|k| k.name == name).unwrap();
            let apply = |n: u64| (key.apply)(&mut Config::default(), &json!(n));
            assert!(apply(min).is_ok() && apply(max).is_ok(), "{name}");
            assert!(apply(min - 1).is_err() && apply(max + 1).is_err(), "{name}");
        }
    }

    /// A project may not choose the signing key, nor loosen a protection; it may tighten
    /// one, and set anything else.
    #[test]
    fn a_project_may_tighten_but_not_loosen_nor_choose_the_key() {
        use crate::config::{Config, RepeatGuard, ScopeEnforcement};
        let base = Config::default();
        let with = |f: &dyn Fn(&mut Config)| {
            let mut c = base.clone();
            f(&mut c);
            c
        };
        let off = with(&|c| c.repeat_guard = RepeatGuard::Off);
        let deny = with(&|c| c.scope_enforcement = ScopeEnforcement::Deny);
        assert!(
            refused_from_project("key_file", &base, &base)
                .unwrap()
                .contains("signing key")
        );
        assert!(
            refused_from_project("repeat_guard", &base, &off)
                .unwrap()
                .contains("never looser")
        );
        assert_eq!(refused_from_project("repeat_guard", &off, &base), None);
        assert_eq!(
            refused_from_project("scope_enforcement", &base, &deny),
            None
        );
        assert_eq!(refused_from_project("max_attempts", &base, &off), None);
    }
}
