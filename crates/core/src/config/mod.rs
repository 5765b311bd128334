//! Configuration: the effective [`Config`] and the types of its values. The application
//! loads it (built-in defaults < user config < project `waymark.json` < environment).
//!
//! - [`table`]: every key, its default and its parser: the one list the loader,
//!   `config show`, `config set` and the environment overrides read;
//! - [`value`]: parsing one value (numbers in range, switches, durations, regexes).
//!
//! The rule of this room: one bad value costs only its key. It is named in an error (for
//! `waymark doctor` and the CLI) and its default is used (for hooks, which must keep
//! working).

pub mod table;
pub mod value;

use std::time::Duration;

use serde::Serialize;

pub use table::key_names;
pub use value::{BadValue, DEFAULT_VALIDATION_COMMANDS, parse_duration};

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

/// What a PreToolUse does when a resumed step is about to repeat a side effect it already
/// had (a push, a pull request, a deploy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepeatGuard {
    Off,
    Ask,
    Deny,
}

#[derive(Debug, Clone, Default)]
pub struct Retention {
    pub completed: Duration,
    pub failed: Duration,
    pub abandoned: Duration,
}

/// The BIP44-style path components the task key is derived along (see `receipt::keys`).
#[derive(Debug, Clone, Default)]
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
    /// Tell the agent at session start how to keep its plan with `waymark plan` when it
    /// has no task-list tool (docs/plan.md).
    pub plan_note: bool,
    pub checkpoint_threshold_percent: u8,
    pub context_window_tokens: u64,
    pub validation_commands: Vec<String>,
    /// Commands with effects outside the work tree, besides the built-in ones (regexes).
    pub side_effect_commands: Vec<String>,
    pub repeat_guard: RepeatGuard,
    pub scope_enforcement: ScopeEnforcement,
    pub trace_window: usize,
    pub resume_brief_max_chars: usize,
    pub agent_md: String,
    pub max_attempts: u32,
    pub conflict_window: Duration,
    pub hook_deadline: Duration,
    /// Where the master key lives; empty means `$XDG_CONFIG_HOME/waymark/keys/master.key`.
    pub key_file: String,
    /// The git hooks add `Waymark-Task`, `Waymark-Receipt` and `Waymark-Trace` trailers to
    /// commits made during a task (docs/receipts.md, Commits carry their proof).
    pub commit_trailers: bool,
}

impl Default for Config {
    fn default() -> Config {
        let mut c = Config {
            max_checkpoints: 0,
            checkpoint_interval: Duration::ZERO,
            stale_threshold: Duration::ZERO,
            retention: Retention::default(),
            key_derivation: KeyDerivation::default(),
            auto_checkpoint_on_clear: Switch::On,
            auto_resume_on_start: Switch::On,
            verify_before_clear: true,
            plan_note: true,
            checkpoint_threshold_percent: 0,
            context_window_tokens: 0,
            validation_commands: Vec::new(),
            side_effect_commands: Vec::new(),
            repeat_guard: RepeatGuard::Ask,
            scope_enforcement: ScopeEnforcement::Warn,
            trace_window: 0,
            resume_brief_max_chars: 0,
            agent_md: String::new(),
            max_attempts: 0,
            conflict_window: Duration::ZERO,
            hook_deadline: Duration::ZERO,
            key_file: String::new(),
            commit_trailers: false,
        };
        for key in table::KEYS {
            (key.apply)(&mut c, &key.default_value()).expect("defaults are valid values");
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
