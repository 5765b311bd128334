//! `waymark git-hooks install|uninstall|status`.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum GitHooksCmd {
    Install,
    Uninstall,
    Status,
}

pub fn run(_root: Option<PathBuf>, _cmd: GitHooksCmd) -> ExitCode {
    super::fail(super::USAGE, "git-hooks: not built yet")
}
