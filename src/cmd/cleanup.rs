//! `waymark cleanup [--dry-run]`.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct CleanupArgs {
    /// List what would be removed without removing it.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(_root: Option<PathBuf>, _args: CleanupArgs) -> ExitCode {
    super::fail(super::USAGE, "cleanup: not built yet")
}
