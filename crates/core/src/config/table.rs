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
        name: "plan_note",
        default: "true",
        apply: |c, v| {
            c.plan_note = boolean(v)?;
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
        default: "",
        apply: |c, v| {
            c.validation_commands = patterns(v)?;
            Ok(())
        },
    },
    Key {
        name: "side_effect_commands",
        default: "[]",
        apply: |c, v| {
            c.side_effect_commands = regexes(v)?;
            Ok(())
        },
    },
    Key {
        name: "repeat_guard",
        default: "\"ask\"",
        apply: |c, v| {
            c.repeat_guard = repeat_guard(v)?;
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
    Key {
        name: "commit_trailers",
        default: "false",
        apply: |c, v| {
            c.commit_trailers = boolean(v)?;
            Ok(())
        },
    },
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
