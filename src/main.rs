//! The waymark binary: `cli::run` behind the C entry point.
//!
//! `main` is the C `main` itself (`no_main`), not std's: every hook event is one process
//! start, and std's start-up (reading /proc/self/maps to find the main thread's stack,
//! installing a stack-overflow handler) was a fifth of a whole event's instructions. What
//! of it matters is done where it matters: a panic is caught here, `cli::run` flushes
//! stdout, and SIGPIPE is ignored where a closed pipe must not stop the work (hooks,
//! `validate`) and left to end the process quietly elsewhere (`waymark status | head -1`).
#![no_main]

use std::ffi::{CStr, OsString, c_char, c_int};
use std::os::unix::ffi::OsStrExt;

#[unsafe(no_mangle)]
extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    // The arguments from `main`'s own: std reads them at start-up only where the C library
    // hands them to initializers (glibc), not on musl, and std's `main` is not run here.
    let args: Vec<OsString> = (0..argc.max(0) as usize)
        // SAFETY: the C runtime passes `argc` valid NUL-terminated strings in `argv`.
        .map(|i| unsafe { CStr::from_ptr(*argv.add(i)) })
        .map(|a| std::ffi::OsStr::from_bytes(a.to_bytes()).to_os_string())
        .collect();
    // std's own exit code for a panic that reached `main`.
    std::panic::catch_unwind(|| waymark::cmd::cli::run(args)).map_or(101, |code| code.0.into())
}
