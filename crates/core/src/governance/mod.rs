//! Intent governance's judging (docs/design.md, Post-hooks): the intents the user declares,
//! the files they own, and what the agent learns when it strays. The application reads the
//! files, runs the post-hooks and writes what they decide.
//!
//! - [`intent`]: what `.orchestration/active_intents.yaml` says, in every shape projects
//!   write it, and an intent's `status:` line rewritten;
//! - [`scope`]: the `owned_scope` globs; [`intent_map`]: `intent_map.md`'s text;
//! - [`drift`]: how each mutated path stands against the active intent;
//! - [`progress`]: whether the trace meets an intent's acceptance criteria;
//! - [`brain`]: a lesson, and AGENT.md's text with it (one copy each, counted when seen
//!   again).

pub mod brain;
pub mod drift;
pub mod intent;
pub mod intent_map;
pub mod progress;
pub mod recall;
pub mod scope;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
