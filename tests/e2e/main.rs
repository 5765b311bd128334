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

/// Features other branches deliver. Assertions that need them run only once they are
/// merged: flip the constant (or set `WAYMARK_E2E_ALL=1` to run them anyway).
#[derive(Debug, Clone, Copy)]
pub enum Pending {
    /// Issue 5: signed (and observed) validation receipts.
    Receipts,
    /// Issue 6: the trace ledger and the post-hooks (intent progress, scope drift, lessons).
    TraceAndPostHooks,
}

const ISSUE5_MERGED: bool = true;
const ISSUE6_MERGED: bool = true;

/// True when the assertions that need `feature` should run.
pub fn merged(feature: Pending) -> bool {
    if std::env::var_os("WAYMARK_E2E_ALL").is_some() {
        return true;
    }
    let on = match feature {
        Pending::Receipts => ISSUE5_MERGED,
        Pending::TraceAndPostHooks => ISSUE6_MERGED,
    };
    if !on {
        eprintln!("e2e: assertions that need {feature:?} are not run (not merged yet)");
    }
    on
}

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
