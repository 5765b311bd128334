//! waymark: crash recovery, signed validation receipts and intent governance for Claude
//! Code, as one binary run on Claude Code's hook events. See docs/design.md for the design
//! and `handlers/` for what each event does.

pub mod capture;
pub mod claude;

pub mod cli;
pub mod cmd;

pub mod config;
pub mod context;
pub mod deadline;
pub mod faults;
pub mod git;
pub mod governance;
pub mod handlers;
pub mod log;
pub mod process;
pub mod program;
pub mod project;
pub mod receipt;
pub mod recovery;
pub use waymark_core::{shell, text};
pub use waymark_redact as redact;
pub mod store;
pub mod task;
pub mod trace;
