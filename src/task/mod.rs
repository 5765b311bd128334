//! The task: one `Hook` (hook.json) per task, its state machine, its step plan, its
//! checkpoints, and where it is kept.
//!
//! - [`model`]: the `Hook` of docs/design.md and the records it holds, as stored;
//! - [`machine`]: the state machine, exactly the table of docs/design.md;
//! - [`plan`]: what happens when steps move (attempts, the implicit step);
//! - [`outline`]: what recovery says of the plan besides listing it;
//! - [`tools`]: Claude Code's task tools and task events, mapped onto the plan;
//! - [`checkpoint`]: when a checkpoint is due (as [`Effect`]s) and its record;
//! - [`session`]: which session works on the task, and whether it is mid-turn;
//! - [`current`]: the current task, loaded, started or changed under the lock;
//! - [`store`]: hook.json and plan.json on disk (lock, .bak, archive); [`migrate`]: schemas
//!   1 and 2 read as 3; [`retention`]: cleanup.
//!
//! The rule of this room: the model, the machine, the plan, its outline, the tools mapping,
//! the migration and the checkpoint rules are pure (time comes in as an argument,
//! checkpoints go out as effects); `store`, `retention` and `current` are the only files
//! that touch the disk.

pub mod checkpoint;
pub mod current;
pub mod machine;
pub mod migrate;
pub mod model;
pub mod outline;
pub mod plan;
pub mod retention;
pub mod session;
pub mod store;
#[cfg(test)]
pub mod testing;
pub mod tools;

pub use current::Need;
pub use machine::HookState;
pub use model::*;
pub use outline::Outline;
pub use plan::{Effect, IMPLICIT_STEP, MAX_STEPS};
