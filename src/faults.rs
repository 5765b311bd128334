//! Fault injection for the tests that prove the never-fail rule (debug builds only).
//!
//! `WAYMARK_TEST_FAULT=<point>:<what>` makes the named point panic (`panic`) or stall
//! (`sleep`). Release builds compile this to nothing, so no environment variable can
//! change what a shipped waymark does.

/// Injects the configured fault at `point`, if any.
#[cfg(debug_assertions)]
pub fn at(point: &str) {
    let Ok(spec) = std::env::var("WAYMARK_TEST_FAULT") else {
        return;
    };
    for item in spec.split(',') {
        match item.split_once(':') {
            Some((p, "panic")) if p == point => panic!("injected fault at {point}"),
            Some((p, "sleep")) if p == point => {
                std::thread::sleep(std::time::Duration::from_secs(30))
            }
            _ => {}
        }
    }
}

#[cfg(not(debug_assertions))]
#[inline(always)]
pub fn at(_point: &str) {}
