//! `waymark validate [--step NAME] -- CMD …`.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The step this validation is for (default: the current step).
    #[arg(long)]
    pub step: Option<String>,
    /// The command and its arguments.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

pub fn run(_root: Option<PathBuf>, _args: ValidateArgs) -> ExitCode {
    super::fail(super::USAGE, "validate: not built yet")
}
