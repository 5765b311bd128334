//! The task on disk and in Claude Code: the model, its machine, plan and checkpoint rules are
//! `waymark_core::task` (re-exported here); this room keeps and finds it.
//!
//! - [`capture`] takes a checkpoint's capture (its files' record and its snapshot), off the
//!   hook's answer, and waits for it before the next change;
//! - [`current`] loads, starts or changes the current task under the lock;
//! - [`store`] keeps hook.json and plan.json on disk (lock, .bak, archive);
//! - [`logs`] is where a task's files are and its logs read back (below the store and the
//!   captures, which both live there);
//! - [`retention`] cleans up finished tasks;
//! - [`tools`] maps Claude Code's task tools and task events onto the plan.

pub mod capture;
pub mod current;
pub mod logs;
pub mod retention;
pub mod store;
pub mod timeline;
pub mod tools;

pub use current::Need;
pub use waymark_core::task::*;
