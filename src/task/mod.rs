//! The task: one `Hook` (hook.json) per task, its state machine, its step plan, its
//! checkpoints, and where it is kept.
//!
//! - [`model`]: the `Hook` of docs/design.md and the records it holds, as stored;
//! - [`machine`]: the state machine, exactly the table of docs/design.md;
//! - [`plan`]: what happens when steps move (attempts, the implicit step);
//! - [`steps`]: the plan as hook.json holds it, parsed a step at a time;
//! - [`outline`]: what recovery says of the plan besides listing it, kept beside it;
//! - [`lazy`]: the members of hook.json parsed only when read, written back as read;
//! - [`tools`]: Claude Code's task tools and task events, mapped onto the plan;
//! - [`checkpoint`]: when a checkpoint is due (as [`Effect`]s) and its record;
//! - [`session`]: which session works on the task, and whether it is mid-turn;
//! - [`current`]: the current task, loaded, started or changed under the lock;
//! - [`store`]: hook.json on disk (lock, .bak, schema, archive); [`retention`]: cleanup.
//!
//! The rule of this room: the model, the machine, the plan, its steps as read, its outline,
//! the lazy members, the tools mapping and the checkpoint rules are pure (time comes in
//! as an argument, checkpoints go out as effects); `store`, `retention` and `current` are
//! the only files that touch the disk.

pub mod checkpoint;
pub mod current;
pub mod lazy;
pub mod machine;
pub mod model;
pub mod outline;
pub mod plan;
pub mod retention;
pub mod session;
pub mod steps;
pub mod store;
#[cfg(test)]
pub mod testing;
pub mod tools;

pub use current::Need;
pub use machine::HookState;
pub use model::*;
pub use outline::Outline;
pub use plan::{Effect, IMPLICIT_STEP, MAX_STEPS};
