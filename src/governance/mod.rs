//! Intent governance (docs/design.md, Post-hooks): the intents the user declares, the
//! files they own, and what the agent learns when it strays.
//!
//! - [`intent`]: `.orchestration/active_intents.yaml`, read in every shape projects write
//!   it; only an intent's `status:` line is ever rewritten;
//! - [`scope`]: the `owned_scope` globs; [`intent_map`]: `intent_map.md`, files per intent;
//! - [`drift`]: ScopeDrift, how each mutated path stands against the active intent;
//! - [`progress`]: IntentProgress, an intent completed when the trace meets its criteria;
//! - [`brain`]: AGENT.md, where lessons are kept (one copy each, counted when seen again);
//!   [`lessons`]: which events teach what (SharedBrain, VerificationFailure);
//! - [`enforcement`]: PreToolUse's deny of out-of-scope writes (opt-in);
//! - [`facts`]: what the post-hooks of one event read once and share.
//!
//! The rule of this room: judging is `waymark_core::governance` ([`drift::judge`],
//! [`progress::evaluate`], [`brain::with_lesson`]); each module here re-exports its core
//! counterpart and adds the reading and writing, each under the file's lock.

pub mod brain;
pub mod drift;
pub mod enforcement;
pub mod facts;
pub mod intent;
pub mod intent_map;
pub mod lessons;
pub mod progress;

pub use waymark_core::governance::scope;
