//! The waymark binary: `cli::run` behind the C entry point.
//!
//! `main` is the C `main` itself (`no_main`), not std's: every hook event is one process
//! start, and std's start-up (reading /proc/self/maps to find the main thread's stack,
//! installing a stack-overflow handler) was a fifth of a whole event's instructions. What
//! of it matters is done where it matters: a panic is caught here, `cli::run` flushes
//! stdout, and SIGPIPE is ignored where a closed pipe must not stop the work (hooks,
//! `validate`) and left to end the process quietly elsewhere (`waymark status | head -1`).
#![no_main]

use std::ffi::{c_char, c_int};

#[unsafe(no_mangle)]
extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    // std's own exit code for a panic that reached `main`.
    std::panic::catch_unwind(waymark::cmd::cli::run).map_or(101, |code| code.0.into())
}
