//! The process waymark runs as: what one invocation knows ([`context`]), its deadline
//! ([`deadline`]), its log ([`log`]), the faults tests inject ([`faults`]), the Claude Code
//! process it runs under ([`process`]) and the programs it finds ([`program`]).

pub mod context;
pub mod deadline;
pub mod faults;
pub mod log;
pub mod process;
pub mod program;
