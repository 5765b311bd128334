//! `waymark diff <checkpoint> [--stat] [-- PATH…]`: what changed in the project's files
//! since a checkpoint's snapshot, new and deleted files included, as `git diff` shows it.

use std::path::PathBuf;
use std::process::Stdio;

use crate::cmd::{ExitCode, Outcome};
use crate::git::snapshot;
use crate::runtime::context::Ctx;

#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The checkpoint (its id, or a unique start of it; `waymark checkpoints` lists them).
    pub checkpoint: String,
    /// Only the summary of changed files and lines, no patch.
    #[arg(long)]
    pub stat: bool,
    /// Only these files (root-relative).
    #[arg(last = true)]
    pub paths: Vec<String>,
}

pub fn run(root: Option<PathBuf>, args: DiffArgs) -> Outcome {
    let ctx = super::ctx(root);
    let root = &ctx.project.root;
    let lessons = &ctx.config.agent_md;
    let found = snapshot_of(&ctx, &args.checkpoint)?;
    // The work tree staged under the capture lock, held to the end: no checkpoint's
    // snapshot is taken meanwhile, and no tool call of an agent starts.
    let _exclusive = crate::task::capture::exclusive(&ctx.project)
        .map_err(|_| super::failed("a checkpoint's snapshot is still being taken"))?;
    let index = crate::task::capture::index_path(&ctx.project);
    let now = snapshot::tree(root, &index, lessons)
        .ok_or_else(|| super::failed("cannot snapshot the work tree (is git installed?)"))?;
    let mut git = crate::git::command(root);
    git.args(["diff", "--relative", "--no-renames"]);
    git.arg(if args.stat {
        "--stat"
    } else {
        "--patch-with-stat"
    });
    git.args([&found.tree, &now.tree, "--"]);
    if args.paths.is_empty() {
        git.args(crate::git::project_files(lessons));
    } else {
        git.args(args.paths.iter().map(|p| format!(":(literal){p}")));
    }
    let status = git
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status();
    match status.map_err(|e| super::failed(format!("cannot run git: {e}")))? {
        s if s.success() => Ok(ExitCode::SUCCESS),
        _ => Ok(ExitCode(super::CHECK_FAILED)),
    }
}

/// The snapshot of checkpoint `wanted` (an id or its start), or why there is none: no such
/// checkpoint at all, or one without a snapshot (exit 2 either way, as for an unknown step).
pub(super) fn snapshot_of(ctx: &Ctx, wanted: &str) -> Result<snapshot::Found, ExitCode> {
    snapshot::find(&ctx.project.root, wanted).map_err(|e| {
        if wanted.is_empty() || crate::task::store::checkpoint_exists(&ctx.project, wanted) {
            super::usage(e)
        } else {
            super::usage(format!(
                "there is no checkpoint {wanted}: `waymark checkpoints` lists them"
            ))
        }
    })
}
