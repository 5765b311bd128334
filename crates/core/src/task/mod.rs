//! The task: one `Hook` (hook.json) per task, its state machine, its step plan and its
//! checkpoints, as values. Time comes in as an argument, checkpoints go out as effects;
//! where the task is kept is the application's (`task::store`).

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
