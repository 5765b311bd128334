//! End-to-end tests: the real Claude Code CLI, waymark loaded as a plugin, a scripted fake
//! Messages API on loopback. See docs/e2e.md.

/// Makes each scenario `name(version)` a test per supported Claude Code release,
/// `name::on_2_1_197` and `name::on_2_1_332`, so that `cargo test --test e2e name` runs
/// it on both.
macro_rules! on_each_version {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[test]
                fn on_2_1_197() {
                    super::$name(crate::harness::Version::OLDEST)
                }
                #[test]
                fn on_2_1_332() {
                    super::$name(crate::harness::Version::CURRENT)
                }
            }
        )*
    };
}

mod codex;
mod codex_api;
mod codex_tui;
mod fake_api;
mod harness;

mod capture;
mod clear;
mod codex_sessions;
mod compaction;
mod crash;
mod fresh_session;
mod goal;
mod handoff;
mod intent;
mod lessons;
mod plugin;
mod random;
mod resume;
mod rewind;
mod sequences;

/// The checkpoints of `hook` made by `trigger`.
pub fn by_trigger<'a>(hook: &'a serde_json::Value, trigger: &str) -> Vec<&'a serde_json::Value> {
    hook["checkpoints"]
        .as_array()
        .map(|c| c.iter().filter(|c| c["trigger"] == trigger).collect())
        .unwrap_or_default()
}

/// The session of `hook` that sent the last event.
pub fn last_session(hook: &serde_json::Value) -> &serde_json::Value {
    let at = |s: &serde_json::Value| {
        chrono::DateTime::parse_from_rfc3339(strs(&s["last_event_at"])).expect("a time")
    };
    hook["sessions"]
        .as_array()
        .and_then(|s| s.iter().max_by_key(|s| at(s)))
        .expect("a session")
}

/// A JSON string's text, "" for anything else.
pub fn strs(v: &serde_json::Value) -> &str {
    v.as_str().unwrap_or("")
}
