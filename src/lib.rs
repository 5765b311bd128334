//! waymark: crash recovery, signed validation receipts and intent governance for Claude
//! Code, as one binary run on Claude Code's hook events. See docs/design.md for the design
//! and `handlers/` for what each event does.
//!
//! This crate is the application: everything that reads or writes. What the task is and
//! what recovery says are `waymark_core`; what a secret looks like is `waymark_redact`.
//! Its rooms, from the edge in:
//!
//! - [`cmd`]: the command line (`waymark hook <event>`, `status`, `validate`, …);
//! - [`claude`]: Claude Code's wire formats (events, tool calls, answers, transcripts);
//! - [`handlers`]: one file per hook event, the event's whole story;
//! - [`task`], [`recovery`], [`receipt`], [`trace`], [`governance`]: each core room's
//!   reading and writing, the core re-exported beside it;
//! - [`git`]: git (HEAD, status, snapshots, rewinds, its hooks) and checkpoint captures;
//! - [`config`]: the configuration's files and environment;
//! - [`store`]: where waymark's files are and how each is written (locks, atomic
//!   replaces, appends);
//! - [`runtime`]: the process (its context, deadline, log, faults, program names).

pub mod claude;
pub mod cmd;
pub mod config;
pub mod git;
pub mod governance;
pub mod handlers;
pub mod receipt;
pub mod recovery;
pub mod runtime;
pub mod store;
pub mod task;
pub mod trace;
