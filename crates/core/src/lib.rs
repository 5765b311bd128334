//! waymark's core: the task and its rules, what recovery tells the next agent, the receipts
//! and their chain, as values. No file, process, clock or environment is touched here
//! (clippy.toml forbids them): the application (the `waymark` package) reads and writes,
//! and hands the core what it read and the time it is.

// The core's tests may read the clock and files (fixtures); its code may not (clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods, clippy::disallowed_types))]

pub mod config;
pub mod governance;
pub mod mcp;
pub mod receipt;
pub mod recovery;
pub mod rewind;
pub mod shell;
pub mod task;
pub mod text;
pub mod timeline;
pub mod trace;
