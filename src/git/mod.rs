//! Everything waymark asks of git.
//!
//! - [`head`]: the commit HEAD points at, read from `.git` itself (no process);
//! - [`status`]: branch, HEAD and dirtiness of the work tree, lines changed since a commit;
//! - [`hooks`]: the post-commit and pre-push wrappers `waymark git-hooks` installs.
//!
//! The rule of this room: [`run`] is the one place a `git` process is started, and only
//! checkpoints and `waymark git-hooks` call it, so an ordinary event never pays for one.

pub mod head;
pub mod hooks;
pub mod status;

use std::path::Path;
use std::process::{Command, Stdio};

pub use head::head_revision;
pub use status::{GitState, diff_stat, state};

/// Runs `git -C root args…` and returns trimmed stdout when it succeeds.
pub fn run(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}
