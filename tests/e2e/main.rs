//! End-to-end tests: the real Claude Code CLI, waymark loaded as a plugin, a scripted fake
//! Messages API on loopback. See docs/e2e.md.

mod fake_api;
mod harness;

mod clear;
mod compaction;
mod crash;
mod fresh_session;
mod intent;
mod plugin;

/// The checkpoints of `hook` made by `trigger`.
pub fn by_trigger<'a>(hook: &'a serde_json::Value, trigger: &str) -> Vec<&'a serde_json::Value> {
    hook["checkpoints"]
        .as_array()
        .map(|c| c.iter().filter(|c| c["trigger"] == trigger).collect())
        .unwrap_or_default()
}

/// A JSON string's text, "" for anything else.
pub fn strs(v: &serde_json::Value) -> &str {
    v.as_str().unwrap_or("")
}
