//! `waymark capture --task T --checkpoint C -- FILE…`: takes a checkpoint's capture (the
//! files' snapshots, a dirty work tree). Hooks start it detached once their change is
//! saved, so that the tool call never waits for it; it can be run by hand to capture again.

use std::path::PathBuf;

use crate::capture::{self, Request};
use crate::cmd::ExitCode;

#[derive(Debug, clap::Args)]
pub struct CaptureArgs {
    /// The task the checkpoint belongs to.
    #[arg(long)]
    pub task: String,
    /// The checkpoint id.
    #[arg(long)]
    pub checkpoint: String,
    /// The files to snapshot, root-relative.
    #[arg(last = true)]
    pub files: Vec<String>,
}

pub fn run(root: Option<PathBuf>, args: CaptureArgs) -> ExitCode {
    let ctx = super::ctx(root);
    let request = Request {
        task_id: args.task,
        checkpoint_id: args.checkpoint,
        files: args.files,
    };
    match capture::take(&ctx.project, &request, ctx.now) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            let message = format!(
                "checkpoint {}: capture not taken: {e}",
                request.checkpoint_id
            );
            ctx.log(crate::log::Level::Error, "capture", &message);
            super::fail(super::CHECK_FAILED, message)
        }
    }
}
