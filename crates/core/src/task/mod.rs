//! The task: one `Hook` (hook.json) per task, its state machine, its step plan and its
//! checkpoints, as values. Time comes in as an argument, checkpoints go out as effects;
//! where the task is kept is the application's (`task::store`).
//!
//! - [`model`]: the `Hook` of docs/design.md and the records it holds, as stored;
//! - [`machine`]: the state machine, exactly the table of docs/design.md;
//! - [`plan`]: what happens when steps move (attempts, the implicit step);
//! - [`outline`]: what recovery says of the plan besides listing it;
//! - [`checkpoint`]: when a checkpoint is due (as [`Effect`]s) and its record;
//! - [`goal`]: what the task is for, and whether a prompt says anything new;
//! - [`session`]: which session works on the task, and whether it is mid-turn;
//! - [`migrate`]: schemas 1 and 2 read as 3.

pub mod bounds;
pub mod checkpoint;
pub mod goal;
pub mod machine;
pub mod migrate;
pub mod model;
pub mod outline;
pub mod plan;
pub mod session;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod validation;

pub use machine::HookState;
pub use model::*;
pub use outline::Outline;
pub use plan::{Effect, IMPLICIT_STEP, MAX_STEPS};
pub use session::Owner;
