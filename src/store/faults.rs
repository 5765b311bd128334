//! Fault injection for the tests that prove the never-fail and nothing-lost rules (debug
//! builds only).
//!
//! `WAYMARK_TEST_FAULT=<point>[@N]:<what>[,…]` acts at the named point (the `N`th time it is
//! reached in the process, default every time): `panic`, `sleep` (stall 30 s), `pause`
//! (half a second: a window for another process to act in), or `kill`
//! (SIGKILL the process right there, as a crash or an OOM killer would). Points:
//! `dispatch` (before any handler), `store.locked` (hook.json lock held, nothing written),
//! `store.logged` (the change's log lines appended, receipts synced; plan.json and
//! hook.json not yet written),
//! `atomic.write` (temp file created, empty), `atomic.rename` (temp file written and
//! synced, not yet renamed; for a save of hook.json, the new state written into the
//! .bak's file), `atomic.swap` (hook.json's file given a third name, the names not yet
//! swapped), `store.saved` (hook.json replaced, HOOK.md not yet),
//! `append.torn` (half of an appended record written), `capture.staged` (a checkpoint's
//! capture has added the work tree to its temporary index, no tree written yet),
//! `held.applied` (a held Codex shell call applied, the held calls' file not yet
//! rewritten without it). Release builds compile this to
//! nothing, so no environment variable can change what a shipped waymark does.

/// What to do at a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Panic,
    Sleep,
    Pause,
    Kill,
}

/// Injects the configured fault at `point`, if one is due.
pub fn at(point: &str) {
    if let Some(fault) = due(point) {
        strike(point, fault);
    }
}

/// Counts a pass through `point` and returns the fault due now, if any (for points that
/// must prepare the damage first, such as writing half a record, then [`strike`]).
#[cfg(debug_assertions)]
pub fn due(point: &str) -> Option<Fault> {
    let spec = std::env::var("WAYMARK_TEST_FAULT").ok()?;
    let hit = count(point);
    spec.split(',').find_map(|item| {
        let (target, what) = item.split_once(':')?;
        let (p, nth) = match target.split_once('@') {
            Some((p, n)) => (p, n.parse::<u32>().ok()),
            None => (target, None),
        };
        if p != point || nth.is_some_and(|n| n != hit) {
            return None;
        }
        match what {
            "panic" => Some(Fault::Panic),
            "sleep" => Some(Fault::Sleep),
            "pause" => Some(Fault::Pause),
            "kill" => Some(Fault::Kill),
            _ => None,
        }
    })
}

#[cfg(not(debug_assertions))]
#[inline(always)]
pub fn due(_point: &str) -> Option<Fault> {
    None
}

pub fn strike(point: &str, fault: Fault) {
    match fault {
        Fault::Panic => panic!("injected fault at {point}"),
        Fault::Sleep => std::thread::sleep(std::time::Duration::from_secs(30)),
        Fault::Pause => std::thread::sleep(std::time::Duration::from_millis(500)),
        Fault::Kill => kill_self(),
    }
}

/// How many times `point` has been reached in this process, this time included.
#[cfg(debug_assertions)]
fn count(point: &str) -> u32 {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static HITS: Mutex<Option<HashMap<String, u32>>> = Mutex::new(None);
    let mut hits = HITS.lock().unwrap_or_else(|e| e.into_inner());
    let hits = hits.get_or_insert_with(HashMap::new);
    let n = hits.entry(point.to_string()).or_insert(0);
    *n += 1;
    *n
}

/// SIGKILL, not a panic or an exit: no destructor, no flush, no unlock runs.
fn kill_self() -> ! {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &std::process::id().to_string()])
        .status();
    // The signal is on its way; never go on past the point.
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}
