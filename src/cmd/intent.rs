//! `waymark intent list|use <ID>`.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum IntentCmd {
    List,
    Use { id: String },
}

pub fn run(_root: Option<PathBuf>, _cmd: IntentCmd) -> ExitCode {
    super::fail(super::USAGE, "intent: not built yet")
}
