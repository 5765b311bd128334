//! The agents' wire formats: what a hook reads on stdin and writes on stdout. Claude
//! Code's are the models every handler reads; Codex CLI's inputs are rewritten into them
//! first ([`codex`]).
//!
//! - [`event`]: the hook inputs, one typed model per event;
//! - [`tool`]: the tool calls and responses inside PreToolUse / PostToolUse;
//! - [`output`]: the hook output JSON (context for the agent, a deny or an ask);
//! - [`transcript`]: the little waymark reads of a session transcript;
//! - [`codex`]: Codex CLI's inputs and outputs, adapted (`waymark hook --agent codex`).
//!
//! The rule of this room: parsing and printing only. Nothing here knows about tasks,
//! intents or files; every model tolerates fields it does not know and the absence of
//! fields it does not need, because Claude Code adds and drops them between releases.

pub mod codex;
pub mod event;
pub mod output;
pub mod tool;
pub mod transcript;
