//! `waymark receipts [--verify] [--json]`.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct ReceiptsArgs {
    /// Check every signature; exit 1 if any fails.
    #[arg(long)]
    pub verify: bool,
    #[arg(long)]
    pub json: bool,
}

pub fn run(_root: Option<PathBuf>, _args: ReceiptsArgs) -> ExitCode {
    super::fail(super::USAGE, "receipts: not built yet")
}
