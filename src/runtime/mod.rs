//! The process waymark runs as: what one invocation knows ([`context`]), the Claude Code
//! process it runs under ([`process`]) and the programs it finds ([`program`]).

pub mod context;
pub mod process;
pub mod program;
