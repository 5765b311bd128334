//! Running a post-hook isolated (docs/design.md, Post-hooks: isolation): an error, or
//! even a panic, in one is logged to `.orchestration/waymark.log` and goes no further.

use std::panic::{self, AssertUnwindSafe};

use crate::runtime::context::Ctx;
use crate::store::log::Level;

/// Runs post-hook `hook` of `event`; its error or panic is logged, never returned.
pub fn isolated(ctx: &Ctx, event: &str, hook: &str, f: impl FnOnce() -> anyhow::Result<()>) {
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        injected_panic(hook);
        f()
    }));
    match result {
        Ok(Ok(())) => {}
        Ok(Err(e)) => ctx.log(Level::Error, event, &format!("post-hook {hook}: {e:#}")),
        Err(payload) => {
            let msg = waymark_core::text::panic_message(payload.as_ref());
            let why = format!("post-hook {hook} panicked: {msg}");
            ctx.log(Level::Error, event, &why);
        }
    }
}

/// Debug builds only: `WAYMARK_TEST_PANIC=intent_progress,trace` makes those post-hooks
/// panic, so the tests can show that one failing post-hook leaves the others intact.
#[cfg(debug_assertions)]
fn injected_panic(hook: &str) {
    if std::env::var("WAYMARK_TEST_PANIC").is_ok_and(|v| v.split(',').any(|h| h.trim() == hook)) {
        panic!("injected panic in {hook} (WAYMARK_TEST_PANIC)");
    }
}

#[cfg(not(debug_assertions))]
fn injected_panic(_hook: &str) {}
