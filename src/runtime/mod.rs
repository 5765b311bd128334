//! The process waymark runs as: what one invocation knows ([`context`]), the Claude Code
//! process it runs under ([`process`]) and the programs it finds ([`program`]).
//!
//! # Process tricks
//!
//! Every hook event is one process start, and Claude Code waits for it on every tool call.
//! Four things make a start cheaper than plain Rust would; each was measured on its own
//! against the same build without it (BENCHMARKS.md, "Process tricks"), and each is kept
//! because it saves at least 5% of an event. Anything that saved less was removed.
//!
//! 1. **A static, non-PIE binary** on Linux with glibc (`.cargo/config.toml`; `build.rs`
//!    links non-PIE where that config does not apply): no dynamic loader, no relocations.
//!    Without it: +0.3 ms, about 20% of an event.
//! 2. **The C `main`** (`src/main.rs`, `#![no_main]`): std's start-up reads
//!    `/proc/self/maps` and installs a stack-overflow handler, which a hook never needs.
//!    Without it: +7–13% of an event.
//! 3. **No command-line parser for a hook call** (`cmd::cli::plain_hook_call`): `waymark
//!    hook <Event>` as Claude Code runs it skips clap, which is built whole to parse two
//!    words. Without it: +0.23M instructions, +17–25% of an event.
//! 4. **A checkpoint's capture after the answer** (`task::capture`): a forked copy of the
//!    hook snapshots the work tree while Claude Code goes on, and the next event that can
//!    change a file waits for it, so what is recorded is the tree as it was. Taken inline,
//!    the events that checkpoint cost 4× as much (7.5–8.5 ms against 1.7–2.5 ms).
//!
//! Dropped in round 3, measured under 5%: SHA-256 and Ed25519 built without run-time CPU
//! detection (0–2.5%), and Linux's one-step name exchange for a save (1–5%).

pub mod context;
pub mod process;
pub mod program;
