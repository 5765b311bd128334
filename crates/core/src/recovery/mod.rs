//! Recovery: what a new session is told so that it resumes exactly where the last one
//! left off.
//!
//! The rule of this room: everything is derived from the task (hook.json) alone, so the
//! brief and HOOK.md always agree and are always regenerable; what crash recovery learns
//! from the work tree (files changed since the last checkpoint) the application reads and
//! hands in ([`crash::Found`]).

pub mod brief;
pub mod crash;
pub mod decide;
pub mod guidance;
pub mod hookmd;
pub mod inert;
pub mod repeat;
#[cfg(test)]
mod sequences;

pub use crash::{Crash, Found, absorb, detect, enter_recovery, heard, tell};
pub use decide::{RECENT_CHECKPOINT, decide};
