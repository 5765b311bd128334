//! The task: one `Hook` (hook.json) per task, its state machine and its step plan.

pub mod checkpoint;
pub mod current;
pub mod machine;
pub mod model;
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
pub use plan::{Effect, IMPLICIT_STEP, MAX_STEPS};
